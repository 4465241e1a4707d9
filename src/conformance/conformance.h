/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_CONFORMANCE_CONFORMANCE_H
#define AIRLOCK_CONFORMANCE_CONFORMANCE_H

/*
 * The conformance suite: requirements any agent runtime can be held to,
 * each checked by running the static probe (tests/probe) through the
 * runtime's command prefix. A requirement is a row of data (reqs.c): the
 * probe lines that must be blocked (attacks), the lines that must keep
 * working (neighbours), and what the suite must set up first. run.c builds
 * that setup, runs the probe once through the runtime and judges each row;
 * report.c prints the rows as a table, JSON or JUnit XML.
 *
 * Ownership: every function here fills buffers its caller owns and keeps
 * no pointer to them; the table and its strings are static.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

enum conf_group { CONF_BOUNDARY, CONF_EGRESS, CONF_CREDENTIALS, CONF_HANDOFF, CONF_AUDIT };

/* baseline: what every agent sandbox must hold; strict adds hand-offs,
 * proxy bypass and the decision record. */
enum conf_level { CONF_BASELINE, CONF_STRICT };

enum conf_need {
	CONF_NEED_NOTHING,
	CONF_NEED_NETNS, /* addresses on the suite's own network namespace */
	CONF_NEED_AUDIT, /* a decision record: {audit} in the runtime prefix */
	CONF_NEED_VSOCK, /* the host's kernel offers AF_VSOCK at all */
};

#define CONF_MAX_PROBES 8

struct conf_req {
	const char *id;        /* "boundary.host-files" */
	enum conf_group group;
	enum conf_level level;
	enum conf_need need;
	const char *aicm;      /* AICM control ids, comma-separated */
	const char *rationale; /* one line */
	/* Probe lines: a test name and its arguments, separated by spaces;
	 * "{name}" in an argument is replaced (conf_expand). NULL-ended. */
	const char *attacks[CONF_MAX_PROBES];
	const char *neighbours[CONF_MAX_PROBES];
};

extern const struct conf_req conf_reqs[];
extern const size_t conf_nreqs;

const char *conf_group_name(enum conf_group g);
const char *conf_level_name(enum conf_level l);

enum conf_verdict { CONF_NA, CONF_HELD, CONF_FAILED };
const char *conf_verdict_name(enum conf_verdict v);

struct conf_result {
	enum conf_verdict verdict;
	char evidence[1536];
};

/* One probe line's outcome, as the probe printed it. */
enum conf_outcome { CONF_MISSING, CONF_BLOCKED, CONF_ALLOWED, CONF_ERROR };

struct conf_line {
	enum conf_outcome outcome;
	char why[400];
};

/* Parse one line of 'airlock-probe batch' output: "@N NAME: blocked (WHY)",
 * "@N NAME: allowed [(WHY)]", "@N NAME: error WHY". Fills *idx and *out.
 * Returns 0, 1 for the "@end" line, or -EINVAL for anything else. Pure. */
int conf_parse_line(const char *line, size_t *idx, struct conf_line *out);

/* The verdict on a requirement from its probe lines (attack outcomes in
 * att[0..na), neighbour outcomes in nb[0..nn), in table order): failed
 * when an attack was allowed or a neighbour blocked, not applicable when a
 * line has no usable outcome, held otherwise. The evidence names each
 * line by its template, never by its expanded arguments (they may hold
 * the canary). Pure. */
void conf_judge(const struct conf_req *r, const struct conf_line *att, size_t na,
		const struct conf_line *nb, size_t nn, struct conf_result *out);

/* Replace each "{name}" in tmpl by the value vars gives for it (vars:
 * "name", "value" pairs, NULL-ended). Returns 0, or -EINVAL for an unknown
 * name and -ENAMETOOLONG when out is too small, with err set. Pure. */
int conf_expand(const char *tmpl, const char *const *vars, char *out, size_t len,
		struct error *err) WUR;

/* After the run, what the host sees of a probe line that leaves something
 * in the workspace: name is the probe's test ("write", "setid-plant",
 * "git-redirect", "handoff-symlink", "symlink-ok", "chmod-ok", ...), args
 * its expanded arguments, *l the line as the probe reported it. A thing
 * found on the host makes an attack allowed whatever the probe saw; a
 * thing the probe made but the host does not hold (a runtime that writes
 * into a throwaway overlay) is blocked. Returns true when the line is one
 * the host judges (*l then rewritten), false otherwise (*l untouched).
 * Reads the host's files; keeps no pointer. */
bool conf_host_view(const char *name, const char *const *args, size_t nargs, struct conf_line *l);

struct conf_opts {
	const char *runtime; /* the command prefix, run by /bin/sh */
	const char *probe;   /* the static probe; NULL: beside airlock */
	bool strict;
	bool keep;           /* leave the scratch directory for inspection */
	int timeout_s;       /* for the whole probe run */
};

/* What the run found about its own setup, for the report. */
struct conf_info {
	char netns[256];     /* "created (...)" or why not */
	char vsock[128];     /* "available" or why not, outside the runtime */
	char probe[4096];
	char runtime_status[256];
	char scratch[4096];  /* set when kept */
	bool ran;            /* the probe reported at least one line */
};

/* Set up, run the probe through opts->runtime, judge every row of
 * conf_reqs into res[0..conf_nreqs), clean up. Returns 0 (whatever the
 * verdicts), or a negative errno with err set when the suite itself
 * could not run. */
int conf_run(const struct conf_opts *opts, struct conf_result *res, struct conf_info *info,
	     struct error *err) WUR;

enum conf_format { CONF_TABLE, CONF_JSON, CONF_JUNIT };

void conf_report(FILE *f, enum conf_format fmt, const struct conf_opts *opts,
		 const struct conf_info *info, const struct conf_result *res);

/* Is the requirement part of the profile (strict includes baseline)? */
bool conf_in_profile(const struct conf_req *r, bool strict);

#endif
