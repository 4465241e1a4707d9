#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# airlock's review mode as a runtime prefix for `airlock conformance`:
#
#   scripts/conformance-review.sh AIRLOCK AUDIT_DIR -- CMD [ARGS...]
#
# runs CMD under `sandbox.workspace_mode: review` (the built-in default
# policy otherwise), then applies the session as a user who reads the review
# and accepts nothing would: every entry `airlock review --json` flags is
# left out with `--exclude`, the rest lands. What the agent did reaches the
# workspace only through that apply, and that is what the suite judges: a
# hand-off review does not flag lands, one it flags does not.
#
# CMD's output is passed through; airlock's own messages go to stderr. The
# exit status is airlock run's.

set -u

if [ $# -lt 4 ] || [ "$3" != -- ]; then
	echo "usage: $0 AIRLOCK AUDIT_DIR -- CMD [ARGS...]" >&2
	exit 2
fi
airlock=$1
audit=$2
shift 3

st=$(mktemp -d "${TMPDIR:-/tmp}/airlock-review-prefix.XXXXXX") || exit 2
trap 'rm -rf "$st"' EXIT
printf 'version: 1\nsandbox:\n  workspace_mode: review\n' >"$st/review.yaml"

"$airlock" run --policy "$st/review.yaml" --audit "$audit" -- "$@" 2>"$st/run.err"
rc=$?
cat "$st/run.err" >&2
id=$(sed -n 's/^airlock: review mode: .* held in session \([^:]*\):.*/\1/p' "$st/run.err" | tail -1)
if [ -n "$id" ]; then
	"$airlock" review "$id" --json >"$st/changes.jsonl" 2>&2
	excludes=()
	while IFS= read -r path; do
		excludes+=(--exclude "$path")
	done < <(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["flagged"]:
        print(d["path"])
' "$st/changes.jsonl")
	# apply's own lines name the scratch workspace; the summary does not.
	if "$airlock" apply "$id" "${excludes[@]}" >"$st/apply.out" 2>&1; then
		echo "conformance-review: applied all but the $((${#excludes[@]} / 2)) flagged entries" >&2
	else
		echo "conformance-review: airlock apply failed, nothing applied: $(tail -1 "$st/apply.out")" >&2
	fi
fi
exit "$rc"
