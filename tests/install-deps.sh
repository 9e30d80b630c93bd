#!/bin/sh
# Installs the Debian packages memtrail needs to build and test, when they are
# missing. As root it runs apt-get; otherwise it prints the exact command and
# fails. Used by `make demo`, `make check` and .ci/run; does nothing when all
# packages are present.
set -e
pkgs="build-essential pkg-config libunwind-dev libzstd-dev libncurses-dev libcmocka-dev libdw-dev"
[ "${1:-}" = "--test" ] && pkgs="$pkgs valgrind tmux python3 sqlite3 perl git g++ clang libclang-rt-14-dev procps chromium debuginfod libc6-dbg"
[ "${1:-}" = "--bench" ] && pkgs="$pkgs heaptrack time"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "memtrail: installing missing packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends $missing >&2
else
	echo "memtrail: error: missing packages:$missing" >&2
	echo "memtrail: run: sudo apt-get install$missing" >&2
	exit 1
fi
