/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_MCPGW_H
#define AIRLOCK_SANDBOX_MCPGW_H

/*
 * The session's MCP gateway (docs/policy.md "mcp", "In an airlock run
 * session"). When the policy declares mcp.servers, the supervisor listens
 * on a unix socket that the sandbox sees at MCPGW_SOCKET, and the agent's
 * MCP configuration names `airlock mcp connect NAME` as the server
 * command. For each connection the supervisor forks a monitor: it reads
 * the server's name, refuses a name the policy does not declare, starts
 * the declared command in a sandbox of its own (the runner: the server's
 * own policy, mcp.servers.NAME.policy, else the built-in default with the
 * session's workspace read-only and no network), and starts
 * airlock-mcp-gateway with the connection and the server's stdin and
 * stdout (proto/mcpgw.h): the gateway confines itself and relays with the
 * engine of src/mcp/. Each decision goes to the supervisor as one
 * SOCK_SEQPACKET message and from there into the session's signed log.
 *
 * The wire: the client sends the server's name and "\n"; the gateway
 * answers "OK\n" or "ERR <why>\n"; after OK, MCP's stdio framing (one
 * JSON-RPC message a line) in both directions, each message checked.
 * Nothing else is spoken on the socket: it reaches only the gateway.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "sandbox/auditlog.h"
#include "sandbox/internal.h"
#include "util/error.h"

/* Where the sandbox finds the gateway, and the airlock binary whose
 * `mcp connect` speaks to it (bound read-only, executable). */
#define MCPGW_SOCKET "/run/airlock/mcp.sock"
#define MCPGW_BINARY "/run/airlock/airlock"

/* Bound on connections at once: each is a gateway and a sandbox. */
#define MCPGW_MAX_CONNS 16

struct mcpgw {
	const struct policy *pol;     /* borrowed: the session's */
	struct policy **srv_pol;      /* owned: each server's sandbox policy, parallel to pol->mcp->servers */
	size_t n_srv;
	char dir[4096];               /* host directory holding the socket (0700), or "" */
	char sock[4200];
	int listen;                   /* -1 when the session has no MCP servers */
	int rec_rd, rec_wr;           /* records from the gateway processes */
	const char *audit_dir;        /* borrowed: the session's log directory, or NULL */
	struct auditlog *audit;       /* borrowed: where records go, or NULL */
	pid_t conns[MCPGW_MAX_CONNS]; /* connection monitors, 0 for a free slot */
	bool lost;                    /* a record could not reach the log, or a gateway was killed */
	bool gateway_killed;          /* the latter, or a monitor was killed (then monitor_killed) */
	bool monitor_killed;
	/* What each gateway is started with (proto/mcpgw.h): the directory
	 * and home the policy was read with (it relays as its server
	 * sandbox's uid and gid, sandbox_host_ids). */
	char cwd[4096], home[4096];
	/* Where the monitors are another process's (privsep.c): a monitor's
	 * end is reported by ended instead of judged here; mcpgw_kill asks
	 * kill_all(remote), and mcpgw_stop stop_all(remote), which read the
	 * records while they wait. NULL: here. */
	void (*ended)(struct mcpgw *g, int status);
	void (*kill_all)(void *remote);
	void (*stop_all)(void *remote);
	void *remote;
};

#define MCPGW_INIT { .listen = -1, .rec_rd = -1, .rec_wr = -1 }

/* Before plan_build's result is used: load each server's policy (errors
 * name the file and field), make the socket, and add it and the airlock
 * binary to the plan. A session without mcp.servers leaves g inert. */
int mcpgw_prepare(const struct policy *pol, const char *audit_dir, struct sandbox_plan *plan, struct mcpgw *g,
		  struct error *err) WUR;

/* The listener is readable: accept. Returns the connection to start
 * (mcpgw_conn_start), the caller's to close, or -1 (none, or refused:
 * no more MCP traffic in this session). */
int mcpgw_accept(struct mcpgw *g);

/* Fork the connection's monitor (a slot free), or refuse it; c stays the
 * caller's. */
void mcpgw_conn_start(struct mcpgw *g, int c);

/* Records are readable: forward them to the log. */
bool mcpgw_read(struct mcpgw *g); /* true when it read any */

/* A connection monitor's exit status when its gateway was killed (its
 * seccomp filter's SIGSYS: a gateway taken over) or broke the control
 * protocol: the session's MCP traffic ends (fail closed). */
#define MCPGW_EXIT_GATEWAY_KILLED 86

/* A child exited with status: true when it was a connection monitor.
 * Then g->gateway_killed says the run must end (fail closed). */
bool mcpgw_reaped(struct mcpgw *g, pid_t pid, int status);

/* A monitor ended with status (the raw wait status). */
void mcpgw_monitor_ended(struct mcpgw *g, int status);

/* The monitors of this process: end them all. */
void mcpgw_kill_local(struct mcpgw *g);

/* Let this process's monitors finish, bounded (their records read on the
 * way when rec_rd is ours); kill what is left. */
void mcpgw_stop_conns(struct mcpgw *g);

/* Remove the socket and its directory from the host. */
void mcpgw_remove_socket(struct mcpgw *g);

/* Fail closed: end every gateway process (and with it its server's
 * sandbox) at once. */
void mcpgw_kill(struct mcpgw *g);

/* The session ends: stop listening, let the gateway processes finish
 * (their clients are gone with the sandbox) for a bounded while, take
 * their last records, release everything. */
void mcpgw_stop(struct mcpgw *g);

/* The largest record a gateway process may send: the engine bounds what
 * it records well below this; a longer one is refused (and MCP traffic
 * stops, fail closed) rather than split. */
#define MCPGW_MAX_RECORD (128 * 1024)

/* The monitor's side of proto/mcpgw.h (mcpgw_monitor.c), shared by a
 * session's connection monitors and `airlock mcp run`. */

/* What a gateway is told in its 'G': strings borrowed; fds the caller's
 * (step_up and tty -1 for none; a session's client_in and client_out are
 * the one connection). */
struct mcpgw_start {
	const char *name, *pins, *workspace, *step_up_path;
	unsigned step_up_timeout;
	uid_t uid;
	gid_t gid;
	bool stdio; /* a stdio client: no "OK\n" before its JSON-RPC */
	int client_in, client_out, server_in, server_out, step_up, tty;
};

/* Start airlock-mcp-gateway (beside airlock) for pol, read again from
 * its file (or the built-in default) with cwd and home, with an empty
 * environment and rec_wr as its records socket. Its pid, and its control
 * socket's other end in *control; a negative errno with err set. */
pid_t mcpgw_gateway_spawn(const struct policy *pol, const char *cwd, const char *home, int rec_wr, int *control,
			  struct error *err);

/* Send the gateway its 'G'. 0, or a negative errno. */
int mcpgw_gateway_start(int control, const struct mcpgw_start *st) WUR;

/* A monitor's side of one gateway and its server (mcpgw_serve,
 * mcpgw_gateway_end); strings borrowed. */
struct mcpgw_mon {
	const char *pins;      /* the server's pins file: the one file written */
	const char *workspace; /* the server's workspace as its sandbox shows it (resolved), or
	                        * NULL: nothing is inside */
	int root_from;         /* the server's supervisor sends its sandbox's "/" here once it is
	                        * built (sandbox_opts.report_root); -1: paths are judged in this
	                        * process's view */
	int root;              /* taken from root_from at the first 'I'; -1 before */
	pid_t server;          /* the server's supervisor, 0 for none */
	int keeper;            /* -1: pins written, and the server signalled, here; else the pins
	                        * keeper's socket (mcpgw_keeper_start) */
	pid_t keeper_pid;
	int rec_rd;            /* the gateway's records, read while serving; -1: they go elsewhere */
	bool (*on_record)(void *ctx, const char *line, size_t len);
	void *ctx;
};

#define MCPGW_MON_INIT { .root_from = -1, .root = -1, .keeper = -1, .rec_rd = -1 }

/* Serve the gateway's control socket until it closes it: pins written
 * into m->pins (only there), paths judged against m->workspace in the
 * server's view. With m->rec_rd >= 0, the records socket is read
 * meanwhile, each record checked (mcpgw_record_ok) and handed to
 * m->on_record, up to the gateway's exit. 0; MCPGW_SERVE_BROKEN when the
 * gateway broke the control protocol (taken over: the caller kills it);
 * MCPGW_SERVE_RECORD when a record was refused, or on_record did not take
 * it (the log is gone: the caller stops the traffic). */
#define MCPGW_SERVE_BROKEN 1
#define MCPGW_SERVE_RECORD 2
int mcpgw_serve(int control, struct mcpgw_mon *m);

/* After mcpgw_serve returned served (or -1: the 'G' could not be sent):
 * the gateway killed unless it served to the end, then reaped; its death
 * by a signal recorded through m->on_record; the server stopped unless
 * the gateway ended cleanly, killed when the gateway was. The server is
 * not reaped here. */
enum { MCPGW_GW_OK, MCPGW_GW_FAILED, MCPGW_GW_KILLED };
int mcpgw_gateway_end(pid_t gw, int served, const char *name, struct mcpgw_mon *m);

/* A session's monitor serves its gateway under its own Landlock domain
 * and seccomp filter, and, started as root, as the server sandbox's uid.
 * What it may not do then goes to the pins keeper, a child forked here
 * before it confines itself (root, when it was), with a closed list of
 * requests (proto/mcpgw.h, "The pins keeper"): the pins the gateway
 * changed, written into m->pins; the server's supervisor (root while it
 * builds its sandbox) and the gateway gw (0: none) signalled; and, once
 * the monitor is gone, the step-up socket step_up_sock ("" for none)
 * removed from the state directory. It holds nothing else: no fd but
 * its socket and the two pidfds, and no environment. Sets m->keeper; 0
 * or a negative errno with err set. */
int mcpgw_keeper_start(struct mcpgw_mon *m, pid_t gw, const char *step_up_sock, struct error *err) WUR;

/* The monitor's own sandbox, once the server's sandbox and the gateway
 * gw are started, in the one order that holds: its pins keeper forked
 * (mcpgw_keeper_start), its environment wiped (caps_wipe_environ); as
 * root, root given up for uid and gid (the server sandbox's);
 * no_new_privs, not dumpable, a Landlock domain with no file access
 * (O_PATH lookups are not file access) and no signal beyond itself, and
 * its seccomp filter (seccomp_rules_build_monitor), which kills it for
 * any call its loop does not make. parent > 0: the parent-death signal
 * set again (a change of ids clears it) and parent checked to be alive.
 * Whatever it opens after this it opens first. 0 or a negative errno
 * with err set. */
int mcpgw_monitor_confine(struct mcpgw_mon *m, pid_t gw, const char *step_up_sock, uid_t uid, gid_t gid,
			  pid_t parent, struct error *err) WUR;

/* The keeper told the monitor is done (the step-up socket goes), and
 * reaped. */
void mcpgw_keeper_end(struct mcpgw_mon *m);

/* The records waiting on rec_rd (it does not block), each checked
 * (mcpgw_record_ok) and handed to on_record: how many were taken;
 * MCPGW_RECORDS_REFUSED at the first one refused or not taken (the rest
 * stay to be read: the caller stops the traffic); MCPGW_RECORDS_FAILED
 * when the socket failed. *eof once no more can come. */
#define MCPGW_RECORDS_REFUSED (-1)
#define MCPGW_RECORDS_FAILED (-2)
int mcpgw_records_take(int rec_rd, bool (*on_record)(void *ctx, const char *line, size_t len), void *ctx,
		       bool *eof);

/* A record is one whole line, at most MCPGW_MAX_RECORD bytes: one that
 * would split or join lines in the log is not. */
bool mcpgw_record_ok(const char *msg, size_t n);

/* The record of a gateway killed by sig (its filter's SIGSYS: taken
 * over), in line (cap bytes): its length, or a negative errno. */
int mcpgw_record_death(char *line, size_t cap, const char *name, int sig);

/* One line of the connection's opening, "\n" not included: the server's
 * name the client sends, the gateway's answer. Byte by byte, so nothing
 * of what follows is consumed. false at the end of the input or for a
 * line that does not fit in len. */
bool mcpgw_read_line(int fd, char *out, size_t len);

#endif
