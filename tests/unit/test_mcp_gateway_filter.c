/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-mcp-gateway's seccomp filter (seccomp_rules_build_gateway),
 * installed by the kernel in a child: the calls the relay makes pass, and
 * each call only a gateway taken over would make kills the process
 * (SIGSYS), where a filter that merely refused would let it try another
 * way.
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
#include <sys/mman.h>
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

static const char *const attempt_names[] = { "relay", "execve", "fork", "openat", "socket", "ptrace",
					     "kill", "unshare", "mmap(PROT_EXEC)", "setuid" };

/* In a child: the filter, then the attempt. Its wait status. */
static int run_filtered(enum attempt a)
{
	int sp[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		scmp_filter_ctx f;
		struct error err = { 0 };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_rules_build_gateway(&f, &err) < 0 ||
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

static void test_gateway_filter(void **state)
{
	(void)state;
	int st = run_filtered(RELAY);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("relay: the relay's own calls did not pass (status 0x%x)", st);
	for (int a = EXECVE; a < ATTEMPTS; a++) {
		st = run_filtered((enum attempt)a);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			fail_msg("%s: not killed by SIGSYS (status 0x%x)", attempt_names[a], st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gateway_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
