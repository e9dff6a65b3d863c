#!/usr/bin/env bash
# The idle daemon's CPU, repeated, with node_exporter (meminfo, vmstat,
# pressure) beside it:
#
#   bench/idle.sh [--turns N] [--seconds S] [--processes N]
#                 [--parents P --children C] [--no-perf] [--no-doc]
#
# memwatchd runs the default configuration (conf/memwatchd.conf, listening
# on a free loopback port). At rest, N turns (default 5), each of three
# spans of S seconds (default 120: node_exporter's Go runtime forces a
# garbage collection every 2 minutes, which a shorter span catches or misses
# by chance), one after the other:
#   1. memwatchd, nothing scraping;
#   2. memwatchd, scraped every 15 s (gzip, as Prometheus would);
#   3. node_exporter, scraped the same way.
# Both servers run throughout (node_exporter does nothing between scrapes);
# only the one in its span is scraped and measured. Then P + P*C memory
# cgroups (default 100 + 900) and N sleeping processes (default 10,000;
# bench/sleepers.c, 10 in each leaf) are made, and memwatchd is measured N
# more times for S seconds, nothing scraping.
#
# CPU: utime + stime of every thread (/proc/PID/stat, clock ticks) over the
# span, as % of one core, and the exact sum of /proc/PID/task/*/schedstat
# beside it; the in-kernel sampler's time (memwatch_memory_sampler_seconds_total:
# its program's run time in hard irq or softirq, charged to no process) is added to memwatchd's figure for the
# targets; wake-ups: voluntary context switches of each thread. Beside
# them, the floor: bench/sampling_floor.c doing only the 100 ms sampling
# (ppoll, one pread of /proc/meminfo), and only the wake-ups. Reported
# as median and spread (min–max) over the turns, with the load averages.
# Run it under `flock /tmp/memwatchd-heavy.lock`: other heavy tests inflate
# the figures. Writes the section "idle" of docs/benchmarks.md (unless
# --no-doc). Everything started is stopped by PID; the cgroups are removed.
. "$(dirname "$0")/lib.sh"

TURNS=5 SECONDS_PER=120 NPROC=10000 PARENTS=100 CHILDREN=9 PERF=1 WRITE_DOC=1
while [ $# -gt 0 ]; do
	case $1 in
	--turns) TURNS=$2; shift ;;
	--seconds) SECONDS_PER=$2; shift ;;
	--processes) NPROC=$2; shift ;;
	--parents) PARENTS=$2; shift ;;
	--children) CHILDREN=$2; shift ;;
	--no-perf) PERF= ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
ARGS="--turns $TURNS --seconds $SECONDS_PER --processes $NPROC --parents $PARENTS --children $CHILDREN"
NCG=$((PARENTS + PARENTS * CHILDREN))
SCRAPE_EVERY=15
[ "$(id -u)" = 0 ] || die "needs root (BPF, cgroups)"
for t in cc curl "$NE_BIN"; do command -v "$t" >/dev/null || die "$t not found"; done
[ -z "$PERF" ] || command -v perf >/dev/null || PERF=

prepare_memwatchd
cg_hierarchy
CG_ROOT=$CG_BASE/memwatch-idle
[ ! -e "$CG_ROOT" ] || die "$CG_ROOT exists (a run that did not clean up?): remove it first, deepest first"

# Does an ancestor of this shell hold the heavy lock (flock LOCK bench/idle.sh)?
# /proc/locks names the holder's PID and the file's inode.
heavy_lock_held() {
	local ino holder p
	ino=$(stat -c %i /tmp/memwatchd-heavy.lock 2>/dev/null) || return 1
	holder=$(awk -v i="$ino" '$2 == "FLOCK" { n = split($6, a, ":"); if (a[n] == i) print $5 }' /proc/locks)
	[ -n "$holder" ] || return 1
	for ((p = $$; p > 1; p = $(awk '{print $4}' "/proc/$p/stat" 2>/dev/null || echo 1))); do
		[ "$p" = "$holder" ] && return 0
	done
	return 1
}
if heavy_lock_held; then
	IDLE_LOCK_NOTE=" under \`flock /tmp/memwatchd-heavy.lock\`"
else
	IDLE_LOCK_NOTE=", **not** under the heavy lock (\`/tmp/memwatchd-heavy.lock\`): others' tests may have run beside it, see the load averages"
fi

# The default configuration, on a free loopback port (--listen wins over its listen =).
start_memwatchd "$REPO/conf/memwatchd.conf"
start_node_exporter
NE_VERSION=$("$NE_BIN" --version 2>&1 | awk 'NR == 1 {print $3}')
MW_URL=http://127.0.0.1:$MW_PORT/metrics
NE_URL=http://127.0.0.1:$NE_PORT/metrics
curl -sf -o /dev/null "$NE_URL" # node_exporter allocates on its first scrape
sleep 10

R=$BENCH_TMP/results.tsv
: >"$R"
rec() { printf '%s\t%s\t%s\n' "$@" >>"$R"; } # span key value
vals() { awk -F'\t' -v s="$1" -v k="$2" '$1 == s && $2 == k {print $3}' "$R"; }
# Voluntary context switches of each thread, "name count" a line.
wakes() { for t in /proc/"$1"/task/*; do echo "$(cat "$t/comm" 2>/dev/null) $(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status" 2>/dev/null)"; done; }

# The in-kernel sampler's own time (in interrupt context, charged to no process), seconds.
timer_s() { [ "$1" = "$MW_PID" ] || { echo 0; return; }; curl -sf "$MW_URL" | awk '$1 == "memwatch_memory_sampler_seconds_total" {v = $2} END {print v + 0}'; }

# span NAME PID [URL]: S seconds of PID's CPU, URL scraped every 15 s from the start.
span() {
	local name=$1 pid=$2 url=${3:-} t0 t1 n0 n1 s0 s1 next el k0 k1
	k0=$(timer_s "$pid")
	wakes "$pid" >"$BENCH_TMP/w0"
	t0=$(cpu_ticks "$pid") n0=$(cpu_ns "$pid") s0=$(date +%s.%N)
	next=0
	while :; do
		el=$(calc "$(date +%s.%N) - $s0")
		awk -v e="$el" -v s="$SECONDS_PER" 'BEGIN {exit !(e < s)}' || break
		if [ -n "$url" ] && awk -v e="$el" -v n="$next" 'BEGIN {exit !(e >= n)}'; then
			curl -sf -H 'Accept-Encoding: gzip' -o /dev/null --max-time 5 "$url" || log "scrape of $url failed"
			next=$((next + SCRAPE_EVERY))
		fi
		# until the span's end, or the next scrape if sooner
		sleep "$(awk -v e="$el" -v s="$SECONDS_PER" -v n="$next" -v u="$url" 'BEGIN {
			d = s - e; if (u != "" && n - e < d) d = n - e; printf "%.3f\n", (d > 0 ? d : 0) }')"
	done
	t1=$(cpu_ticks "$pid") n1=$(cpu_ns "$pid") s1=$(date +%s.%N)
	wakes "$pid" >"$BENCH_TMP/w1"
	k1=$(timer_s "$pid")
	rec "$name" timer "$(calc "($k1 - $k0) / ($s1 - $s0) * 100")"
	rec "$name" cpu "$(calc "($t1 - $t0) / $CLK_TCK / ($s1 - $s0) * 100")"
	rec "$name" sched "$(calc "($n1 - $n0) / 1e9 / ($s1 - $s0) * 100")"
	rec "$name" load "$(cut -d' ' -f1 /proc/loadavg)"
	paste "$BENCH_TMP/w0" "$BENCH_TMP/w1" | awk -v s="$(calc "$s1 - $s0")" -v n="$name" \
		'{w[$1] += ($4 - $2) / s} END {for (t in w) printf "%s\twake:%s\t%.2f\n", n, t, w[t]}' >>"$R"
	log "$name: $(vals "$name" cpu | tail -1) % of a core (schedstat $(vals "$name" sched | tail -1) %), load $(vals "$name" load | tail -1)"
}

for ((turn = 1; turn <= TURNS; turn++)); do
	log "turn $turn of $TURNS at rest"
	span rest "$MW_PID"
	span rest_scraped "$MW_PID" "$MW_URL"
	span ne_scraped "$NE_PID" "$NE_URL"
done
LOAD_REST_END=$(cut -d' ' -f1-3 /proc/loadavg)

# The floor under it: a process doing only the 100 ms sampling (wake up, read
# /proc/meminfo), and one only waking up, side by side for one span.
cc -O2 -o "$BENCH_TMP/sampling_floor" "$BENCH_DIR/sampling_floor.c"
"$BENCH_TMP/sampling_floor" "$SECONDS_PER" >"$BENCH_TMP/floor.read" &
FLOOR_PID=$!
STARTED_PIDS+=("$FLOOR_PID")
"$BENCH_TMP/sampling_floor" "$SECONDS_PER" --no-read >"$BENCH_TMP/floor.wake"
wait "$FLOOR_PID" || true
forget_pid "$FLOOR_PID"
FLOOR_READ=$(cat "$BENCH_TMP/floor.read") FLOOR_WAKE=$(cat "$BENCH_TMP/floor.wake")
log "floor: wake-ups with a /proc/meminfo read $FLOOR_READ %, wake-ups alone $FLOOR_WAKE %"

profile() { # NAME: where memwatchd's time goes, 30 s, user-space functions with their callees
	[ -n "$PERF" ] || return 0
	perf record -q -e cpu-clock -F 1999 -g -p "$MW_PID" -o "$BENCH_TMP/perf.$1" -- sleep 30 >/dev/null 2>&1 || true
	perf report -i "$BENCH_TMP/perf.$1" --children --sort symbol --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9.]+%' | head -30 >"$BENCH_TMP/profile.$1" || true
}
profile rest

# --- the load ----------------------------------------------------------------------------
log "creating $NCG cgroups under $CG_ROOT"
task_room "$NPROC"
cg_tree_make "$CG_ROOT" "$PARENTS" "$CHILDREN"
log "starting $NPROC sleeping processes (10 in each leaf cgroup)"
sleepers_start "$NPROC" "$CG_LEAVES" 10
TASKS_LOADED=$( (find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null || true) | wc -l)
log "$NPROC processes ready in $SPAWN_S s; $TASKS_LOADED processes on the machine"
sleep 10
LOAD_LOADED_START=$(cut -d' ' -f1-3 /proc/loadavg)
for ((turn = 1; turn <= TURNS; turn++)); do
	log "turn $turn of $TURNS under load"
	span loaded "$MW_PID"
done
LOAD_LOADED_END=$(cut -d' ' -f1-3 /proc/loadavg)
profile loaded
WALKS=$(curl -sf "$MW_URL" | awk '$1 == "memwatch_fault_process_walks_total" {print $2}')
CGROUPS=$(curl -sf "$MW_URL" | awk '$1 == "memwatch_cgroups_discovered" {print $2}')
SAMPLER_MODE=$(curl -sf "$MW_URL" | sed -n 's/^memwatch_collector_info{collector="meminfo",.*mode="\([^"]*\)".*/\1/p')
stop_pid "$MW_PID"
stop_pid "$NE_PID"
load_cleanup
log "load removed"

# --- report ------------------------------------------------------------------------------
med() { vals "$1" "$2" | median; }
spread() { vals "$1" "$2" | minmax | awk '{printf "%.3f–%.3f", $1, $2}'; }
cell() { echo "$(fmt 3 "$(med "$1" cpu)") ($(spread "$1" cpu)) | $(fmt 3 "$(med "$1" sched)") ($(spread "$1" sched))"; }
thread_wakes() { # SPAN: "name w/s, ..." medians per thread
	awk -F'\t' -v s="$1" '$1 == s && $2 ~ /^wake:/ {print substr($2, 6)}' "$R" | sort -u | while read -r t; do
		printf '%s %s/s, ' "$t" "$(fmt 1 "$(vals "$1" "wake:$t" | median)")"
	done | sed 's/, $//'
}
timer_cell() { echo "$(fmt 4 "$(med "$1" timer)") ($(vals "$1" timer | minmax | awk '{printf "%.4f–%.4f", $1, $2}'))"; }
# With the in-kernel sampler's time (interrupt context) added, turn by turn: it is the daemon's cost too.
with_timer() { paste <(vals "$1" "$2") <(vals "$1" timer) | awk '{print $1 + $2}' | median; }
with_timer_spread() { paste <(vals "$1" "$2") <(vals "$1" timer) | awk '{print $1 + $2}' | minmax | awk '{printf "%.3f–%.3f", $1, $2}'; }
# memwatchd's scraped turn against node_exporter's of the same turn.
RATIO=$(paste <(vals rest_scraped sched) <(vals rest_scraped timer) <(vals ne_scraped sched) |
	awk '{print ($3 > 0) ? ($1 + $2) / $3 : "inf"}' | median)
REST=$(with_timer rest cpu) LOADED=$(with_timer loaded cpu)
MW_SCR=$(with_timer rest_scraped sched) NE_SCR=$(med ne_scraped sched)
S=$BENCH_TMP/section.md
{
	echo "## Idle CPU, repeated: at rest and with 10,000 processes + 1,000 cgroups"
	echo
	machine_md
	echo "- command: \`bench/idle.sh $ARGS\`$IDLE_LOCK_NOTE"
	echo "- memwatchd: \`memwatchd --config conf/memwatchd.conf --listen 127.0.0.1:PORT\` (the default configuration: every collector, 100 ms sampling, 1 s windows; the sampler ran in mode ${SAMPLER_MODE:-unknown}); node_exporter $NE_VERSION: \`prometheus-node-exporter $NE_ARGS\` (port varies); both ran throughout, only the one in its span was scraped"
	echo "- load: $NPROC sleeping processes (\`bench/sleepers.c\`, 10 in each leaf cgroup) in $NCG cgroups of the $CG_KIND ($PARENTS under \`$CG_ROOT\`, $CHILDREN below each); $TASKS_LOADED processes on the machine; memwatchd read $CGROUPS cgroups and walked every process $WALKS times since its start"
	echo "- load averages: at start $LOAD_START; end of the rest turns $LOAD_REST_END; under load $LOAD_LOADED_START at its start, $LOAD_LOADED_END at its end"
	echo
	echo "$TURNS turns of $SECONDS_PER s each; % of one core, median (min–max over the turns):"
	echo
	echo "| span | utime + stime | schedstat | in-kernel sampler (interrupt context) | wake-ups (voluntary switches), per thread, median | target (utime + stime + sampler) |"
	echo "|---|---|---|---|---|---|"
	echo "| memwatchd at rest, nothing scraping | $(cell rest) | $(timer_cell rest) | $(thread_wakes rest) | ≤ 0.1 % — $(verdict "$REST" '<=' 0.1) |"
	echo "| memwatchd at rest, scraped every $SCRAPE_EVERY s | $(cell rest_scraped) | $(timer_cell rest_scraped) | $(thread_wakes rest_scraped) | |"
	echo "| node_exporter at rest, scraped every $SCRAPE_EVERY s | $(cell ne_scraped) | | $(thread_wakes ne_scraped) | |"
	echo "| memwatchd / node_exporter, scraped (schedstat + sampler; median of the turns' ratios) | $(fmt 2 "$RATIO") | | | | ≤ 1 — $(verdict "$RATIO" '<=' 1) |"
	echo "| floor: a process that only wakes every 100 ms and reads \`/proc/meminfo\` (\`bench/sampling_floor.c\`, one span, its own CPU clock) | $(fmt 3 "$FLOOR_READ") | | | 10/s | |"
	echo "| floor: the same wake-ups without the read | $(fmt 3 "$FLOOR_WAKE") | | | 10/s | |"
	echo "| memwatchd, $NPROC processes + $NCG cgroups, nothing scraping | $(cell loaded) | $(timer_cell loaded) | $(thread_wakes loaded) | ≤ 0.25 % — $(verdict "$LOADED" '<=' 0.25) |"
	echo
	echo "Load average (1 min) at the end of each span, in turn order: at rest $(vals rest load | tr '\n' ' ')/ scraped $(vals rest_scraped load | tr '\n' ' ')/ node_exporter $(vals ne_scraped load | tr '\n' ' ')/ loaded $(vals loaded load | tr '\n' ' ')."
	echo "The machine is shared: BPF events from the neighbours' workloads (reclaim, faults that make the"
	echo "daemon walk every process sooner, new cgroups) make the daemon work, so the spread is part of the figure."
	for ph in rest loaded; do
		[ -s "$BENCH_TMP/profile.$ph" ] || continue
		echo
		echo "Where memwatchd's time went, $ph (\`perf record -e cpu-clock -F 1999 -g -p PID -- sleep 30\`; \`perf report --children --sort symbol -g none\`, top 30):"
		echo
		echo '```'
		cat "$BENCH_TMP/profile.$ph"
		echo '```'
	done
	echo
	echo "Commands: CPU = fields 14 + 15 of \`/proc/PID/stat\` / CLK_TCK and the first field of"
	echo "\`/proc/PID/task/*/schedstat\` summed over the threads, before and after each span; wake-ups ="
	echo "\`voluntary_ctxt_switches\` of \`/proc/PID/task/*/status\`; scrapes: \`curl -sf -H 'Accept-Encoding: gzip' -o /dev/null URL\`."
} >"$S"
cat "$S"
summary_row "idle CPU at rest, nothing scraping (median of $TURNS × $SECONDS_PER s)" "≤ 0.1 % of a core" "$(fmt 3 "$REST") % ($(with_timer_spread rest cpu), sampler included)" "$(verdict "$REST" '<=' 0.1)"
summary_row "idle CPU at rest, scraped every 15 s: memwatchd / node_exporter" "≤ 1" "$(fmt 3 "$MW_SCR") / $(fmt 3 "$NE_SCR") % = $(fmt 2 "$RATIO")" "$(verdict "$RATIO" '<=' 1)"
summary_row "daemon CPU without scrapes, 10k processes + 1k cgroups (median of $TURNS × $SECONDS_PER s)" "≤ 0.25 % of a core" "$(fmt 3 "$LOADED") % ($(with_timer_spread loaded cpu), sampler included)" "$(verdict "$LOADED" '<=' 0.25)"
if [ -n "$WRITE_DOC" ]; then
	update_doc_section idle "$S"
else
	cat "$BENCH_TMP/rows"
fi
