/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Review sessions: where they live, how they start (the overlay's upper
 * and work directories, the record of the workspace as it was), how they
 * are found, listed and removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "review/review.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/hex.h"
#include "util/statedir.h"

int review_root(char *out, size_t len, struct error *err)
{
	/* Beside the decision log and the authority key (auditlog.c): the
	 * state directory, which the sandbox never shows (home is a private
	 * tmpfs there). */
	int r = statedir_path("review", out, len, err);
	return r < 0 ? error_prefix(err, "review sessions") : 0;
}

bool review_id_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n >= REVIEW_ID_MAX || id[0] == '.' || id[0] == '-')
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	return true;
}

void review_new_id(char out[37])
{
	uint8_t b[16] = { 0 };
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		/* Not secret, only unique: time and pid will do. */
		uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		memcpy(b, &t, sizeof(t));
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

char *review_escape(const char *s)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p <= ' ' || *p == '%' || *p == 0x7f) ? 3 : 1;
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p <= ' ' || *p == '%' || *p == 0x7f)
			o += sprintf(o, "%%%02X", *p);
		else
			*o++ = (char)*p;
	}
	*o = '\0';
	return out;
}

bool review_unescape(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (*p != '%') {
			*o++ = *p;
			continue;
		}
		int hi = hex_digit_value((unsigned char)p[1]), lo = hi < 0 ? -1 : hex_digit_value((unsigned char)p[2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return false;
		*o++ = (char)(hi * 16 + lo);
		p += 2;
	}
	*o = '\0';
	return true;
}

/* ---- the manifest: the workspace as the run found it ---- */

struct walk {
	FILE *f;
	size_t entries;
	dev_t dev;
	struct error *err;
};

static char type_of(mode_t m)
{
	return S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : 'o';
}

static int manifest_walk(struct walk *w, int dfd, const char *rel, unsigned depth)
{
	if (depth > REVIEW_MAX_DEPTH)
		return error_set(w->err, ELOOP, "review mode: the workspace is more than %d directories deep at %s",
				 REVIEW_MAX_DEPTH, rel);
	int fd = dup(dfd);
	if (fd < 0)
		return error_sys(w->err, errno, "dup");
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return error_sys(w->err, errno, "cannot list %s", rel[0] ? rel : ".");
	}
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		if (++w->entries > REVIEW_MAX_ENTRIES) {
			r = error_set(w->err, EFBIG, "review mode: the workspace holds more than %d entries",
				      REVIEW_MAX_ENTRIES);
			break;
		}
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >= sizeof(path)) {
			r = error_set(w->err, ENAMETOOLONG, "path too long beneath %s", rel);
			break;
		}
		_cleanup_free_ char *esc = review_escape(path);
		if (!esc) {
			r = error_set(w->err, ENOMEM, "out of memory");
			break;
		}
		fprintf(w->f, "%c %llu %llu %lld %lld %s\n", type_of(st.st_mode), (unsigned long long)st.st_ino,
			(unsigned long long)st.st_size,
			(long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
			(long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec, esc);
		/* The overlay's lower layer is the workspace's own mount: a
		 * filesystem mounted beneath it is not part of it. */
		if (S_ISDIR(st.st_mode) && st.st_dev == w->dev) {
			int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue; /* unreadable: the agent cannot read it either */
			r = manifest_walk(w, sub, path, depth + 1);
			close(sub);
			if (r < 0)
				break;
		}
	}
	closedir(d);
	return r;
}

static int write_manifest(int sfd, const char *ws, struct error *err)
{
	_cleanup_close_ int wfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wfd < 0)
		return error_sys(err, errno, "cannot open the workspace %s", ws);
	struct stat st;
	if (fstat(wfd, &st) < 0)
		return error_sys(err, errno, "cannot stat the workspace %s", ws);
	int fd = openat(sfd, "manifest", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_sys(err, errno, "cannot write the review manifest");
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return error_set(err, ENOMEM, "out of memory");
	}
	struct walk w = { .f = f, .dev = st.st_dev, .err = err };
	int r = manifest_walk(&w, wfd, "", 0);
	if (fclose(f) != 0 && r >= 0)
		r = error_sys(err, errno, "cannot write the review manifest");
	return r;
}

static int cmp_mentry(const void *a, const void *b)
{
	return strcmp(((const struct review_mentry *)a)->path, ((const struct review_mentry *)b)->path);
}

int review_manifest_load(const char *dir, struct review_manifest *m, struct error *err)
{
	memset(m, 0, sizeof(*m));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/manifest", dir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return error_sys(err, errno, "cannot read %s", path);
	size_t cap = 0;
	_cleanup_free_ char *line = NULL;
	size_t lcap = 0;
	unsigned lineno = 0;
	ssize_t n;
	while ((n = getline(&line, &lcap, f)) > 0) {
		lineno++;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		char type;
		unsigned long long ino, size;
		long long mt, ct;
		int off = 0;
		if (sscanf(line, "%c %llu %llu %lld %lld %n", &type, &ino, &size, &mt, &ct, &off) != 5 || off == 0 ||
		    !review_unescape(line + off) || !line[off]) {
			review_manifest_free(m);
			return error_set(err, EINVAL, "%s:%u: malformed manifest line", path, lineno);
		}
		if (m->n == cap) {
			cap = cap ? cap * 2 : 256;
			struct review_mentry *v = realloc(m->e, cap * sizeof(*v));
			if (!v) {
				review_manifest_free(m);
				return error_set(err, ENOMEM, "out of memory");
			}
			m->e = v;
		}
		struct review_mentry *e = &m->e[m->n];
		*e = (struct review_mentry){ .type = type, .ino = ino, .size = size, .mtime_ns = mt, .ctime_ns = ct };
		if (!(e->path = strdup(line + off))) {
			review_manifest_free(m);
			return error_set(err, ENOMEM, "out of memory");
		}
		m->n++;
	}
	if (m->n) /* qsort takes no NULL array, even of nothing */
		qsort(m->e, m->n, sizeof(*m->e), cmp_mentry);
	return 0;
}

void review_manifest_free(struct review_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->e[i].path);
	free(m->e);
	memset(m, 0, sizeof(*m));
}

const struct review_mentry *review_manifest_find(const struct review_manifest *m, const char *path)
{
	struct review_mentry key = { .path = (char *)path };
	return bsearch(&key, m->e, m->n, sizeof(*m->e), cmp_mentry);
}

bool review_mentry_same(const struct review_mentry *e, const struct stat *st)
{
	if (e->type != type_of(st->st_mode))
		return false;
	/* A directory's times change when anything in it does; what matters
	 * of a directory is that it is still one. */
	if (e->type == 'd')
		return true;
	/* Not ctime: a rename sets it, and an apply that was rolled back
	 * renamed the user's files aside and back. A rewrite in place that
	 * restores both the size and the mtime to the nanosecond goes
	 * unnoticed. */
	return e->ino == (uint64_t)st->st_ino && e->size == (uint64_t)st->st_size &&
	       e->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* ---- sessions ---- */

static int remove_tree_at(int pfd, const char *name, unsigned depth);

int review_remove_at(int pfd, const char *name)
{
	return remove_tree_at(pfd, name, 0);
}

static int remove_tree_at(int pfd, const char *name, unsigned depth)
{
	if (unlinkat(pfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > 256)
		return -ELOOP;
	int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		/* A directory the agent (or the overlay: its work/work is
		 * mode 0) left unreadable; it is ours to open again. */
		if (fchmodat(pfd, name, 0700, 0) < 0)
			return -EACCES;
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700)
		(void)fchmod(fd, 0700);
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && (r = remove_tree_at(dirfd(d), de->d_name, depth + 1)) < 0)
			break;
	closedir(d);
	if (r == 0 && unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

int review_session_remove(const char *dir, struct error *err)
{
	int r = remove_tree_at(AT_FDCWD, dir, 0);
	if (r < 0)
		return error_sys(err, -r, "cannot remove %s", dir);
	return 0;
}

int review_session_begin(const char *ws, uid_t uid, gid_t gid, const struct protect_set *globs, bool hold,
			 char **dir, struct error *err)
{
	char root[PATH_MAX], tmpl[PATH_MAX];
	int r = review_root(root, sizeof(root), err);
	if (r < 0)
		return r;
	if ((r = file_mkdir_p(root, 0700, err)) < 0)
		return r;
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/.new-XXXXXX", root) >= sizeof(tmpl))
		return error_set(err, ENAMETOOLONG, "the review directory's path is too long");
	if (!mkdtemp(tmpl))
		return error_sys(err, errno, "cannot make a review session under %s", root);
	_cleanup_free_ char *d = strdup(tmpl);
	if (!d) {
		rmdir(tmpl);
		return error_set(err, ENOMEM, "out of memory");
	}
	struct stat wst;
	_cleanup_close_ int sfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int lfd = -1, ufd = -1, kfd = -1;
	_cleanup_free_ char *esc = review_escape(ws);
	FILE *mf = NULL;
	if (sfd < 0 || stat(ws, &wst) < 0) {
		r = error_sys(err, errno, "cannot start the review session %s", d);
		goto fail;
	}
	if (!esc) {
		r = error_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	/* The upper directory is the overlay's root: it takes the
	 * workspace's permissions, and belongs to the sandbox's uid (started
	 * as root, that is not ours). */
	if (mkdirat(sfd, "layer", 0700) < 0 ||
	    (lfd = openat(sfd, "layer", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(lfd, "upper", 0700) < 0 || mkdirat(lfd, "work", 0700) < 0 ||
	    (ufd = openat(lfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (kfd = openat(lfd, "work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fchmod(ufd, wst.st_mode & 07777) < 0) {
		r = error_sys(err, errno, "cannot make the overlay's directories in %s", d);
		goto fail;
	}
	if (geteuid() == 0 && (fchown(lfd, uid, gid) < 0 || fchown(ufd, uid, gid) < 0 || fchown(kfd, uid, gid) < 0)) {
		r = error_sys(err, errno, "cannot hand the overlay's directories in %s to uid %u", d, uid);
		goto fail;
	}
	int mfd = openat(sfd, "meta", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (mfd < 0 || !(mf = fdopen(mfd, "w"))) {
		if (mfd >= 0)
			close(mfd);
		r = error_sys(err, errno, "cannot write %s/meta", d);
		goto fail;
	}
	fprintf(mf, "workspace %s\nstarted %lld\n%s", esc, (long long)time(NULL), hold ? "mode hold\n" : "");
	for (size_t i = 0; globs && i < globs->n; i++) {
		_cleanup_free_ char *g = review_escape(globs->pat[i]);
		if (g)
			fprintf(mf, "protect %s\n", g);
	}
	if (fclose(mf) != 0) {
		r = error_sys(err, errno, "cannot write %s/meta", d);
		goto fail;
	}
	if ((r = write_manifest(sfd, ws, err)) < 0)
		goto fail;
	*dir = steal_pointer(&d);
	return 0;
fail:;
	struct error e2 = { 0 };
	if (review_session_remove(d, &e2) < 0)
		(void)error_prefix(err, "%s; and", e2.msg);
	return r;
}

int review_session_name(char **dir, const char *id, struct error *err)
{
	char root[PATH_MAX], dst[PATH_MAX];
	int r = review_root(root, sizeof(root), err);
	if (r < 0)
		return r;
	if (!review_id_valid(id))
		return error_set(err, EINVAL, "review session id \"%s\" is malformed", id);
	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", root, id) >= sizeof(dst))
		return error_set(err, ENAMETOOLONG, "the review directory's path is too long");
	if (renameat2(AT_FDCWD, *dir, AT_FDCWD, dst, RENAME_NOREPLACE) < 0)
		return error_sys(err, errno, "cannot name the review session %s", dst);
	char *nd = strdup(dst);
	if (!nd)
		return error_set(err, ENOMEM, "out of memory");
	free(*dir);
	*dir = nd;
	return 0;
}

int review_session_dir(const char *id, char *out, size_t len, struct error *err)
{
	char root[PATH_MAX];
	int r = review_root(root, sizeof(root), err);
	if (r < 0)
		return r;
	if (!review_id_valid(id))
		return error_set(err, EINVAL, "\"%s\" is not a review session id (see airlock review --list)", id);
	if ((size_t)snprintf(out, len, "%s/%s", root, id) >= len)
		return error_set(err, ENAMETOOLONG, "the review directory's path is too long");
	struct stat st;
	if (lstat(out, &st) < 0 || !S_ISDIR(st.st_mode))
		return error_set(err, ENOENT, "no review session %s in %s (see airlock review --list)", id, root);
	return 0;
}

int review_session_lock(const char *dir, struct error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, errno, "cannot open %s", dir);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return error_set(err, EBUSY, "%s is in use by another airlock apply, review or discard", dir);
		return error_sys(err, e, "cannot lock %s", dir);
	}
	return fd;
}

int review_session_workspace(const char *dir, char **ws, struct error *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/meta", dir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return error_sys(err, errno, "cannot read %s", path);
	char line[PATH_MAX * 3 + 32];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "workspace ", 10) != 0)
			continue;
		if (!review_unescape(line + 10) || line[10] != '/')
			break;
		if (!(*ws = strdup(line + 10)))
			return error_set(err, ENOMEM, "out of memory");
		return 0;
	}
	return error_set(err, EINVAL, "%s: no workspace line", path);
}

int review_session_protect(const char *dir, struct protect_set *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/meta", dir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return error_sys(err, errno, "cannot read %s", path);
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "protect ", 8) != 0 || !review_unescape(line + 8))
			continue;
		if (protect_set_add(out, line + 8) < 0) {
			protect_set_free(out);
			return error_set(err, ENOMEM, "out of memory");
		}
	}
	return 0;
}

bool review_session_hold(const char *dir)
{
	char path[PATH_MAX], line[PATH_MAX * 3 + 32];
	snprintf(path, sizeof(path), "%s/meta", dir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strcmp(line, "mode hold\n"))
			return true;
	return false;
}

static long long session_started(const char *dir)
{
	char path[PATH_MAX], line[256];
	snprintf(path, sizeof(path), "%s/meta", dir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "started ", 8) == 0)
			return atoll(line + 8);
	return 0;
}

int review_session_list(FILE *out, struct error *err)
{
	char root[PATH_MAX];
	int r = review_root(root, sizeof(root), err);
	if (r < 0)
		return r;
	DIR *d = opendir(root);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return error_sys(err, errno, "cannot list %s", root);
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!review_id_valid(de->d_name))
			continue;
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
		_cleanup_free_ char *ws = NULL;
		struct error e2 = { 0 };
		if (review_session_workspace(dir, &ws, &e2) < 0)
			continue;
		time_t t = (time_t)session_started(dir);
		struct tm tm;
		char when[32] = "?";
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		_cleanup_free_ char *esc = review_escape(ws);
		fprintf(out, "%s  %s  %s\n", de->d_name, when, esc ? esc : "?");
	}
	closedir(d);
	return 0;
}
