# folded-parse.awk: a strict checker of `wallprof report --format folded`.
#
#	awk -v roots='spinner|sleeper' -v thread_root=1 -v mode=wall \
#		-f folded-parse.awk FILE
#
# Every line must be "FRAME;FRAME;... WEIGHT": frames are non-empty, hold no
# ';', tab or CR and neither start nor end with a space; one space before
# the weight, a positive integer without leading zeros; nothing after it.
# Each stack appears once (equal stacks are merged).  Besides:
#   thread_root=1 (default): the root frame is one of the names in roots
#	('|'-separated; any name when roots is empty) and at least one frame
#	follows it; thread_root=0: the root is none of those names.
#   The markers [off-cpu:blocked], [off-cpu:runnable] and
#	[off-cpu:preempted] (each also with " (estimated)" before the "]")
#	appear only as the last frame of the stack; mode
#	on: no line has one; off: every line has one; blocked, runnable,
#	preempted: every line has that one; wall: either.
#   wakers=1 (--wakers): after [off-cpu:blocked] may come a "--" frame and
#	the waker's frames, leaf first: kernel ones, then user ones, then
#	(thread_root=1) the waker's name; nowhere else is a "--" frame.
#   Kernel frames (suffix _[k]) are the innermost: after the first one,
#	only kernel frames and the marker follow.
#   allow_empty=1: no lines at all is fine (else it is an error).
# Problems are printed as "# folded: line N: ..." (the first 20); the status
# is 1 when there was any.

function bad(msg) {
	errors++
	if (errors <= 20)
		printf "# folded: line %d: %s: %s\n", NR, msg, substr($0, 1, 200)
}

BEGIN {
	if (thread_root == "")
		thread_root = 1
	if (mode == "")
		mode = "wall"
	nroots = split(roots, r, "|")
	for (i = 1; i <= nroots; i++)
		is_root[r[i]] = 1
	errors = 0
}

{
	lines++
	if ($0 !~ /^[^;]+(;[^;]+)* [0-9]+$/) {
		bad("not FRAME;...;FRAME WEIGHT")
		next
	}
	if ($0 ~ /[\t\r]/) {
		bad("a tab or carriage return")
		next
	}
	sp = match($0, / [0-9]+$/)
	stack = substr($0, 1, sp - 1)
	weight = substr($0, sp + 1)
	if (weight !~ /^[1-9][0-9]*$/)
		bad("weight '" weight "' is not a positive integer")
	if (stack in seen)
		bad("the same stack as line " seen[stack])
	seen[stack] = NR
	n = split(stack, f, ";")
	for (i = 1; i <= n; i++) {
		if (f[i] == "")
			bad("empty frame " i)
		else if (f[i] ~ /^ / || f[i] ~ / $/)
			bad("frame " i " starts or ends with a space")
	}
	if (thread_root + 0) {
		if (nroots && !(f[1] in is_root))
			bad("root '" f[1] "' is not a thread name (" roots ")")
		if (n < 2)
			bad("nothing under the thread root")
	} else if (nroots && (f[1] in is_root)) {
		bad("root '" f[1] "' is a thread name with --no-thread-root")
	}
	# The waker's part, after "--": leaf first, so user frames follow
	# kernel ones, and then only its name.
	sep = 0
	for (i = 1; i <= n; i++)
		if (f[i] == "--") {
			if (sep)
				bad("two -- frames")
			sep = i
		}
	if (sep) {
		if (!(wakers + 0))
			bad("a -- frame without --wakers")
		if (sep == n)
			bad("nothing after the -- frame")
		user = 0
		for (i = sep + 1; i <= n; i++) {
			if (f[i] ~ /^\[off-cpu/)
				bad("an off-CPU marker in the waker's frames")
			if (f[i] !~ /_\[k\]$/)
				user = 1
			else if (user)
				bad("waker kernel frame '" f[i] "' after a user frame")
		}
		n = sep - 1
		if (f[n] != "[off-cpu:blocked]" && f[n] != "[off-cpu:blocked (estimated)]")
			bad("a waker after " f[n] ", not after [off-cpu:blocked]")
	}
	marker = ""
	for (i = 1; i <= n; i++) {
		if (f[i] !~ /^\[off-cpu/)
			continue
		if (i != n)
			bad("off-CPU marker " f[i] " is not the last frame")
		else
			marker = f[i]
	}
	# An estimated time (--switch-stacks) is the same kind of time.
	sub(/ \(estimated\)\]$/, "]", marker)
	if (marker != "" && marker != "[off-cpu:blocked]" && marker != "[off-cpu:preempted]" &&
	    marker != "[off-cpu:runnable]")
		bad("unknown marker " marker)
	if (mode == "on" && marker != "")
		bad("an off-CPU marker in --mode on")
	if (mode == "off" && marker == "")
		bad("no off-CPU marker in --mode off")
	if (mode == "blocked" && marker != "[off-cpu:blocked]")
		bad("not [off-cpu:blocked] in --mode blocked")
	if (mode == "preempted" && marker != "[off-cpu:preempted]")
		bad("not [off-cpu:preempted] in --mode preempted")
	if (mode == "runnable" && marker != "[off-cpu:runnable]")
		bad("not [off-cpu:runnable] in --mode runnable")
	kernel = 0
	for (i = (thread_root + 0) ? 2 : 1; i <= n; i++) {
		if (i == n && marker != "")
			break
		if (f[i] ~ /_\[k\]$/)
			kernel = 1
		else if (kernel)
			bad("user frame '" f[i] "' inside a kernel frame")
	}
}

END {
	if (!lines && !(allow_empty + 0)) {
		print "# folded: no lines"
		errors++
	}
	if (errors)
		printf "# folded: %d problem(s) in %d lines\n", errors, lines
	exit errors ? 1 : 0
}
