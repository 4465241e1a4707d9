/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_LAYER_INTERNAL_H
#define AIRLOCK_POLICY_LAYER_INTERNAL_H

/*
 * What the files of enterprise layering share: layer.c reads the
 * ceilings and applies them in order; layer_fs.c, layer_net.c and
 * layer_mcp.c narrow their sections by one ceiling each.
 *
 * WARNING: every narrowing function may only remove from the developer's
 * policy or replace an entry by a narrower one; none may add a grant the
 * developer's policy did not already hold, except a lock, which replaces a
 * field by the enterprise's value, itself narrowed by every other ceiling.
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy/layer.h"
#include "policy/policy.h"
#include "util/error.h"

struct given {
	char name[96];
	unsigned line;
};

struct ceiling {
	struct policy *pol;
	const char *file; /* owned by the effective policy's layer_files */
	struct given *given;
	size_t n_given;
	unsigned section_line; /* line of `enterprise:`, or 0 */
	bool refuse;
	unsigned refuse_line;
	const char *lock[16];
	unsigned lock_line[16];
	bool swapped[16]; /* this file's lock took effect (no earlier file locked the field) */
	size_t n_lock;
	int boundary; /* required minimum, -1: none */
	unsigned boundary_line;
	bool audit, identity_header, forbid_observe;
	unsigned audit_line, identity_line, observe_line;
};

struct lctx {
	struct policy *p;
	struct policy_layer_report *rep;
	struct error *err;
};

/* -ENOMEM, with the error said. */
int layer_oom(struct lctx *c);
/* a and b both NULL, or the same string. */
bool layer_str_eq(const char *a, const char *b);
/* The line where e writes name (a dotted field), or 0 when it does not. */
unsigned layer_given(const struct ceiling *e, const char *name);
/* Whether e's lock of field took effect (no earlier file locked it): the
 * field is then e's own value, which e does not narrow again. */
bool layer_locked(const struct ceiling *e, const char *field);
/* One cut in the report: "DEV:LINE: WHAT (enterprise rule E:ELINE)". */
int layer_cut(struct lctx *c, const struct policy_loc *dev, const struct ceiling *e, unsigned eline,
	      const char *fmt, ...) PRINTF_LIKE(5, 6);
/* s quoted for a message, cut to size. */
void layer_quote(const char *s, char *buf, size_t size);
/* *dst replaced by a copy of s (NULL: none); -ENOMEM leaves it as it was. */
int layer_set_str(char **dst, const char *s);

/* The sections, each narrowed by the ceiling e (layer_fs.c). */
int layer_narrow_filesystem(struct lctx *c, struct ceiling *e);
int layer_narrow_env(struct lctx *c, struct ceiling *e);
int layer_narrow_sandbox(struct lctx *c, struct ceiling *e);
int layer_narrow_audit(struct lctx *c, struct ceiling *e);
/* Credentials whose secret file the layered policy shows the agent, or
 * whose command it could replace, are cut (named after e). */
int layer_check_secrets(struct lctx *c, const struct ceiling *e);

/* layer_net.c. by_ceiling: bindings outside e's credentials are cut; else
 * those the narrowed network no longer takes through an intercepting
 * endpoint. */
int layer_narrow_network(struct lctx *c, struct ceiling *e);
int layer_narrow_credentials(struct lctx *c, const struct ceiling *e, bool by_ceiling);

/* layer_mcp.c. */
int layer_narrow_mcp(struct lctx *c, struct ceiling *e);

#endif
