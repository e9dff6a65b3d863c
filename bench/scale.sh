#!/usr/bin/env bash
# memwatchd with many processes and memory cgroups on the machine:
#
#   bench/scale.sh [--processes N] [--parents P --children C] [--big-cgroups G]
#                  [--cpu-seconds T] [--windows W] [--duration S] [--no-doc]
#
# Starts memwatchd (defaults: every collector) and measures it at rest; then
# creates P + P*C memory cgroups (default 100 + 900 = 1,000) under
# /sys/fs/cgroup/memory/memwatch-scale/ (the v1 memory hierarchy; a cgroup2
# root with the memory controller when there is no v1 one), N sleeping
# processes (default 10,000; bench/sleepers.c, 10 in each leaf cgroup, the
# rest where the script runs), and measures it again; then adds empty
# cgroups (parents of 9 children each) up to G in all (default 10,000;
# 0 leaves that phase out) and measures it a third time. The same daemon
# process is measured in all three phases of one run:
#
# - its CPU time: utime + stime from /proc/PID/stat over T seconds (default
#   60) with nothing scraping, as % of one core (and the exact sum of
#   /proc/PID/task/*/schedstat beside it);
# - window collect time: memwatch_collector_duration_seconds of W distinct
#   windows (default 20), summed over the collectors; median, p90 and max,
#   and the median per collector;
# - scrape latency under wrk -t2 -c4 -dS --latency (default 10 s): median, p99;
# - RssAnon, PSS and RSS, series and bytes of /metrics.
#
# Every process started here is stopped by its PID; the cgroups are removed
# deepest first, on any exit. Writes the section "scale" of
# docs/benchmarks.md (unless --no-doc).
. "$(dirname "$0")/lib.sh"

NPROC=10000 PARENTS=100 CHILDREN=9 BIG=10000 CPU_SECONDS=60 WINDOWS=20 DURATION=10 WRITE_DOC=1
while [ $# -gt 0 ]; do
	case $1 in
	--processes) NPROC=$2; shift ;;
	--parents) PARENTS=$2; shift ;;
	--children) CHILDREN=$2; shift ;;
	--big-cgroups) BIG=$2; shift ;;
	--cpu-seconds) CPU_SECONDS=$2; shift ;;
	--windows) WINDOWS=$2; shift ;;
	--duration) DURATION=$2; shift ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
ARGS="--processes $NPROC --parents $PARENTS --children $CHILDREN --big-cgroups $BIG --cpu-seconds $CPU_SECONDS --windows $WINDOWS --duration $DURATION"
NCG=$((PARENTS + PARENTS * CHILDREN))
[ "$BIG" = 0 ] || [ "$BIG" -gt "$NCG" ] || die "--big-cgroups $BIG is not more than the $NCG of the first load"

[ "$(id -u)" = 0 ] || die "needs root (BPF, cgroups)"
for t in cc curl wrk; do command -v $t >/dev/null || die "$t not found"; done

# --- can the machine hold it? -----------------------------------------------------------
PID_MAX=$(cat /proc/sys/kernel/pid_max)
THREADS_MAX=$(cat /proc/sys/kernel/threads-max)
ULIMIT_U=$(ulimit -u)
TASKS_NOW=$( (find /proc -maxdepth 3 -path '/proc/[0-9]*/task/[0-9]*' -prune -print 2>/dev/null || true) | wc -l)
LIMIT=$PID_MAX
[ "$THREADS_MAX" -lt "$LIMIT" ] && LIMIT=$THREADS_MAX
[ "$ULIMIT_U" != unlimited ] && [ "$ULIMIT_U" -lt "$LIMIT" ] && LIMIT=$ULIMIT_U
[ $((TASKS_NOW + NPROC + 512)) -lt "$LIMIT" ] ||
	die "$NPROC more processes do not fit: $TASKS_NOW tasks now, pid_max $PID_MAX, threads-max $THREADS_MAX, ulimit -u $ULIMIT_U"

prepare_memwatchd
load_prepare memwatch-scale

write_config "$BENCH_TMP/all.conf" all
start_memwatchd "$BENCH_TMP/all.conf"
URL=http://127.0.0.1:$MW_PORT/metrics
sleep 3

R=$BENCH_TMP/results.tsv
: >"$R"
rec() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$R"; } # phase key n value
vals() { awk -F'\t' -v p="$1" -v k="$2" '$1 == p && $2 == k {print $4}' "$R"; }
one() { vals "$1" "$2" | tail -1; }
gauge() { awk -v m="$2" '$1 == m {print $2}' "$1"; }

to_ms() { awk '{ v = $1; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
	if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000; printf "%.4f\n", v }'; }

# The daemon's CPU time over CPU_SECONDS, nothing scraping: utime + stime
# (clock ticks, /proc/PID/stat) and the schedstat sum (ns), as % of one core.
# Beside it, what the host did meanwhile (the faults collector walks every
# process when the host faults, reclaims or OOM-kills: on a shared machine the
# neighbours decide how often) and how often the daemon walked.
walks() { curl -sf "$URL" | awk '$1 == "memwatch_fault_process_walks_total" {print $2}'; }
host_faults() { awk '$1 == "pgfault" {print $2}' /proc/vmstat; }
cpu_share() {
	local phase=$1 t0 t1 n0 n1 s0 s1 w0 w1 f0 f1
	w0=$(walks) f0=$(host_faults)
	t0=$(cpu_ticks "$MW_PID") n0=$(cpu_ns "$MW_PID") s0=$(date +%s.%N)
	sleep "$CPU_SECONDS"
	t1=$(cpu_ticks "$MW_PID") n1=$(cpu_ns "$MW_PID") s1=$(date +%s.%N)
	w1=$(walks) f1=$(host_faults)
	rec "$phase" walks 0 "$((${w1:-0} - ${w0:-0}))"
	rec "$phase" host_faults_per_s 0 "$(calc "($f1 - $f0) / ($s1 - $s0)")"
	rec "$phase" cpu_pct 0 "$(calc "($t1 - $t0) / $CLK_TCK / ($s1 - $s0) * 100")"
	rec "$phase" cpu_ticks 0 "$((t1 - t0))"
	rec "$phase" cpu_ns_pct 0 "$(calc "($n1 - $n0) / 1e9 / ($s1 - $s0) * 100")"
	log "$phase: utime+stime $((t1 - t0)) ticks in $(fmt 1 "$(calc "$s1 - $s0")") s: $(fmt 2 "$(one "$phase" cpu_pct)") % of a core"
}

measure() {
	local phase=$1 body=$BENCH_TMP/body last="" ts n=0 tries=0 out=$BENCH_TMP/wrk.out
	while [ "$n" -lt "$WINDOWS" ] && [ "$tries" -lt $((WINDOWS * 10)) ]; do
		tries=$((tries + 1))
		curl -sf -o "$body" "$URL" || { sleep 0.3; continue; }
		ts=$(gauge "$body" memwatch_window_end_timestamp_seconds)
		if [ -n "$ts" ] && [ "$ts" != "$last" ]; then
			last=$ts
			n=$((n + 1))
			awk -v p="$phase" -v n="$n" -F'[{}" ]+' '/^memwatch_collector_duration_seconds\{/ {
				printf "%s\tcollector:%s\t%d\t%s\n", p, $3, n, $NF * 1000; s += $NF * 1000 }
				END { printf "%s\twindow_ms\t%d\t%.4f\n", p, n, s }' "$body" >>"$R"
		fi
		sleep 0.4
	done
	rec "$phase" series 0 "$(grep -vc '^#' "$body")"
	rec "$phase" bytes 0 "$(wc -c <"$body")"
	rec "$phase" tracked 0 "$(gauge "$body" memwatch_fault_tracked_processes)"
	rec "$phase" cgroups 0 "$(gauge "$body" memwatch_cgroups_discovered)"
	rec "$phase" dropped 0 "$(gauge "$body" memwatch_series_dropped_total)"
	wrk -t2 -c4 -d"${DURATION}s" --latency "$URL" >"$out" 2>&1
	cat "$out" >>"$BENCH_TMP/wrk.log"
	rec "$phase" p50 0 "$(awk '$1 == "50%" {print $2}' "$out" | to_ms)"
	rec "$phase" p99 0 "$(awk '$1 == "99%" {print $2}' "$out" | to_ms)"
	rec "$phase" rps 0 "$(awk '$1 == "Requests/sec:" {print $2}' "$out")"
	read -r rss pss anon file hwm < <(mem_kib "$MW_PID")
	rec "$phase" rss 0 "$rss"
	rec "$phase" pss 0 "$pss"
	rec "$phase" anon 0 "$anon"
	rec "$phase" hwm 0 "$hwm"
	log "$phase: window median $(vals "$phase" window_ms | median) ms over $n windows, wrk p99 $(one "$phase" p99) ms, rss $rss KiB"
}

cpu_share base
measure base

# --- the load ------------------------------------------------------------------------------
log "creating $NCG cgroups under $CG_ROOT"
load_start "$NPROC" "$PARENTS" "$CHILDREN"
sleep 5

cpu_share scale
measure scale

# The busiest collector under load, profiled (flat, user and kernel) for 20 s.
perf record -q -e cpu-clock -F 997 -g -p "$MW_PID" -o "$BENCH_TMP/perf.data" -- sleep 20 >/dev/null 2>&1 || true
perf report -i "$BENCH_TMP/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -20 >"$BENCH_TMP/profile.txt" || true
perf report -i "$BENCH_TMP/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -30 >"$BENCH_TMP/profile-children.txt" || true
perf report -i "$BENCH_TMP/perf.data" --no-children --sort dso --stdio 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -12 >"$BENCH_TMP/profile-dso.txt" || true
# The window's rendering (three formats) and their gzip, with callees.
perf report -i "$BENCH_TMP/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
	grep -E '^ +[0-9.]+%.*(snapshot_seal_with|render_|gzip_compress|deflate)' | head -8 >"$BENCH_TMP/profile-render.txt" || true
# --- the third load: many more (empty) cgroups -----------------------------------------------
if [ "$BIG" != 0 ]; then
	log "adding cgroups up to $BIG"
	made=$NCG
	for ((p = 0; made < BIG; p++)); do
		mkdir "$CG_ROOT/q$p"
		made=$((made + 1))
		for ((c = 0; c < CHILDREN && made < BIG; c++)); do
			mkdir "$CG_ROOT/q$p/c$c"
			made=$((made + 1))
		done
	done
	sleep 5
	cpu_share big
	measure big
fi
stop_pid "$MW_PID"
load_stop
log "load removed"

# --- report -------------------------------------------------------------------------------
PHASES="base scale"
[ "$BIG" = 0 ] || PHASES="base scale big"
COLLECTOR_KEYS=$(awk -F'\t' '$1 == "scale" && $2 ~ /^collector:/ {print $2}' "$R" | sort -u)
W_MED=$(vals scale window_ms | median)
P99=$(one scale p99)
RSS_MIB=$(awk -v k="$(one scale rss)" 'BEGIN {printf "%.1f", k / 1024}')
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
ANON_MIB=$(mib "$(one scale anon)")
CPU_SCALE=$(one scale cpu_pct)
# row LABEL TARGET CMD: one cell per phase, CMD given the phase as $1
row() {
	local label=$1 target=$2 cmd=$3 ph line
	line="| $label |"
	for ph in $PHASES; do line="$line $($cmd "$ph") |"; done
	echo "$line $target |"
}
c_cpu() { echo "$(fmt 2 "$(one "$1" cpu_pct)") ($(one "$1" cpu_ticks) ticks; schedstat $(fmt 2 "$(one "$1" cpu_ns_pct)"))"; }
c_wmed() { fmt 2 "$(vals "$1" window_ms | median)"; }
c_wp90() { echo "$(fmt 2 "$(vals "$1" window_ms | percentile 90)") / $(fmt 2 "$(vals "$1" window_ms | minmax | cut -d' ' -f2)")"; }
c_scrape() { echo "$(fmt 3 "$(one "$1" p50)") / $(fmt 3 "$(one "$1" p99)")"; }
c_rps() { fmt 0 "$(one "$1" rps)"; }
c_mem() { echo "$(mib "$(one "$1" anon)") / $(mib "$(one "$1" pss)") / $(mib "$(one "$1" rss)")"; }
c_hwm() { mib "$(one "$1" hwm)"; }
c_walks() { echo "$(one "$1" walks) / $(fmt 0 "$(one "$1" host_faults_per_s)")"; }
c_series() { echo "$(one "$1" series) / $(one "$1" bytes)"; }
c_tracked() { one "$1" tracked; }
c_cgroups() { one "$1" cgroups; }
c_dropped() { one "$1" dropped; }
S=$BENCH_TMP/section.md
{
	echo "## Scale: 10,000 processes and 1,000 memory cgroups"
	echo
	machine_md
	echo "- command: \`bench/scale.sh $ARGS\`: $NPROC sleeping processes (\`bench/sleepers.c\`, $LOAD_PER_LEAF in each leaf cgroup) and $NCG cgroups in the $CG_KIND ($PARENTS under \`$CG_ROOT\`, $CHILDREN below each)$([ "$BIG" = 0 ] || echo ", then empty cgroups up to $BIG in all"); pid_max $PID_MAX, threads-max $THREADS_MAX, \`ulimit -u\` $ULIMIT_U; $TASKS_LOADED processes on the machine under load; forking them took $(fmt 1 "$SPAWN_S") s"
	echo "- memwatchd: \`memwatchd --config EMPTY --listen 127.0.0.1:PORT\` (defaults: every collector, 1 s windows), one process measured at rest, then under each load, in one run"
	echo
	head="| | at rest | $NPROC processes + $NCG cgroups |"
	sep="|---|---|---|"
	[ "$BIG" = 0 ] || { head="$head $NPROC processes + $BIG cgroups |"; sep="$sep---|"; }
	echo "$head target |"
	echo "$sep---|"
	row "daemon CPU, utime + stime over ${CPU_SECONDS} s without scrapes, % of one core" "≤ 0.5 % at 1,000 cgroups — $(verdict "$CPU_SCALE" '<=' 0.5)$([ "$BIG" = 0 ] || echo "; ≤ 2 % at $BIG — $(verdict "$(one big cpu_pct)" '<=' 2)")" c_cpu
	row "walks of every process in those ${CPU_SECONDS} s (\`memwatch_fault_process_walks_total\`) / the host's faults per second (\`pgfault\`, all processes: the machine is shared)" "" c_walks
	row "window collect time, ms: median of $WINDOWS windows (sum over collectors)" "≤ 50 ms — $(verdict "$W_MED" '<=' 50)" c_wmed
	row "window collect time, ms: p90 / max" "" c_wp90
	row "scrape latency under wrk -t2 -c4 -d${DURATION}s: median / p99, ms" "p99 ≤ 10 ms — $(verdict "$P99" '<=' 10)$([ "$BIG" = 0 ] || echo "; at $BIG: $(verdict "$(one big p99)" '<=' 10)")" c_scrape
	row "scrapes/s under wrk" "" c_rps
	row "RssAnon / PSS / RSS, MiB" "RssAnon ≤ 8 MiB — $(verdict "$ANON_MIB" '<=' 8); RSS ≤ 16 MiB — $(verdict "$RSS_MIB" '<=' 16)" c_mem
	row "peak RSS (VmHWM), MiB" "" c_hwm
	row "series / bytes of /metrics" "" c_series
	row "processes read by the faults collector (\`memwatch_fault_tracked_processes\`)" "" c_tracked
	row "cgroups read (\`memwatch_cgroups_discovered\`)" "" c_cgroups
	row "series dropped (\`memwatch_series_dropped_total\`)" "" c_dropped
	echo
	echo "Per collector, \`memwatch_collector_duration_seconds\` (sampling and collecting in the window), median of $WINDOWS windows, ms:"
	echo
	echo "| collector | at rest | $NCG cgroups | max at $NCG |$([ "$BIG" = 0 ] || echo " $BIG cgroups |")"
	echo "|---|---|---|---|$([ "$BIG" = 0 ] || echo "---|")"
	for k in $COLLECTOR_KEYS; do
		echo "| ${k#collector:} | $(fmt 3 "$(vals base "$k" | median)") | $(fmt 3 "$(vals scale "$k" | median)") | $(fmt 3 "$(vals scale "$k" | minmax | cut -d' ' -f2)") |$([ "$BIG" = 0 ] || echo " $(fmt 3 "$(vals big "$k" | median)") |")"
	done
	echo
	echo "Where the daemon's time went under the first load (\`perf record -e cpu-clock -F 997 -g -p PID -- sleep 20\`, flat, top 20):"
	echo
	echo '```'
	cat "$BENCH_TMP/profile.txt"
	echo '```'
	echo
	echo "By object (libz: the gzip of the three renderings; memwatchd: all of user space), and the rendering's own entries with callees"
	echo "(\`snapshot_seal_with\` renders 0.0.4 text, OpenMetrics and protobuf and gzips each, every window):"
	echo
	echo '```'
	cat "$BENCH_TMP/profile-dso.txt"
	cat "$BENCH_TMP/profile-render.txt"
	echo '```'
	echo
	echo "The same profile with callees included (\`--children\`; kernel call chains are complete, user-space"
	echo "ones stop early in a release build without frame pointers), top 30:"
	echo
	echo '```'
	cat "$BENCH_TMP/profile-children.txt"
	echo '```'
	echo
	echo "Commands: CPU: \`utime + stime\` of \`/proc/PID/stat\` (and the sum of \`/proc/PID/task/*/schedstat\`) before and"
	echo "after \`sleep ${CPU_SECONDS}\`, nothing scraping; \`curl -sf URL\` until $WINDOWS distinct \`memwatch_window_end_timestamp_seconds\` were seen,"
	echo "summing \`memwatch_collector_duration_seconds\` of each; \`wrk -t2 -c4 -d${DURATION}s --latency URL\`;"
	echo "RssAnon/RSS from \`/proc/PID/status\`, PSS from \`/proc/PID/smaps_rollup\`; cgroups: \`mkdir\`, removed with"
	echo "\`find ROOT -mindepth 1 -depth -type d -exec rmdir {} \\;\` after the sleepers were killed and reaped."
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} >"$S"
cat "$S"
summary_row "daemon CPU without scrapes, 10k processes + 1k cgroups" "≤ 0.5 % of a core" "$(fmt 2 "$CPU_SCALE") % (at rest $(fmt 2 "$(one base cpu_pct)") %)" "$(verdict "$CPU_SCALE" '<=' 0.5)"
[ "$BIG" = 0 ] || summary_row "daemon CPU without scrapes, 10k processes + ${BIG} cgroups" "≤ 2 % of a core" "$(fmt 2 "$(one big cpu_pct)") %" "$(verdict "$(one big cpu_pct)" '<=' 2)"
summary_row "window collect time, 10k processes + 1k cgroups (median)" "≤ 50 ms" "$(fmt 2 "$W_MED") ms (at rest $(fmt 2 "$(vals base window_ms | median)") ms)" "$(verdict "$W_MED" '<=' 50)"
summary_row "scrape p99 under wrk, 10k processes + 1k cgroups" "≤ 10 ms" "$(fmt 3 "$P99") ms" "$(verdict "$P99" '<=' 10)"
summary_row "RssAnon, 10k processes + 1k cgroups" "≤ 8 MiB" "$ANON_MIB MiB (RSS $RSS_MIB, PSS $(mib "$(one scale pss)"))" "$(verdict "$ANON_MIB" '<=' 8)"
[ -z "$WRITE_DOC" ] || update_doc_section scale "$S"
