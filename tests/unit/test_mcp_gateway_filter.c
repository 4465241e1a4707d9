/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-mcp-gateway's seccomp filter (seccomp_rules_build_gateway) and
 * its monitor's (seccomp_rules_build_monitor), installed by the kernel in
 * a child: the calls the relay (and the monitor's lookups) make pass, and
 * each call only a process taken over would make kills it (SIGSYS),
 * where a filter that merely refused would let it try another way.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/seccomp_rules.h"

enum attempt {
	RELAY, /* what the gateway does: read, write, send, poll, malloc, clock */
	LOOKUP, /* what the monitor adds: O_PATH lookups, readlinkat, fstatat, wait4 */
	EXECVE,
	FORK,
	OPENAT,
	SOCKET,
	PTRACE,
	KILL_OTHER,
	UNSHARE,
	MMAP_EXEC,
	SETUID,
	ATTEMPTS
};

static const char *const attempt_names[] = { "relay", "lookup", "execve", "fork", "openat", "socket", "ptrace",
					     "kill", "unshare", "mmap(PROT_EXEC)", "setuid" };

typedef int (*build_fn)(scmp_filter_ctx *out, struct error *err);

/* In a child: the filter, then the attempt. Its wait status. */
static int run_filtered(build_fn build, enum attempt a)
{
	int sp[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		scmp_filter_ctx f;
		struct error err = { 0 };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || build(&f, &err) < 0 ||
		    seccomp_load(f) < 0)
			_exit(100);
		seccomp_release(f);
		switch (a) {
		case RELAY: {
			char *p = malloc(1 << 20); /* mmap, rw */
			struct pollfd pf = { .fd = sp[1], .events = POLLOUT };
			struct timespec ts;
			if (!p || poll(&pf, 1, 0) != 1 || send(sp[1], "x", 1, MSG_NOSIGNAL) != 1 ||
			    write(sp[1], "y", 1) != 1 || clock_gettime(CLOCK_MONOTONIC, &ts) < 0 || getpid() <= 0)
				_exit(101);
			free(p);
			_exit(0);
		}
		case LOOKUP: {
			struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
			struct stat st;
			char buf[64];
			int root = (int)syscall(SYS_openat, AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			int fd = root < 0 ? -1 : (int)syscall(SYS_openat2, root, "/etc", &how, sizeof(how));
			if (fd < 0 || fstatat(fd, "..", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    (readlinkat(root, "proc/self/exe", buf, sizeof(buf)) < 0 && errno != ENOENT) ||
			    (waitpid(-1, NULL, WNOHANG) < 0 && errno != ECHILD))
				_exit(101);
			_exit(0);
		}
		case EXECVE: {
			char *const argv[] = { "/bin/true", NULL };
			execve(argv[0], argv, argv + 1);
			break;
		}
		case FORK:
			(void)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
			break;
		case OPENAT:
			(void)syscall(SYS_openat, AT_FDCWD, "/etc/hostname", O_RDONLY | O_CLOEXEC);
			break;
		case SOCKET:
			(void)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
			break;
		case PTRACE:
			(void)syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0);
			break;
		case KILL_OTHER:
			(void)syscall(SYS_kill, getppid(), 0);
			break;
		case UNSHARE:
			(void)syscall(SYS_unshare, CLONE_NEWUSER);
			break;
		case MMAP_EXEC:
			(void)mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			break;
		case SETUID:
			(void)syscall(SYS_setuid, 0);
			break;
		case ATTEMPTS:
			break;
		}
		_exit(102); /* the call returned: not killed */
	}
	close(sp[1]);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(sp[0]);
	return st;
}

/* first: the first attempt that must kill. */
static void check_filter(build_fn build, enum attempt first)
{
	for (int a = RELAY; a < ATTEMPTS; a++) {
		int st = run_filtered(build, (enum attempt)a);
		if (a < (int)first && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
			fail_msg("%s: its own calls did not pass (status 0x%x)", attempt_names[a], st);
		if (a >= (int)first && (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS))
			fail_msg("%s: not killed by SIGSYS (status 0x%x)", attempt_names[a], st);
	}
}

/* The gateway opens and resolves no path: a lookup kills it. */
static void test_gateway_filter(void **state)
{
	(void)state;
	check_filter(seccomp_rules_build_gateway, LOOKUP);
}

/* The monitor looks paths up (O_PATH alone: an openat for reading kills
 * it) and waits for its children; it signals none. */
static void test_monitor_filter(void **state)
{
	(void)state;
	check_filter(seccomp_rules_build_monitor, EXECVE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gateway_filter),
		cmocka_unit_test(test_monitor_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
