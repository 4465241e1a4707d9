/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event parser, on the strict JSON reader (doc/json.h).
 *
 * Events come from the proxy and the supervisor, both of which the agent
 * can influence: a host name, a path or a reason may hold any byte the
 * agent chose. Everything here is bounded by the caller's buffers and never
 * reads past the length it was given (the texts need not be NUL-terminated).
 */
#include "audit/audit.h"
#include "doc/json.h"

#include <errno.h>
#include <string.h>

#include "util/cleanup.h"

/* ---- events ---- */

int audit_event_parse(const char *line, size_t len, struct audit_event *ev)
{
	ev->n = 0;
	if (!line)
		return -EINVAL;
	/* One line as read, with or without its newline. */
	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > AUDIT_EVENT_MAX_LINE)
		return -EINVAL;
	/* One token for the object, two per member, one more to notice a
	 * member too many. */
	struct doc_json_tok tok[2 + 2 * AUDIT_EVENT_MAX_FIELDS];
	struct doc_json j;
	if (doc_json_parse(&j, line, len, tok, ARRAY_SIZE(tok), 1) < 0 || tok[0].type != DOC_JSON_OBJECT)
		return -EINVAL;
	size_t used = 0;
	for (int m = 1; m < (int)tok[0].end; m = (int)tok[m + 1].end) {
		if (ev->n >= AUDIT_EVENT_MAX_FIELDS)
			goto bad;
		int v = m + 1;
		if (doc_json_str(&j, m, ev->f[ev->n].key, sizeof(ev->f[ev->n].key)) < 0)
			goto bad;
		struct audit_value *val = &ev->f[ev->n].v;
		*val = (struct audit_value){ 0 };
		switch (tok[v].type) {
		case DOC_JSON_STRING: {
			int l = doc_json_str(&j, v, ev->store + used, sizeof(ev->store) - used);
			if (l < 0)
				goto bad;
			val->type = AUDIT_STR;
			val->s = ev->store + used;
			used += (size_t)l + 1;
			break;
		}
		case DOC_JSON_NUMBER:
			if (doc_json_int(&j, v, &val->i) < 0)
				goto bad;
			val->type = AUDIT_INT;
			break;
		case DOC_JSON_TRUE:
		case DOC_JSON_FALSE:
			val->type = AUDIT_BOOL;
			val->b = tok[v].type == DOC_JSON_TRUE;
			break;
		case DOC_JSON_OBJECT:
		case DOC_JSON_ARRAY:
		case DOC_JSON_NULL:
		default:
			goto bad;
		}
		ev->n++;
	}
	return 0;
bad:
	ev->n = 0;
	return -EINVAL;
}

static const struct audit_value *find(const struct audit_event *ev, const char *key)
{
	for (size_t k = 0; k < ev->n; k++)
		if (strcmp(ev->f[k].key, key) == 0)
			return &ev->f[k].v;
	return NULL;
}

const char *audit_event_str(const struct audit_event *ev, const char *key)
{
	const struct audit_value *v = find(ev, key);
	return v && v->type == AUDIT_STR ? v->s : NULL;
}

int64_t audit_event_int(const struct audit_event *ev, const char *key, int64_t def)
{
	const struct audit_value *v = find(ev, key);
	return v && v->type == AUDIT_INT ? v->i : def;
}
