#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Run the conformance suite against airlock and every peer runtime found on
# this machine, and rewrite the results section of docs/conformance.md.
#
#   scripts/conformance-peers.sh [BUILD_DIR]      (default: build)
#
# airlock runs three ways: its default policy, the same with denials
# traced, and review mode applied as a user who accepts nothing flagged
# would (scripts/conformance-review.sh).
#
# Peers: bubblewrap (strict flags, the same as bench/startup's
# bwrap-strict), firejail, gVisor's `runsc do`, and from the npm prefix that
# bench/setup-peers fills (AIRLOCK_BENCH_PREFIX, default /opt/airlock-bench)
# Anthropic's sandbox-runtime (`srt`) and OpenAI's `codex sandbox`. A peer
# that is not installed, or that runs nothing, is reported as such.
#
# Every run uses --profile strict and the suite's own network namespace.
# The scratch trees go under ~/.cache/airlock-conformance rather than /tmp:
# firejail hides /tmp and /var/tmp from the program it runs, and the
# workspace must be visible in every runtime.

set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$repo/$build ;; esac
AIRLOCK=${AIRLOCK:-$build/src/airlock}
PREFIX=${AIRLOCK_BENCH_PREFIX:-/opt/airlock-bench}
NPM_BIN=$PREFIX/npm/node_modules/.bin
DOC=$repo/docs/conformance.md

if [ ! -x "$AIRLOCK" ]; then
	echo "conformance-peers: no airlock at $AIRLOCK (build first: meson setup build && ninja -C build)" >&2
	exit 2
fi
if ! command -v python3 >/dev/null; then
	echo "conformance-peers: python3 is needed to write the tables" >&2
	exit 2
fi

scratch=${XDG_CACHE_HOME:-$HOME/.cache}/airlock-conformance
mkdir -p "$scratch" || exit 2
out=$(mktemp -d "$scratch/results.XXXXXX") || exit 2
trap 'rm -rf "$out"' EXIT

bwrap_strict="bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL --ro-bind /usr /usr --ro-bind /etc /etc"
for d in bin lib lib64 sbin lib32 libx32; do
	if [ -L "/$d" ]; then
		bwrap_strict+=" --symlink $(readlink "/$d") /$d"
	elif [ -d "/$d" ]; then
		bwrap_strict+=" --ro-bind /$d /$d"
	fi
done
bwrap_strict+=" --proc /proc --dev /dev --tmpfs /tmp --bind {workspace} {workspace} --chdir {workspace}"
bwrap_strict+=" --clearenv --setenv PATH /usr/local/bin:/usr/bin:/bin --setenv HOME {workspace} --setenv LANG C.UTF-8 --"

# srt reads its rules from a file; the prefix writes one that lets the
# workspace (the current directory when the prefix runs) be written and
# allows no domain, as bench/startup does.
srt_prefix="printf '{\"filesystem\":{\"denyRead\":[],\"allowWrite\":[\"%s\"],\"denyWrite\":[]},\"network\":{\"allowedDomains\":[],\"deniedDomains\":[]}}' \"\$PWD\" >../srt-settings.json && $NPM_BIN/srt -s ../srt-settings.json"

codex_home=$PREFIX/codex-home-$(id -un)
[ "$(id -u)" = 0 ] && codex_home=$PREFIX/codex-home-root
# codex refuses to start when its CODEX_HOME does not exist.
mkdir -p "$codex_home" 2>/dev/null
codex_prefix="env CODEX_HOME=$codex_home $NPM_BIN/codex sandbox -c 'sandbox_mode=\"workspace-write\"' --"

# name | what must exist | version command | prefix | note
runtimes=(
	"airlock|$AIRLOCK|$AIRLOCK version|$AIRLOCK run --audit {audit} --|built-in default policy, signed decision log"
	"airlock --trace-denials|$AIRLOCK|$AIRLOCK version|$AIRLOCK run --trace-denials --audit {audit} --|the same, denials traced into the log"
	"airlock review|$AIRLOCK|$AIRLOCK version|$repo/scripts/conformance-review.sh $AIRLOCK {audit} --|review mode, then \`airlock apply\` of every change review does not flag (scripts/conformance-review.sh)"
	"bwrap-strict|bwrap|bwrap --version|$bwrap_strict|bench/startup's strict flags"
	"firejail|firejail|firejail --version|firejail --quiet --noprofile --net=none --private-tmp --private-dev --caps.drop=all --nonewprivs --seccomp|bench/startup's flags"
	"srt|$NPM_BIN/srt|$NPM_BIN/srt --version|$srt_prefix|no allowed domain, workspace writable"
	"codex sandbox|$NPM_BIN/codex|$NPM_BIN/codex --version|$codex_prefix|workspace-write mode"
	"runsc do|runsc|runsc --version|runsc --network=none do|Debian's runsc, no network"
)

i=0
for spec in "${runtimes[@]}"; do
	IFS='|' read -r name need vcmd prefix note <<<"$spec"
	i=$((i + 1))
	f=$out/$i
	printf '%s\n' "$name" >"$f.name"
	printf '%s\n' "$prefix" >"$f.prefix"
	printf '%s\n' "$note" >"$f.note"
	if ! command -v "$need" >/dev/null 2>&1 && [ ! -x "$need" ]; then
		echo "conformance-peers: $name: not installed ($need)" >&2
		echo "not installed" >"$f.version"
		continue
	fi
	$vcmd 2>&1 | head -1 >"$f.version"
	echo "conformance-peers: $name ..." >&2
	TMPDIR=$scratch timeout 600 "$AIRLOCK" conformance --runtime "$prefix" --profile strict --format json \
		>"$f.json" 2>"$f.err"
	echo $? >"$f.rc"
done

python3 - "$out" "$DOC" "$repo" "$(uname -sr)" "$(id -u)" <<'PY'
import glob, json, os, re, sys

out, doc, repo, kernel, uid = sys.argv[1:6]
runs = []
for name_file in sorted(glob.glob(os.path.join(out, "*.name")), key=lambda p: int(os.path.basename(p).split(".")[0])):
    base = name_file[:-5]
    rd = lambda ext: open(base + ext).read().strip() if os.path.exists(base + ext) else ""
    r = {"name": rd(".name"), "prefix": rd(".prefix"), "note": rd(".note"), "version": rd(".version")}
    if os.path.exists(base + ".json") and os.path.getsize(base + ".json"):
        r["json"] = json.load(open(base + ".json"))
    r["err"] = rd(".err")
    runs.append(r)

def short(s):
    # Paths of this checkout and of the npm prefix, shortened for reading.
    return s.replace(repo + "/", "").replace(os.path.expanduser("~"), "~")

cell = {"held": "held", "failed": "**FAILED**", "not_applicable": "n/a"}
ids = None
for r in runs:
    if "json" in r:
        ids = [(q["id"], q["level"]) for q in r["json"]["requirements"]]
        break

lines = []
lines.append("Generated by `scripts/conformance-peers.sh` on %s, as %s, profile strict."
             % (kernel, "root" if uid == "0" else "an unprivileged user"))
lines.append("")
hdr = "| requirement | profile | " + " | ".join(r["name"] for r in runs) + " |"
lines.append(hdr)
lines.append("|" + "---|" * (2 + len(runs)))
for rid, level in ids or []:
    row = ["`%s`" % rid, level]
    for r in runs:
        if "json" not in r:
            row.append("not run")
            continue
        q = next(q for q in r["json"]["requirements"] if q["id"] == rid)
        row.append(cell[q["verdict"]])
    lines.append("| " + " | ".join(row) + " |")
tot = ["**held / failed / n/a**", ""]
for r in runs:
    if "json" not in r:
        tot.append("not run")
    else:
        s = r["json"]["summary"]
        tot.append("%d / %d / %d" % (s["held"], s["failed"], s["not_applicable"]))
lines.append("| " + " | ".join(tot) + " |")
lines.append("")
lines.append("### The runtimes, their versions and the exact commands")
lines.append("")
for r in runs:
    lines.append("#### %s" % r["name"])
    lines.append("")
    lines.append("- version: `%s`" % short(r["version"]))
    lines.append("- configuration: %s" % r["note"])
    lines.append("- command: `airlock conformance --profile strict --runtime '%s'`" % short(r["prefix"]))
    if "json" in r:
        lines.append("- the runtime's own exit: %s" % short(r["json"]["runtime_status"]))
        failed = [q for q in r["json"]["requirements"] if q["verdict"] == "failed"]
        if failed:
            lines.append("- what failed, in the probe's words:")
            for q in failed:
                lines.append("  - `%s`: %s" % (q["id"], short(q["evidence"])))
    elif r["version"] == "not installed":
        lines.append("- not installed on this machine")
    else:
        lines.append("- did not run: %s" % short(r["err"]))
    lines.append("")

reqs = []
for r in runs:
    if "json" in r:
        reqs.append("| id | group | profile | AICM | rationale | probe lines (attacks; neighbours) |")
        reqs.append("|---|---|---|---|---|---|")
        for q in r["json"]["requirements"]:
            probes = ", ".join("`%s`" % a for a in q["attacks"]) or "the record, after the run"
            if q["neighbours"]:
                probes += "; " + ", ".join("`%s`" % a for a in q["neighbours"])
            reqs.append("| `%s` | %s | %s | %s | %s | %s |" % (q["id"], q["group"], q["level"],
                        ", ".join(q["aicm"]), q["rationale"], probes.replace("|", "\\|")))
        break

def splice(text, name, body):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    if begin not in text or end not in text:
        sys.exit("conformance-peers: %s has no %s markers" % (doc, name))
    return text[: text.index(begin) + len(begin)] + "\n" + "\n".join(body) + "\n" + text[text.index(end):]

text = open(doc).read()
if reqs:
    text = splice(text, "requirements", reqs)
text = splice(text, "results", lines)
open(doc, "w").write(text)
print("conformance-peers: wrote %s" % doc, file=sys.stderr)
PY
