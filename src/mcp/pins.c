/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tool pinning: the SHA-256 of each tool's definition, taken the first
 * time the gateway lists it, kept in a JSON file. A later definition with
 * another hash (a "rug pull": the description now tells the model to do
 * something else) blocks the tool until a person approves the change.
 *
 * The pin file: {"version":1,"tools":{NAME:{"sha256":HEX,"definition":TEXT,
 * "pending_sha256":HEX,"pending_definition":TEXT}}}; the pending members
 * only while a change waits for approval.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/hex.h"
#include "util/sha256.h"

static const char *const pinned_members[] = { "annotations", "description", "inputSchema", "name",
					      "outputSchema", "title" };

int mcp_tool_hash(const struct imp_node *tool, char hex[65], char **canon)
{
	struct buf b = { 0 };
	int r = buf_puts(&b, "{");
	bool first = true;
	/* In sorted order, so that the text is canonical; members outside
	 * this list (_meta, icons) do not change what the model reads. */
	for (size_t i = 0; r >= 0 && i < sizeof(pinned_members) / sizeof(pinned_members[0]); i++) {
		const struct imp_node *v = imp_get(tool, pinned_members[i]);
		if (!v)
			continue;
		if (!first)
			r = buf_puts(&b, ",");
		first = false;
		if (r >= 0)
			r = buf_printf(&b, "\"%s\":", pinned_members[i]);
		if (r >= 0)
			r = mcp_json_write(&b, v, true);
	}
	if (r >= 0)
		r = buf_puts(&b, "}");
	if (r < 0) {
		buf_free(&b);
		return r;
	}
	sha256_hex(b.data, b.len, hex);
	*canon = b.data;
	return 0;
}

static void pin_free(struct mcp_pin *p)
{
	free(p->tool);
	free(p->definition);
	free(p->pending_definition);
}

void mcp_pins_free(struct mcp_pins *p)
{
	for (size_t i = 0; i < p->n; i++)
		pin_free(&p->v[i]);
	free(p->v);
	free(p->path);
	memset(p, 0, sizeof(*p));
}

struct mcp_pin *mcp_pins_find(const struct mcp_pins *p, const char *tool)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].tool, tool))
			return &p->v[i];
	return NULL;
}

static struct mcp_pin *pin_add(struct mcp_pins *p, const char *tool)
{
	struct mcp_pin *v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->v = v;
	memset(&v[p->n], 0, sizeof(v[0]));
	if (!(v[p->n].tool = strdup(tool)))
		return NULL;
	return &v[p->n++];
}

/* A sha256 as pins carry it: 64 lower-case hex digits, nothing else. */
static bool hex64(const char *s, size_t n)
{
	uint8_t d[32];
	return n == 64 && hex_decode(s, n, d, sizeof(d));
}

static bool is_hex64(const struct imp_node *n)
{
	return n && n->kind == IMP_STR && hex64(n->str, n->len);
}

size_t mcp_pin_encoded_len(const struct mcp_pin *pin)
{
	return strlen(pin->tool) + strlen(pin->sha256) + strlen(pin->definition) + strlen(pin->pending_sha256) +
	       (pin->pending_definition ? strlen(pin->pending_definition) : 0) + 5;
}

int mcp_pin_encode(const struct mcp_pin *pin, struct buf *out)
{
	const char *f[] = { pin->tool, pin->sha256, pin->definition, pin->pending_sha256,
			    pin->pending_definition ? pin->pending_definition : "" };
	int r = 0;
	for (size_t i = 0; i < 5 && r >= 0; i++)
		r = buf_append(out, f[i], strlen(f[i]) + 1);
	return r;
}

int mcp_pin_decode(struct mcp_pins *p, const char *msg, size_t len)
{
	const char *f[5];
	size_t k = 0;
	const char *q = msg, *end = msg + len;
	while (k < 5 && q < end) {
		const char *nul = memchr(q, '\0', (size_t)(end - q));
		if (!nul)
			return -EINVAL;
		f[k++] = q;
		q = nul + 1;
	}
	/* Five fields and nothing after; a pending change whole or absent. */
	if (k != 5 || q != end || !f[0][0] || !hex64(f[1], strlen(f[1])) || !f[2][0] ||
	    (f[3][0] && !hex64(f[3], strlen(f[3]))) || (!f[3][0]) != (!f[4][0]))
		return -EINVAL;
	struct mcp_pin *v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->v = v;
	struct mcp_pin *pin = &v[p->n];
	memset(pin, 0, sizeof(*pin));
	pin->dirty = true;
	memcpy(pin->sha256, f[1], 65);
	memcpy(pin->pending_sha256, f[3], strlen(f[3]) + 1);
	if (!(pin->tool = strdup(f[0])) || !(pin->definition = strdup(f[2])) ||
	    (f[4][0] && !(pin->pending_definition = strdup(f[4])))) {
		free(pin->tool);
		free(pin->definition);
		return -ENOMEM;
	}
	p->n++;
	return 0;
}

int mcp_pins_load(struct mcp_pins *p, const char *path, struct error *err)
{
	struct buf text = { 0 };
	memset(p, 0, sizeof(*p));
	if (!(p->path = strdup(path)))
		return error_set(err, ENOMEM, "out of memory");
	int r = file_read_all(path, MCP_MAX_MESSAGE, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return error_set(err, -r, "%s: %s", path, strerror(-r));
	_cleanup_imp_node_ struct imp_node *root = NULL;
	r = imp_json_parse_max(path, text.data ? text.data : "", text.len, MCP_MAX_MESSAGE, &root, err);
	buf_free(&text);
	if (r < 0)
		return r;
	const struct imp_node *ver = imp_get(root, "version"), *tools = imp_get(root, "tools");
	if (root->kind != IMP_MAP || !ver || ver->kind != IMP_NUM || strcmp(ver->str, "1") || !tools ||
	    tools->kind != IMP_MAP)
		return error_set(err, EINVAL, "%s: not a pin file (version 1 with a tools object)", path);
	for (size_t i = 0; i < tools->n; i++) {
		const struct imp_node *t = &tools->v[i];
		const struct imp_node *h = imp_get(t, "sha256"), *d = imp_get(t, "definition");
		const struct imp_node *ph = imp_get(t, "pending_sha256"), *pd = imp_get(t, "pending_definition");
		if (t->kind != IMP_MAP || !is_hex64(h) || !d || d->kind != IMP_STR || (ph && !is_hex64(ph)) ||
		    (!ph != !pd) || (pd && pd->kind != IMP_STR))
			return error_set(err, EINVAL, "%s:%u:%u: tools.%s: expected sha256 and definition, and "
					 "pending_sha256 with pending_definition or neither", path, t->line, t->col,
					 t->key);
		struct mcp_pin *pin = pin_add(p, t->key);
		if (!pin || !(pin->definition = strdup(d->str)) || (pd && !(pin->pending_definition = strdup(pd->str))))
			return error_set(err, ENOMEM, "out of memory");
		memcpy(pin->sha256, h->str, 65);
		if (ph)
			memcpy(pin->pending_sha256, ph->str, 65);
	}
	return 0;
}

static int pins_write(const struct mcp_pins *p, struct error *err)
{
	struct buf b = { 0 };
	int r = buf_puts(&b, "{\"version\":1,\"tools\":{");
	for (size_t i = 0; r >= 0 && i < p->n; i++) {
		const struct mcp_pin *pin = &p->v[i];
		if (i)
			r = buf_puts(&b, ",");
		if (r >= 0)
			r = buf_puts(&b, "\n  ");
		if (r >= 0)
			r = buf_json_string(&b, pin->tool, strlen(pin->tool));
		if (r >= 0)
			r = buf_printf(&b, ":{\"sha256\":\"%s\",\"definition\":", pin->sha256);
		if (r >= 0)
			r = buf_json_string(&b, pin->definition, strlen(pin->definition));
		if (r >= 0 && pin->pending_sha256[0]) {
			r = buf_printf(&b, ",\"pending_sha256\":\"%s\",\"pending_definition\":", pin->pending_sha256);
			if (r >= 0)
				r = buf_json_string(&b, pin->pending_definition, strlen(pin->pending_definition));
		}
		if (r >= 0)
			r = buf_puts(&b, "}");
	}
	if (r >= 0)
		r = buf_puts(&b, "\n}}\n");
	if (r < 0) {
		buf_free(&b);
		return error_set(err, ENOMEM, "out of memory");
	}
	/* Written to a temporary file and renamed: a gateway killed while
	 * writing must not leave a truncated file that pins nothing. */
	_cleanup_free_ char *tmp = NULL;
	if (asprintf(&tmp, "%s.tmp.%d", p->path, (int)getpid()) < 0) {
		buf_free(&b);
		return error_set(err, ENOMEM, "out of memory");
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = error_set(err, errno, "%s: %s", tmp, strerror(errno));
		buf_free(&b);
		return r;
	}
	size_t off = 0;
	while (off < b.len) {
		ssize_t w = write(fd, b.data + off, b.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = error_set(err, errno, "%s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			buf_free(&b);
			return r;
		}
		off += (size_t)w;
	}
	buf_free(&b);
	if (fsync(fd) < 0 || close(fd) < 0 || rename(tmp, p->path) < 0) {
		r = error_set(err, errno, "%s: %s", p->path, strerror(errno));
		unlink(tmp);
		return r;
	}
	return 0;
}

/* dst's entry for src's tool becomes a copy of src. */
static int pin_take(struct mcp_pins *dst, const struct mcp_pin *src)
{
	struct mcp_pin *d = mcp_pins_find(dst, src->tool);
	if (!d && !(d = pin_add(dst, src->tool)))
		return -ENOMEM;
	char *def = strdup(src->definition);
	char *pend = src->pending_definition ? strdup(src->pending_definition) : NULL;
	if (!def || (src->pending_definition && !pend)) {
		free(def);
		free(pend);
		return -ENOMEM;
	}
	free(d->definition);
	free(d->pending_definition);
	d->definition = def;
	d->pending_definition = pend;
	memcpy(d->sha256, src->sha256, sizeof(d->sha256));
	memcpy(d->pending_sha256, src->pending_sha256, sizeof(d->pending_sha256));
	return 0;
}

int mcp_pins_save(struct mcp_pins *p, struct error *err)
{
	_cleanup_free_ char *lockpath = NULL;
	if (asprintf(&lockpath, "%s.lock", p->path) < 0)
		return error_set(err, ENOMEM, "out of memory");
	_cleanup_close_ int lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0)
		return error_set(err, errno, "%s: %s", lockpath, strerror(errno));
	int r;
	while ((r = flock(lock, LOCK_EX)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return error_set(err, errno, "%s: %s", lockpath, strerror(errno));
	struct mcp_pins cur;
	if ((r = mcp_pins_load(&cur, p->path, err)) < 0) {
		mcp_pins_free(&cur);
		return r;
	}
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].dirty && pin_take(&cur, &p->v[i]) < 0) {
			mcp_pins_free(&cur);
			return error_set(err, ENOMEM, "out of memory");
		}
	if ((r = pins_write(&cur, err)) < 0) {
		mcp_pins_free(&cur);
		return r;
	}
	/* The file as written is what this process holds from now on. */
	char *path = p->path;
	p->path = NULL;
	mcp_pins_free(p);
	*p = cur;
	free(p->path);
	p->path = path;
	return 0;
}

bool mcp_pin_approve(struct mcp_pin *pin)
{
	if (!pin->pending_sha256[0])
		return false;
	memcpy(pin->sha256, pin->pending_sha256, sizeof(pin->sha256));
	free(pin->definition);
	pin->definition = pin->pending_definition;
	pin->pending_definition = NULL;
	pin->pending_sha256[0] = '\0';
	pin->dirty = true;
	return true;
}

enum mcp_pin_state mcp_pins_check(struct mcp_pins *p, const char *tool, const char *hex, const char *canon,
				  bool *changed)
{
	struct mcp_pin *pin = mcp_pins_find(p, tool);
	if (!pin) {
		pin = pin_add(p, tool);
		/* Out of memory: not pinned; treated as changed, so blocked. */
		if (!pin || !(pin->definition = strdup(canon)))
			return MCP_PIN_CHANGED;
		memcpy(pin->sha256, hex, 65);
		pin->dirty = true;
		*changed = true;
		return MCP_PIN_NEW;
	}
	if (!strcmp(pin->sha256, hex)) {
		if (pin->pending_sha256[0]) {
			/* Changed back to what was approved: nothing pending. */
			pin->pending_sha256[0] = '\0';
			free(pin->pending_definition);
			pin->pending_definition = NULL;
			pin->dirty = true;
			*changed = true;
		}
		return MCP_PIN_SAME;
	}
	if (strcmp(pin->pending_sha256, hex)) {
		char *d = strdup(canon);
		if (d) {
			free(pin->pending_definition);
			pin->pending_definition = d;
			memcpy(pin->pending_sha256, hex, 65);
			pin->dirty = true;
			*changed = true;
		}
	}
	return MCP_PIN_CHANGED;
}
