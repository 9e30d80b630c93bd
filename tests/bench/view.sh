#!/bin/sh
# view.sh - how fast `memtrail view` answers on a large log, driven in tmux
# as a user would: the time to the first full screen (graph, the tree at
# the peak, status line) against `memtrail report --summary` on the same
# log (and, apart, what tmux, the shell and the poll add to it: the time a
# command that prints the same screen at once takes to show it), then the
# time each key takes to change the screen: cursor moves
# (right, left, a jump of ten columns), the peak, the leaks view, back to
# the live view, a diff from a mark. Medians of MT_VIEW_RUNS (default 3).
#
#   sh tests/bench/view.sh [LOG]
#
# Without LOG it records tests/bench/churn.c with MT_VIEW_PAIRS malloc/free
# pairs (default 50,000,000: a 100 M-event log) into build/bench/out/
# (MT_BUILD/bench/out/, MT_BUILD being the build directory, default build;
# MEMTRAIL, the program measured, defaults to MT_BUILD/memtrail).
# Prints one line per figure. Not a test: nothing is asserted (the machine
# may be shared); `make bench` runs it after the recording benchmarks.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${MT_BUILD:-build}
case "$builddir" in /*) ;; *) builddir="$top/$builddir";; esac
builddir=${builddir%/}
MEMTRAIL=${MEMTRAIL:-$builddir/memtrail}
out=$builddir/bench/out
mkdir -p "$out"
RUNS=${MT_VIEW_RUNS:-3}
command -v tmux >/dev/null || { echo "view.sh: tmux not installed"; exit 0; }

log=${1:-}
if [ -z "$log" ]; then
	log=$out/view-churn.data
	pairs=${MT_VIEW_PAIRS:-50000000}
	cc -O2 -g -pthread -o "$out/churn" "$top/tests/bench/churn.c" || exit 1
	if [ ! -s "$log" ] || [ "$(cat "$log.pairs" 2>/dev/null)" != "$pairs" ]; then
		echo "recording churn with $pairs pairs into $log"
		"$MEMTRAIL" record -o "$log" -- "$out/churn" 1 "$pairs" >/dev/null 2>&1 || exit 1
		echo "$pairs" >"$log.pairs"
	fi
fi

now() { date +%s%N; }
median() { awk '$1 >= 0' | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : -1 }'; }
ms() { echo "$1" | awk '{ printf "%.0f", $1 / 1e6 }'; }

# report --summary, the baseline
for i in $(seq "$RUNS"); do
	t0=$(now)
	"$MEMTRAIL" report --summary "$log" >/dev/null 2>&1
	echo $(( $(now) - t0 ))
done | median >"$out/view.summary"
summary=$(cat "$out/view.summary")

# a server of its own per run: starting one while the last is still
# shutting down on the same socket can fail
T=""
trap '[ -n "$T" ] && $T kill-server 2>/dev/null' EXIT
screen() { $T capture-pane -p -t mt; }
# until the screen differs from $1 and shows the tree's heading; prints the
# ns taken (-1 after 60 s)
changed_after() {
	_before=$1; _t0=$2; _n=0
	while [ $_n -lt 6000 ]; do
		_s=$(screen)
		# the tree's heading: "bytes % blocks", or a diff's "+/- blks"
		if [ "$_s" != "$_before" ] && echo "$_s" | grep -Eq 'bytes +% +(blocks|\+/- blks|temps)'; then
			echo $(( $(now) - _t0 )); return 0
		fi
		sleep 0.01
		_n=$((_n + 1))
	done
	echo -1
}

# first_screen CMD: starts a tmux server of its own, types CMD into its
# shell and waits for the first full screen (the peak's status line and
# tree rows); appends the ns taken to $out/view.first_ns. The server is
# left running (T) for the keys.
first_screen() {
	[ -n "$T" ] && $T kill-server 2>/dev/null
	T="tmux -L mt-bench-$$-$i"
	$T new-session -d -s mt -x 120 -y 40 "sh" || { echo "view.sh: tmux cannot start"; exit 0; }
	$T set-option -g status off >/dev/null
	sleep 0.3
	t0=$(now)
	$T send-keys -t mt "$1" Enter
	# The loop that looks for it runs at the lowest priority, every 50 ms
	# (up to 10 minutes): on two cores, a poller forking every few ms at
	# full priority takes CPU from the viewer (whose replay decodes on a
	# second thread), and what is measured is the viewer, not the poller.
	T="$T" nice -n 19 sh -c '
		n=0
		while [ $n -lt 12000 ]; do
			s=$($T capture-pane -p -t mt)
			if echo "$s" | grep -q "Live at peak" &&
			   echo "$s" | grep -q "bytes  *%  *blocks"; then
				break
			fi
			sleep 0.05
			n=$((n + 1))
		done'
	echo $(( $(now) - t0 )) >>"$out/view.first_ns"
}

# What tmux, the shell and the poll take by themselves: a command that
# prints the same screen at once.
: >"$out/view.first_ns"
for i in $(seq "$RUNS"); do
	first_screen "printf 'Live at peak\\nbytes  %%  blocks\\n'"
done
mv "$out/view.first_ns" "$out/view.path"

: >"$out/view.first_ns"
: >"$out/view.keys"
for i in $(seq "$RUNS"); do
	first_screen "$MEMTRAIL view $log"
	for k in ">" "<" "10 >" p l l m "5 <" d d; do
		case "$k" in
		"10 >") set -- ">>>>>>>>>>";;
		"5 <") set -- "<<<<<";;
		*) set -- "$k";;
		esac
		before=$(screen)
		t0=$(now)
		$T send-keys -t mt "$@"
		echo "$k $(changed_after "$before" "$t0")" >>"$out/view.keys"
	done
	$T send-keys -t mt q
	sleep 0.3
done
mv "$out/view.first_ns" "$out/view.first"
first=$(median <"$out/view.first")
events=$("$MEMTRAIL" report --summary --format json "$log" 2>/dev/null |
	sed -n 's/.*"allocations": *\([0-9]*\).*"frees": *\([0-9]*\).*/\1 \2/p' | awk '{ print $1 + $2 }')
echo "view bench: $log (${events:-?} allocations + frees)"
echo "  report --summary           $(ms "$summary") ms"
path=$(median <"$out/view.path")
echo "  view, first full screen    $(ms "$first") ms ($(echo "$first $summary" | awk '{ printf "%.2f", $1 / $2 }')x --summary)"
echo "    of which tmux and the poll $(ms "$path") ms (a command printing the same screen at once);" \
	"without them $(echo "$first $path $summary" | awk '{ printf "%.2f", ($1 - $2) / $3 }')x --summary"
for k in ">" "<" "10 >" p l m "5 <" d; do
	v=$(grep "^$k -\{0,1\}[0-9]" "$out/view.keys" | awk '{ print $NF }' | median)
	printf '  key %-22s %s ms\n' "$k" "$(ms "$v")"
done
