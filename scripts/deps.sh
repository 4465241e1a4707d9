#!/usr/bin/env bash
# Install what airlock needs to build and test, from Debian's packages.
# Installs only what is missing; needs root (or sudo) only when something is.
set -euo pipefail

pkgs=(
	gcc clang meson ninja-build pkg-config          # build
	libssl-dev                                      # TLS for the egress proxy
	libseccomp-dev libyaml-dev                      # runtime libraries
	libcmocka-dev libclang-rt-14-dev                # unit tests, fuzzing runtime
	bubblewrap uidmap util-linux procps python3     # tests and the startup benchmark
	openssl ca-certificates curl git                # the egress proxy's end-to-end tests
	hyperfine
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "airlock: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "airlock: need root to install: ${missing[*]}" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
