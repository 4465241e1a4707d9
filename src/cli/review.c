/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock review | apply | discard: what a run in review mode
 * (sandbox.workspace_mode: review) holds, and what becomes of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "review/review.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/file.h"

#define DIFF_FILE_MAX (1u << 20)

static const char review_usage[] =
	"usage: airlock review [--list]\n"
	"       airlock review SESSION [--json]\n"
	"       airlock apply SESSION [--exclude GLOB]... [--accept PATH|DIR]...\n"
	"       airlock discard SESSION\n"
	"\n"
	"A run with sandbox.workspace_mode: review writes to a copy-on-write layer;\n"
	"the workspace is untouched until the change is applied. review lists the\n"
	"change (flagged entries first, with the reason: hand-off files, new\n"
	"executables, set-ID bits, links leaving the workspace, special files,\n"
	"credentials) and diffs text files; exit status 1 when something is\n"
	"flagged. apply puts the change in place all or nothing, refusing flagged\n"
	"entries not named with --accept and entries changed in the workspace\n"
	"since the run started; --accept DIR accepts the group held there whole\n"
	"(set-ID, special files, credentials and links leaving the workspace for\n"
	"other than /usr are still named each). A session of workspace_mode hold\n"
	"keeps the groups not accepted. discard drops the session.\n";

static void put_escaped(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
}

static const char *kind_name(enum review_kind k)
{
	switch (k) {
	case REVIEW_ADDED:
		return "added";
	case REVIEW_MODIFIED:
		return "modified";
	case REVIEW_DELETED:
		return "deleted";
	}
	return "?";
}

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" : S_ISFIFO(m) ? "fifo" : m ? "special" : "";
}

/* A regular file's contents under dir/rel, at most DIFF_FILE_MAX bytes;
 * NULL with *big when larger, NULL otherwise when not a regular file. */
static char *slurp(const char *dir, const char *rel, size_t *len, bool *big)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	struct stat st;
	*len = 0;
	*big = false;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	if ((size_t)st.st_size > DIFF_FILE_MAX) {
		*big = true;
		return NULL;
	}
	struct buf b = { 0 };
	if (file_read_all(path, DIFF_FILE_MAX, &b) < 0 || buf_puts(&b, "") < 0) {
		buf_free(&b);
		return NULL;
	}
	*len = b.len;
	if (!b.data)
		return strdup("");
	return (char *)b.data;
}

static int show(const char *dir, const char *id, bool json)
{
	struct error err = { 0 };
	int r = review_recover(dir, stderr, &err);
	if (r < 0) {
		fprintf(stderr, "airlock review: %s\n", err.msg);
		return 2;
	}
	if (r > 0 && access(dir, F_OK) < 0)
		return 0; /* the interrupted apply had finished: nothing held */
	_cleanup_free_ char *ws = NULL;
	char upper[PATH_MAX];
	snprintf(upper, sizeof(upper), "%s/" REVIEW_UPPER, dir);
	struct review_changes ch = { 0 };
	struct protect_set globs = { 0 };
	r = review_session_workspace(dir, &ws, &err);
	if (r >= 0)
		r = review_session_protect(dir, &globs, &err);
	if (r >= 0)
		r = review_changes_read(upper, ws, &globs, &ch, &err);
	protect_set_free(&globs);
	if (r < 0) {
		fprintf(stderr, "airlock review: %s\n", err.msg);
		return 2;
	}
	size_t flagged = review_changes_flagged(&ch);
	if (json) {
		for (size_t i = 0; i < ch.n; i++) {
			const struct review_change *c = &ch.c[i];
			struct buf b = { 0 };
			char mode[16];
			snprintf(mode, sizeof(mode), "%04o", (unsigned)(c->mode & 07777));
			bool ok = buf_puts(&b, "{\"session\":") == 0 && buf_json_string(&b, id, strlen(id)) == 0 &&
				  buf_puts(&b, ",\"path\":") == 0 && buf_json_string(&b, c->path, strlen(c->path)) == 0 &&
				  buf_printf(&b, ",\"change\":\"%s\",\"type\":\"%s\",\"mode\":\"%s\",\"flagged\":%s,\"reason\":",
					     kind_name(c->kind), type_name(c->kind == REVIEW_DELETED ? c->old_mode : c->mode),
					     mode, c->flags ? "true" : "false") == 0 &&
				  buf_json_string(&b, c->reason, strlen(c->reason)) == 0 && buf_puts(&b, "}\n") == 0;
			if (ok)
				fwrite(b.data, 1, b.len, stdout);
			buf_free(&b);
		}
		review_changes_free(&ch);
		return flagged ? 1 : 0;
	}
	printf("review session %s: ", id);
	put_escaped(stdout, ws);
	printf("\n%zu change%s, %zu flagged\n\n", ch.n, ch.n == 1 ? "" : "s", flagged);
	for (size_t i = 0; i < ch.n; i++) {
		const struct review_change *c = &ch.c[i];
		printf("%c %-8s %-4s ", c->flags ? '!' : ' ', kind_name(c->kind),
		       type_name(c->kind == REVIEW_DELETED ? c->old_mode : c->mode));
		put_escaped(stdout, c->path);
		if (c->flags) {
			fputs("\n      ", stdout);
			put_escaped(stdout, c->reason);
		}
		fputc('\n', stdout);
	}
	/* The diffs, in the same order. */
	for (size_t i = 0; i < ch.n; i++) {
		const struct review_change *c = &ch.c[i];
		size_t alen = 0, blen = 0;
		bool abig = false, bbig = false;
		_cleanup_free_ char *a = c->kind == REVIEW_ADDED ? NULL : slurp(ws, c->path, &alen, &abig);
		_cleanup_free_ char *b = c->kind == REVIEW_DELETED ? NULL : slurp(upper, c->path, &blen, &bbig);
		if (!a && !b && !abig && !bbig)
			continue;
		fputs("\n", stdout);
		if (abig || bbig) {
			fputs("(", stdout);
			put_escaped(stdout, c->path);
			printf(": larger than %u bytes, not shown)\n", DIFF_FILE_MAX);
			continue;
		}
		if (review_diff(stdout, c->path, a, alen, b, blen) < 0) {
			fprintf(stderr, "airlock review: out of memory\n");
			review_changes_free(&ch);
			return 2;
		}
	}
	if (flagged)
		fprintf(stderr, "airlock review: %zu flagged: apply refuses them unless each is named with --accept PATH "
				"(or left out with --exclude GLOB)\n",
			flagged);
	review_changes_free(&ch);
	return flagged ? 1 : 0;
}

int cli_review(int argc, char **argv)
{
	struct error err = { 0 };
	const char *id = NULL;
	bool json = false, list = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(review_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--list")) {
			list = true;
		} else if (argv[i][0] == '-' || id) {
			fprintf(stderr, "airlock review: unexpected argument '%s'\n\n%s", argv[i], review_usage);
			return 2;
		} else {
			id = argv[i];
		}
	}
	if (list || !id) {
		if (id) {
			fputs(review_usage, stderr);
			return 2;
		}
		if (review_session_list(stdout, &err) < 0) {
			fprintf(stderr, "airlock review: %s\n", err.msg);
			return 2;
		}
		return 0;
	}
	char dir[PATH_MAX];
	_cleanup_close_ int lock = -1;
	if (review_session_dir(id, dir, sizeof(dir), &err) < 0 || (lock = review_session_lock(dir, &err)) < 0) {
		fprintf(stderr, "airlock review: %s\n", err.msg);
		return 2;
	}
	return show(dir, id, json);
}

static void still_held(const char *dir, const char *id)
{
	struct error err = { 0 };
	_cleanup_free_ char *ws = NULL;
	struct protect_set globs = { 0 };
	struct review_changes ch = { 0 };
	struct review_groups g = { 0 };
	char upper[PATH_MAX];
	snprintf(upper, sizeof(upper), "%s/" REVIEW_UPPER, dir);
	if (review_session_workspace(dir, &ws, &err) < 0 || review_session_protect(dir, &globs, &err) < 0 ||
	    review_changes_read(upper, ws, &globs, &ch, &err) < 0 || review_groups_make(&ch, &g, &err) < 0) {
		fprintf(stderr, "airlock apply: %s\n", err.msg);
	} else {
		fprintf(stderr, "airlock: still held in session %s:\n", id);
		review_groups_print(stderr, &g, 12);
	}
	review_groups_free(&g);
	review_changes_free(&ch);
	protect_set_free(&globs);
}

int cli_apply(int argc, char **argv)
{
	struct error err = { 0 };
	const char *id = NULL;
	_cleanup_free_ char **ex = calloc((size_t)argc + 1, sizeof(char *));
	_cleanup_free_ char **ac = calloc((size_t)argc + 1, sizeof(char *));
	struct review_apply_opts o = { .exclude = ex, .accept = ac };
	if (!ex || !ac) {
		fprintf(stderr, "airlock apply: out of memory\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(review_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--exclude") && i + 1 < argc) {
			ex[o.n_exclude++] = argv[++i];
		} else if (!strcmp(argv[i], "--accept") && i + 1 < argc) {
			/* "./a" and "a/" name a; the change's paths are bare. */
			char *p = argv[++i];
			while (p[0] == '.' && p[1] == '/')
				p += 2;
			size_t n = strlen(p);
			while (n > 1 && p[n - 1] == '/')
				p[--n] = '\0';
			ac[o.n_accept++] = p;
		} else if (argv[i][0] == '-' || id) {
			fprintf(stderr, "airlock apply: unexpected argument '%s'\n\n%s", argv[i], review_usage);
			return 2;
		} else {
			id = argv[i];
		}
	}
	if (!id) {
		fputs(review_usage, stderr);
		return 2;
	}
	char dir[PATH_MAX];
	_cleanup_close_ int lock = -1;
	if (review_session_dir(id, dir, sizeof(dir), &err) < 0 || (lock = review_session_lock(dir, &err)) < 0 ||
	    review_apply(dir, &o, stderr, &err) < 0) {
		fprintf(stderr, "airlock apply: %s\n", err.msg);
		return err.code == EPERM || err.code == EBUSY ? 1 : 2;
	}
	/* A session of hold mode keeps the groups not accepted. */
	if (access(dir, F_OK) == 0 && review_session_hold(dir))
		still_held(dir, id);
	return 0;
}

int cli_discard(int argc, char **argv)
{
	struct error err = { 0 };
	if (argc != 2 || argv[1][0] == '-') {
		if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			fputs(review_usage, stdout);
			return 0;
		}
		fputs(review_usage, stderr);
		return 2;
	}
	char dir[PATH_MAX];
	_cleanup_close_ int lock = -1;
	if (review_session_dir(argv[1], dir, sizeof(dir), &err) < 0 || (lock = review_session_lock(dir, &err)) < 0 ||
	    review_recover(dir, stderr, &err) < 0 ||
	    review_session_remove(dir, &err) < 0) {
		fprintf(stderr, "airlock discard: %s\n", err.msg);
		return 2;
	}
	fprintf(stderr, "airlock: review session %s discarded; the workspace was not changed\n", argv[1]);
	return 0;
}
