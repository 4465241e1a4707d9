/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dropping every capability. Runs in the child after the mounts are built
 * and before the uid change: clearing the bounding set needs CAP_SETPCAP.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/cleanup.h"

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v > 0 ? v : 40; /* CAP_CHECKPOINT_RESTORE as of 5.9 */
}

int caps_drop_all(struct error *err)
{
	int last = last_cap();
	for (int c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return error_sys(err, errno, "cannot drop capability %d from the bounding set", c);

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return error_sys(err, errno, "cannot clear ambient capabilities");

	/* Lock the securebits so no later uid change can regain anything. */
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return error_sys(err, errno, "cannot lock securebits");
	return 0;
}

int caps_become(uid_t uid, gid_t gid, struct error *err)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return error_sys(err, errno, "PR_SET_KEEPCAPS");
	if (setresgid(gid, gid, gid) < 0)
		return error_sys(err, errno, "setresgid %u", gid);
	if (setresuid(uid, uid, uid) < 0)
		return error_sys(err, errno, "setresuid %u", uid);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return error_sys(err, errno, "PR_SET_KEEPCAPS");
	/* The uid change cleared the effective set; restore it from the
	 * permitted set for the rest of the setup. */
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) < 0)
		return error_sys(err, errno, "capget");
	for (int i = 0; i < 2; i++)
		data[i].effective = data[i].permitted;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return error_sys(err, errno, "capset");
	return 0;
}

int caps_drop_root(uid_t uid, gid_t gid, struct error *err)
{
	/* All three ids, no groups of root's: a process that could get
	 * root back would be root to whoever takes it over. */
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return error_sys(err, errno, "cannot drop root for uid %u", (unsigned)uid);
	uid_t ru, eu, su;
	if (getresuid(&ru, &eu, &su) < 0 || ru != uid || eu != uid || su != uid)
		return error_set(err, EPERM, "the ids did not change");
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_sys(err, errno, "prctl");
	return 0;
}

void caps_wipe_environ(void)
{
	for (char **e = environ; e && *e; e++)
		explicit_bzero(*e, strlen(*e));
	clearenv();
}

int caps_wipe_environ_but(const char *const *keep)
{
	struct {
		const char *name;
		char *value;
	} kept[8];
	size_t n = 0;
	int r = 0;
	for (size_t i = 0; keep && keep[i] && r == 0; i++) {
		const char *v = getenv(keep[i]);
		if (!v)
			continue;
		if (n == ARRAY_SIZE(kept))
			r = -E2BIG;
		else if (!(kept[n].value = strdup(v)))
			r = -ENOMEM;
		else
			kept[n++].name = keep[i];
	}
	/* Every string zeroed, the kept ones too: their copies go back. */
	caps_wipe_environ();
	for (size_t k = 0; k < n; k++) {
		if (r == 0 && setenv(kept[k].name, kept[k].value, 1) < 0)
			r = -errno;
		free(kept[k].value);
	}
	return r;
}

int caps_clear_sets(struct error *err)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	if (syscall(SYS_capset, &hdr, data) < 0)
		return error_sys(err, errno, "cannot clear capabilities");
	return 0;
}
