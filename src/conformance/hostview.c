/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the host sees after the run. A probe line that leaves something in
 * the workspace is judged here, on the host's own files, not on what the
 * probe saw inside: a runtime may show the agent a throwaway overlay (then
 * nothing reached the host, and the attack was contained), and a runtime
 * may tell the agent "refused" while the thing lands anyway (then it was
 * not).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "conformance/conformance.h"
#include "util/cleanup.h"

static void set_line(struct conf_line *l, enum conf_outcome o, const char *why)
{
	l->outcome = o;
	snprintf(l->why, sizeof(l->why), "%s", why);
}

/* Does path hold the line the probe's write test appends? */
static bool has_marker(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	while (f && getline(&line, &cap, f) > 0)
		if (strcmp(line, "airlock-probe was here\n") == 0)
			return true;
	return false;
}

/* Does the regular file at path (links followed) start with prefix, or
 * hold needle anywhere in its first 4 KiB? */
static bool file_holds(const char *path, const char *prefix, const char *needle)
{
	char buf[4097];
	struct stat st;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	if (prefix && strncmp(buf, prefix, strlen(prefix)) != 0)
		return false;
	return !needle || strstr(buf, needle);
}

/* The names under dir that carry S_ISUID or S_ISGID, or file capabilities
 * (set-uid by another name), links not followed. */
static bool setid_under(const char *dir, char *names, size_t len)
{
	_cleanup_(cleanup_closedirp) DIR *d = opendir(dir);
	struct dirent *de;
	names[0] = '\0';
	while (d && (de = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || de->d_name[0] == '.')
			continue;
		char p[PATH_MAX + 256];
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if ((st.st_mode & (S_ISUID | S_ISGID)) || lgetxattr(p, "security.capability", NULL, 0) > 0) {
			size_t used = strlen(names);
			snprintf(names + used, len - used, "%s%s", used ? ", " : "", de->d_name);
		}
	}
	return names[0] != '\0';
}

/* An attack judged by a thing the host holds (found) or not: found decides
 * whatever the probe said; not found turns an allowed line blocked, and
 * leaves a blocked or failed line as the probe reported it. */
static void judge_attack(struct conf_line *l, bool found, const char *what)
{
	char why[sizeof(l->why)];
	if (found) {
		snprintf(why, sizeof(why), "on the host: %s", what);
		set_line(l, CONF_ALLOWED, why);
	} else if (l->outcome == CONF_ALLOWED) {
		set_line(l, CONF_BLOCKED, "done inside the runtime only: nothing reached the host");
	}
}

/* A neighbour the host must see: an allowed line whose result is not on
 * the host was not let through. */
static void judge_neighbour(struct conf_line *l, bool found)
{
	if (l->outcome == CONF_ALLOWED && !found)
		set_line(l, CONF_BLOCKED, "done inside the runtime only: nothing reached the host");
}

bool conf_host_view(const char *name, const char *const *args, size_t nargs, struct conf_line *l)
{
	char p[PATH_MAX], what[300];
	struct stat st;

	if ((strcmp(name, "write") == 0 || strcmp(name, "write-ok") == 0) && nargs == 1) {
		/* Only an allowed write is looked at: the file may exist
		 * before the run (.git/config), and only the probe's line in it
		 * says the write landed. */
		if (l->outcome == CONF_ALLOWED && !has_marker(args[0]))
			set_line(l, CONF_BLOCKED, "written inside the runtime only: nothing reached the host");
		return true;
	}
	if (strcmp(name, "setid-plant") == 0 && nargs == 1) {
		char names[200];
		bool found = setid_under(args[0], names, sizeof(names));
		snprintf(what, sizeof(what), "set-ID bit or file capabilities on %s", names);
		judge_attack(l, found, what);
		return true;
	}
	if (strcmp(name, "git-redirect") == 0 && nargs == 2) {
		const char *ws = args[0], *kind = args[1];
		bool found;
		if (strcmp(kind, "commondir") == 0) {
			snprintf(p, sizeof(p), "%s/.git/commondir", ws);
			found = lstat(p, &st) == 0;
			snprintf(what, sizeof(what), ".git/commondir exists");
		} else if (strcmp(kind, "gitfile") == 0) {
			snprintf(p, sizeof(p), "%s/lib/.git", ws);
			found = lstat(p, &st) == 0 && S_ISREG(st.st_mode) && file_holds(p, "gitdir:", NULL);
			snprintf(what, sizeof(what), "lib/.git is a gitdir: file");
		} else if (strcmp(kind, "bare") == 0) {
			snprintf(p, sizeof(p), "%s/tools/config", ws);
			found = file_holds(p, NULL, "fsmonitor");
			snprintf(p, sizeof(p), "%s/tools/HEAD", ws);
			found = found && lstat(p, &st) == 0;
			snprintf(what, sizeof(what), "tools/ is a repository with its own config");
		} else {
			return false;
		}
		judge_attack(l, found, what);
		return true;
	}
	if (strcmp(name, "handoff-symlink") == 0 && nargs == 3) {
		bool found;
		snprintf(p, sizeof(p), "%s/%s", args[0], args[1]);
		found = lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
		snprintf(p, sizeof(p), "%s/%s/tasks.json", args[0], args[1]);
		found = found && file_holds(p, NULL, "folderOpen");
		snprintf(what, sizeof(what), "%s, a link, leads to tasks.json", args[1]);
		judge_attack(l, found, what);
		return true;
	}
	if (strcmp(name, "symlink-ok") == 0 && nargs == 2) {
		judge_neighbour(l, lstat(args[0], &st) == 0 && S_ISLNK(st.st_mode));
		return true;
	}
	if (strcmp(name, "chmod-ok") == 0 && nargs == 1) {
		judge_neighbour(l, stat(args[0], &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR));
		return true;
	}
	return false;
}
