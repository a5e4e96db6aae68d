#!/bin/sh
# Symbols from separate debug info (.gnu_debuglink next to a stripped
# binary, its DWARF compressed or not), inline frames included; and C++
# names demangled.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
command -v objcopy >/dev/null 2>&1 || skip "objcopy is not installed (Debian package binutils)"
cd "$tmp" || exit 1

# --- a stripped binary whose DWARF lives in spin.debug --------------------
cp "$WORKLOADS/spin" spin
objcopy --only-keep-debug spin spin.debug
strip --strip-all spin
objcopy --add-gnu-debuglink=spin.debug spin
check "the stripped binary has no symbol table" sh -c "! readelf -S spin | grep -q '\.symtab'"
check "the stripped binary has no DWARF" sh -c "! readelf -S spin | grep -q '\.debug_info'"
# (Raw stacks, --unwind=report: report names them each time it reads the
# file, from the debug file there is then, or none.)
run rec.out rec.err "$WALLPROF" record -q --unwind=report -o S -- ./spin 0.5
check_num "record the stripped binary" "$rc" -eq 0
run s.folded s.err "$WALLPROF" report -i S --format folded --mode on --comm spinner
check_num "report it" "$rc" -eq 0
check "names from the debug link, in order, with the inlined frame" \
	grep -q ';spin_outer;spin_middle_\[i\];spin_leaf ' s.folded
# Without the debug file only the dynamic symbols remain: no spin_* names,
# but frames as module+offset, never made-up names.
mv spin.debug elsewhere.debug
run n.folded n.err "$WALLPROF" report -i S --format folded --mode on --comm spinner
check_num "report without the debug file" "$rc" -eq 0
check "without debug info: no function names of the binary" no_match 'spin_(outer|leaf)' n.folded
check "without debug info: frames shown as module+offset" grep -q ';spin+0x[0-9a-f]*' n.folded

# --- compressed debug files ------------------------------------------------
# Debian's debug files are compressed (zlib): report decompresses what
# names and lines need itself, and zstd's too (binutils 2.40 makes them;
# libdw 0.188 cannot read them).
for c in zlib zstd; do
	cp "$WORKLOADS/spin" spin-$c
	if ! objcopy --only-keep-debug --compress-debug-sections=$c spin-$c spin-$c.debug 2>/dev/null; then
		skip_check "a $c-compressed debug file" "objcopy cannot compress with $c"
		continue
	fi
	check "spin-$c.debug holds compressed DWARF" \
		sh -c "readelf -S -W spin-$c.debug | grep -E '\.debug_info +PROGBITS' | grep -q ' C '"
	strip --strip-all spin-$c
	objcopy --add-gnu-debuglink=spin-$c.debug spin-$c
	run rec.out rec.err "$WALLPROF" record -q -o Z-$c -- ./spin-$c 0.5
	check_num "record the binary with a $c debug file" "$rc" -eq 0
	run z.folded z.err "$WALLPROF" report -i Z-$c --format folded --mode on --comm spinner
	check "$c: names from the compressed debug file, with the inlined frame" \
		grep -q ';spin_outer;spin_middle_\[i\];spin_leaf ' z.folded
	run zl.folded zl.err "$WALLPROF" report -i Z-$c --format folded --mode on --comm spinner --lines
	check "$c: source lines from the compressed debug file" grep -q \
		';spin_outer (spin\.c:[0-9]*);spin_middle (spin\.c:[0-9]*)_\[i\];spin_leaf (spin\.c:[0-9]*) ' zl.folded
done

# --- kernel names saved in the recording ----------------------------------
# Pretend the file comes from another boot (kernel addresses move at every
# boot): report must then name kernel frames from the symbols saved at
# record time, never from this boot's /proc/kallsyms.
boot=$(cat /proc/sys/kernel/random/boot_id)
other=00000000-1111-2222-3333-444444444444
run rec.out rec.err "$WALLPROF" record -q -o K -- "$WORKLOADS/sleeper" 5 10
check_num "record with kernel stacks" "$rc" -eq 0
if grep -q 'kernel-stacks' "$(dump K kd; echo kd)"; then
	check "the header holds this boot's id" grep -aq "$boot" K
	sed "s/$boot/$other/" K > K2
	check "the boot id was replaced" sh -c "! grep -aq '$boot' K2"
	run k.folded k.err "$WALLPROF" report -i K2 --format folded --mode off
	check_num "report a file from another boot" "$rc" -eq 0
	check "kernel frames are named from the saved symbols" grep -q ';schedule_\[k\]' k.folded
	check "no kernel frame left as an address" no_match '\[kernel\] 0x' k.folded
else
	if [ "$(id -u)" -eq 0 ]; then
		fail "record as root takes kernel stacks"
	else
		skip_check "kernel names saved in the recording" "no kernel stacks without root"
	fi
fi

# --- C++: demangled names --------------------------------------------------
if command -v c++ >/dev/null 2>&1; then
	cat > demo.cc <<'CC'
#include <chrono>
namespace demo {
template <typename T> struct Spinner {
	__attribute__((noinline)) T spin(T x)
	{
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1;
		return x;
	}
};
}
volatile unsigned long sink;
int main()
{
	demo::Spinner<unsigned long> s;
	unsigned long x = 1;
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
	while (std::chrono::steady_clock::now() < end)
		for (int k = 0; k < 100; k++)
			x = s.spin(x);
	sink = x;
	return 0;
}
CC
	if c++ -O2 -g -fomit-frame-pointer -o demo demo.cc 2> cc.err; then
		run rec.out rec.err "$WALLPROF" record -q -o C -- ./demo
		check_num "record a C++ program" "$rc" -eq 0
		run c.folded c.err "$WALLPROF" report -i C --format folded --mode on
		check "C++ names are demangled" \
			grep -q 'demo::Spinner<unsigned long>::spin(unsigned long)' c.folded
		check "no mangled names are left" no_match ';_Z[A-Za-z0-9_]+' c.folded
	else
		fail "the C++ test program builds: $(head -n 1 cc.err)"
	fi
else
	skip_check "C++ names demangled" "no C++ compiler (Debian package g++)"
fi
finish
