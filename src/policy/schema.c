/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy schema as one table: every key the parser accepts, with what
 * enterprise layering (layer.c) and the widening prover (diff.c) do with
 * it, or why the field can neither widen nor narrow what the agent may do.
 *
 * The parser takes its valid keys from this table (check_keys in parse.c,
 * mkeys in mcp.c), so a key cannot be accepted without an entry here, and
 * tests/unit/test_schema.c fails on an entry without both rules or a
 * reason. A field that layering and the prover do not know is how a
 * developer policy once exposed a host socket the enterprise denied and
 * re-pointed an allowed name at any address: each new field must say how
 * a ceiling narrows it and how `policy diff` sees it widen.
 *
 * Paths: dots between keys; "[]" after a list of maps ("credentials[]"),
 * "*" for a key the author names ("mcp.servers.*"). An entry that other
 * entries lie beneath is a section: its children carry the rules.
 */
#include <string.h>

#include "policy/internal.h"

#define S(path) { path, NULL, NULL, NULL }
#define R(path, layer, prove) { path, layer, prove, NULL }
#define N(path, why) { path, NULL, NULL, why }

/* WARNING: keep each section's keys in the order the error message
 * "valid keys here are ..." should list them. */
const struct policy_field policy_fields[] = {
	/* ---- top level ---- */
	N("version", "the schema version; the only value is 1"),
	N("name", "a label for records and `policy check`; grants nothing"),
	S("sandbox"),
	S("filesystem"),
	S("process"),
	S("network"),
	S("credentials"),
	S("identity"),
	S("audit"),
	S("mcp"),

	/* ---- sandbox ---- */
	R("sandbox.boundary", "a minimum: below the enterprise's boundary (or require.boundary) is raised to it",
	  "a weaker boundary (process < gvisor < microvm) is wider"),
	R("sandbox.workspace", "must lie beneath an enterprise filesystem.write entry, else the run is refused",
	  "a read-write mount in the filesystem comparison"),
	R("sandbox.mode", "observe is cut to enforce (forbid_observe) or to the enterprise's enforce/learn",
	  "observe where OLD enforces is wider"),
	R("sandbox.workspace_mode",
	  "a ceiling in the order hold < direct < review: the enterprise's mode replaces a developer's below it",
	  "a mode lower in hold < direct < review than OLD's is wider (hold: a hand-off file lands on one accept; "
	  "direct: writes reach the workspace unreviewed)"),
	R("sandbox.host_uid", "the enterprise's value, when it writes one, replaces the developer's",
	  "any change is wider (the agent acts as another host user)"),
	R("sandbox.host_gid", "the enterprise's value, when it writes one, replaces the developer's",
	  "any change is wider (the agent acts with another host group)"),
	S("sandbox.limits"),
	R("sandbox.limits.memory", "the lower of the two (a limit the enterprise writes)",
	  "higher or unlimited is wider"),
	R("sandbox.limits.pids", "the lower of the two (a limit the enterprise writes)",
	  "higher or unlimited is wider"),
	R("sandbox.limits.open_files", "the lower of the two (a limit the enterprise writes)",
	  "higher or unlimited is wider"),
	R("sandbox.limits.cpu", "the lower of the two (a limit the enterprise writes)",
	  "higher or unlimited is wider"),
	R("sandbox.limits.wall", "the lower of the two (a limit the enterprise writes)",
	  "higher or unlimited is wider"),

	/* ---- filesystem ---- */
	R("filesystem.baseline", "true cut to false when the enterprise writes false",
	  "the baseline's directories are read-only mounts in the filesystem comparison"),
	R("filesystem.read", "each entry kept beneath the enterprise's read or write entries, else narrowed or cut",
	  "a path visible in NEW and hidden in OLD is wider"),
	R("filesystem.write", "each entry kept beneath the enterprise's write entries, else narrowed or cut",
	  "a path writable in NEW and not in OLD is wider"),
	R("filesystem.deny", "the union of both lists", "a path OLD hides and NEW shows is wider"),
	R("filesystem.protect", "the union of both lists", "a protected path NEW lets be written is wider"),
	R("filesystem.protect_defaults", "true when the enterprise writes true",
	  "the default rows dropped count where they made a path read-only"),
	R("filesystem.protect_build", "true when the enterprise writes true",
	  "the build rows dropped count where they made a path read-only"),
	R("filesystem.sockets",
	  "each socket kept only beneath the enterprise's sockets (when written), else its read/write entries "
	  "(when written), and never beneath a deny entry of either layer",
	  "a socket NEW exposes and OLD does not is wider"),

	/* ---- process ---- */
	R("process.exec", "each entry kept beneath the enterprise's exec entries (the implicit grant written out)",
	  "a path NEW lets run and OLD does not is wider"),
	S("process.env"),
	R("process.env.pass", "names outside the enterprise's list are cut", "a name OLD does not pass is wider"),
	R("process.env.set", "variables the enterprise does not set to the same value are cut; its values apply",
	  "a variable OLD does not set, or sets to another value, is wider"),
	R("process.git_identity", "host cut to none when the enterprise writes none",
	  "host where OLD has none is wider (the host user's name and address reach the agent)"),

	/* ---- network ---- */
	N("network.mode", "proxy and transparent send every connection through the same endpoint decisions"),
	N("network.default", "deny is the only value"),
	S("network.endpoints"),
	S("network.endpoints[]"),
	R("network.endpoints[].host", "the intersection of host patterns (endpoint_meet)",
	  "a request to a host OLD does not allow is wider"),
	N("network.endpoints[].id", "a name for records and messages; grants nothing"),
	R("network.endpoints[].ports", "the ports both allow", "a request on a port OLD does not allow is wider"),
	R("network.endpoints[].tls", "intercept when either layer intercepts",
	  "passthrough where OLD intercepts is wider (network.tls)"),
	R("network.endpoints[].access", "read-only is written out as rules, narrowed as rules",
	  "read-only is written out as rules, compared as rules"),
	R("network.endpoints[].rules", "rules kept inside the enterprise's rules, else met or cut",
	  "a request OLD's rules do not allow is wider"),
	R("network.endpoints[].protocol", "protocol: mcp kept when either layer asks for it",
	  "dropping protocol: mcp where OLD has it is wider (network.mcp)"),
	R("network.endpoints[].mcp_server", "kept with protocol: mcp from whichever layer asks for it",
	  "compared with protocol: mcp, the server's rules in the mcp section"),
	S("network.endpoints[].rules[]"),
	N("network.endpoints[].rules[].id", "a name for records and messages; grants nothing"),
	R("network.endpoints[].rules[].methods", "the methods both allow", "a method OLD does not allow is wider"),
	R("network.endpoints[].rules[].path", "the narrower glob, or cut when neither holds the other",
	  "a path OLD does not allow is wider"),
	R("network.endpoints[].rules[].query", "the narrower glob, or cut when neither holds the other",
	  "a query OLD does not allow is wider"),
	R("network.endpoints[].rules[].websocket", "kept only when both allow it",
	  "an upgrade OLD does not allow is wider"),
	R("network.allow_private", "each range kept only inside an enterprise range, else cut",
	  "a non-public address and port OLD does not open is wider"),
	R("network.resolve",
	  "a name kept only pinned to the address the enterprise pins it to; the enterprise's pins apply",
	  "a name pinned to an address OLD does not pin it to, or unpinned where OLD pins it, is wider"),
	R("network.upstream_ca", "kept only when the enterprise trusts the same bundle",
	  "a bundle added or changed is wider (network.tls)"),
	S("network.leak_scan"),
	R("network.leak_scan.max_body", "the larger of the two (more of each body scanned)",
	  "smaller is wider (network.inspection)"),
	R("network.leak_scan.allow_compressed", "false when the enterprise writes false",
	  "turned on is wider (network.inspection)"),
	N("network.log", "a copy of the decisions written by airlock, out of the agent's reach; grants nothing"),

	/* ---- credentials ---- */
	S("credentials[]"),
	R("credentials[].name", "matched against the enterprise's credential of that name; none: cut",
	  "matched by name; a name OLD lacks is wider"),
	R("credentials[].source", "another source than the enterprise's credential of that name: cut",
	  "another source is wider (another secret)"),
	R("credentials[].command", "another command than the enterprise's credential of that name: cut",
	  "another command is wider (another secret)"),
	N("credentials[].env", "names the variable holding the placeholder, which is no secret"),
	N("credentials[].inject",
	  "whether the agent must ask for the secret; where it may go is decided by the bindings"),
	S("credentials[].bindings"),
	S("credentials[].bindings[]"),
	R("credentials[].bindings[].host", "kept only inside a binding of the enterprise's credential",
	  "a host OLD's bindings do not cover is wider"),
	N("credentials[].bindings[].id", "a name for records and messages; grants nothing"),
	R("credentials[].bindings[].port", "the same port as the enterprise's binding",
	  "a port OLD's bindings do not cover is wider"),
	N("credentials[].bindings[].header",
	  "which header of an allowed request carries the secret; layering still wants the enterprise's"),
	N("credentials[].bindings[].template",
	  "the text around the secret in a header of an allowed request"),
	S("credentials[].bindings[].basic"),
	N("credentials[].bindings[].basic.username",
	  "the user name beside the secret in an allowed request"),
	N("credentials[].bindings[].query",
	  "which query parameter of an allowed request carries the secret; layering still wants the "
	  "enterprise's"),
	R("credentials[].bindings[].methods", "no more methods than the enterprise's binding",
	  "a method OLD's bindings do not cover is wider"),
	R("credentials[].bindings[].paths", "no more paths than the enterprise's binding",
	  "a path OLD's bindings do not cover is wider"),
	S("credentials[].bindings[].git"),
	R("credentials[].bindings[].git.repos", "no more repositories than the enterprise's git binding",
	  "a repository OLD's git bindings do not cover is wider"),
	R("credentials[].bindings[].git.fetch", "true only when the enterprise's is", "fetch OLD refuses is wider"),
	R("credentials[].bindings[].git.push", "no more refs than the enterprise's", "a ref OLD may not push is wider"),
	R("credentials[].bindings[].git.delete", "true only when the enterprise's is",
	  "deleting where OLD may not is wider"),
	R("credentials[].bindings[].git.tags", "true only when the enterprise's is", "pushing tags OLD refuses is wider"),

	/* ---- identity, audit ---- */
	N("identity.agent", "the agent's name in records and certificates; grants nothing"),
	R("identity.header", "true when the enterprise writes true (or require.identity_header)",
	  "dropping the header OLD sends counts (oversight removed)"),
	R("audit.enabled", "true when the enterprise writes true (or require.audit)",
	  "turning the log off counts (oversight removed)"),
	N("audit.dir", "where the signed log is written, out of the agent's reach; the enterprise's dir applies when "
		       "it requires the log"),
	R("audit.max_size", "the smaller of the two (a budget the enterprise writes)",
	  "larger is wider (more of the host's disk the agent can fill before the run ends)"),

	/* ---- mcp ---- */
	S("mcp.servers"),
	S("mcp.servers.*"),
	R("mcp.servers.*.command", "another command than the enterprise's server of that name: the server is cut",
	  "another command is wider (another program, other tools)"),
	R("mcp.servers.*.tools", "per name the lower decision, both rules' constraints, the smaller limit",
	  "a name NEW lets through further than OLD is wider"),
	R("mcp.servers.*.resources", "per URI the lower decision", "a URI NEW allows and OLD does not is wider"),
	R("mcp.servers.*.prompts", "per name the lower decision", "a prompt NEW allows and OLD does not is wider"),
	R("mcp.servers.*.max_calls", "the smaller limit", "higher or dropped is wider"),
	S("mcp.servers.*.server_requests"),
	R("mcp.servers.*.server_requests.sampling", "true only when the enterprise's is", "turned on is wider"),
	R("mcp.servers.*.server_requests.elicitation", "true only when the enterprise's is", "turned on is wider"),
	R("mcp.servers.*.server_requests.roots", "true only when the enterprise's is", "turned on is wider"),
	S("mcp.servers.*.scan"),
	R("mcp.servers.*.scan.secrets", "the stricter of the two", "weaker is wider"),
	R("mcp.servers.*.scan.injection", "the stricter of the two", "weaker is wider"),
	N("mcp.servers.*.record_arguments", "what the record holds; grants nothing"),
	R("mcp.servers.*.pins", "the enterprise's pin file (or the default) replaces another",
	  "any change is wider (other approvals)"),
	R("mcp.servers.*.policy", "the enterprise's server policy (or the built-in default) replaces another",
	  "any change is wider (another sandbox for the server)"),
	N("mcp.servers.*.step_up_timeout", "how long a person is waited for; the person still decides"),
	S("mcp.servers.*.tools[]"),
	R("mcp.servers.*.tools[].name", "met with the enterprise's names (glob automata)", "compared as names"),
	R("mcp.servers.*.tools[].decision", "the lower decision", "deny < step_up < allow"),
	S("mcp.servers.*.tools[].args"),
	S("mcp.servers.*.tools[].args.*"),
	R("mcp.servers.*.tools[].args.*.glob", "both layers' constraints hold", "dropped or wider is wider"),
	R("mcp.servers.*.tools[].args.*.regex", "both layers' constraints hold", "changed with a witness is wider"),
	R("mcp.servers.*.tools[].args.*.enum", "both layers' constraints hold", "dropped or a new value is wider"),
	R("mcp.servers.*.tools[].args.*.min", "both layers' constraints hold", "lower or dropped is wider"),
	R("mcp.servers.*.tools[].args.*.max", "both layers' constraints hold", "higher or dropped is wider"),
	R("mcp.servers.*.tools[].args.*.max_length", "both layers' constraints hold", "higher or dropped is wider"),
	R("mcp.servers.*.tools[].args.*.inside_workspace", "both layers' constraints hold", "dropped is wider"),
	R("mcp.servers.*.tools[].args.*.required", "both layers' constraints hold", "dropped is wider"),
	R("mcp.servers.*.tools[].max_calls", "the smaller limit", "higher or dropped is wider"),
	S("mcp.servers.*.resources[]"),
	R("mcp.servers.*.resources[].uri", "met with the enterprise's URIs (path globs)", "compared as URIs"),
	R("mcp.servers.*.resources[].decision", "the lower decision", "deny < allow"),
	S("mcp.servers.*.prompts[]"),
	R("mcp.servers.*.prompts[].name", "met with the enterprise's names", "compared as names"),
	R("mcp.servers.*.prompts[].decision", "the lower decision", "deny < allow"),
};

const size_t policy_n_fields = sizeof(policy_fields) / sizeof(policy_fields[0]);

/* Whether path is parent + "." + one key (parent "" = the top level). */
static const char *child_key(const char *path, const char *parent)
{
	size_t n = strlen(parent);
	const char *k;

	if (n == 0)
		k = path;
	else if (strncmp(path, parent, n) == 0 && path[n] == '.')
		k = path + n + 1;
	else
		return NULL;
	return strchr(k, '.') ? NULL : k;
}

/* "credentials[]" names the entries of "credentials"; a child key matches
 * with or without its "[]". */
static bool key_is(const char *k, const char *key)
{
	size_t n = strlen(key);
	return strncmp(k, key, n) == 0 && (k[n] == '\0' || strcmp(k + n, "[]") == 0);
}

bool policy_schema_knows(const char *parent, const char *key)
{
	for (size_t i = 0; i < policy_n_fields; i++) {
		const char *k = child_key(policy_fields[i].path, parent);
		if (k && key_is(k, key) && strcmp(k, "*") != 0)
			return true;
	}
	return false;
}

void policy_schema_keys(const char *parent, char *buf, size_t size)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < policy_n_fields && pos < size; i++) {
		const char *k = child_key(policy_fields[i].path, parent);
		size_t len;
		if (!k || strcmp(k, "*") == 0)
			continue;
		len = strcspn(k, "[");
		/* "credentials" and "credentials[]" are one key. */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const char *o = child_key(policy_fields[j].path, parent);
			seen = o && strcspn(o, "[") == len && strncmp(o, k, len) == 0;
		}
		if (seen)
			continue;
		int w = snprintf(buf + pos, size - pos, "%s%.*s", pos ? ", " : "", (int)len, k);
		if (w < 0)
			break;
		pos += (size_t)w;
	}
}

const struct policy_field *policy_schema_field(const char *path)
{
	for (size_t i = 0; i < policy_n_fields; i++)
		if (strcmp(policy_fields[i].path, path) == 0)
			return &policy_fields[i];
	return NULL;
}
