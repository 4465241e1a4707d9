/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-audit-writer: the decision log's writer.
 *
 *   airlock-audit-writer write LOG-DIR AUTHORITY-KEY CONTROL-FD EVENTS-FD AGENT BOUNDARY MODE POLICY-FILE IDENTITY MAX-SIZE
 *       started by `airlock run`: holds the session key, chains every
 *       event read from EVENTS-FD (one flat JSON object per line) into
 *       LOG-DIR/SESSION.jsonl, signs a checkpoint every AUDIT_CHECKPOINT_RECORDS records and
 *       every AUDIT_CHECKPOINT_SECONDS, and seals the log when the events
 *       end (EOF) or on SIGTERM. A log about to outgrow MAX-SIZE bytes
 *       gets a log_budget record and the seal, the writer sends "B" on
 *       EVENTS-FD and exits: the supervisor ends the run as it does when
 *       the writer dies. Answers "S" + session id on CONTROL-FD
 *       once the log is open, "E" + message when it cannot start; then,
 *       when IDENTITY is "identity", the session certificate and the
 *       egress proxy's end of the signing channel ("I", see
 *       identity_handoff), on which it signs the proxy's identity tokens.
 *
 * This is the only process that holds the authority key and the session
 * key; neither leaves it. It parses nothing from the sandbox directly
 * (events come from the supervisor, which also passes on the proxy's
 * records); the proxy's signing requests are checked against the one
 * shape they may have (audit/signproto.h).
 *
 * Its own executable, apart from airlock-audit (the verifier and the
 * log's readers), so that it links neither libcrypto nor libyaml: every
 * run with its log on starts it, and the sandboxed command waits until
 * the log is open. It signs with libsodium (key_sodium.c says why) and
 * hashes the chain with util/sha256.c (digest_plain.c); what it writes
 * verifies with airlock-audit's libcrypto.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/signproto.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/hex.h"


#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

#define AUDIT_CHECKPOINT_RECORDS 1000
#define AUDIT_CHECKPOINT_SECONDS 5
#define CERT_VALID_MS (24LL * 3600 * 1000)
/* Woken again sooner than this after a batch that emptied the socket, the
 * writer pauses this long before it looks again, and keeps pausing while
 * each look finds records: at a thousand records a second and more, the
 * records of a millisecond are parsed, chained and written together, and
 * the senders' records wake no one (a wake-up is the costliest part of a
 * record for the proxy and the MCP gateway, which send before they
 * forward). A look that finds nothing goes back to waiting. Below that
 * rate a record is read as soon as it comes, and the session's end is
 * not delayed. */
#define AUDIT_COALESCE_NS 1000000LL
/* Room kept below MAX-SIZE: the last record let in (at most
 * AUDIT_LINE_MAX), a checkpoint, the log_budget record and the seal. */
#define AUDIT_BUDGET_RESERVE (2 * AUDIT_LINE_MAX)

static volatile sig_atomic_t terminated;

static void on_term(int sig)
{
	(void)sig;
	terminated = 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct writer {
	struct audit_chain chain;
	struct audit_session s;
	struct audit_key *session_key;
	uint64_t since_checkpoint;
	time_t last_checkpoint;
	uint64_t bytes;    /* the log's size so far */
	uint64_t max_size; /* audit.max_size */
	struct buf cert;  /* the session certificate's JSON text */
	char cert_sig[2 * AUDIT_SIG_LEN + 1]; /* the authority's signature over it */
	uint8_t authority[AUDIT_PUB_LEN];     /* the key that made that signature */
	int64_t not_after;                    /* the certificate's, epoch ms */
	int sign_fd;                          /* identity.header: the signing channel, or -1 */
	struct signproto_expect expect;       /* what an identity token it signs must say */
	struct buf line;  /* scratch for one record */
	struct buf batch; /* records of a burst, written together */
};

/* Chain one event (a flat JSON line). */
static int write_event(struct writer *w, const struct audit_event *ev, struct error *err)
{
	buf_reset(&w->line);
	int r = audit_record_build(ev, &w->s, w->chain.seq, w->chain.prev, now_ms(), &w->line);
	if (r < 0)
		return error_set(err, -r, "cannot build a record");
	r = audit_chain_append(&w->chain, &w->line, err);
	if (r < 0)
		return r;
	w->bytes += w->line.len;
	w->since_checkpoint++;
	return 0;
}

static int write_json(struct writer *w, const char *json, struct error *err)
{
	struct audit_event *ev = malloc(sizeof(*ev));
	if (!ev)
		return error_set(err, ENOMEM, "out of memory");
	int r = audit_event_parse(json, strlen(json), ev);
	if (r == 0)
		r = write_event(w, ev, err);
	else
		r = error_set(err, EINVAL, "internal event is not valid: %s", json);
	free(ev);
	return r;
}

/* A checkpoint (or the seal): the session key signs the chain head. */
static int checkpoint(struct writer *w, bool seal, struct error *err)
{
	uint64_t covers = w->chain.seq - 1;
	char msg[256], sig_hex[2 * AUDIT_SIG_LEN + 1];
	uint8_t sig[AUDIT_SIG_LEN];
	int n = snprintf(msg, sizeof(msg), "%s\n%s\n%llu\n%s\n", seal ? "airlock-seal" : "airlock-checkpoint",
			 w->s.session_id, (unsigned long long)covers, w->chain.prev);
	if (audit_sign(w->session_key, msg, (size_t)n, sig) < 0)
		return error_set(err, EIO, "cannot sign a checkpoint");
	hex_encode(sig, sizeof(sig), sig_hex);
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"%s\",\"decision\":\"allow\",\"covers_seq\":%llu,\"head\":\"%s\","
		 "\"sig\":\"%s\"}",
		 seal ? "seal" : "checkpoint", (unsigned long long)covers, w->chain.prev, sig_hex);
	int r = write_json(w, json, err);
	w->since_checkpoint = 0;
	w->last_checkpoint = time(NULL);
	return r;
}

/* The first record: the session certificate, signed by the authority. */
static int session_start(struct writer *w, struct audit_key *authority, struct error *err)
{
	uint8_t spub[AUDIT_PUB_LEN], apub[AUDIT_PUB_LEN], sig[AUDIT_SIG_LEN];
	char spub_hex[65], apub_hex[65], sig_hex[2 * AUDIT_SIG_LEN + 1];
	audit_key_public(w->session_key, spub);
	audit_key_public(authority, apub);
	hex_encode(spub, sizeof(spub), spub_hex);
	hex_encode(apub, sizeof(apub), apub_hex);
	int64_t t = now_ms();
	struct buf cert = { 0 }, ev = { 0 };
	int r = buf_puts(&cert, "{\"agent\":") ?: buf_json_string(&cert, w->s.agent, strlen(w->s.agent)) ?:
		buf_printf(&cert, ",\"session\":\"%s\",\"boundary\":\"%s\",\"policy_sha256\":\"%s\",\"host\":",
			   w->s.session_id, w->s.boundary, w->s.policy_sha256) ?:
		buf_json_string(&cert, w->s.host, strlen(w->s.host)) ?:
		buf_printf(&cert, ",\"not_before\":%lld,\"not_after\":%lld,\"session_key\":\"%s\",\"authority\":\"%s\"}",
			   (long long)t, (long long)(t + CERT_VALID_MS), spub_hex, apub_hex);
	if (r == 0 && audit_sign(authority, cert.data, cert.len, sig) < 0)
		r = -EIO;
	if (r == 0) {
		hex_encode(sig, sizeof(sig), sig_hex);
		memcpy(w->cert_sig, sig_hex, sizeof(w->cert_sig));
		memcpy(w->authority, apub, sizeof(apub));
		w->not_after = t + CERT_VALID_MS;
		r = buf_puts(&ev, "{\"kind\":\"session_start\",\"decision\":\"allow\",\"certificate\":") ?:
			buf_json_string(&ev, cert.data, cert.len) ?:
			buf_printf(&ev, ",\"certificate_sig\":\"%s\",\"authority\":\"%s\"}", sig_hex, apub_hex);
	}
	if (r == 0)
		r = write_json(w, ev.data, err);
	else
		r = error_set(err, -r, "cannot make the session certificate");
	w->cert = cert; /* kept for the identity hand-off */
	buf_free(&ev);
	return r;
}

/* identity.header: the proxy's identity tokens are signed with the
 * session key, so that a token downstream and this log prove the same
 * session; the key stays here and the proxy asks for each signature
 * (audit/signproto.h), as OpenSSH's monitor signs for its unprivileged
 * child. The channel is a socketpair made now, after the sandbox was
 * cloned: the proxy's end goes to the supervisor with the certificate
 * ('I' sig(128 hex) cert, the end attached), and from it to the proxy
 * over the proxy's control socket; no path names it. */
static int identity_handoff(struct writer *w, int control, struct error *err)
{
	int sp[2];
	int r = signproto_expect_init(&w->expect, w->cert.data, w->cert.len, w->cert_sig, w->s.agent, w->s.session_id,
				      w->s.policy_sha256, w->s.boundary, w->authority, w->not_after);
	if (r < 0)
		return error_set(err, -r, "cannot describe the identity tokens to sign");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return error_sys(err, errno, "socketpair");
	struct buf msg = { 0 };
	r = buf_puts(&msg, "I") ?: buf_append(&msg, w->cert_sig, 2 * AUDIT_SIG_LEN) ?:
		buf_append(&msg, w->cert.data, w->cert.len);
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm = { 0 };
	struct iovec iov = { .iov_base = msg.data, .iov_len = msg.len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sp[1], sizeof(int));
	if (r < 0)
		r = error_set(err, ENOMEM, "out of memory");
	else if (sendmsg(control, &mh, MSG_NOSIGNAL) != (ssize_t)msg.len)
		r = error_sys(err, errno, "cannot hand the signing channel to the supervisor");
	buf_free(&msg);
	close(sp[1]);
	if (r < 0) {
		close(sp[0]);
		return r;
	}
	w->sign_fd = sp[0];
	return 0;
}

/* Answer the proxy's signing requests waiting on the channel, a few at a
 * time so that the events are not kept waiting. The proxy gone (EOF, an
 * error), the channel is closed and the proxy's later requests fail. */
static void serve_signing(struct writer *w)
{
	uint8_t req[SIGNPROTO_REQ_MAX + 1], ans[SIGNPROTO_ANSWER_CAP];
	for (int i = 0; i < 8 && w->sign_fd >= 0; i++) {
		/* One more byte than a request may have: a longer one is
		 * cut there, and refused for its length. */
		ssize_t n = recv(w->sign_fd, req, sizeof(req), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			close(w->sign_fd);
			w->sign_fd = -1;
			return;
		}
		size_t m = signproto_answer(&w->expect, w->session_key, req, (size_t)n, time(NULL), ans);
		if (m && send(w->sign_fd, ans, m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN) {
			close(w->sign_fd);
			w->sign_fd = -1;
		}
	}
}

/* ---- the writer's own confinement ---- */

/* Once every file it will use is open, the writer needs no path, no
 * network and no other process. What it reads comes from processes that
 * parse the agent's bytes (the events the supervisor forwards from the
 * proxy and the MCP gateway, the proxy's signing requests): a writer
 * taken over through them would hold both keys and the log. Landlock
 * leaves it no file to open, make or remove, no TCP port and (ABI 6) no
 * abstract socket or signal beyond itself; the seccomp allow-list leaves
 * it the calls of its loop, and kills it for any other (the supervisor
 * then ends the run). */
#define LL_FS_ALL_V1 ((1ULL << 13) - 1)
#define LL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define LL_NET_TCP 3ULL               /* ABI 4: bind and connect */
#define LL_SCOPE_ALL 3ULL             /* ABI 6: abstract unix sockets, signals */

static int landlock_self(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
	if (abi < 1)
		return 0; /* a kernel without Landlock: the allow-list still holds */
	struct {
		uint64_t fs, net, scoped;
	} attr = { .fs = LL_FS_ALL_V1 };
	size_t size = sizeof(uint64_t);
	if (abi >= 2)
		attr.fs |= LL_FS_REFER;
	if (abi >= 3)
		attr.fs |= LL_FS_TRUNCATE;
	if (abi >= 4) {
		attr.net = LL_NET_TCP;
		size = 2 * sizeof(uint64_t);
	}
	if (abi >= 5)
		attr.fs |= LL_FS_IOCTL_DEV;
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ALL;
		size = sizeof(attr);
	}
	int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return -errno;
	int r = syscall(SYS_landlock_restrict_self, fd, 0) < 0 ? -errno : 0;
	close(fd);
	return r;
}

#if defined(__x86_64__)
#define WRITER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define WRITER_ARCH AUDIT_ARCH_AARCH64
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WRITER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WRITER_ASAN 1
#endif

static int seccomp_self(void)
{
#if defined(WRITER_ARCH) && !defined(WRITER_ASAN)
	/* WARNING: every call the loop, a checkpoint, the seal, the budget's
	 * end and the error path make (libc's and libsodium's included)
	 * must be here, or the writer dies at it. */
	static const int allowed[] = {
		SYS_read, SYS_write, SYS_writev, SYS_recvfrom, SYS_sendto, SYS_close, SYS_shutdown, SYS_fsync,
		SYS_ppoll, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep, SYS_dup3, SYS_prctl,
		SYS_brk, SYS_mmap, SYS_munmap, SYS_mremap, SYS_madvise, SYS_mprotect, SYS_futex, SYS_getrandom,
		SYS_newfstatat, SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_getpid, SYS_gettid,
		SYS_tgkill, SYS_restart_syscall, SYS_exit, SYS_exit_group,
#ifdef SYS_poll
		SYS_poll,
#endif
#ifdef SYS_dup2
		SYS_dup2,
#endif
#ifdef SYS_fstat
		SYS_fstat,
#endif
#ifdef SYS_time
		SYS_time,
#endif
#ifdef SYS_gettimeofday
		SYS_gettimeofday,
#endif
	};
	struct sock_filter prog[8 + 2 * ARRAY_SIZE(allowed)];
	size_t n = 0;
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, WRITER_ARCH, 1, 0);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* x32 calls, numbered from 0x40000000 under the same arch. */
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
		prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)allowed[i], 0, 1);
		prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	struct sock_fprog fp = { .len = (unsigned short)n, .filter = prog };
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) < 0 ? -errno : 0;
#else
	return 0;
#endif
}

/* Both, after PR_SET_NO_NEW_PRIVS (which each needs). */
static int confine(struct error *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_sys(err, errno, "PR_SET_NO_NEW_PRIVS");
	int r = landlock_self();
	if (r < 0)
		return error_sys(err, -r, "cannot confine the audit writer with Landlock");
	r = seccomp_self();
	if (r < 0)
		return error_sys(err, -r, "cannot confine the audit writer with seccomp");
	return 0;
}

__attribute__((noreturn)) static void refuse(int control, const char *msg)
{
	char buf[ERROR_MSG_MAX + 2];
	int n = snprintf(buf, sizeof(buf), "E%s", msg);
	(void)!send(control, buf, n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, MSG_NOSIGNAL);
	_exit(1);
}

/* The session's identity, its keys and its log file, created and
 * started; the supervisor hears "S<id>\t<path>" or the reason it was
 * not. */
static void open_session(struct writer *w, char **argv, int control, struct error *err)
{
	if (w->max_size < 2 * AUDIT_BUDGET_RESERVE)
		refuse(control, "the decision log's budget is too small");
	memset(w->chain.prev, '0', 64);
	snprintf(w->s.agent, sizeof(w->s.agent), "%s", argv[6]);
	snprintf(w->s.boundary, sizeof(w->s.boundary), "%s", argv[7]);
	snprintf(w->s.mode, sizeof(w->s.mode), "%s", argv[8]);
	audit_policy_sha256(argv[9], w->s.policy_sha256);
	w->s.enforced = strcmp(w->s.mode, "observe") != 0;
	if (gethostname(w->s.host, sizeof(w->s.host) - 1) < 0)
		snprintf(w->s.host, sizeof(w->s.host), "unknown");
	if (audit_uuid7(w->s.session_id) < 0)
		refuse(control, "cannot make a session id");

	struct audit_key *authority = NULL;
	if (audit_key_load_or_create(argv[3], &authority, err) < 0 || audit_key_generate(&w->session_key, err) < 0)
		refuse(control, err->msg);

	/* One file per session, named by it, never overwritten. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.jsonl", argv[2], w->s.session_id);
	w->chain.fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (w->chain.fd < 0) {
		error_sys(err, errno, "cannot create the audit log %s", path);
		refuse(control, err->msg);
	}
	if (session_start(w, authority, err) < 0)
		refuse(control, err->msg);
	audit_key_free(authority);

	char ok[4200];
	int n = snprintf(ok, sizeof(ok), "S%s\t%s", w->s.session_id, path);
	if (send(control, ok, (size_t)n, MSG_NOSIGNAL) != n)
		_exit(1);
}

/* Write each whole line read so far as a record, and drop a line that
 * never ends. 0; 1 when the log reached its budget (the rest is not
 * taken); -1 with err set. */
static int take_lines(struct writer *w, struct buf *in, struct audit_event *ev, bool *ended, struct error *err)
{
	char *start = in->data, *nl;
	while (start && (nl = memchr(start, '\n', in->len - (size_t)(start - in->data)))) {
		if (w->bytes > w->max_size - AUDIT_BUDGET_RESERVE)
			return 1;
		if (audit_event_parse(start, (size_t)(nl - start), ev) == 0) {
			if (write_event(w, ev, err) < 0)
				return -1;
			const char *kind = audit_event_str(ev, "kind");
			*ended = *ended || (kind && strcmp(kind, "session_end") == 0);
		} else if (write_json(w, "{\"kind\":\"malformed_event\",\"decision\":\"deny\","
					 "\"reason\":\"an event the audit writer could not read\"}",
				      err) < 0) {
			return -1;
		}
		if (w->since_checkpoint >= AUDIT_CHECKPOINT_RECORDS && checkpoint(w, false, err) < 0)
			return -1;
		start = nl + 1;
	}
	if (start)
		buf_consume(in, (size_t)(start - in->data));
	if (in->len > AUDIT_EVENT_MAX_LINE * 4) {
		/* A line that never ends is not one of ours: it is
		 * dropped, and the log says so. */
		buf_reset(in);
		if (write_json(w, "{\"kind\":\"malformed_event\",\"decision\":\"deny\","
				   "\"reason\":\"an event line longer than the writer accepts\"}",
			       err) < 0)
			return -1;
	}
	return 0;
}

/* The log is full: say so, seal it, tell the supervisor. Returns only
 * when that failed (err says why). */
static int seal_over_budget(struct writer *w, int events, struct error *err)
{
	char json[512];
	snprintf(json, sizeof(json),
		 "{\"kind\":\"log_budget\",\"decision\":\"deny\",\"reason\":\"the decision log reached "
		 "audit.max_size (%llu bytes); the run was ended\"}",
		 (unsigned long long)w->max_size);
	if (write_json(w, json, err) < 0 || checkpoint(w, true, err) < 0 ||
	    audit_chain_flush(&w->chain, err) < 0)
		return -1;
	(void)shutdown(events, SHUT_RD);
	(void)!send(events, "B", 1, MSG_NOSIGNAL);
	fsync(w->chain.fd);
	_exit(0);
}

static int cmd_write(int argc, char **argv)
{
	/* Dies with the supervisor: a session whose supervisor was killed
	 * stays unsealed, and verify says so. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (argc != 12) {
		fprintf(stderr, "airlock-audit-writer: started by airlock run, not by hand\n");
		return 2;
	}
	int control = atoi(argv[4]), events = atoi(argv[5]);
	struct error err = { 0 };
	struct writer w = { .chain = { .seq = 1 }, .max_size = strtoull(argv[11], NULL, 10), .sign_fd = -1 };
	open_session(&w, argv, control, &err);
	if (strcmp(argv[10], "identity") == 0 && identity_handoff(&w, control, &err) < 0)
		goto fatal;
	close(control);

	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	/* Opened now: no path can be opened once confined. */
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (confine(&err) < 0)
		goto fatal;
	w.last_checkpoint = time(NULL);
	w.chain.batch = &w.batch;
	struct buf in = { 0 };
	struct audit_event *ev = malloc(sizeof(*ev));
	if (!ev)
		_exit(1);
	bool eof = false, ended = false, slept = false;
	int64_t last_wake = 0;
	while (!eof && !terminated) {
		bool soon = false, drained = false;
		/* A checkpoint is due only for records it would cover: with
		 * none since the last, the writer sleeps until an event comes.
		 * (Waiting "until the checkpoint is due" regardless made every
		 * quiet stretch past the first five seconds a busy loop: a
		 * core taken from the agent's work for the rest of the run.) */
		int wait = -1;
		if (w.since_checkpoint) {
			time_t left = w.last_checkpoint + AUDIT_CHECKPOINT_SECONDS - time(NULL);
			wait = left < 0 ? 0 : (int)left * 1000;
		}
		struct pollfd p[2] = { { .fd = events, .events = POLLIN }, { .fd = w.sign_fd, .events = POLLIN } };
		/* After a pause, only a look: what came during it is taken
		 * without a wake-up; nothing came, and we wait again. */
		int pr = poll(p, 2, slept ? 0 : wait);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0 && p[1].revents)
			serve_signing(&w);
		if (pr == 0 && slept) {
			slept = false;
			continue;
		}
		if (pr > 0 && p[0].revents) {
			if (buf_reserve(&in, 65536) < 0)
				break;
			int64_t t = clock_mono_ns();
			/* Records close together, or ones that came during a
			 * pause: the stream is busy, keep taking it in batches. */
			soon = slept || t - last_wake < AUDIT_COALESCE_NS;
			last_wake = t;
			ssize_t got = read(events, in.data + in.len, 65536);
			if (got < 0 && errno != EINTR && errno != EAGAIN)
				break;
			drained = got < 65536;
			if (got == 0)
				eof = true;
			if (got > 0)
				in.len += (size_t)got;
			int taken = take_lines(&w, &in, ev, &ended, &err);
			if (taken > 0)
				goto full;
			if (taken < 0)
				goto fatal;
		}
		if (w.since_checkpoint && time(NULL) >= w.last_checkpoint + AUDIT_CHECKPOINT_SECONDS &&
		    checkpoint(&w, false, &err) < 0)
			goto fatal;
		/* Everything read so far is on disk before we wait again. */
		if (audit_chain_flush(&w.chain, &err) < 0)
			goto fatal;
		/* Never while a backlog waits, nor once the session ended:
		 * only after a small batch of a busy stream. While we sleep
		 * a sender's record wakes no one; the proxy's signing request
		 * does (it waits on the answer, a record does not). */
		slept = soon && drained && !eof && !ended;
		if (slept) {
			struct timespec d = { 0, AUDIT_COALESCE_NS };
			struct pollfd sp = { .fd = w.sign_fd, .events = POLLIN };
			if (w.sign_fd < 0 || ppoll(&sp, 1, &d, NULL) < 0)
				nanosleep(&d, NULL);
		}
	}
	/* Sealed only when the supervisor ended the session (or asked with
	 * SIGTERM): events that stop without an end mean the supervisor
	 * died, and the log says so by staying unsealed. */
	if (eof && !ended && !terminated) {
		if (audit_chain_flush(&w.chain, &err) < 0)
			goto fatal;
		fsync(w.chain.fd);
		_exit(1);
	}
	if (checkpoint(&w, true, &err) < 0 || audit_chain_flush(&w.chain, &err) < 0)
		goto fatal;
	/* The seal is written: the supervisor, which waits for this byte,
	 * may end the run. The fsync that makes the log durable then runs on
	 * its own time rather than the run's (a millisecond to tens of them):
	 * we outlive the supervisor for it, holding none of its caller's
	 * descriptors, so that nobody waiting on those waits for the disk. */
	prctl(PR_SET_PDEATHSIG, 0);
	for (int fd = 0; fd <= 2 && devnull >= 0; fd++)
		(void)dup2(devnull, fd);
	(void)!send(events, "S", 1, MSG_NOSIGNAL);
	fsync(w.chain.fd);
	_exit(0);
full:
	/* audit.max_size: an agent that floods the log (junk DNS names,
	 * denied requests by the thousand) must not fill the host's disk, nor
	 * go on unrecorded. The log says why it ends and is sealed; the
	 * supervisor reads "B" and ends the run (fail closed). What was sent
	 * after this point is not in the log: the run it came from is being
	 * ended. */
	if (seal_over_budget(&w, events, &err) < 0)
		goto fatal;
fatal:
	fprintf(stderr, "airlock-audit: %s\n", err.msg);
	_exit(1);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "write") == 0)
		return cmd_write(argc, argv);
	fprintf(stderr, "airlock-audit-writer: started by airlock run, not by hand\n");
	return 2;
}
