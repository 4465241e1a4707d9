/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of MCP servers inside an airlock run session: the
 * mcp.servers.NAME.policy field, and the supervisor's side of the gateway
 * up to the listener (mcpgw_prepare, mcpgw_stop). Each refusal beside the
 * neighbour that passes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/mcp.h"
#include "policy/policy.h"
#include "sandbox/internal.h"
#include "proto/mcpgw.h"
#include "sandbox/mcpgw.h"
#include "sandbox/proto.h"
#include "sandbox/sandbox.h"

static char ws[256];

static int setup(void **state)
{
	(void)state;
	snprintf(ws, sizeof(ws), "/tmp/airlock-mcpgw-unit.XXXXXX");
	return mkdtemp(ws) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ws);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", ws, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static struct policy *load(const char *yaml, struct error *err)
{
	struct policy *p = NULL;
	struct policy_ctx ctx = { .home = "/home/me", .cwd = ws };
	char *text = NULL;
	if (asprintf(&text, "version: 1\nsandbox:\n  workspace: %s\n%s", ws, yaml) < 0)
		return NULL;
	int r = policy_load_buffer("p.yaml", NULL, text, strlen(text), &ctx, &p, err);
	free(text);
	return r < 0 ? NULL : p;
}

static void test_policy_field(void **state)
{
	(void)state;
	struct error err = { 0 };
	struct policy *p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: srv.yaml\n"
				"    other:\n      command: [y]\n",
				&err);
	assert_non_null(p);
	const struct policy_mcp_server *s = policy_mcp_server(p->mcp, "fs");
	char want[512];
	snprintf(want, sizeof(want), "%s/srv.yaml", ws);
	assert_string_equal(s->policy, want); /* relative to the policy's directory */
	assert_int_equal(s->policy_line, 8);
	assert_null(policy_mcp_server(p->mcp, "other")->policy); /* the default */
	/* Printed, it reads back. */
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	policy_mcp_print(p->mcp, f);
	fclose(f);
	assert_non_null(strstr(out, "      policy: "));
	assert_non_null(strstr(out, want));
	free(out);
	policy_free(p);

	p = load("mcp:\n  servers:\n    fs:\n      policy: [a, b]\n", &err);
	assert_null(p);
	assert_non_null(strstr(err.msg, "mcp.servers.fs.policy"));
	assert_non_null(strstr(err.msg, "p.yaml:7"));
}

static void test_prepare(void **state)
{
	(void)state;
	struct error err = { 0 };
	struct sandbox_plan plan;
	struct mcpgw g;

	/* No mcp section: no socket, nothing in the plan. */
	struct policy *p = load("", &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	assert_int_equal(mcpgw_prepare(p, NULL, &plan, &g, &err), 0);
	assert_int_equal(g.listen, -1);
	assert_int_equal(plan.n_mounts, 0);
	mcpgw_stop(&g);
	policy_free(p);

	/* A server's policy that does not parse: the session does not start,
	 * and the error names both files. */
	write_file("bad.yaml", "version: 1\nbogus: 1\n");
	p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: bad.yaml\n", &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	assert_true(mcpgw_prepare(p, NULL, &plan, &g, &err) < 0);
	assert_non_null(strstr(err.msg, "p.yaml:8: mcp.servers.fs.policy"));
	assert_non_null(strstr(err.msg, "bad.yaml:2"));
	mcpgw_stop(&g);
	plan_free(&plan);
	policy_free(p);

	/* A server's policy that declares servers of its own: refused. */
	write_file("nested.yaml", "version: 1\nmcp:\n  servers:\n    x:\n      command: [x]\n");
	p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: nested.yaml\n", &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	assert_true(mcpgw_prepare(p, NULL, &plan, &g, &err) < 0);
	assert_non_null(strstr(err.msg, "declares MCP servers"));
	mcpgw_stop(&g);
	plan_free(&plan);
	policy_free(p);

	/* The neighbour: a good server policy and a server with none. */
	write_file("good.yaml", "version: 1\n");
	p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: good.yaml\n"
		 "    dflt:\n      command: [y]\n",
		 &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	plan.privileged = geteuid() == 0;
	assert_int_equal(mcpgw_prepare(p, NULL, &plan, &g, &err), 0);
	assert_true(g.listen >= 0);
	assert_int_equal(g.n_srv, 2);
	/* The default server policy: the session's workspace, read-only. */
	const struct policy *d = g.srv_pol[1];
	assert_string_equal(d->sandbox.workspace, ws);
	assert_int_equal(d->filesystem.read.n, 1);
	assert_string_equal(d->filesystem.read.v[0].path, ws);
	assert_int_equal(policy_net_mode(d), POLICY_NET_NONE);
	/* The socket, alone, and the binary, read-only and executable. */
	assert_int_equal(plan.n_mounts, 2);
	assert_string_equal(plan.mounts[0].dst, MCPGW_SOCKET);
	assert_string_equal(plan.mounts[0].src, g.sock);
	assert_false(plan.mounts[0].is_dir);
	assert_string_equal(plan.mounts[1].dst, MCPGW_BINARY);
	assert_true(plan.mounts[1].readonly);
	assert_int_equal(plan.n_rules, 1);
	assert_string_equal(plan.rules[0].path, MCPGW_BINARY);
	struct stat st;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", g.dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700); /* nobody else on the host reaches the socket */
	assert_int_equal(stat(g.sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	mcpgw_stop(&g);
	assert_int_equal(stat(dir, &st), -1); /* removed at the end */
	plan_free(&plan);
	policy_free(p);
}

/* ---- the monitor's side of proto/mcpgw.h, and the pins keeper ---- */

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* A 'P' message: tool, sha256, definition, no pending change. */
static size_t pin_msg_def(char *out, const char *tool, const char *sha, const char *def)
{
	size_t n = 0;
	out[n++] = GWPROTO_PIN;
	const char *f[] = { tool, sha, def, "", "" };
	for (size_t i = 0; i < 5; i++) {
		memcpy(out + n, f[i], strlen(f[i]) + 1);
		n += strlen(f[i]) + 1;
	}
	return n;
}

static size_t pin_msg(char *out, const char *tool, const char *sha)
{
	return pin_msg_def(out, tool, sha, "{\"name\":\"x\"}");
}

/* mcpgw_serve in a child of its own, the test the gateway: its exit
 * status is serve's answer. */
static pid_t serve_child(int *gw, struct mcpgw_mon *m)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(mcpgw_serve(sv[1], m));
	}
	close(sv[1]);
	*gw = sv[0];
	return pid;
}

static int serve_end(pid_t pid, int gw)
{
	close(gw);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static char ask(int gw, const void *msg, size_t n)
{
	char a[600] = "";
	int fds[PROTO_MAX_FDS];
	assert_int_equal(proto_send(gw, msg, n, NULL, 0), 0);
	return proto_recv(gw, a, sizeof(a), fds) >= 1 ? a[0] : 0;
}

static char inside(int gw, const char *path)
{
	char msg[600];
	msg[0] = GWPROTO_INSIDE;
	memcpy(msg + 1, path, strlen(path) + 1);
	return ask(gw, msg, strlen(path) + 2);
}

static void test_monitor_serves_pins_and_paths(void **state)
{
	(void)state;
	char pins[512], msg[600], sub[512];
	snprintf(pins, sizeof(pins), "%s/serve.pins.json", ws);
	snprintf(sub, sizeof(sub), "%s/sub", ws);
	mkdir(sub, 0700);
	struct mcpgw_mon m = MCPGW_MON_INIT;
	m.pins = pins;
	m.workspace = sub;
	int gw;
	pid_t pid = serve_child(&gw, &m);
	assert_int_equal(proto_send(gw, msg, pin_msg(msg, "read_file", SHA_A), NULL, 0), 0);
	assert_int_equal(ask(gw, (char[]){ GWPROTO_PINS_WRITE }, 1), GWPROTO_PINS_OK);
	assert_int_equal(inside(gw, "a/b"), GWPROTO_INSIDE_YES);
	assert_int_equal(inside(gw, "../x"), GWPROTO_INSIDE_NO);
	assert_int_equal(serve_end(pid, gw), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(pins, "r");
	assert_non_null(f);
	assert_true(getdelim(&text, &len, '\0', f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "read_file"));
	assert_non_null(strstr(text, SHA_A));
	free(text);

	/* Each field checked: a short hash, a message with an fd, an
	 * unknown type each end the serving (the gateway is killed). */
	const char *bad_sha = "abc";
	pid = serve_child(&gw, &m);
	assert_int_equal(proto_send(gw, msg, pin_msg(msg, "t", bad_sha), NULL, 0), 0);
	assert_int_equal(serve_end(pid, gw), MCPGW_SERVE_BROKEN);
	pid = serve_child(&gw, &m);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_int_equal(proto_send(gw, (char[]){ GWPROTO_PINS_WRITE }, 1, &fd, 1), 0);
	close(fd);
	assert_int_equal(serve_end(pid, gw), MCPGW_SERVE_BROKEN);
	pid = serve_child(&gw, &m);
	assert_int_equal(proto_send(gw, "Z", 1, NULL, 0), 0);
	assert_int_equal(serve_end(pid, gw), MCPGW_SERVE_BROKEN);

	/* What is held until a write is bounded in bytes: pins of 160 KiB
	 * each are taken up to GWPROTO_MAX_PIN_BYTES, and the one past it
	 * breaks the protocol; a write in between starts the count again
	 * (the pins file m.pins names is the serving child's copy). */
	size_t big = 160 * 1024, fit = GWPROTO_MAX_PIN_BYTES / (big + 100);
	char *def = malloc(big + 1), *bm = malloc(big + 200);
	assert_non_null(def);
	assert_non_null(bm);
	memset(def, 'd', big);
	def[big] = '\0';
	for (int round = 0; round < 2; round++) {
		snprintf(pins, sizeof(pins), "%s/big-%d.pins.json", ws, round);
		pid = serve_child(&gw, &m);
		for (size_t i = 0; i < fit; i++) {
			char tool[32];
			snprintf(tool, sizeof(tool), "t%zu", i);
			assert_int_equal(proto_send(gw, bm, pin_msg_def(bm, tool, SHA_A, def), NULL, 0), 0);
		}
		if (round == 0) {
			assert_int_equal(proto_send(gw, bm, pin_msg_def(bm, "one-more", SHA_A, def), NULL, 0), 0);
			assert_int_equal(serve_end(pid, gw), MCPGW_SERVE_BROKEN);
		} else {
			assert_int_equal(ask(gw, (char[]){ GWPROTO_PINS_WRITE }, 1), GWPROTO_PINS_OK);
			assert_int_equal(proto_send(gw, bm, pin_msg_def(bm, "one-more", SHA_A, def), NULL, 0), 0);
			assert_int_equal(serve_end(pid, gw), 0);
		}
	}
	free(def);
	free(bm);
}

/* Paths judged in the root the server's supervisor sent: "/w" there, a
 * directory the host does not have; and nothing inside when none came. */
static void test_monitor_judges_in_the_servers_root(void **state)
{
	(void)state;
	char r[512], p[600];
	snprintf(r, sizeof(r), "%s/root", ws);
	mkdir(r, 0700);
	snprintf(p, sizeof(p), "%s/w", r);
	mkdir(p, 0700);
	int rs[2], gw;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rs), 0);
	int root = open(r, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(proto_send(rs[1], (char[]){ SANDBOX_ROOT_MSG }, 1, &root, 1), 0);
	close(root);
	struct mcpgw_mon m = MCPGW_MON_INIT;
	m.pins = "/nonexistent/pins.json";
	m.workspace = "/w";
	m.root_from = rs[0];
	pid_t pid = serve_child(&gw, &m);
	assert_int_equal(inside(gw, "/w/x"), GWPROTO_INSIDE_YES);
	assert_int_equal(inside(gw, "/etc/passwd"), GWPROTO_INSIDE_NO);
	assert_int_equal(serve_end(pid, gw), 0);
	/* A supervisor that ended without sending it: nothing is inside. */
	close(rs[1]);
	pid = serve_child(&gw, &m);
	assert_int_equal(inside(gw, "/w/x"), GWPROTO_INSIDE_NO);
	assert_int_equal(serve_end(pid, gw), 0);
	close(rs[0]);
}

/* A child that waits to be signalled. */
static pid_t pauser(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Gone with the test, failed or not. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	return pid;
}

/* The keeper: root's one writer of the pins file, the one to signal the
 * server, and the step-up socket's remover at its end; anything outside
 * its list ends it. */
static void test_pins_keeper(void **state)
{
	(void)state;
	char pins[512], sock[512], msg[600], a[600];
	int fds[PROTO_MAX_FDS];
	snprintf(pins, sizeof(pins), "%s/keeper.pins.json", ws);
	snprintf(sock, sizeof(sock), "%s/step-up.sock", ws);
	pid_t server = pauser();
	write_file("step-up.sock", "");
	struct mcpgw_mon m = MCPGW_MON_INIT;
	m.pins = pins;
	m.server = server;
	struct error err = { 0 };
	assert_int_equal(mcpgw_keeper_start(&m, 0, sock, &err), 0);
	/* A keeper that takes the bad pin below and answers nothing fails
	 * the test rather than hang it. */
	struct timeval tv = { .tv_sec = 10 };
	assert_int_equal(setsockopt(m.keeper, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(proto_send(m.keeper, msg, pin_msg(msg, "kept", SHA_A), NULL, 0), 0);
	assert_int_equal(proto_send(m.keeper, (char[]){ GWPROTO_PINS_WRITE }, 1, NULL, 0), 0);
	assert_int_equal(proto_recv(m.keeper, a, sizeof(a), fds), 1);
	assert_int_equal(a[0], GWPROTO_PINS_OK);
	struct stat st;
	assert_int_equal(stat(pins, &st), 0);
	/* SIGTERM to the server through its pidfd. */
	assert_int_equal(proto_send(m.keeper, (char[]){ GWPROTO_KEEPER_TERM }, 1, NULL, 0), 0);
	int status = 0;
	assert_int_equal(waitpid(server, &status, 0), server);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	/* A pin with a bad hash: the keeper checks it too, and ends; the
	 * step-up socket goes with it. */
	assert_int_equal(proto_send(m.keeper, msg, pin_msg(msg, "t", "xyz"), NULL, 0), 0);
	assert_int_equal(proto_recv(m.keeper, a, sizeof(a), fds), 0);
	assert_int_equal(stat(sock, &st), -1);
	mcpgw_keeper_end(&m);
	assert_int_equal(m.keeper, -1);

	/* Its neighbour: a keeper that is only told the monitor is done
	 * removes the socket too. */
	write_file("step-up.sock", "");
	server = pauser();
	m = (struct mcpgw_mon)MCPGW_MON_INIT;
	m.pins = pins;
	m.server = server;
	assert_int_equal(mcpgw_keeper_start(&m, 0, sock, &err), 0);
	assert_int_equal(stat(sock, &st), 0);
	mcpgw_keeper_end(&m);
	assert_int_equal(stat(sock, &st), -1);
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
}

/* The gateway killed through its pidfd at 'Z'; a request that carries an
 * fd, or one outside the list, ends the keeper (it answers nothing, and
 * the socket's end is seen). */
static void test_pins_keeper_kills_and_refuses(void **state)
{
	(void)state;
	char a[16];
	int fds[PROTO_MAX_FDS];
	struct error err = { 0 };
	const char *bad[] = { "Q", "TT", "fd" };
	for (size_t i = 0; i < 3; i++) {
		pid_t server = pauser(), gw = pauser();
		struct mcpgw_mon m = MCPGW_MON_INIT;
		m.pins = "/nonexistent/pins.json";
		m.server = server;
		assert_int_equal(mcpgw_keeper_start(&m, gw, "", &err), 0);
		struct timeval tv = { .tv_sec = 10 }; /* a keeper that goes on fails, not hangs, the test */
		assert_int_equal(setsockopt(m.keeper, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
		if (i == 0) {
			assert_int_equal(proto_send(m.keeper, (char[]){ GWPROTO_KEEPER_KILL_GATEWAY }, 1, NULL, 0), 0);
			int st = 0;
			assert_int_equal(waitpid(gw, &st, 0), gw);
			assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
			gw = 0;
		}
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (i == 2)
			assert_int_equal(proto_send(m.keeper, (char[]){ GWPROTO_KEEPER_TERM }, 1, &fd, 1), 0);
		else
			assert_int_equal(proto_send(m.keeper, bad[i], strlen(bad[i]), NULL, 0), 0);
		close(fd);
		assert_int_equal(proto_recv(m.keeper, a, sizeof(a), fds), 0);
		mcpgw_keeper_end(&m);
		/* Refused: the server was not signalled. */
		assert_int_equal(waitpid(server, NULL, WNOHANG), 0);
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
		if (gw > 0) {
			kill(gw, SIGKILL);
			waitpid(gw, NULL, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_field),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_monitor_serves_pins_and_paths),
		cmocka_unit_test(test_monitor_judges_in_the_servers_root),
		cmocka_unit_test(test_pins_keeper),
		cmocka_unit_test(test_pins_keeper_kills_and_refuses),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
