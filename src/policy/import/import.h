/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_IMPORT_IMPORT_H
#define AIRLOCK_POLICY_IMPORT_IMPORT_H

/*
 * Converting other runtimes' sandbox settings into an airlock policy, and
 * airlock policies into theirs (docs/import.md). A conversion is faithful or refused: every field of the
 * source is either expressed, or named in an error with its FILE:LINE:COL.
 * The one exception is asked for by name: with `narrow`, a field whose
 * airlock form grants strictly less than the source is accepted and listed
 * in a comment at the top of the output. Nothing is ever made wider.
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "util/error.h"

enum imp_format {
	IMP_FORMAT_SRT = 0,   /* Anthropic sandbox-runtime settings (JSON) */
	IMP_FORMAT_CODEX,     /* OpenAI Codex config.toml sandbox settings */
	IMP_FORMAT_MXC,       /* Microsoft MXC container config / sandbox policy (JSON) */
	IMP_FORMAT_OPENSHELL, /* NVIDIA OpenShell sandbox policy (YAML) */
};

/* "srt", "codex", "mxc", "openshell" -> format; false if unknown. */
bool imp_format_from_name(const char *name, enum imp_format *out);
const char *imp_format_name(enum imp_format f);

/* Convert the settings in buf (len bytes, read from `file`, which names it
 * in messages) into airlock policy YAML with a comment naming the source
 * field above each entry. *yaml is a new NUL-terminated string owned by the
 * caller. The YAML is not yet checked by the policy parser; the caller
 * loads it (policy_load_buffer) before using it. */
int imp_convert(enum imp_format f, const char *file, const char *buf, size_t len, bool narrow, char **yaml,
		struct error *err) WUR;

/* Convert an effective policy into the settings of `f` (IMP_FORMAT_SRT or
 * IMP_FORMAT_MXC) as JSON. A setting the target cannot express is refused
 * with the airlock field's name; with accept_wider, settings whose target
 * form grants more than airlock did are converted instead, and each is
 * described in *warnings (a new string, possibly empty, owned by the caller).
 * cwd is the directory the target runtime will run in (srt's "."). */
int imp_export(enum imp_format f, const struct policy *p, const char *cwd, bool accept_wider, char **json,
	       char **warnings, struct error *err) WUR;

#endif
