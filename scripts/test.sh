#!/usr/bin/env bash
# Build airlock and run every test:
#   1. unit tests (cmocka, through meson test)
#   2. end-to-end tests against the real binary, as the calling user, and,
#      when called as root, again as an unprivileged user
#   3. each libFuzzer harness for FUZZ_SECONDS (default 30) under ASan+UBSan
#   4. the unit and end-to-end suites again with airlock built with
#      ASan+UBSan
# Ends with one line "N passed, N failed" over every stage's tests.
#
#   ./scripts/test.sh            everything
#   STAGES="unit e2e" ./scripts/test.sh   a subset (unit e2e fuzz asan)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/deps.sh" || exit 1

stages=${STAGES:-unit e2e fuzz asan}
fuzz_seconds=${FUZZ_SECONDS:-30}
passed=0 failed=0 skipped=0
log=$(mktemp /tmp/airlock-test.XXXXXX)
# What failed, with the first lines of why, repeated at the very end so
# that the tail of a long log is enough to know what to look at.
digest=$(mktemp /tmp/airlock-test-digest.XXXXXX)
trap 'rm -f "$log" "$digest"' EXIT

have() { [[ " $stages " == *" $1 "* ]]; }
stage() { printf '\n=== %s\n' "$*"; }

# Add the counts of a run whose output is in $log: e2e prints
# "N passed, N failed[, N skipped]"; meson test prints "Ok: N" / "Fail: N".
count() {
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		passed=$((passed + $(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")))
		failed=$((failed + $(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")))
		if [[ $line == *skipped* ]]; then
			skipped=$((skipped + $(sed -E 's/.*, ([0-9]+) skipped.*/\1/' <<<"$line")))
		fi
		return
	fi
	local ok fail
	ok=$(grep -E '^Ok:' "$log" | awk '{print $2}' | tail -n 1)
	fail=$(grep -E '^(Fail|Timeout|Unexpected Pass):' "$log" | awk '{s+=$2} END {print s+0}')
	passed=$((passed + ${ok:-0}))
	failed=$((failed + ${fail:-0}))
}

# run NAME CMD...: run a stage, show its output, count its tests; a stage
# that fails without reporting counts is one failure.
run() {
	local name=$1
	shift
	stage "$name"
	local before=$failed
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	count
	if [ "$rc" -ne 0 ] && [ "$failed" -eq "$before" ]; then
		echo "test.sh: stage '$name' failed (exit $rc)"
		failed=$((failed + 1))
	fi
	if [ "$failed" -ne "$before" ]; then
		note_failure "$name" "$log"
	fi
}

# note_failure STAGE LOG: keep what a failed stage said of its failures:
# e2e "FAIL name" blocks (the test's own output, indented), meson's failed
# tests, sanitizer and fuzzer reports.
note_failure() {
	{
		printf -- '--- %s\n' "$1"
		awk '
			/^FAIL / { keep = 1; n = 0; print; next }
			keep && /^     / { if (++n <= 25) print; next }
			{ keep = 0 }
			/^ *[0-9]+\/[0-9]+ .*(FAIL|TIMEOUT)/ { print }
			/ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|^==[0-9]+==ERROR|deadly signal/ { if (++s <= 10) print }
			/^test\.sh: / { print }
		' "$2" | head -n 200
	} >>"$digest"
}

stage "build"
if ! "$root/scripts/build.sh" build; then
	echo "0 passed, 1 failed"
	exit 1
fi

if have unit; then
	run "unit tests" meson test -C build --no-suite e2e --print-errorlogs
fi

if have e2e; then
	run "end-to-end tests as $(id -un)" tests/e2e/run.sh build
	if [ "$(id -u)" -eq 0 ]; then
		run "end-to-end tests as an unprivileged user" tests/e2e/run-unprivileged.sh build
	else
		echo "test.sh: not root: the unprivileged run above is the only e2e run"
	fi
fi

if have fuzz; then
	if command -v clang >/dev/null; then
		stage "fuzz build"
		if [ ! -f build-fuzz/build.ninja ]; then
			CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=disabled >/dev/null
		fi
		if ninja -C build-fuzz >/dev/null; then
			for h in build-fuzz/tests/fuzz/fuzz_*; do
				[ -f "$h" ] && [ -x "$h" ] || continue
				name=$(basename "$h")
				corpus=tests/fuzz/corpus/${name#fuzz_}
				work=$(mktemp -d /tmp/airlock-fuzz.XXXXXX)
				[ -d "$corpus" ] && cp -r "$corpus/." "$work/"
				stage "fuzz $name for ${fuzz_seconds}s"
				dict=tests/fuzz/${name#fuzz_}.dict
				dict_arg=()
				[ -f "$dict" ] && dict_arg=(-dict="$dict")
				if "$h" -max_total_time="$fuzz_seconds" -print_final_stats=1 "${dict_arg[@]}" "$work" >"$log" 2>&1; then
					tail -n 3 "$log"
					passed=$((passed + 1))
				else
					tail -n 40 "$log"
					echo "test.sh: fuzzer $name found a crash"
					failed=$((failed + 1))
					{ printf -- '--- fuzz %s\n' "$name"; grep -E 'ERROR|SUMMARY|deadly|Test unit written' "$log" | head -n 10; } >>"$digest"
				fi
				rm -rf "$work"
			done
		else
			echo "test.sh: the fuzz build failed"
			failed=$((failed + 1))
		fi
	else
		echo "test.sh: clang missing: fuzzing skipped"
		skipped=$((skipped + 1))
	fi
fi

if have asan; then
	stage "ASan+UBSan build"
	if [ ! -f build-asan/build.ninja ]; then
		meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug >/dev/null
	fi
	if ninja -C build-asan >/dev/null; then
		export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
		run "unit tests under ASan+UBSan" meson test -C build-asan --no-suite e2e --print-errorlogs
		# The probe is static and cannot be sanitized: use the normal one.
		run "end-to-end tests under ASan+UBSan as $(id -un)" \
			env AIRLOCK="$root/build-asan/src/airlock" PROBE="$root/build/tests/probe/airlock-probe" \
			tests/e2e/run.sh build-asan
	else
		echo "test.sh: the ASan+UBSan build failed"
		failed=$((failed + 1))
	fi
fi

echo
if [ -s "$digest" ]; then
	echo "=== what failed"
	cat "$digest"
	echo
fi
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
