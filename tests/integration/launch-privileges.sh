#!/bin/sh
# A launched command gets the privileges its user has without wallprof.
# Root launches make -j2 in a source tree that belongs to another user:
# plain make writes there (root's CAP_DAC_OVERRIDE), and so must make under
# wallprof, whose report shows the compilers it ran.  With
# --drop-capabilities the same build fails at its first write, and
# wallprof says in one line that the command ran without capabilities.
# A wallprof given file capabilities, run by an ordinary user, passes on
# none of them, but the user's own inheritable set stays as it was.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (running as uid $(id -u))"
command -v make >/dev/null 2>&1 || skip "make is not installed"
cc=$(command -v cc || command -v gcc) || skip "no C compiler"
id nobody >/dev/null 2>&1 || skip "there is no user nobody"
chmod 755 "$tmp"

# make_tree DIR: a small C project of four files, owned by nobody, 0755.
make_tree() {
	mkdir "$1" || exit 99
	for i in 1 2 3 4; do
		printf 'int f%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }\n' \
			"$i" "$i" > "$1/f$i.c"
	done
	printf 'int f1(int); int f2(int); int f3(int); int f4(int);\nint main(void) { return (f1(3) + f2(3) + f3(3) + f4(3)) == 0; }\n' \
		> "$1/main.c"
	printf 'CC = %s\nOBJ = f1.o f2.o f3.o f4.o main.o\nprog: $(OBJ)\n\t$(CC) -o $@ $(OBJ)\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n' \
		"$cc" > "$1/Makefile"
	chown -R nobody "$1" && chmod 755 "$1" || exit 99
}

# Without wallprof, root's make writes into nobody's tree.
make_tree plain
make -s -C plain -j2 > plain.out 2>&1 || skip "plain make as root fails here: $(cat plain.out)"
make_tree t1
run out err "$WALLPROF" record -q -o M.data -- make -s -C t1 -j2
check_num "record -- make -j2 in nobody's tree exits with make's 0" "$rc" -eq 0
check "make built the program" [ -x t1/prog ]
# (A loaded machine may lose records, and record says so: that is all it
# may say; make has its own say.)
check "record says nothing but lost records" sh -c '! grep "^wallprof" err | grep -v "records were lost" | grep -q .'
[ -s err ] && sed "s/^/# /" err
"$WALLPROF" report -i M.data --by comm --format json > M.json 2> M.err
check "report reads the recording" [ -s M.json ]
check "the compiler's processes were recorded" grep -Eq '"(cc1|cc|gcc|as|ld|collect2)' M.json

# Root's command without root's capabilities: the write is refused.
make_tree t2
run out err "$WALLPROF" record -q -o D.data --drop-capabilities -- make -s -C t2 -j2
check_num "with --drop-capabilities make fails" "$rc" -ne 0
check "make says why" grep -q 'Permission denied' err
check_num "wallprof says it once" "$(grep -c "'make' failed; it ran without capabilities (--drop-capabilities)" err)" -eq 1
check "no program" [ ! -e t2/prog ]

# File capabilities never pass on; the user's inheritable set does.
command -v setcap >/dev/null 2>&1 || { finish; }
command -v setpriv >/dev/null 2>&1 || { finish; }
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps +net_raw "$@"; }
as_nobody sh -c 'exit 0' 2>/dev/null || { echo "# setpriv cannot run nobody with an inheritable capability"; finish; }
dir=$tmp
if ! as_nobody test -x "$dir"; then
	dir=$(mktemp -d /tmp/wallprof-launch.XXXXXX) || exit 99
	trap 'cleanup; rm -rf "$dir"' EXIT
	chmod 755 "$dir"
fi
cp "$WALLPROF" "$dir/wallprof-caps" && chmod 755 "$dir/wallprof-caps" || exit 99
mkdir "$dir/data" && chmod 1777 "$dir/data" || exit 99
if ! setcap cap_perfmon,cap_sys_ptrace,cap_syslog+ep "$dir/wallprof-caps" 2>/dev/null; then
	echo "# setcap failed here: no check of file capabilities"
	finish
fi
as_nobody sh -c 'grep ^Cap /proc/self/status' > nocaps.status
run caps.out caps.err as_nobody "$dir/wallprof-caps" record -q -o "$dir/data/C.data" -- \
	sh -c 'grep ^Cap /proc/self/status'
check_num "nobody's record with file capabilities exits 0" "$rc" -eq 0
grep -q 'CAP_PERFMON' caps.err && skip "file capabilities are not honoured here (nosuid mount?)"
for f in CapEff CapPrm CapInh CapAmb CapBnd; do
	a=$(sed -n "s/^$f:[[:space:]]*//p" caps.out)
	b=$(sed -n "s/^$f:[[:space:]]*//p" nocaps.status)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		ok "the command's $f is nobody's own without wallprof ($a)"
	else
		notok "the command's $f is '$a', nobody's own without wallprof '$b'"
	fi
done
inh=$(sed -n 's/^CapInh:[[:space:]]*//p' caps.out)
check "the inheritable set holds cap_net_raw ($inh)" [ "$inh" = 0000000000002000 ]
finish
