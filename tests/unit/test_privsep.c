/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The privileged helper (privsep.c) as a supervisor taken over would meet
 * it: it serves the operations of its table, each only in its phase, and
 * a request outside the table, out of its phase or with an fd it does not
 * take ends it, without carrying the request out. And the drop itself: a
 * supervisor that gave up root cannot take it back.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/ftrace.h"
#include "sandbox/internal.h"
#include "sandbox/privsep.h"

struct fixture {
	struct mcpgw mcp;
	struct egress egress;
	struct review_run rr;
	struct cgroup_handle cg;
	struct privsep_ctx ctx;
	pid_t sandbox; /* stands for the sandbox's init: a child that waits */
	int release;   /* write end: closing it ends the "sandbox" */
	int sv[2];     /* [0] the supervisor's end, [1] the helper's */
	pid_t helper;
	char dir[64];
	char step_up[108];
	unsigned char answer; /* the byte after PRIV_DONE */
};

static void fixture_start(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->mcp = (struct mcpgw)MCPGW_INIT;
	f->egress = (struct egress)EGRESS_INIT;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-privsep.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	/* The operations act on the state the helper was forked with and
	 * was sent in PRIV_SETUP: here a file standing for the proxy's
	 * step-up socket, which PRIV_END removes, so that a test can see
	 * whether it ran. The helper is forked with another name, a stale
	 * one, which only a helper acting before its setup would remove. */
	snprintf(f->step_up, sizeof(f->step_up), "%s/step-up.sock", f->dir);
	snprintf(f->egress.step_up_sock, sizeof(f->egress.step_up_sock), "%s/stale.sock", f->dir);
	for (int i = 0; i < 2; i++) {
		int fd = open(i ? f->egress.step_up_sock : f->step_up, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		close(fd);
	}
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	f->sandbox = fork();
	assert_true(f->sandbox >= 0);
	if (f->sandbox == 0) {
		char c;
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	f->release = p[1];
	f->ctx = (struct privsep_ctx){ .mcp = &f->mcp, .egress = &f->egress, .rr = &f->rr, .cg = &f->cg,
				       .sandbox_pidfd = (int)syscall(SYS_pidfd_open, f->sandbox, 0) };
	assert_true(f->ctx.sandbox_pidfd >= 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->sv), 0);
	/* A request the helper takes without answering, where it should
	 * have refused it, fails the test rather than hang it. */
	struct timeval tv = { .tv_sec = 10 };
	assert_int_equal(setsockopt(f->sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	f->helper = fork();
	assert_true(f->helper >= 0);
	if (f->helper == 0) {
		close(f->sv[0]);
		close(f->release);
		_exit(privsep_serve(f->sv[1], &f->ctx));
	}
	close(f->sv[1]);
}

/* PRIV_SETUP as the supervisor sends it, naming the step-up socket. */
static size_t setup_msg(const struct fixture *f, char *msg)
{
	struct privsep_setup su = { 0 };
	snprintf(su.step_up_sock, sizeof(su.step_up_sock), "%s", f->step_up);
	msg[0] = PRIV_SETUP;
	memcpy(msg + 1, &su, sizeof(su));
	return 1 + sizeof(su);
}

static void send_only(struct fixture *f, const char *msg, size_t len)
{
	assert_int_equal(send(f->sv[0], msg, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* The fixture's helper, forked and set up. */
static void fixture_run(struct fixture *f)
{
	char msg[1 + sizeof(struct privsep_setup)];
	fixture_start(f);
	send_only(f, msg, setup_msg(f, msg));
}

static void sandbox_exits(struct fixture *f)
{
	close(f->release);
	f->release = -1;
	assert_int_equal(waitpid(f->sandbox, NULL, 0), f->sandbox);
	f->sandbox = 0;
}

/* Send one request (with fd, or -1): the answer byte, or 0 at EOF. */
static char request(struct fixture *f, const void *msg, size_t len, int fd)
{
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		mh.msg_control = ctl;
		mh.msg_controllen = sizeof(ctl);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	assert_int_equal(sendmsg(f->sv[0], &mh, MSG_NOSIGNAL), (ssize_t)len);
	char b[2] = { 0 };
	ssize_t n = recv(f->sv[0], b, sizeof(b), 0);
	f->answer = (unsigned char)b[1];
	return n == 2 ? b[0] : 0;
}

static int helper_exit(struct fixture *f)
{
	int st = 0;
	assert_int_equal(waitpid(f->helper, &st, 0), f->helper);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static bool step_up_exists(const struct fixture *f)
{
	struct stat st;
	return stat(f->step_up, &st) == 0;
}

static bool stale_exists(const struct fixture *f)
{
	char path[128];
	struct stat st;
	snprintf(path, sizeof(path), "%s/stale.sock", f->dir);
	return stat(path, &st) == 0;
}

static void fixture_end(struct fixture *f)
{
	if (f->release >= 0)
		close(f->release);
	if (f->sandbox > 0)
		waitpid(f->sandbox, NULL, 0);
	close(f->sv[0]);
	close(f->ctx.sandbox_pidfd);
	unlink(f->step_up);
	char path[128];
	snprintf(path, sizeof(path), "%s/stale.sock", f->dir);
	unlink(path);
	rmdir(f->dir);
}

/* The end of the session: served in either phase, and it removes what
 * the session left on the host. */
static void test_end_is_served(void **state)
{
	(void)state;
	struct fixture f;
	fixture_run(&f);
	assert_true(step_up_exists(&f));
	assert_int_equal(request(&f, "Q", 1, -1), PRIV_DONE);
	assert_int_equal(helper_exit(&f), 0);
	assert_false(step_up_exists(&f));
	fixture_end(&f);
}

/* Review's end reads the change and lands it: not while the sandbox
 * runs, whose agent could still write the layer between the read and the
 * landing. Once it exited, the same request is served, and only it: the
 * end's work waits for PRIV_END. */
static void test_review_finish_waits_for_the_sandbox(void **state)
{
	(void)state;
	struct fixture f;
	fixture_run(&f);
	assert_int_equal(request(&f, "F", 1, -1), 0); /* refused: the helper ends */
	assert_int_equal(helper_exit(&f), 2);
	fixture_end(&f);

	fixture_run(&f);
	sandbox_exits(&f);
	assert_int_equal(request(&f, "F", 1, -1), PRIV_DONE);
	assert_true(step_up_exists(&f)); /* nothing but what was asked */
	assert_int_equal(request(&f, "Q", 1, -1), PRIV_DONE);
	assert_false(step_up_exists(&f));
	assert_int_equal(helper_exit(&f), 0);
	fixture_end(&f);
}

/* The one request with an argument: an absolute path, answered with two
 * bits of what the host has there (the helper's view: root's). */
static void test_host_look(void **state)
{
	(void)state;
	struct fixture f;
	fixture_run(&f);
	char req[128];
	int n = snprintf(req, sizeof(req), "L%s", f.step_up);
	assert_int_equal(request(&f, req, (size_t)n, -1), PRIV_DONE);
	assert_int_equal(f.answer, FTRACE_HOST_EXISTS);
	n = snprintf(req, sizeof(req), "L%s", f.dir);
	assert_int_equal(request(&f, req, (size_t)n, -1), PRIV_DONE);
	assert_int_equal(f.answer, FTRACE_HOST_EXISTS | FTRACE_HOST_DIR);
	n = snprintf(req, sizeof(req), "L%s/none", f.dir);
	assert_int_equal(request(&f, req, (size_t)n, -1), PRIV_DONE);
	assert_int_equal(f.answer, 0);
	/* Bounded: up to PRIVSEP_MAX_LOOKS looks are answered as they are,
	 * and every one after that as nothing there. */
	n = snprintf(req, sizeof(req), "L%s", f.dir);
	for (unsigned i = 3; i < PRIVSEP_MAX_LOOKS; i++) {
		assert_int_equal(request(&f, req, (size_t)n, -1), PRIV_DONE);
		assert_int_equal(f.answer, FTRACE_HOST_EXISTS | FTRACE_HOST_DIR);
	}
	assert_int_equal(request(&f, req, (size_t)n, -1), PRIV_DONE);
	assert_int_equal(f.answer, 0);
	assert_int_equal(request(&f, "Q", 1, -1), PRIV_DONE);
	assert_int_equal(helper_exit(&f), 0);
	fixture_end(&f);

	/* Not a path it takes: relative, none, a NUL inside, too long. */
	static char longpath[1 + 4096 + 8];
	memset(longpath, 'a', sizeof(longpath));
	longpath[0] = 'L';
	longpath[1] = '/';
	static const struct {
		const char *msg;
		size_t len;
	} bad[] = {
		{ "Letc/passwd", 11 },
		{ "L", 1 },
		{ "L/etc\0/x", 8 },
		{ longpath, sizeof(longpath) },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		fixture_run(&f);
		assert_int_equal(request(&f, bad[i].msg, bad[i].len, -1), 0);
		assert_int_equal(helper_exit(&f), 2);
		fixture_end(&f);
	}
}

/* An MCP connection the supervisor accepted as the sandbox exited: not
 * a request out of turn (the two raced), but no server starts for it. */
static void test_late_mcp_connection_is_dropped(void **state)
{
	(void)state;
	struct fixture f;
	fixture_run(&f);
	sandbox_exits(&f);
	int c[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c), 0);
	assert_int_equal(request(&f, "M", 1, c[1]), PRIV_DONE);
	close(c[1]);
	/* Nobody holds the connection's other end: no monitor reads it. */
	char b;
	assert_int_equal(recv(c[0], &b, 1, MSG_DONTWAIT), 0);
	close(c[0]);
	assert_int_equal(request(&f, "Q", 1, -1), PRIV_DONE);
	assert_int_equal(helper_exit(&f), 0);
	fixture_end(&f);
}

/* A request outside the table, two bytes where one is the request, an
 * fd with a request that takes none: refused, and the helper is gone
 * (the supervisor's run then ends, fail closed). */
static void test_requests_outside_the_table_end_the_helper(void **state)
{
	(void)state;
	static const struct {
		const char *msg;
		size_t len;
		bool fd;
	} bad[] = {
		{ "Z", 1, false },  /* not an operation */
		{ "QQ", 2, false }, /* a request with a tail */
		{ "\0", 1, false },
		{ "K", 1, true },   /* an fd with an operation that takes none */
		{ "M", 1, false },  /* an MCP connection without its fd */
		{ "E", 1, false },  /* the helper's own event, sent back */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct fixture f;
		fixture_run(&f);
		int fd = bad[i].fd ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
		assert_int_equal(request(&f, bad[i].msg, bad[i].len, fd), 0);
		if (fd >= 0)
			close(fd);
		assert_int_equal(helper_exit(&f), 2);
		fixture_end(&f);
	}
	/* The neighbour: a request of the table, in its phase, is served. */
	struct fixture f;
	fixture_run(&f);
	assert_int_equal(request(&f, "K", 1, -1), PRIV_DONE);
	assert_int_equal(request(&f, "Q", 1, -1), PRIV_DONE);
	assert_int_equal(helper_exit(&f), 0);
	fixture_end(&f);
}

/* The setup phase: the helper is forked before the supervisor knows all
 * the run's state, and takes it in one PRIV_SETUP, first and once. Until
 * then it serves nothing, and a helper let go (EOF) or refused in it acts
 * on nothing: its copy of the state is not yet the run's, and the
 * supervisor, root still, does the end itself. */
static void test_setup_comes_first_and_once(void **state)
{
	(void)state;
	char msg[1 + sizeof(struct privsep_setup) + 1];
	struct fixture f;

	/* Let go before its setup: it exits, and removes nothing. */
	fixture_start(&f);
	close(f.sv[0]);
	f.sv[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_int_equal(helper_exit(&f), 0);
	assert_true(step_up_exists(&f) && stale_exists(&f));
	fixture_end(&f);

	/* Any request before it: refused, and still nothing removed. */
	fixture_start(&f);
	assert_int_equal(request(&f, "Q", 1, -1), 0);
	assert_int_equal(helper_exit(&f), 2);
	assert_true(step_up_exists(&f) && stale_exists(&f));
	fixture_end(&f);

	/* A body of the wrong size, or a name without its NUL. */
	for (int i = 0; i < 3; i++) {
		fixture_start(&f);
		size_t len = setup_msg(&f, msg);
		if (i == 0)
			len--;
		else if (i == 1)
			msg[len++] = 'x';
		else
			memset(msg + 1 + offsetof(struct privsep_setup, step_up_sock), 'a',
			       sizeof(((struct privsep_setup *)0)->step_up_sock));
		assert_int_equal(request(&f, msg, len, -1), 0);
		assert_int_equal(helper_exit(&f), 2);
		assert_true(step_up_exists(&f) && stale_exists(&f));
		fixture_end(&f);
	}

	/* The neighbour: set up, it acts on what the setup named. */
	fixture_run(&f);
	assert_int_equal(request(&f, "Q", 1, -1), PRIV_DONE);
	assert_int_equal(helper_exit(&f), 0);
	assert_false(step_up_exists(&f));
	assert_true(stale_exists(&f));
	fixture_end(&f);

	/* A second setup, as a supervisor taken over would send to point
	 * the helper elsewhere: refused, and the session ends. */
	fixture_run(&f);
	assert_int_equal(request(&f, msg, setup_msg(&f, msg), -1), 0);
	assert_int_equal(helper_exit(&f), 2);
	assert_false(step_up_exists(&f));
	fixture_end(&f);
}

/* As root: the helper is forked and keeps root; the caller becomes the
 * given ids for good, and the ways back to root fail. */
static void test_drop_is_for_good(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct fixture f;
		fixture_start(&f);
		/* fixture_start forked a helper already: this test's own is
		 * privsep_fork's, and learns the step-up socket's name from
		 * privsep_drop's PRIV_SETUP. */
		kill(f.helper, SIGKILL);
		waitpid(f.helper, NULL, 0);
		/* Searchable, not writable, by the ids the caller drops to: it
		 * can see the file, but only root can remove it. */
		if (chmod(f.dir, 0711) < 0)
			_exit(9);
		/* And a directory only root may search, with a file in it. */
		char hidden[128];
		snprintf(hidden, sizeof(hidden), "%s/root-only", f.dir);
		if (mkdir(hidden, 0700) < 0)
			_exit(9);
		strcat(hidden, "/file");
		int hfd = open(hidden, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (hfd < 0)
			_exit(9);
		close(hfd);
		struct privsep p = PRIVSEP_INIT;
		struct error err = { 0 };
		if (privsep_fork(&p, &f.ctx, &err) < 0)
			_exit(10);
		snprintf(f.egress.step_up_sock, sizeof(f.egress.step_up_sock), "%s", f.step_up);
		if (privsep_drop(&p, &f.ctx, 65534, 65534, &err) < 0)
			_exit(10);
		if (getuid() != 65534 || geteuid() != 65534 || getgid() != 65534)
			_exit(11);
		if (setresuid(0, 0, 0) == 0 || seteuid(0) == 0 || setgid(0) == 0)
			_exit(12);
		if (!step_up_exists(&f) || unlink(f.step_up) == 0)
			_exit(18);
		/* The helper is root still, and serves. */
		char path[64], line[256];
		snprintf(path, sizeof(path), "/proc/%d/status", (int)p.pid);
		FILE *fp = fopen(path, "r");
		bool root = false;
		while (fp && fgets(line, sizeof(line), fp))
			if (!strncmp(line, "Uid:\t0\t0\t0\t0", 12))
				root = true;
		if (fp)
			fclose(fp);
		if (!root)
			_exit(13);
		if (privsep_call(&p, &f.ctx, PRIV_MCP_KILL, -1, -1, NULL, NULL) < 0)
			_exit(14);
		/* Looks: behind root's 0700 directory the helper answers;
		 * where the caller may search, it looks itself (below, with
		 * the helper gone, it still does). */
		if (privsep_host_look(&p, &f.ctx, hidden) != FTRACE_HOST_EXISTS ||
		    privsep_host_look(&p, &f.ctx, f.step_up) != FTRACE_HOST_EXISTS)
			_exit(20);
		/* The end as the supervisor asks for it: posted (no review
		 * session here), then its answer taken. */
		if (privsep_finish(&p, &f.ctx, false) < 0 || !p.end_posted || p.ended)
			_exit(19);
		if (privsep_call(&p, &f.ctx, PRIV_END, -1, -1, NULL, NULL) < 0 || !p.ended)
			_exit(15);
		int st = 0;
		if (waitpid(p.pid, &st, 0) != p.pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			_exit(16);
		/* The helper, root, removed the file (the caller could not). */
		if (step_up_exists(&f))
			_exit(17);
		if (privsep_host_look(&p, &f.ctx, hidden) != 0 ||
		    privsep_host_look(&p, &f.ctx, f.dir) != (FTRACE_HOST_EXISTS | FTRACE_HOST_DIR))
			_exit(21);
		_exit(0);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* The helper's environment without MCP servers: every string zeroed
 * where it lay (the kernel shows that copy in /proc/PID/environ), the
 * named variables set again, the others gone; a name not set stays
 * unset. */
static void test_wipe_environ_keeps_only_what_is_named(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setenv("HOME", "/home/kept", 1) < 0 || setenv("DEPLOY_TOKEN", "tok-123456", 1) < 0)
			_exit(2);
		unsetenv("XDG_STATE_HOME");
		char *secret = getenv("DEPLOY_TOKEN");
		static const char *const keep[] = { "HOME", "XDG_STATE_HOME", NULL };
		if (caps_wipe_environ_but(keep) < 0)
			_exit(3);
		if (getenv("DEPLOY_TOKEN") || getenv("XDG_STATE_HOME") || !getenv("HOME") ||
		    strcmp(getenv("HOME"), "/home/kept") != 0)
			_exit(4);
		/* The secret's old bytes are zeros, not merely unlinked. */
		if (secret[0] != '\0' || memmem(secret, 10, "tok", 3))
			_exit(5);
		extern char **environ;
		size_t n = 0;
		for (char **e = environ; e && *e; e++)
			n++;
		_exit(n == 1 ? 0 : 6);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_end_is_served),
		cmocka_unit_test(test_review_finish_waits_for_the_sandbox),
		cmocka_unit_test(test_late_mcp_connection_is_dropped),
		cmocka_unit_test(test_host_look),
		cmocka_unit_test(test_requests_outside_the_table_end_the_helper),
		cmocka_unit_test(test_setup_comes_first_and_once),
		cmocka_unit_test(test_drop_is_for_good),
		cmocka_unit_test(test_wipe_environ_keeps_only_what_is_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
