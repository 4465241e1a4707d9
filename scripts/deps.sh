#!/usr/bin/env bash
# Install what airlock needs to build and test, from Debian's packages.
# Installs only what is missing; needs root (or sudo) only when something is.
set -euo pipefail

pkgs=(
	gcc clang make meson ninja-build pkg-config     # build; make for the real-tools test
	libssl-dev                                      # TLS for the egress proxy
	libseccomp-dev libyaml-dev                      # runtime libraries
	libsodium-dev                                   # Ed25519 for the decision log's writer
	libcmocka-dev libclang-rt-14-dev                # unit tests, fuzzing runtime
	bubblewrap uidmap util-linux procps python3     # tests and the startup benchmark
	openssl ca-certificates curl git                # the egress proxy's end-to-end tests
	openssh-client                                  # a real ssh-agent for the host-socket tests
	python3-cryptography                            # the key search of the identity tests
	hyperfine
)

# The MCP gateway's end-to-end tests drive real MCP servers and the MCP
# SDK from the npm registry, at the exact versions of
# tests/e2e/mcp/package.json and its lock file, installed beside the tests
# (not globally).
mcp_npm() {
	local dir
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/e2e/mcp" && pwd)
	[ -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" ] &&
		[ -f "$dir/node_modules/@modelcontextprotocol/server-filesystem/package.json" ] &&
		[ -f "$dir/node_modules/@modelcontextprotocol/server-everything/package.json" ] && return 0
	command -v npm >/dev/null || { echo "airlock: npm is needed for the MCP tests (apt-get install npm)" >&2; return 1; }
	echo "airlock: installing the MCP test packages into $dir" >&2
	(cd "$dir" && npm ci --no-audit --no-fund >/dev/null)
}

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	mcp_npm
	exit 0
fi

echo "airlock: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "airlock: need root to install: ${missing[*]}" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
mcp_npm
