#!/usr/bin/env bash
# The noise floor of bench/hotpath.sh's mixed-workload comparison (an A/A
# test): the same pinned runs of bench/mixed_work.c in the same A B B A
# order and memory cgroup, with the same 1 s settles, but the "on" side
# starts an idle process instead of memwatchd. Whatever "overhead" this
# reports is the machine's noise and the design's bias, nothing else.
#
#   bench/placebo_mixed.sh [--pairs N] [--run S] [--cpu N]
#
# Pairs (default 240) and run length (CPU seconds, default 1.5) as in
# hotpath.sh's mixed phase.
#
# Prints the median of the per-pair ratios and its confidence interval, as
# hotpath.sh computes them. Needs root (memory cgroup) and cc.
. "$(dirname "$0")/lib.sh"

PAIRS=240 RUN=1.5 WORK_CPU=$(($(nproc --all) - 1))
while [ $# -gt 0 ]; do
	case $1 in
	--pairs) PAIRS=$2; shift ;;
	--run) RUN=$2; shift ;;
	--cpu) WORK_CPU=$2; shift ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || die "needs root (memory cgroup)"
[ -f /sys/fs/cgroup/memory/cgroup.procs ] || grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
	die "no memory cgroup hierarchy"

MIXED=$BENCH_TMP/mixed_work
cc -O2 -o "$MIXED" "$BENCH_DIR/mixed_work.c"
if [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
	MEMCG=/sys/fs/cgroup/memory/memwatch-placebo.$$ LIMIT_FILE=memory.limit_in_bytes
else
	MEMCG=/sys/fs/cgroup/memwatch-placebo.$$ LIMIT_FILE=memory.max
fi
mkdir "$MEMCG"
CLEANUP_HOOKS+=("rmdir $MEMCG")
echo $((1024 << 20)) >"$MEMCG/$LIMIT_FILE"

cal=$(taskset -c "$WORK_CPU" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$MEMCG" "$MIXED" --dir "$BENCH_TMP" 20 |
	sed -n 's/.* cpu_ns_per_round=\([0-9]*\).*/\1/p')
ROUNDS=$(awk -v s="$cal" -v t="$RUN" 'BEGIN { n = int(t * 1e9 / s); print n < 20 ? 20 : n }')
# As in hotpath.sh: one mixed_work --serve process for 8 pairs (whole cycles), then a new one.
mixed() { serve_request "the mixed workload" | sed -n 's/.* cpu_ns_per_round=\([0-9]*\).*/\1/p'; }
placebo_up() { sleep 100000 & PLACEBO=$!; STARTED_PIDS+=("$PLACEBO"); sleep 1; }
placebo_down() { stop_pid "$PLACEBO"; sleep 1; }

: >"$BENCH_TMP/ratios"
for ((i = 1; i <= PAIRS; i += 2)); do
	if (((i - 1) % 8 == 0)); then
		serve_start taskset -c "$WORK_CPU" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$MEMCG" "$MIXED" --dir "$BENCH_TMP" --serve "$ROUNDS"
	fi
	off=$(mixed); placebo_up; on=$(mixed)
	echo "$on / $off" | awk '{printf "%.6f\n", $1 / $3}' >>"$BENCH_TMP/ratios"
	if ((i + 1 <= PAIRS)); then
		on=$(mixed); placebo_down; off=$(mixed)
		echo "$on / $off" | awk '{printf "%.6f\n", $1 / $3}' >>"$BENCH_TMP/ratios"
	else
		placebo_down
	fi
	log "pairs $i-$((i + 1))/$PAIRS: cpu ns/round $off (idle process absent) / $on (present)"
done
serve_stop
read -r lo hi cov < <(median_ci <"$BENCH_TMP/ratios")
echo "placebo (A/A), mixed workload, $PAIRS pairs of $ROUNDS rounds on CPU $WORK_CPU: median of per-pair ratios" \
	"$(pct "$(median <"$BENCH_TMP/ratios")"), interval $(pct "$lo") … $(pct "$hi") (coverage $(awk -v c="$cov" 'BEGIN {printf "%.0f", c * 100}') %)"
