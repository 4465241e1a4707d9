#!/usr/bin/env bash
# Build airlock into BUILD_DIR (default: build). Extra arguments go to meson setup.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "$@" >/dev/null
fi
ninja -C "$dir" >/dev/null
