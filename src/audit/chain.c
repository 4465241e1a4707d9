/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hash chain: each line's hash covers its canonical text, which holds
 * the previous line's hash, so editing, dropping, adding or moving a line
 * shows at the first line after the change that a signature covers.
 */
#include "audit/audit.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int audit_chain_flush(struct audit_chain *c, struct error *err)
{
	if (!c->batch || c->batch->len == 0)
		return 0;
	/* Whole lines in one write(2): a crash leaves at most a torn last
	 * line, as with one write per line. */
	ssize_t w;
	do
		w = write(c->fd, c->batch->data, c->batch->len);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)c->batch->len)
		return w < 0 ? error_sys(err, errno, "cannot write the audit log")
			     : error_set(err, EIO, "cannot write the audit log: short write (%zd of %zu bytes)", w,
					 c->batch->len);
	buf_reset(c->batch);
	return 0;
}

int audit_chain_append(struct audit_chain *c, struct buf *canonical, struct error *err)
{
	static const char head[] = ",\"hash\":\"";
	static const char tail[] = "\"}}\n";
	char hash[65];
	size_t len = canonical->len;
	if (len == 0 || len > AUDIT_CANONICAL_MAX)
		return error_set(err, EINVAL, "audit record of %zu bytes: not a canonical record", len);
	audit_sha256_hex(canonical->data, len, hash);
	if (strlen(hash) != 64)
		return error_set(err, EIO, "audit record: SHA-256 failed");
	int r = buf_reserve(canonical, sizeof(head) - 1 + 64 + sizeof(tail) - 1);
	if (r < 0)
		return error_set(err, -r, "out of memory");
	/* Reserved above: these appends cannot fail. */
	char *p = canonical->data + len;
	memcpy(p, head, sizeof(head) - 1);
	p += sizeof(head) - 1;
	memcpy(p, hash, 64);
	p += 64;
	memcpy(p, tail, sizeof(tail));
	size_t total = len + sizeof(head) - 1 + 64 + sizeof(tail) - 1;
	if (c->batch) {
		if ((r = buf_append(c->batch, canonical->data, total)) < 0) {
			canonical->data[len] = '\0';
			return error_set(err, -r, "out of memory");
		}
		canonical->len = total;
		c->seq++;
		memcpy(c->prev, hash, sizeof(c->prev));
		return 0;
	}

	/* One write(2) on an O_APPEND fd: concurrent appenders never interleave
	 * within a line, and a crash leaves at most one torn line at the end,
	 * which the verifier tells apart from tampering. */
	ssize_t w;
	do
		w = write(c->fd, canonical->data, total);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)total) {
		int e = w < 0 ? errno : EIO;
		canonical->data[len] = '\0';
		/* WARNING: after a short write the log ends in a torn line; the
		 * chain must not be appended to again. */
		return w < 0 ? error_sys(err, e, "cannot write the audit log")
			     : error_set(err, EIO, "cannot write the audit log: short write (%zd of %zu bytes)", w,
					 total);
	}
	canonical->len = total;
	c->seq++;
	memcpy(c->prev, hash, sizeof(c->prev));
	return 0;
}
