/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_INTERNAL_H
#define AIRLOCK_POLICY_INTERNAL_H

/*
 * Declarations shared by the files of the policy module and its tests.
 * Nothing outside src/policy/ (and tests/) includes this header.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "util/error.h"

/* Bounds on untrusted policy text. The parser refuses anything beyond them
 * before allocating for it. */
#define POLICY_MAX_FILE (1024 * 1024) /* bytes */
#define POLICY_MAX_DEPTH 16           /* nested lists/maps, top level = 1 */
#define POLICY_MAX_LIST 4096          /* entries in one list or keys in one map */
#define POLICY_MAX_SCALAR 4096        /* bytes in one scalar */
#define POLICY_MAX_NODES 65536        /* scalars + lists + maps in a file */

/* Reads fd (path, for messages; what: "the policy") into *buf, which the
 * caller frees: at most POLICY_MAX_FILE + 1 bytes, so *len past
 * POLICY_MAX_FILE means the file is too large. Reading to the limit rather
 * than trusting st_size also bounds pipes and character devices. */
int policy_read_bounded(int fd, const char *path, const char *what, char **buf, size_t *len, struct error *err);

#define POLICY_DEFAULT_FILE "<default>"

/* Room for a dotted field name such as "filesystem.read[4095]" or an
 * unknown key quoted and shortened. */
#define POLICY_FIELD_MAX 192

/* ---- ytree.c: YAML text -> tree with positions ---- */

enum policy_ynode_type {
	POLICY_YNODE_SCALAR,
	POLICY_YNODE_SEQ,
	POLICY_YNODE_MAP,
};

struct policy_ynode {
	enum policy_ynode_type type;
	unsigned line; /* 1-based */
	unsigned col;  /* 1-based, in characters */
	bool quoted;   /* scalar written quoted or as a block scalar */
	char *str;     /* scalar: NUL-terminated, contains no NUL */
	size_t len;    /* scalar: strlen(str) */
	/* SEQ: the entries. MAP: key, value, key, value, ... (keys are scalars). */
	struct policy_ynode **items;
	size_t n;   /* number of items; a map holds n / 2 entries */
	size_t cap; /* allocated slots in items */
};

/* Parse buf as a single YAML document. On success *out is the root node,
 * owned by the caller (free with policy_ynode_free). Aliases, anchors, tags,
 * several documents, duplicate keys, non-scalar keys, NUL bytes and
 * anything beyond the POLICY_MAX_* bounds are refused with a
 * "file:line:col: field: ..." message. file is borrowed, used only for
 * messages. */
int policy_ytree_parse(const char *file, const char *buf, size_t len, struct policy_ynode **out,
		       struct error *err) WUR;

void policy_ynode_free(struct policy_ynode *n);

static inline void policy_ynode_freep(struct policy_ynode **n)
{
	policy_ynode_free(*n);
}

/* ---- diag.c: messages ---- */

/* Fill err with "FILE:LINE:COL: FIELD: <fmt>" and return -EINVAL. Control
 * characters in file are replaced so a crafted file name cannot forge
 * output lines. */
int policy_fail(struct error *err, const char *file, unsigned line, unsigned col, const char *field,
		const char *fmt, ...) PRINTF_LIKE(6, 7);

/* Write s (len bytes) into buf (size > 8) as a double-quoted string with
 * control characters escaped, shortened with "..." past a few dozen bytes.
 * The result is for messages only. */
void policy_quote(const char *s, size_t len, char *buf, size_t size);

/* Append a field segment to buf (NUL-terminated, at most size bytes): the
 * key as is when it is made of [A-Za-z0-9_-], quoted otherwise; preceded by
 * "." unless buf is empty. */
void policy_field_append_key(char *buf, size_t size, const char *key, size_t len);

/* ---- path.c: lexical path handling; never touches the filesystem ---- */

enum policy_path_status {
	POLICY_PATH_OK = 0,
	POLICY_PATH_EMPTY,        /* "" */
	POLICY_PATH_TOO_LONG,     /* >= PATH_MAX bytes, before or after expansion */
	POLICY_PATH_NO_HOME,      /* "~" used but no absolute home directory known */
	POLICY_PATH_TILDE_USER,   /* "~user" */
	POLICY_PATH_UNKNOWN_VAR,  /* "$X..." other than $WORKSPACE */
	POLICY_PATH_NO_WORKSPACE, /* "$WORKSPACE" where it may not be used */
	POLICY_PATH_NOMEM,
};

struct policy_path_base {
	const char *home;      /* absolute, or NULL: "~" is refused */
	const char *workspace; /* absolute, or NULL: "$WORKSPACE" is refused */
	const char *dir;       /* absolute: relative paths resolve against it */
};

/* Expand "~", "~/x", "$WORKSPACE", "$WORKSPACE/x", make a relative path
 * absolute against base->dir, then normalise. On POLICY_PATH_OK *out is a
 * new string owned by the caller. */
enum policy_path_status policy_path_resolve(const char *in, const struct policy_path_base *base,
					    char **out) WUR;

/* Lexically normalise an absolute path: collapse "//" and ".", let ".."
 * remove the previous component (never going above "/"), drop a trailing
 * "/". Symlinks are not resolved. Returns a new string owned by the caller,
 * or NULL (errno set: EINVAL if abs is not absolute, ENOMEM). */
char *policy_path_normalize(const char *abs);

/* True when path equals dir or lies beneath it. Both must be normalised. */
bool policy_path_is_under(const char *path, const char *dir);

/* ---- units.c: numbers, sizes, durations ---- */

enum policy_num_status {
	POLICY_NUM_OK = 0,
	POLICY_NUM_SYNTAX, /* not of the expected form */
	POLICY_NUM_RANGE,  /* of the form but larger than allowed */
};

/* A decimal integer: digits only, no sign, no leading zero (an octal
 * reading of "010" by another YAML tool would differ), at most max. */
enum policy_num_status policy_parse_uint(const char *s, uint64_t max, uint64_t *out) WUR;

/* "<digits>[B|K|KB|KiB|M|MB|MiB|G|GB|GiB|T|TiB]" in bytes. */
enum policy_num_status policy_parse_size(const char *s, uint64_t *out) WUR;

/* "<digits>[s|m|h]" in seconds. */
enum policy_num_status policy_parse_duration(const char *s, uint64_t *out) WUR;

/* Human form that policy_parse_size / policy_parse_duration read back to
 * the same value. bytes / seconds must not be 0 (that is "unlimited"). */
void policy_format_size(uint64_t bytes, char *buf, size_t size);
void policy_format_duration(uint64_t seconds, char *buf, size_t size);

/* ---- default.c ---- */

/* Fill a zeroed policy with the built-in defaults (everything but file and
 * dir). On failure p may hold partial allocations: free it with
 * policy_free. ctx->cwd must be absolute. */
int policy_init_defaults(struct policy *p, const struct policy_ctx *ctx, struct error *err) WUR;

/* network.leak_scan.max_body when not given. */
#define POLICY_DEFAULT_MAX_BODY (UINT64_C(1) << 20)
/* audit.max_size: the default, and the range a policy may give. */
#define POLICY_DEFAULT_AUDIT_MAX_SIZE (UINT64_C(1) << 30)
#define POLICY_AUDIT_MAX_SIZE_MIN (UINT64_C(1) << 20)
#define POLICY_AUDIT_MAX_SIZE_MAX (UINT64_C(1) << 40)

/* The default list for process.env.pass. */
extern const char *const policy_default_env_pass[];
extern const size_t policy_default_env_pass_count;

/* ---- netspec.c: host names, addresses, globs and methods of the network
 * section (lexical only: no DNS, no I/O) ---- */

/* Room for a normalised host: a DNS name of up to 253 bytes, or an
 * address in text form, with its NUL. */
#define POLICY_HOST_MAX 256

/* Longest rule or endpoint id, and longest HTTP method, in bytes. */
#define POLICY_ID_MAX 128
#define POLICY_METHOD_MAX 32

enum policy_host_status {
	POLICY_HOST_NAME = 0,   /* a DNS name */
	POLICY_HOST_WILDCARD,   /* "*." followed by a DNS name of two labels or more */
	POLICY_HOST_IP,         /* an IPv4 or IPv6 address */
	POLICY_HOST_EMPTY,
	POLICY_HOST_URL,        /* has a scheme, a '/' or a '@' */
	POLICY_HOST_PORT,       /* "name:port" */
	POLICY_HOST_CHAR,       /* a byte other than letters, digits, '-', '_', '.' */
	POLICY_HOST_LABEL,      /* an empty label: "a..b", ".a" */
	POLICY_HOST_LABEL_LONG, /* a label of more than 63 bytes */
	POLICY_HOST_TOO_LONG,   /* more than 253 bytes */
	POLICY_HOST_NUMERIC,    /* numeric last label, but not a dotted quad */
	POLICY_HOST_BAD_IPV6,   /* brackets or ':' but not an IPv6 address */
	POLICY_HOST_STAR_ALL,   /* "*" alone */
	POLICY_HOST_STAR_TLD,   /* "*.com": one label after the star */
	POLICY_HOST_STAR_POS,   /* '*' other than as the whole first label */
	POLICY_HOST_STAR_IP,    /* "*." followed by something numeric */
};

/* Normalise a host as written in a policy into out (POLICY_HOST_MAX
 * bytes): DNS names lower-case without a trailing dot; IPv4 as a dotted
 * quad; IPv6 without brackets in RFC 5952 form, IPv4-mapped and
 * IPv4-compatible addresses as IPv4. This is the text
 * net/addr.c:addr_normalize_host produces for the same host, so the two
 * compare with strcmp. Shorthand IPv4 forms ("127.1", "0x7f000001") are
 * refused rather than read: a policy says what it means. out holds the
 * result only for the first three statuses. */
enum policy_host_status policy_host_normalize(const char *in, char *out) WUR;

/* True when every host matched by pattern b is matched by pattern a (both
 * normalised): equal, or a is "*.S" and b is S's subdomain or "*." of one. */
bool policy_host_covers(const char *a, const char *b);

/* Canonical text of a numeric address ("127.0.0.1", "::1", "[::1]") into
 * out (POLICY_HOST_MAX bytes), in the form of policy_host_normalize.
 * Returns false when in is not a dotted quad or an IPv6 address. */
bool policy_addr_canon(const char *in, char *out) WUR;

enum policy_cidr_status {
	POLICY_CIDR_OK = 0,
	POLICY_CIDR_SYNTAX,    /* not ADDR[/PREFIX][:PORT] or [ADDR6][/PREFIX][:PORT] */
	POLICY_CIDR_PREFIX,    /* prefix not 0..32 / 0..128 */
	POLICY_CIDR_PORT,      /* port not 1..65535 */
	POLICY_CIDR_HOST_BITS, /* bits set past the prefix; *out holds the network */
	POLICY_CIDR_MAPPED,    /* an IPv4-mapped or -compatible IPv6 range */
};

/* Parse an allow_private entry: "10.0.0.0/8", "127.0.0.1:8080",
 * "fd00::/8", "[::1]:9000", "[fd00::]/8:443". A missing prefix is the
 * whole address (/32, /128); a missing port is 0 (any). out->loc is not
 * touched. */
enum policy_cidr_status policy_cidr_parse(const char *s, struct policy_cidr *out) WUR;

/* The text policy_cidr_parse reads back to c; at least 64 bytes. */
void policy_cidr_format(const struct policy_cidr *c, char *buf, size_t size);

enum policy_glob_status {
	POLICY_GLOB_OK = 0,
	POLICY_GLOB_SLASH,   /* a path glob that does not start with '/' */
	POLICY_GLOB_CHAR,    /* a space, control, non-ASCII byte, '#', or '?' in a path */
	POLICY_GLOB_PERCENT, /* '%' not followed by two hex digits */
	POLICY_GLOB_NOMEM,
};

/* Check a path (is_path) or query glob and put it in the form requests are
 * compared in: %XX of an unreserved character (ALPHA DIGIT - . _ ~)
 * decoded, other %XX with upper-case hex digits. On POLICY_GLOB_OK *out is
 * a new string owned by the caller. */
enum policy_glob_status policy_glob_normalize(const char *in, bool is_path, char **out) WUR;

/* An HTTP method token (RFC 9110 tchar) of at most POLICY_METHOD_MAX
 * bytes, other than "*". */
bool policy_method_valid(const char *s);

/* A rule or endpoint id: 1..POLICY_ID_MAX printable ASCII bytes, no
 * space. */
bool policy_id_valid(const char *s);

/* ---- schema.c: every field of the schema and its rules ---- */

/* One key of the schema. A field either names its layering rule and its
 * prover rule, or says why it neither widens nor narrows (neutral); an
 * entry other entries lie beneath is a section and carries neither. */
struct policy_field {
	const char *path;    /* "filesystem.sockets", "credentials[].env", "mcp.servers.*.pins" */
	const char *layer;   /* how an enterprise ceiling narrows it (layer.c), or NULL */
	const char *prove;   /* how `policy diff` finds it wider (diff.c), or NULL */
	const char *neutral; /* why it grants and takes nothing, or NULL */
};

extern const struct policy_field policy_fields[];
extern const size_t policy_n_fields;

/* Whether key is valid in the map at parent (schema path: "" for the top
 * level, "network.endpoints[]", "mcp.servers.*"). */
bool policy_schema_knows(const char *parent, const char *key);

/* The keys valid at parent, ", "-separated, into buf. */
void policy_schema_keys(const char *parent, char *buf, size_t size);

/* The entry for a schema path, or NULL. */
const struct policy_field *policy_schema_field(const char *path);

/* ---- parse.c ---- */

/* policy_load_buffer for a tree already parsed (layer.c takes the
 * enterprise section out of an enterprise file first). root is borrowed. */
int policy_load_tree(const char *name, const char *dir, const struct policy_ynode *root,
		     const struct policy_ctx *ctx, struct policy **out, struct error *err) WUR;

/* ---- print.c ---- */

/* Free what one entry owns and zero it (the entry itself is not freed). */
void policy_rule_clear(struct policy_net_rule *r);
void policy_endpoint_clear(struct policy_endpoint *ep);
void policy_binding_clear(struct policy_cred_binding *b);
void policy_credential_clear(struct policy_credential *c);

/* True when a and b have the same effect: every setting equal, in the same
 * order. file, dir and locations are not compared. */
bool policy_equal(const struct policy *a, const struct policy *b);

/* mcp.c: the `mcp:` section into p->mcp (docs/policy.md, "mcp"). */
int policy_load_mcp(struct policy *p, const struct policy_ynode *n, struct error *err) WUR;
/* A JSON path into tool arguments as the mcp section writes them. */
bool policy_mcp_path_valid(const char *s);

#endif
