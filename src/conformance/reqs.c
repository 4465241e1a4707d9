/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure parts of the suite: parsing the probe's lines, judging a row,
 * expanding a probe line's placeholders. The requirement table itself
 * (conf_reqs[]) is data, in requirements.txt; reqs-gen.py makes it C at
 * build time.
 *
 * Placeholders (set by run.c): {ws} the workspace (the runtime's current
 * directory), {outside} a directory beside it standing for the rest of the
 * host's files, {home} the temporary HOME with a fake SSH key and cloud
 * credentials, {canary} the secret placed in the runtime's environment and
 * in a host process's, {label} the same as a DNS label, {svc_pid} that host
 * process, {lo_tcp} and {lo_udp} its loopback ports, {sock} a fake Docker
 * socket, {audit} the runtime's decision record directory, {meta}, {priv}
 * and {pub}: the metadata, a private and a stand-in public address on the
 * suite's own network namespace. "$HOME" and "$TMPDIR" are left to the
 * probe, which reads them from the environment the runtime gave it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/conformance.h"

const char *conf_group_name(enum conf_group g)
{
	switch (g) {
	case CONF_BOUNDARY:
		return "boundary";
	case CONF_EGRESS:
		return "egress";
	case CONF_CREDENTIALS:
		return "credentials";
	case CONF_HANDOFF:
		return "hand-offs";
	case CONF_AUDIT:
		return "audit";
	}
	return "?";
}

const char *conf_level_name(enum conf_level l)
{
	return l == CONF_BASELINE ? "baseline" : "strict";
}

const char *conf_verdict_name(enum conf_verdict v)
{
	switch (v) {
	case CONF_HELD:
		return "held";
	case CONF_FAILED:
		return "FAILED";
	case CONF_NA:
		return "n/a";
	}
	return "?";
}

bool conf_in_profile(const struct conf_req *r, bool strict)
{
	return strict || r->level == CONF_BASELINE;
}

int conf_parse_line(const char *line, size_t *idx, struct conf_line *out)
{
	char *end;
	const char *p, *colon;
	unsigned long n;

	memset(out, 0, sizeof(*out));
	if (strcmp(line, "@end") == 0)
		return 1;
	if (line[0] != '@' || line[1] < '0' || line[1] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(line + 1, &end, 10);
	if (errno || *end != ' ' || n > 4096)
		return -EINVAL;
	colon = strstr(end + 1, ": ");
	if (!colon)
		return -EINVAL;
	p = colon + 2;
	if (strncmp(p, "blocked", 7) == 0) {
		out->outcome = CONF_BLOCKED;
		p += 7;
	} else if (strncmp(p, "allowed", 7) == 0) {
		out->outcome = CONF_ALLOWED;
		p += 7;
	} else if (strncmp(p, "error", 5) == 0) {
		out->outcome = CONF_ERROR;
		p += 5;
	} else {
		return -EINVAL;
	}
	while (*p == ' ')
		p++;
	/* "(WHY)" for blocked and allowed, bare WHY for error. */
	size_t l = strlen(p);
	if (out->outcome != CONF_ERROR && l >= 2 && p[0] == '(' && p[l - 1] == ')') {
		p++;
		l -= 2;
	}
	if (l >= sizeof(out->why))
		l = sizeof(out->why) - 1;
	memcpy(out->why, p, l);
	out->why[l] = '\0';
	*idx = n;
	return 0;
}

static void ev_add(struct conf_result *out, const char *tmpl, const struct conf_line *l,
		   bool neighbour)
{
	size_t used = strlen(out->evidence);
	static const char *const names[] = { "no result", "blocked", "allowed", "error" };

	if (used >= sizeof(out->evidence) - 1)
		return;
	snprintf(out->evidence + used, sizeof(out->evidence) - used, "%s%s%s: %s%s%s%s", used ? "; " : "",
		 neighbour ? "neighbour " : "", tmpl, names[l->outcome], l->why[0] ? " (" : "", l->why,
		 l->why[0] ? ")" : "");
}

void conf_judge(const struct conf_req *r, const struct conf_line *att, size_t na,
		const struct conf_line *nb, size_t nn, struct conf_result *out)
{
	bool attack_allowed = false, neighbour_blocked = false, unusable = false;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < na; i++) {
		attack_allowed |= att[i].outcome == CONF_ALLOWED;
		unusable |= att[i].outcome == CONF_ERROR || att[i].outcome == CONF_MISSING;
	}
	for (i = 0; i < nn; i++) {
		neighbour_blocked |= nb[i].outcome == CONF_BLOCKED;
		unusable |= nb[i].outcome == CONF_ERROR || nb[i].outcome == CONF_MISSING;
	}
	/* An attack that got through decides; so does a neighbour that was
	 * refused, since a runtime that breaks the legitimate operation next
	 * to an attack has not shown that it contains the attack rather than
	 * merely failing. */
	if (attack_allowed || neighbour_blocked)
		out->verdict = CONF_FAILED;
	else if (unusable || na == 0)
		out->verdict = CONF_NA;
	else
		out->verdict = CONF_HELD;
	for (i = 0; i < na; i++)
		ev_add(out, r->attacks[i], &att[i], false);
	for (i = 0; i < nn; i++)
		ev_add(out, r->neighbours[i], &nb[i], true);
}

int conf_expand(const char *tmpl, const char *const *vars, char *out, size_t len, struct error *err)
{
	size_t o = 0;
	const char *p = tmpl;

	while (*p) {
		const char *val = NULL;
		size_t vl;
		if (*p == '{') {
			const char *close = strchr(p, '}');
			size_t nl = close ? (size_t)(close - p - 1) : 0;
			for (size_t i = 0; close && vars[i]; i += 2)
				if (strlen(vars[i]) == nl && strncmp(vars[i], p + 1, nl) == 0)
					val = vars[i + 1];
			if (!val)
				return error_set(err, EINVAL, "%s: unknown placeholder at '%s'", tmpl, p);
			p = close + 1;
		} else {
			val = p;
			vl = 1;
			p++;
			goto copy;
		}
		vl = strlen(val);
copy:
		if (o + vl >= len)
			return error_set(err, ENAMETOOLONG, "%s: expands beyond %zu bytes", tmpl, len);
		memcpy(out + o, val, vl);
		o += vl;
	}
	out[o] = '\0';
	return 0;
}
