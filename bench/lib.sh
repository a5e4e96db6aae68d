# SPDX-License-Identifier: GPL-2.0-or-later
# bench/lib.sh: what the bench scripts share (sourced by bash).
#
#	bench_build TARGET...	build wallprof's TARGETs (paths relative to the
#				build directory) unless BENCH_NO_BUILD is set
#
# The build directory is $BENCH_BUILD, by default build/ under the source
# tree: the one tools/setup makes, configured there when it is not yet.
# Building out of tree keeps the source tree fit for tools/check.  After
# sourcing: $top (source tree), $build (build directory), $wp (the binary).

bench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$bench_here/.." && pwd)
build=${BENCH_BUILD:-$top/build}
wp=$build/wallprof

bench_build() {
	local f
	if [ -z "${BENCH_NO_BUILD:-}" ]; then
		if [ -f "$top/config.status" ]; then
			echo "bench: $top is configured in place; build there with BENCH_BUILD=$top" >&2
			return 1
		fi
		[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi) >&2 || return 1
		mkdir -p "$build"
		[ -f "$build/Makefile" ] || (cd "$build" && "$top/configure" -q) >&2 || return 1
		echo "bench: building $* in $build" >&2
		make -s -C "$build" -j"$(nproc)" "$@" >&2 || return 1
	fi
	for f in "$@"; do
		[ -x "$build/$f" ] || { echo "bench: $build/$f is missing" >&2; return 1; }
	done
}
