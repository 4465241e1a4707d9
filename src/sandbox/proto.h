/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_PROTO_H
#define AIRLOCK_SANDBOX_PROTO_H

/* Messages on the SOCK_SEQPACKET pair between supervisor and sandbox init.
 * One message per record; the first byte says which. */

#define PROTO_GO 'G'     /* supervisor -> child: maps written, cgroup joined */
#define PROTO_ERROR 'E'  /* child -> supervisor: setup failed; text follows */
#define PROTO_READY 'R'  /* child -> supervisor: sandbox built; a flags byte follows
                          * (PROTO_FD_*) naming the SCM_RIGHTS fds, in that order */
#define PROTO_FD_NOTIFY 0x1 /* the seccomp user-notification listener */
#define PROTO_FD_PTY 0x2    /* the master of a pty from the sandbox's own devpts */
#define PROTO_FD_LISTEN 0x4 /* the egress proxy's listening socket, inside the sandbox's netns */
#define PROTO_FD_LISTEN6 0x8 /* transparent mode: its IPv6 twin on [::1] */
#define PROTO_FD_DNS 0x10   /* transparent mode: the DNS listener's UDP socket */
#define PROTO_FD_GUARD 0x20 /* filesystem.protect: the supervisor's end of the guard's socket */
#define PROTO_FD_LAYER 0x40 /* review and hold mode: the workspace overlay's mount (O_PATH), held
                             * so that its unmount, which syncs the whole filesystem under the
                             * layer, is not the sandbox's exit (review_run.c) */
#define PROTO_FD_ROOT 0x80 /* SECCOMP_TRACE_WRITES or plan->send_root: the sandbox's root
                            * directory (O_PATH), the noted calls' paths resolved beneath it
                            * (ftrace_root), and the caller's (sandbox_opts.report_root) */
#define PROTO_START 'T' /* supervisor -> child: start the command: ptrace attached
                         * (SECCOMP_TRACE_ALL, plan->hold), vm.memfd_noexec set
                         * (plan->privileged) */
#define PROTO_EXIT 'X'   /* init -> supervisor: the command's raw wait status (int) */

/* Exit status of the child when setup failed before it could report. */
#define SANDBOX_EXIT_SETUP_CHILD 125

#define PROTO_MAX_FDS 8

/* Send msg[0..len) as one message with the n (<= PROTO_MAX_FDS) fds
 * attached (SCM_RIGHTS). Returns 0 or a negative errno. */
int proto_send(int sock, const void *msg, size_t len, const int *fds, size_t n);

/* Send READY with the fds of fds[] that are >= 0, fds[i] being the one of
 * flag (1 << i): notify, pty master, listener, IPv6 listener, DNS, guard,
 * layer, root. */
int proto_send_ready(int sock, const int fds[PROTO_MAX_FDS]);

/* Receive one message into buf (NUL-terminated); fds[] receives attached
 * fds in order, the rest set to -1. Returns the message length, 0 on EOF,
 * negative errno. */
int proto_recv(int sock, char *buf, size_t len, int fds[PROTO_MAX_FDS]);

#endif
