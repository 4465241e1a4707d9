/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_STATEDIR_H
#define AIRLOCK_UTIL_STATEDIR_H

/*
 * airlock's state directory, decided in one place for everything kept
 * there: the authority key (authority.key), the decision logs (audit/),
 * review sessions (review/), MCP pins (mcp/) and the gateways' control
 * sockets (mcp/run/). $XDG_STATE_HOME/airlock when XDG_STATE_HOME is an
 * absolute path, else $HOME/.local/state/airlock when HOME is one; with
 * neither, it is refused, everywhere alike.
 *
 * WARNING: there is no fallback to a fixed directory (such as /root): a
 * key or a log found in one place and looked for in another splits the
 * record of a run, and a key written into another user's home is a key
 * that user can read.
 */

#include <stddef.h>

#include "util/error.h"

/* The state directory, or sub inside it when sub is not NULL ("audit",
 * "authority.key", "mcp/run"), into out. Returns 0, or -ENOENT when
 * neither variable holds an absolute path, -ENAMETOOLONG when out is too
 * small; err (may be NULL) then says which and what to set. Makes
 * nothing. */
int statedir_path(const char *sub, char *out, size_t len, struct error *err) WUR;

/* The variables statedir_path reads, NULL-terminated: what a process
 * that wipes its environment keeps to find the directory again. */
extern const char *const statedir_env_vars[];

#endif
