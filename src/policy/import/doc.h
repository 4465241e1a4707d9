/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_IMPORT_DOC_H
#define AIRLOCK_POLICY_IMPORT_DOC_H

/*
 * One tree for the configuration files of other runtimes (JSON, a TOML
 * subset, YAML), with the line and column of every value, so that the
 * importers can name FILE:LINE:COL and the field in every refusal.
 *
 * Ownership: a node owns its key, its string and its children;
 * imp_node_free() releases the whole tree.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Bounds on what any of the parsers accepts: a configuration file is small,
 * and a peer-controlled nesting depth must not exhaust the stack. */
#define IMP_MAX_INPUT (1024 * 1024)
#define IMP_MAX_DEPTH 64
/* Children of one list or table. Duplicate keys are looked for by a linear
 * scan, so this also bounds that work (4096^2 / 2 comparisons at most). */
#define IMP_MAX_ITEMS 4096

enum imp_kind {
	IMP_NULL = 0,
	IMP_BOOL,
	IMP_NUM,  /* str holds the number as written (an integer or a JSON number) */
	IMP_STR,
	IMP_LIST,
	IMP_MAP,  /* children carry their key in .key, in file order */
};

struct imp_node {
	enum imp_kind kind;
	char *key;          /* when a member of a MAP; NUL-terminated, no NUL inside */
	char *str;          /* STR, NUM: NUL-terminated; strings holding NUL are refused */
	size_t len;
	bool b;             /* BOOL */
	struct imp_node *v; /* LIST, MAP children */
	size_t n, cap;
	unsigned line, col; /* 1-based; of the value (for a member: of its key) */
	bool implicit;      /* TOML: a table created by a dotted header or key, not defined itself */
	bool sealed;        /* TOML: an inline table or array, which later lines cannot extend */
};

/* The position of a reader of one of the formats below, for its errors. */
struct imp_reader {
	const char *name;
	const char *s;
	size_t len, pos;
	unsigned line;
	size_t line_start;
	struct error *err;
};

/* err = "NAME:LINE:COL: message" at the reader's position; -EINVAL. */
int imp_reader_fail(struct imp_reader *p, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* A new NULL child at the end of parent (a LIST or MAP) into *child: at
 * most IMP_MAX_ITEMS of them, else an error at the reader that names the
 * container as what ("object", "table or array", ...). */
int imp_reader_add(struct imp_reader *p, struct imp_node *parent, const char *what, struct imp_node **child);

/* n, whose str and len a reader just set, as a STR; one holding a NUL is
 * refused at the reader (a C string would end there, short of what the
 * source runtime reads). */
int imp_reader_string(struct imp_reader *p, struct imp_node *n);

/* The byte of a one-letter escape JSON and TOML strings share (\" \\ \b
 * \f \n \r \t), or 0 for any other letter. */
int imp_escape_byte(char e);

/* Copy the UTF-8 character at the reader (ending before end) to buf + *o,
 * advancing the reader and *o past it; -EINVAL (err filled) when the bytes
 * there are not valid UTF-8 (an overlong form, a surrogate, a cut
 * sequence), so that no importer passes on bytes its source reads
 * otherwise. */
int imp_reader_utf8(struct imp_reader *p, size_t end, char *buf, size_t *o);

void imp_node_free(struct imp_node *n);
/* Free what n owns (key, string, children) but not n itself, which
 * becomes a NULL node: for a node that lives inside its parent's array. */
void imp_node_release(struct imp_node *n);

static inline void imp_node_freep(struct imp_node **n)
{
	imp_node_free(*n);
}
#define _cleanup_imp_node_ __attribute__((cleanup(imp_node_freep)))

/* The member of a MAP with this key, or NULL. */
const struct imp_node *imp_get(const struct imp_node *map, const char *key);

const char *imp_kind_name(enum imp_kind k);

/* Strict JSON (RFC 8259): one value, no comments, no trailing commas, no
 * duplicate keys, UTF-8 only, no NUL in strings, depth and size bounded.
 * On failure err holds "NAME:LINE:COL: what is wrong". *out is owned by the
 * caller. buf need not be NUL-terminated. */
int imp_json_parse(const char *name, const char *buf, size_t len, struct imp_node **out,
		   struct error *err) WUR;

/* The same with another bound on the input's size (the MCP gateway reads
 * messages of up to MCP_MAX_MESSAGE bytes). */
int imp_json_parse_max(const char *name, const char *buf, size_t len, size_t max, struct imp_node **out,
		       struct error *err) WUR;

/* The TOML subset configuration files use: comments, key = value with bare,
 * quoted and dotted keys, [tables] and [[arrays of tables]], basic and
 * literal strings (single line), integers, booleans, arrays and inline
 * tables. Anything else (multi-line strings, floats, dates) is refused with
 * its line rather than misread. Duplicate keys and redefined tables are
 * refused, as TOML requires. */
int imp_toml_parse(const char *name, const char *buf, size_t len, struct imp_node **out,
		   struct error *err) WUR;

/* YAML through the policy parser's reader (src/policy/ytree.c: no aliases,
 * tags or duplicate keys); an unquoted scalar becomes a BOOL for
 * true/false, NULL for null/~ or an empty value, NUM for a decimal
 * integer, and a STR otherwise. */
int imp_yaml_parse(const char *name, const char *buf, size_t len, struct imp_node **out,
		   struct error *err) WUR;

#endif
