#!/usr/bin/env bash
# memwatchd's memory and idle CPU, default configuration, with node_exporter
# (meminfo, vmstat, pressure) beside it for comparison:
#
#   bench/footprint.sh [--duration S] [--idle S] [--no-doc]
#
# - RSS (VmRSS) and PSS (smaps_rollup) a few seconds after start;
# - idle CPU: utime+stime from /proc/PID/stat over --idle seconds (default 60)
#   with nothing scraping, / that time; the threads' schedstat run time over
#   the same span for an exact figure; then where that time goes (perf record);
# - RSS and PSS after --duration seconds (default 600; 60 is a quick run and
#   the section says so) of one scrape a second, with the largest RSS seen.
#
# Writes the section "footprint" of docs/benchmarks.md (unless --no-doc).
. "$(dirname "$0")/lib.sh"

DURATION=600 IDLE=60 WRITE_DOC=1
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DURATION=$2; shift ;;
	--idle) IDLE=$2; shift ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
ARGS="--duration $DURATION --idle $IDLE"
for t in curl perf "$NE_BIN"; do command -v "$t" >/dev/null || die "$t not found"; done

prepare_memwatchd
write_config "$BENCH_TMP/all.conf" all
start_memwatchd "$BENCH_TMP/all.conf"
start_node_exporter
NE_VERSION=$("$NE_BIN" --version 2>&1 | awk 'NR == 1 {print $3}')
MW_URL=http://127.0.0.1:$MW_PORT/metrics
NE_URL=http://127.0.0.1:$NE_PORT/metrics
sleep 5
curl -sf -o /dev/null "$NE_URL" # node_exporter allocates on its first scrape
sleep 1
MW_START=$(mem_kib "$MW_PID") NE_START=$(mem_kib "$NE_PID")
MW_THREADS=$(awk '/^Threads:/ {print $2}' "/proc/$MW_PID/status")
MW_FDS=$(find "/proc/$MW_PID/fd" -mindepth 1 | wc -l)
log "after start: memwatchd rss/pss/anon/file/hwm KiB $MW_START; node_exporter $NE_START"

# --- idle CPU ---------------------------------------------------------------------
now_s() { awk '{print $1}' /proc/uptime; }
c0m=$(cpu_ticks "$MW_PID") c0n=$(cpu_ticks "$NE_PID") t0=$(now_s)
n0m=$(cpu_ns "$MW_PID") n0n=$(cpu_ns "$NE_PID")
sleep "$IDLE"
c1m=$(cpu_ticks "$MW_PID") c1n=$(cpu_ticks "$NE_PID") t1=$(now_s)
n1m=$(cpu_ns "$MW_PID") n1n=$(cpu_ns "$NE_PID")
IDLE_S=$(calc "$t1 - $t0")
IDLE_MW=$(calc "($c1m - $c0m) / $CLK_TCK / $IDLE_S * 100")
IDLE_NE=$(calc "($c1n - $c0n) / $CLK_TCK / $IDLE_S * 100")
EXACT_MW=$(calc "($n1m - $n0m) / 1e9 / $IDLE_S * 100")
EXACT_NE=$(calc "($n1n - $n0n) / 1e9 / $IDLE_S * 100")
log "idle CPU over ${IDLE_S}s: memwatchd $IDLE_MW % (schedstat $EXACT_MW %), node_exporter $IDLE_NE % (schedstat $EXACT_NE %)"

# Where memwatchd's idle time goes: a flat profile over 30 s.
perf record -q -e cpu-clock -F 997 -g -p "$MW_PID" -o "$BENCH_TMP/perf.data" -- sleep 30 >/dev/null 2>&1 || true
perf report -i "$BENCH_TMP/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -15 >"$BENCH_TMP/profile.txt" || true
perf report -i "$BENCH_TMP/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
	grep -E '^ +[0-9.]+%' | grep -v '\[k\]' | head -15 >"$BENCH_TMP/profile-user.txt" || true

# --- a scrape a second for DURATION ------------------------------------------------
RSS_LOG=$BENCH_TMP/rss.log
: >"$RSS_LOG"
end=$(($(date +%s) + DURATION))
n=0
while [ "$(date +%s)" -lt "$end" ]; do
	curl -sf -H 'Accept-Encoding: gzip' -o /dev/null --max-time 2 "$MW_URL" || log "memwatchd scrape failed"
	curl -sf -H 'Accept-Encoding: gzip' -o /dev/null --max-time 2 "$NE_URL" || log "node_exporter scrape failed"
	n=$((n + 1))
	if [ $((n % 10)) = 0 ]; then
		echo "$n $(mem_kib "$MW_PID") $(mem_kib "$NE_PID")" >>"$RSS_LOG"
		[ $((n % 60)) != 0 ] || log "$n scrapes: memwatchd rss/pss $(mem_kib "$MW_PID" | cut -d' ' -f1-2) KiB"
	fi
	sleep 1
done
MW_END=$(mem_kib "$MW_PID") NE_END=$(mem_kib "$NE_PID")
MW_MAX=$(awk '{print $2}' "$RSS_LOG" | sort -n | tail -1)
NE_MAX=$(awk '{print $7}' "$RSS_LOG" | sort -n | tail -1)
# Does RSS still grow? Compare the last fifth with the second fifth of the samples.
TREND=$(awk '{r[NR] = $2} END { if (NR < 5) { print "n/a"; exit } a = int(NR / 5); s1 = 0; s2 = 0
	for (i = a + 1; i <= 2 * a; i++) s1 += r[i]; for (i = NR - a + 1; i <= NR; i++) s2 += r[i]
	printf "%+.0f KiB", (s2 - s1) / a }' "$RSS_LOG")
stop_pid "$MW_PID"
stop_pid "$NE_PID"

# --- whose memory: each collector alone, and the allocator's part ----------------------
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
col() { echo "$1" | cut -d' ' -f"$2"; }
ATTR=$BENCH_TMP/attr.md
: >"$ATTR"
attr_row() { # LABEL CONF [ENV]
	local label=$1 conf=$2 m
	if [ $# -gt 2 ]; then
		export GLIBC_TUNABLES=$3
		start_memwatchd "$conf"
		unset GLIBC_TUNABLES
	else
		start_memwatchd "$conf"
	fi
	sleep 3
	m=$(mem_kib "$MW_PID")
	stop_pid "$MW_PID"
	echo "| $label | $(mib "$(col "$m" 1)") | $(mib "$(col "$m" 3)") | $(mib "$(col "$m" 4)") | $(mib "$(col "$m" 2)") | $(mib "$(col "$m" 5)") |" >>"$ATTR"
}
write_config "$BENCH_TMP/none.conf"
attr_row "every collector disabled" "$BENCH_TMP/none.conf"
for c in "${COLLECTORS[@]}"; do
	write_config "$BENCH_TMP/one.conf" "$c"
	attr_row "only \`$c\`" "$BENCH_TMP/one.conf"
done
attr_row "defaults (every collector)" "$BENCH_TMP/all.conf"
TUNABLE=glibc.malloc.mmap_threshold=131072
attr_row "defaults, \`GLIBC_TUNABLES=$TUNABLE\`" "$BENCH_TMP/all.conf" "$TUNABLE"

RSS_END_MIB=$(mib "$(col "$MW_END" 1)")
S=$BENCH_TMP/section.md
{
	echo "## Footprint: memory and idle CPU"
	echo
	machine_md
	echo "- command: \`bench/footprint.sh $ARGS\`$([ "$DURATION" -lt 600 ] && echo " — a quick run: $DURATION s of scrapes instead of the 10 minutes the issue asks for")"
	echo "- memwatchd: \`memwatchd --config EMPTY --listen 127.0.0.1:PORT\` (defaults: every collector, 100 ms sampling, 1 s windows, 60 windows of history); node_exporter $NE_VERSION beside it: \`prometheus-node-exporter $NE_ARGS\` (port varies)"
	echo
	echo "| | memwatchd | node_exporter | target (memwatchd) |"
	echo "|---|---|---|---|"
	echo "| RSS after start, MiB (VmRSS: anon + file) | $(mib "$(col "$MW_START" 1)") ($(mib "$(col "$MW_START" 3)") + $(mib "$(col "$MW_START" 4)")) | $(mib "$(col "$NE_START" 1)") | |"
	echo "| PSS after start, MiB (smaps_rollup) | $(mib "$(col "$MW_START" 2)") | $(mib "$(col "$NE_START" 2)") | |"
	echo "| RSS after $DURATION s of a scrape a second, MiB (anon + file) | $RSS_END_MIB ($(mib "$(col "$MW_END" 3)") + $(mib "$(col "$MW_END" 4)")) | $(mib "$(col "$NE_END" 1)") | ≤ 8 MiB — $(verdict "$RSS_END_MIB" '<=' 8) |"
	echo "| PSS after $DURATION s, MiB | $(mib "$(col "$MW_END" 2)") | $(mib "$(col "$NE_END" 2)") | |"
	echo "| largest RSS sampled during the scrapes (every 10 s), MiB | $(mib "$MW_MAX") | $(mib "$NE_MAX") | |"
	echo "| RSS change, last fifth of the scrape phase against the second fifth | $TREND | | |"
	echo "| peak RSS (VmHWM: start-up included), MiB | $(mib "$(col "$MW_END" 5)") | $(mib "$(col "$NE_END" 5)") | |"
	echo "| idle CPU, % of one core: /proc/PID/stat over ${IDLE_S} s | $(fmt 3 "$IDLE_MW") | $(fmt 3 "$IDLE_NE") | ≤ 0.5 % — $(verdict "$IDLE_MW" '<=' 0.5) |"
	echo "| idle CPU, % of one core: threads' run time (schedstat), same span | $(fmt 3 "$EXACT_MW") | $(fmt 3 "$EXACT_NE") | |"
	echo
	echo "memwatchd had $MW_THREADS threads and $MW_FDS open file descriptors after start. The idle figures are"
	echo "what the daemon spends on a machine others use too: BPF events from their workloads (reclaim, page"
	echo "allocations, new cgroups) make it work, so they vary with the neighbours."
	echo
	echo "Whose memory: the daemon started with one collector at a time, 3 s after its first window"
	echo "(MiB; peak = VmHWM, start-up included), and the defaults with glibc's mmap threshold fixed at"
	echo "128 KiB (\`GLIBC_TUNABLES=$TUNABLE\`: freed large blocks go back to the kernel instead of"
	echo "staying in the heap):"
	echo
	echo "| configuration | RSS | anon | file | PSS | peak |"
	echo "|---|---|---|---|---|---|"
	cat "$ATTR"
	echo
	echo "Where the idle CPU went (\`perf record -e cpu-clock -F 997 -g -p PID -- sleep 30\`, flat, top 15):"
	echo
	echo '```'
	cat "$BENCH_TMP/profile.txt"
	echo '```'
	echo
	echo "User-space functions with their callees (\`--children\`), top 15:"
	echo
	echo '```'
	cat "$BENCH_TMP/profile-user.txt"
	echo '```'
	echo
	echo "Commands: RSS = \`VmRSS\` (and \`RssAnon\`, \`RssFile\`, \`VmHWM\`) of \`/proc/PID/status\`; PSS = \`Pss\` of"
	echo "\`/proc/PID/smaps_rollup\`; scrapes: \`curl -sf -H 'Accept-Encoding: gzip' -o /dev/null URL\` of each"
	echo "server then \`sleep 1\`; idle: utime+stime (fields 14+15 of \`/proc/PID/stat\`) / CLK_TCK / elapsed,"
	echo "and the first field of \`/proc/PID/task/*/schedstat\` (ns on the CPU) summed over the threads."
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} >"$S"
cat "$S"
summary_row "RSS after $DURATION s of 1 scrape/s$([ "$DURATION" -lt 600 ] && echo " (quick run)")" "≤ 8 MiB" "$RSS_END_MIB MiB (PSS $(mib "$(col "$MW_END" 2)"))" "$(verdict "$RSS_END_MIB" '<=' 8)"
summary_row "idle CPU at 100 ms sampling" "≤ 0.5 %" "$(fmt 3 "$IDLE_MW") % (schedstat $(fmt 3 "$EXACT_MW") %)" "$(verdict "$IDLE_MW" '<=' 0.5)"
[ -z "$WRITE_DOC" ] || update_doc_section footprint "$S"
