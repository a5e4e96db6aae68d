#!/bin/sh
# Install the Debian packages wallprof needs to build and test, if missing.
# Usage: tools/deps.sh [--with-bench]
set -eu

pkgs="build-essential autoconf automake pkgconf libdw-dev libelf-dev libcap-dev
libzstd-dev libxxhash-dev libncurses-dev tmux libdeflate-dev libnl-genl-3-dev libc6-dbg util-linux man-db groff mandoc libcap2-bin binutils g++ python3 jq
debuginfod libdebuginfod1
clang libclang-rt-dev linux-perf
chromium libxml2-utils libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go
nodejs
postgresql-15 redis-server redis-tools openjdk-17-jdk-headless
libcurl4-openssl-dev clickhouse-server clickhouse-client"
[ "${1:-}" = "--with-bench" ] && pkgs="$pkgs time bc libbpf-tools"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "tools/deps.sh: missing Debian packages:$missing; install them as root" >&2
		exit 1
	fi
else
	SUDO=
fi
echo "tools/deps.sh: installing$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
