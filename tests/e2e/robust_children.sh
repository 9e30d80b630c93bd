#!/bin/sh
# robust_children.sh - `memtrail record --follow-children`: every forked or
# exec'd child records into FILE.<pid> (FILE.<pid>.<k> for the k-th program
# a process execs), the parent's FILE is the parent's alone, and nothing of
# the kind happens without the option.
#
#   gcc -c t.c            files for gcc (FILE), cc1 and as (FILE.<pid>),
#                         each header naming its program; one closing line
#                         per child log, pids and names matching the files
#   samples forker/execer the parent's figures equal the sample's
#                         memtrail-expect block; each child's figures equal
#                         what the sample's top comment derives for it
#                         (execer's /bin/true: memcheck's count of its heap
#                         use); the parent's log equals the one recorded
#                         without the option (dumps compared with ASLR off,
#                         pids and times masked)
#   no option             no FILE.* at all
#   forkstress            threads allocating while main forks 150 times:
#                         finishes within the timeout, the parent's figures
#                         as in robust_fork.sh, 150 child logs that replay
#                         cleanly with the figures forkstress.c derives
#   dl_iterate_phdr       forks while a thread is inside dl_iterate_phdr:
#                         no child hangs, each child's log has its block
#   python3 subprocess    posix_spawn/vfork + exec: a log for `true`
#
# Not for: the default fork/exec behaviour in depth (robust_fork.sh,
# rec_ends.sh).
. "$(dirname "$0")/lib.sh"
mt_need_cmd gcc python3
mt_have_memtrail || mt_skip "memtrail not built ($MEMTRAIL, $MT_RECORDER)"
EXPECT=$MT_TOP/tests/expect.py
FORKER=$MT_SAMPLES/forker
EXECER=$MT_SAMPLES/execer
[ -x "$FORKER" ] && [ -x "$EXECER" ] || mt_skip "samples not built"
cd "$MT_TMP" || exit 1

# frec DIR ARGS...: memtrail record --follow-children ARGS in a fresh DIR
# (out, err, rc there).
frec() {
	_d=$1; shift
	rm -rf "$_d"; mkdir "$_d"
	(cd "$_d" && timeout "$MT_TIMEOUT" "$MEMTRAIL" record --follow-children "$@" \
		>out 2>err </dev/null; echo $? >rc)
}

# field JSON KEY: one key of a summary
field() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# figures JSON: allocations frees bytes_allocated peak_bytes peak_blocks
# leaked_bytes leaked_blocks
figures() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(*(d[k] for k in ("allocations", "frees", "bytes_allocated", "peak_bytes",
                       "peak_blocks", "leaked_bytes", "leaked_blocks")))' "$1"
}

# summarize DIR: DIR/FILE.json for every log in DIR; fails on a log that
# does not replay cleanly
summarize() {
	_ok=0
	for _f in "$1"/x.data*; do
		case "$_f" in *.json|*.err) continue;; esac
		if ! mt_summary "$_f" "$_f.json" || [ -s "$_f.json.err" ]; then
			mt_fail "$_f does not replay cleanly: $(head -n 2 "$_f.json.err")"
			_ok=1
		fi
	done
	return $_ok
}

# children DIR: the child logs' names, sorted
children() {
	(cd "$1" && ls | grep -E '^x\.data\.[0-9]+(\.[0-9]+)?$' | sort)
}

# ---- gcc: cc1 and as ----------------------------------------------------------
printf 'int main(void) { return 0; }\n' >t.c
frec g -o x.data gcc -c ../t.c
if [ "$(cat g/rc)" = 0 ] && [ -f g/t.o ]; then
	mt_ok "gcc -c under --follow-children: exit 0, t.o built"
else
	mt_fail "gcc: exit $(cat g/rc), $(ls g)"; cat g/err
fi
summarize g && mt_ok "gcc: every log replays cleanly ($(children g | wc -l) child logs)"
[ "$(field g/x.data.json command)" = "gcc -c ../t.c" ] && mt_ok "x.data is gcc's" ||
	mt_fail "x.data command: $(field g/x.data.json command)"
for prog in cc1 as; do
	n=0
	for f in $(children g); do
		c=$(field "g/$f.json" command)
		first=${c%% *}
		[ "${first##*/}" = $prog ] || continue
		n=$((n + 1))
		pid=$(echo "$f" | sed 's/^x\.data\.\([0-9]*\).*/\1/')
		"$MEMTRAIL" dump "g/$f" | head -n 1 | grep -q " pid=$pid " ||
			mt_fail "$f: header pid is not $pid"
		a=$(field "g/$f.json" allocations)
		[ "$a" -gt 0 ] || mt_fail "$prog ($f): no allocation recorded"
		grep -qx "memtrail: child $pid ($prog): $(python3 -c 'import sys; print(format(int(sys.argv[1]), ","))' "$a") allocations, .* $f written (.*)" g/err ||
			mt_fail "no closing line for $f ($prog, $a allocations): $(grep child g/err)"
	done
	[ $n = 1 ] && mt_ok "gcc: one log for $prog, listed with its pid and figures" ||
		mt_fail "gcc: $n logs for $prog: $(children g)"
done
[ "$(grep -c '^memtrail: child ' g/err)" = "$(children g | wc -l)" ] &&
	mt_ok "gcc: one closing line per child log" || mt_fail "gcc: closing lines: $(cat g/err)"

# ---- forker: the parent's figures, each child's own ---------------------------
frec f -o x.data "$FORKER"
mt_run native "$FORKER"
[ "$(cat f/rc)" = 0 ] && cmp -s native.out f/out && mt_ok "forker: same stdout, exit 0" ||
	mt_fail "forker: exit $(cat f/rc), stdout $(cat f/out)"
summarize f
if python3 "$EXPECT" check-memtrail "$MT_TOP/samples/forker.c" f/x.data.json; then
	mt_ok "forker: the parent's figures equal the expect block"
else
	mt_fail "forker: the parent's figures differ from the expect block"
fi
# forker.c: child 1 allocates 3 x 500 B and frees 2 (peak 1,500 B in 3
# blocks, 500 B leaked in 1: the inherited blocks are not its own); child 2
# allocates 700 B and frees nothing.
got=$(for c in $(children f); do figures "f/$c.json"; done | sort)
want=$(printf '%s\n' "1 0 700 700 1 700 1" "3 2 1500 1500 3 500 1" | sort)
[ "$got" = "$want" ] && mt_ok "forker: two child logs with the children's own figures" ||
	mt_fail "forker children: got '$got', expected '$want'"
for c in $(children f); do
	"$MEMTRAIL" dump "f/$c" | grep -q ' size=1000 \| size=2000 \| size=300 ' &&
		mt_fail "$c: a parent's block in a child's log"
done

# The parent's log is the same with and without --follow-children: dumps
# with ASLR off equal once pids, thread ids, times and the resident-set
# samples (measurements of the moment, not of the program's heap) are masked.
mask() {
	sed -E -e 's/ (pid|tid|start_ns|t|alloc_t|peak_t)=[0-9]+/ \1=#/g' \
		-e 's/^(rss t=#) bytes=[0-9]+$/\1 bytes=#/' "$1"
}
if setarch -R true 2>/dev/null; then
	rm -rf fa fb; mkdir fa fb
	(cd fa && setarch -R "$MEMTRAIL" record -o x.data "$FORKER" >/dev/null 2>&1)
	(cd fb && setarch -R "$MEMTRAIL" record --follow-children -o x.data "$FORKER" >/dev/null 2>&1)
	"$MEMTRAIL" dump fa/x.data >fa.dump
	"$MEMTRAIL" dump fb/x.data >fb.dump
	if [ -s fa.dump ] && mask fa.dump >fa.m && mask fb.dump >fb.m && cmp -s fa.m fb.m; then
		mt_ok "forker: the parent's log is the same with or without children recording ($(wc -l <fa.m) records)"
	else
		mt_fail "forker: the parent's log differs:"; diff fa.m fb.m | head -n 10
	fi
else
	echo "setarch -R not permitted here: comparing figures only"
	rm -rf fa; mkdir fa
	(cd fa && "$MEMTRAIL" record -o x.data "$FORKER" >/dev/null 2>&1)
	mt_summary fa/x.data fa.json
	[ "$(figures fa.json)" = "$(figures f/x.data.json)" ] &&
		mt_ok "forker: the parent's figures are the same with or without children recording" ||
		mt_fail "forker: parent $(figures fa.json) vs $(figures f/x.data.json)"
fi

# ---- execer: fork + exec of itself and of /bin/true ---------------------------
frec e -o x.data "$EXECER"
[ "$(cat e/rc)" = 0 ] && mt_ok "execer: exit 0" || mt_fail "execer: exit $(cat e/rc)"
summarize e
python3 "$EXPECT" check-memtrail "$MT_TOP/samples/execer.c" e/x.data.json &&
	mt_ok "execer: the parent's figures equal the expect block" ||
	mt_fail "execer: the parent's figures differ from the expect block"
# execer.c: each child is a fork image that execs at once (no event, END
# how=exec) in x.data.PID, then the program in x.data.PID.1: execer
# "child" with 5 x 100 B leaked, and /bin/true.
mt_memcheck true.vg truevg /bin/true
tf=$(python3 "$EXPECT" memcheck true.vg | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["allocations"], d["frees"], d["bytes_allocated"])')
n=0
for c in $(children e); do
	case "$c" in
	*.*.*.1)
		cmd=$(field "e/$c.json" command)
		f=$(figures "e/$c.json")
		case "$cmd" in
		*" child") [ "$f" = "5 0 500 500 5 500 5" ] && n=$((n + 1)) ||
				mt_fail "$c (execer child): figures $f";;
		true) t=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["allocations"], d["frees"], d["bytes_allocated"])' "e/$c.json")
			[ "$t" = "$tf" ] && n=$((n + 1)) ||
				mt_fail "$c (true): $t, memcheck $tf";;
		*) mt_fail "$c: unexpected command '$cmd'";;
		esac;;
	*)
		if [ "$(figures "e/$c.json")" = "0 0 0 0 0 0 0" ] &&
		   "$MEMTRAIL" dump "e/$c" | grep -q '^end clean=1 how=exec '; then
			n=$((n + 1))
		else
			mt_fail "$c (fork image): $(figures "e/$c.json"), $("$MEMTRAIL" dump "e/$c" | grep '^end')"
		fi;;
	esac
done
[ $n = 4 ] && [ "$(children e | wc -l)" = 4 ] &&
	mt_ok "execer: 2 fork images ending with exec, execer child (5 x 100 B leaked), true ($tf as memcheck)" ||
	mt_fail "execer: $n of 4 child logs as expected: $(children e)"

# ---- without the option: no FILE.* -------------------------------------------
for s in "$FORKER" "$EXECER"; do
	rm -rf d; mkdir d
	(cd d && timeout "$MT_TIMEOUT" "$MEMTRAIL" record -o x.data "$s" >/dev/null 2>err </dev/null)
	[ -z "$(children d)" ] && [ -f d/x.data ] && ! grep -q '^memtrail: child' d/err &&
		mt_ok "${s##*/} without --follow-children: x.data only" ||
		mt_fail "${s##*/} without --follow-children: $(ls d)"
done

# ---- forkstress: forks while a thread allocates ---------------------------------
FORKS=150
gcc -g -O0 -fno-omit-frame-pointer -pthread -o forkstress \
	"$MT_TOP/tests/robust/forkstress.c" || { mt_fail "cannot build forkstress"; mt_finish; }
MT_TIMEOUT=90 frec s -o x.data --snapshot-signal USR2 ../forkstress $FORKS signals
if [ "$(cat s/rc)" = 124 ]; then
	mt_fail "forkstress: still running after 90 s (deadlock?)"
else
	[ "$(cat s/rc)" = 0 ] && [ "$(cat s/out)" = "forks $FORKS ok $FORKS" ] &&
		mt_ok "forkstress: $FORKS forks, exit 0" || mt_fail "forkstress: exit $(cat s/rc), $(cat s/out)"
	nb=$(sed -n 's/^allocated \([0-9]*\)$/\1/p' s/err)
	if summarize s && [ -n "$nb" ]; then
		got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["allocations"], d["frees"], d["leaked_blocks"], d["threads"], len(d["snapshots"]))' s/x.data.json)
		# The thread's DTV, freed at exit with glibc's stack cache.
		want="$((nb + 1)) $((nb + 1)) 0 2 $((FORKS / 20))"
		[ "$got" = "$want" ] && mt_ok "forkstress parent: allocations, frees, leaked blocks, threads, snapshots = $got" ||
			mt_fail "forkstress parent: $got, expected $want"
		# forkstress.c: each child allocates and frees one 777 B block.
		bad=0
		for c in $(children s); do
			f=$(figures "s/$c.json")
			[ "$f" = "1 1 777 777 1 0 0" ] && [ "$(field "s/$c.json" threads)" = 1 ] ||
				{ bad=$((bad + 1)); [ $bad -le 3 ] && mt_fail "$c: $f"; }
		done
		nc=$(children s | wc -l)
		[ $bad = 0 ] && [ "$nc" = $FORKS ] &&
			mt_ok "forkstress: $nc child logs, each one 777 B block allocated and freed by 1 thread" ||
			mt_fail "forkstress: $nc child logs, $bad wrong"
	fi
fi

# ---- fork while another thread is inside dl_iterate_phdr ------------------------
# glibc does not reset the loader's lock in a forked child; the recording
# child needs it (module map, libunwind): a fork must wait until no thread
# is inside. A thread iterates without pause while main forks 20 times;
# each child allocates and frees one block of 10 + i bytes.
cat >dlfork.c <<'EOF'
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static int slow(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info; (void)size; (void)data;
	for (volatile int k = 0; k < 20000; k++)
		;
	return 0;
}
static void *iterate(void *arg)
{
	(void)arg;
	for (;;)
		dl_iterate_phdr(slow, NULL);
	return NULL;
}
int main(void)
{
	pthread_t t;
	int ok = 0;
	if (pthread_create(&t, NULL, iterate, NULL) != 0)
		return 1;
	usleep(10000);
	for (int i = 0; i < 20; i++) {
		int st;
		pid_t p = fork();
		if (p == 0) {
			free(malloc(10 + i));
			_exit(0);
		}
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st))
			ok++;
	}
	printf("ok %d\n", ok);
	return ok == 20 ? 0 : 1;
}
EOF
gcc -O0 -pthread -o dlfork dlfork.c || { mt_fail "cannot build dlfork"; mt_finish; }
MT_TIMEOUT=60 frec l -o x.data ../dlfork
if [ "$(cat l/rc)" = 0 ] && [ "$(cat l/out)" = "ok 20" ]; then
	mt_ok "fork beside a thread in dl_iterate_phdr: 20 children done"
	summarize l
	got=$(for c in $(children l); do python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["allocations"], d["frees"], d["bytes_allocated"])' "l/$c.json"; done | sort -n -k3 | tr '\n' ' ')
	want=$(i=0; while [ $i -lt 20 ]; do printf '1 1 %d ' $((10 + i)); i=$((i + 1)); done)
	[ "$got" = "$want" ] && mt_ok "dlfork: 20 child logs, blocks of 10..29 B" ||
		mt_fail "dlfork children: '$got', expected '$want'"
else
	mt_fail "fork beside dl_iterate_phdr: exit $(cat l/rc) (124: a child hung), $(cat l/out)"
fi

# ---- python3: subprocess (posix_spawn / vfork + exec) -------------------------
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
frec p -o x.data $PY -c 'import subprocess; subprocess.run(["true"])'
summarize p
n=0
for c in $(children p); do
	[ "$(field "p/$c.json" command)" = true ] && n=$((n + 1))
done
[ "$(cat p/rc)" = 0 ] && [ $n = 1 ] && [ "$(field p/x.data.json command)" = "$PY -c import subprocess; subprocess.run([\"true\"])" ] &&
	mt_ok "python3 subprocess.run(['true']): x.data is python's, one log for true" ||
	mt_fail "python3: exit $(cat p/rc), $n logs for true: $(children p)"
mt_finish
