/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_PROTO_H
#define AIRLOCK_SANDBOX_PROTO_H

/* Messages on the SOCK_SEQPACKET pair between supervisor and sandbox init.
 * One message per record; the first byte says which. */

#define PROTO_GO 'G'     /* supervisor -> child: maps written, cgroup joined */
#define PROTO_ERROR 'E'  /* child -> supervisor: setup failed; text follows */
#define PROTO_READY 'R'  /* child -> supervisor: sandbox built (+ SCM_RIGHTS notify fd) */
#define PROTO_EXIT 'X'   /* init -> supervisor: the command's raw wait status (int) */

/* Exit status of the child when setup failed before it could report. */
#define SANDBOX_EXIT_SETUP_CHILD 125

/* Send READY, attaching fd when fd >= 0. */
int proto_send_ready(int sock, int fd);

/* Receive one message into buf (NUL-terminated); *fd receives an attached
 * fd or -1. Returns the message length, 0 on EOF, negative errno. */
int proto_recv(int sock, char *buf, size_t len, int *fd);

#endif
