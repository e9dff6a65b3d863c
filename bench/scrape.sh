#!/usr/bin/env bash
# /metrics of memwatchd against node_exporter (meminfo, vmstat and pressure
# collectors only), both started here on free 127.0.0.1 ports, measured
# alternately in the same run:
#
#   bench/scrape.sh [--rounds N] [--duration S] [--scrapes N] [--no-doc]
#
# - wrk -t2 -c4 -dS --latency, N rounds per server (default 5), alternating:
#   median latency, p99, requests/s; again N rounds with
#   -H 'Accept-Encoding: gzip' (what Prometheus sends);
#   again N rounds of memwatchd in OpenMetrics and in protobuf (Accept), each
#   alternating with node_exporter's text;
# - sequential scrapes by one curl (like one Prometheus server): latency per
#   scrape, median and p99;
# - CPU time per scrape: utime+stime from /proc/PID/stat before and after a
#   fixed number of scrapes (default 5000) by one curl, minus the server's
#   idle CPU over the same time, divided by the count; plain and gzip;
# - series, bytes, keep-alive and Content-Encoding of each.
#
# Writes the section "scrape" of docs/benchmarks.md (unless --no-doc).
. "$(dirname "$0")/lib.sh"

ROUNDS=5 DURATION=10 SCRAPES=5000 WRITE_DOC=1
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--duration) DURATION=$2; shift ;;
	--scrapes) SCRAPES=$2; shift ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
ARGS="--rounds $ROUNDS --duration $DURATION --scrapes $SCRAPES"
for t in wrk curl "$NE_BIN"; do command -v "$t" >/dev/null || die "$t not found"; done

prepare_memwatchd
NE_VERSION=$("$NE_BIN" --version 2>&1 | awk 'NR == 1 {print $3}')
write_config "$BENCH_TMP/all.conf" all
start_memwatchd "$BENCH_TMP/all.conf"
start_node_exporter
MW_URL=http://127.0.0.1:$MW_PORT/metrics
# The Accept headers Prometheus 2.42 sends first, without and with native histograms.
OM_ACCEPT='Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5'
PB_ACCEPT='Accept: application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,text/plain;version=0.0.4;q=0.5'
NE_URL=http://127.0.0.1:$NE_PORT/metrics
log "memwatchd pid $MW_PID at $MW_URL, node_exporter $NE_VERSION pid $NE_PID at $NE_URL"
sleep 2

R=$BENCH_TMP/results.tsv
: >"$R"
rec() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$R"; } # test server metric value
vals() { awk -F'\t' -v t="$1" -v s="$2" -v m="$3" '$1 == t && $2 == s && $3 == m {print $4}' "$R"; }
med() { vals "$@" | median; }

# --- what each returns ------------------------------------------------------------
describe() { # NAME URL
	local name=$1 url=$2 body=$BENCH_TMP/body.$1 hdr=$BENCH_TMP/hdr.$1
	curl -sf -o "$body" "$url"
	rec info "$name" series "$(grep -vc '^#' "$body")"
	rec info "$name" families "$(grep -c '^# TYPE ' "$body")"
	rec info "$name" bytes "$(wc -c <"$body")"
	[ "$name" != memwatchd ] || rec info "$name" om_bytes "$(curl -sf -H "$OM_ACCEPT" -o - "$url" | wc -c)"
	[ "$name" != memwatchd ] || rec info "$name" pb_bytes "$(curl -sf -H "$PB_ACCEPT" -o - "$url" | wc -c)"
	rec info "$name" gzip_bytes "$(curl -sf -H 'Accept-Encoding: gzip' -D "$hdr" -o - "$url" | wc -c)"
	rec info "$name" gzip_encoding "$(awk 'tolower($1) == "content-encoding:" {gsub(/\r/, ""); print $2}' "$hdr" | grep . || echo identity)"
	rec info "$name" reuse "$(curl -sv -o /dev/null -o /dev/null "$url" "$url" 2>&1 | grep -c 'Re-using existing connection' || true)"
	rec info "$name" connection_header "$(curl -sf -D - -o /dev/null "$url" | awk 'tolower($1) == "connection:" {gsub(/\r/, ""); print $2}' | grep . || echo none)"
}
describe memwatchd "$MW_URL"
describe node_exporter "$NE_URL"

# --- wrk, alternating --------------------------------------------------------------
to_ms() { awk '{ v = $1; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
	if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000; printf "%.4f\n", v }'; }
wrk_run() { # TEST NAME URL [HEADER]
	local test=$1 name=$2 url=$3 out=$BENCH_TMP/wrk.out
	if [ $# -gt 3 ]; then
		wrk -t2 -c4 -d"${DURATION}s" --latency -H "$4" "$url" >"$out" 2>&1
	else
		wrk -t2 -c4 -d"${DURATION}s" --latency "$url" >"$out" 2>&1
	fi
	cat "$out" >>"$BENCH_TMP/wrk.log"
	rec "$test" "$name" p50 "$(awk '$1 == "50%" {print $2}' "$out" | to_ms)"
	rec "$test" "$name" p99 "$(awk '$1 == "99%" {print $2}' "$out" | to_ms)"
	rec "$test" "$name" rps "$(awk '$1 == "Requests/sec:" {print $2}' "$out")"
	rec "$test" "$name" errors "$(awk '/Socket errors:/ {gsub(/,/, ""); e += $4 + $6 + $8 + $10} /Non-2xx/ {e += $NF} END {print e + 0}' "$out")"
	log "$test $name: p50 $(awk '$1 == "50%" {print $2}' "$out"), p99 $(awk '$1 == "99%" {print $2}' "$out"), $(awk '$1 == "Requests/sec:" {print $2}' "$out") req/s"
}
for ((i = 1; i <= ROUNDS; i++)); do
	wrk_run wrk memwatchd "$MW_URL"
	wrk_run wrk node_exporter "$NE_URL"
done
for ((i = 1; i <= ROUNDS; i++)); do
	wrk_run wrkgz memwatchd "$MW_URL" 'Accept-Encoding: gzip'
	wrk_run wrkgz node_exporter "$NE_URL" 'Accept-Encoding: gzip'
done
# memwatchd's other formats, alternating with node_exporter's text as above.
for ((i = 1; i <= ROUNDS; i++)); do
	wrk_run wrkom memwatchd "$MW_URL" "$OM_ACCEPT"
	wrk_run wrkom node_exporter "$NE_URL"
	wrk_run wrkpb memwatchd "$MW_URL" "$PB_ACCEPT"
	wrk_run wrkpb node_exporter "$NE_URL"
done

# The floor: the same server answering a 3-byte /healthz, once each. On a
# loaded machine the tail is the run queue, whatever the handler does.
HZ_MW=http://127.0.0.1:$MW_PORT/healthz
wrk_run floor memwatchd "$HZ_MW"

# --- sequential scrapes by one client, latency each ---------------------------------
SEQ=500
seq_run() { # NAME URL
	local cfg=$BENCH_TMP/seq.curl i
	: >"$cfg"
	for ((i = 0; i < SEQ; i++)); do printf 'url = "%s"\noutput = "/dev/null"\n' "$2" >>"$cfg"; done
	curl -s -H 'Accept-Encoding: gzip' -w '%{time_total}\n' -K "$cfg" | awk '{printf "%.4f\n", $1 * 1000}' >"$BENCH_TMP/seq.$1"
	rec seq "$1" p50 "$(median <"$BENCH_TMP/seq.$1")"
	rec seq "$1" p99 "$(percentile 99 <"$BENCH_TMP/seq.$1")"
}
for ((i = 1; i <= 3; i++)); do
	seq_run memwatchd "$MW_URL"
	seq_run node_exporter "$NE_URL"
done

# --- CPU time per scrape --------------------------------------------------------------
CFG=$BENCH_TMP/cpu.curl
: >"$CFG"
for ((i = 0; i < SCRAPES; i++)); do printf 'url = "URL"\noutput = "/dev/null"\n' >>"$CFG"; done
now_s() { awk '{print $1}' /proc/uptime; }
# Idle CPU of both, over the same 10 s, with nothing scraping.
i0m=$(cpu_ns "$MW_PID") i0n=$(cpu_ns "$NE_PID") t0=$(now_s)
sleep 10
i1m=$(cpu_ns "$MW_PID") i1n=$(cpu_ns "$NE_PID") t1=$(now_s)
IDLE_MW=$(calc "($i1m - $i0m) / 1e9 / ($t1 - $t0)")
IDLE_NE=$(calc "($i1n - $i0n) / 1e9 / ($t1 - $t0)")
cpu_run() { # TEST NAME PID URL [HEADER]
	local test=$1 name=$2 pid=$3 url=$4 idle c0 c1 n0 n1 t0 t1
	[ "$name" = memwatchd ] && idle=$IDLE_MW || idle=$IDLE_NE
	sed "s|URL|$url|" "$CFG" >"$BENCH_TMP/cpu.$name.curl"
	c0=$(cpu_ticks "$pid") n0=$(cpu_ns "$pid") t0=$(now_s)
	if [ $# -gt 4 ]; then
		curl -s -H "$5" -K "$BENCH_TMP/cpu.$name.curl"
	else
		curl -s -K "$BENCH_TMP/cpu.$name.curl"
	fi
	c1=$(cpu_ticks "$pid") n1=$(cpu_ns "$pid") t1=$(now_s)
	rec "$test" "$name" ticks_ms "$(calc "($c1 - $c0) * 1000 / $CLK_TCK / $SCRAPES")"
	rec "$test" "$name" net_ms "$(calc "(($n1 - $n0) / 1e9 - $idle * ($t1 - $t0)) * 1000 / $SCRAPES")"
	rec "$test" "$name" elapsed_s "$(calc "$t1 - $t0")"
	log "$test $name: $(calc "($c1 - $c0) * 1000 / $CLK_TCK / $SCRAPES") ms CPU per scrape (ticks), $(calc "($n1 - $n0) / 1e6 / $SCRAPES") ms (schedstat), $SCRAPES scrapes in $(calc "$t1 - $t0") s"
}
for ((i = 1; i <= 3; i++)); do
	cpu_run cpu memwatchd "$MW_PID" "$MW_URL"
	cpu_run cpu node_exporter "$NE_PID" "$NE_URL"
	cpu_run cpugz memwatchd "$MW_PID" "$MW_URL" 'Accept-Encoding: gzip'
	cpu_run cpugz node_exporter "$NE_PID" "$NE_URL" 'Accept-Encoding: gzip'
done
MW_MEM=$(mem_kib "$MW_PID") NE_MEM=$(mem_kib "$NE_PID")
stop_pid "$MW_PID"
stop_pid "$NE_PID"

# --- report -------------------------------------------------------------------------
RPS_MW=$(med wrk memwatchd rps) RPS_NE=$(med wrk node_exporter rps)
RPS_RATIO=$(calc "$RPS_MW / $RPS_NE")
# Per-round ratios (the rounds alternate) and their interval.
read -r RLO RHI RCOV < <(paste <(vals wrk memwatchd rps) <(vals wrk node_exporter rps) | awk '$2 > 0 {print $1 / $2}' | median_ci)
P99_MW=$(med wrk memwatchd p99)
FLOOR_P99=$(med floor memwatchd p99)
# p99 against 2 ms: when the same server's trivial /healthz already has a
# larger p99, the machine's scheduling is what is measured.
P99_VERDICT=$(verdict "$P99_MW" '<=' 2)
if [ "$P99_VERDICT" != met ] && [ "$(verdict "$FLOOR_P99" '<=' 2)" != met ]; then
	P99_VERDICT="not resolved (the /healthz floor p99 is $(fmt 1 "$FLOOR_P99") ms)"
fi
GZ_RATIO=$(calc "$(med wrkgz memwatchd rps) / $(med wrkgz node_exporter rps)")
OM_RATIO=$(calc "$(med wrkom memwatchd rps) / $(med wrkom node_exporter rps)")
PB_RATIO=$(calc "$(med wrkpb memwatchd rps) / $(med wrkpb node_exporter rps)")
CPU_MW=$(med cpu memwatchd net_ms) CPU_NE=$(med cpu node_exporter net_ms)
info() { vals info "$1" "$2"; }
ms() { fmt 3 "$1"; }
S=$BENCH_TMP/section.md
{
	echo "## Scrapes: memwatchd against node_exporter"
	echo
	machine_md
	echo "- node_exporter $NE_VERSION (Debian \`prometheus-node-exporter\`): \`prometheus-node-exporter --collector.disable-defaults --collector.meminfo --collector.vmstat --collector.pressure --web.listen-address=127.0.0.1:PORT\`"
	echo "- memwatchd: \`memwatchd --config EMPTY --listen 127.0.0.1:PORT\` (built-in defaults, every collector)"
	echo "- command: \`bench/scrape.sh $ARGS\`; both servers run throughout; every measurement alternates memwatchd, node_exporter, memwatchd, … and the medians over the rounds are reported"
	echo
	echo "| | memwatchd | node_exporter | memwatchd / node_exporter | target |"
	echo "|---|---|---|---|---|"
	echo "| wrk, requests/s (median of $ROUNDS) | $(fmt 0 "$RPS_MW") | $(fmt 0 "$RPS_NE") | $(fmt 2 "$RPS_RATIO")× (per-round ratios: $(fmt 2 "$RLO")× … $(fmt 2 "$RHI")×, $(awk -v c="$RCOV" 'BEGIN {printf "%.0f", c * 100}') % interval of the median) | ≥ 10× — $(verdict_ci "$RLO" "$RHI" '>=' 10) |"
	echo "| wrk, latency median, ms | $(ms "$(med wrk memwatchd p50)") | $(ms "$(med wrk node_exporter p50)") | | |"
	echo "| wrk, latency p99, ms | $(ms "$P99_MW") | $(ms "$(med wrk node_exporter p99)") | | ≤ 2 ms — $P99_VERDICT |"
	echo "| wrk + \`Accept-Encoding: gzip\`, requests/s | $(fmt 0 "$(med wrkgz memwatchd rps)") | $(fmt 0 "$(med wrkgz node_exporter rps)") | $(fmt 2 "$GZ_RATIO")× | |"
	echo "| wrk, memwatchd in OpenMetrics 1.0 (node_exporter: its text), requests/s | $(fmt 0 "$(med wrkom memwatchd rps)") | $(fmt 0 "$(med wrkom node_exporter rps)") | $(fmt 2 "$OM_RATIO")× | ≥ 10× — $(verdict "$OM_RATIO" '>=' 10) |"
	echo "| wrk, memwatchd in delimited protobuf (node_exporter: its text), requests/s | $(fmt 0 "$(med wrkpb memwatchd rps)") | $(fmt 0 "$(med wrkpb node_exporter rps)") | $(fmt 2 "$PB_RATIO")× | ≥ 10× — $(verdict "$PB_RATIO" '>=' 10) |"
	echo "| wrk + gzip, latency median / p99, ms | $(ms "$(med wrkgz memwatchd p50)") / $(ms "$(med wrkgz memwatchd p99)") | $(ms "$(med wrkgz node_exporter p50)") / $(ms "$(med wrkgz node_exporter p99)") | | |"
	echo "| floor: wrk on memwatchd's \`/healthz\` (3 bytes), median / p99, ms | $(ms "$(med floor memwatchd p50)") / $(ms "$(med floor memwatchd p99)") | | | |"
	echo "| one client, $SEQ sequential gzip scrapes × 3: latency median / p99, ms (connect included) | $(ms "$(med seq memwatchd p50)") / $(ms "$(med seq memwatchd p99)") | $(ms "$(med seq node_exporter p50)") / $(ms "$(med seq node_exporter p99)") | | |"
	echo "| CPU per scrape, ms: threads' run time, idle subtracted (utime+stime, not subtracted) | $(ms "$CPU_MW") ($(ms "$(med cpu memwatchd ticks_ms)")) | $(ms "$CPU_NE") ($(ms "$(med cpu node_exporter ticks_ms)")) | $(fmt 3 "$(calc "$CPU_MW / $CPU_NE")") | |"
	echo "| CPU per gzip scrape, ms (as above) | $(ms "$(med cpugz memwatchd net_ms)") ($(ms "$(med cpugz memwatchd ticks_ms)")) | $(ms "$(med cpugz node_exporter net_ms)") ($(ms "$(med cpugz node_exporter ticks_ms)")) | $(fmt 3 "$(calc "$(med cpugz memwatchd net_ms) / $(med cpugz node_exporter net_ms)")") | |"
	echo "| idle CPU, % of one core (10 s, no scrapes) | $(fmt 2 "$(calc "$IDLE_MW * 100")") | $(fmt 2 "$(calc "$IDLE_NE * 100")") | | |"
	echo "| series (samples) / metric families | $(info memwatchd series) / $(info memwatchd families) | $(info node_exporter series) / $(info node_exporter families) | | |"
	echo "| body, bytes: plain / with \`Accept-Encoding: gzip\` | $(info memwatchd bytes) / $(info memwatchd gzip_bytes) ($(info memwatchd gzip_encoding)) | $(info node_exporter bytes) / $(info node_exporter gzip_bytes) ($(info node_exporter gzip_encoding)) | | |"
	echo "| memwatchd body, bytes: OpenMetrics / protobuf | $(info memwatchd om_bytes) / $(info memwatchd pb_bytes) | | | |"
	echo "| keep-alive: second request on the same connection | $([ "$(info memwatchd reuse)" -gt 0 ] && echo yes || echo "no (\`Connection: $(info memwatchd connection_header)\`)") | $([ "$(info node_exporter reuse)" -gt 0 ] && echo yes || echo "no (\`Connection: $(info node_exporter connection_header)\`)") | | |"
	echo "| RSS / PSS at the end, MiB | $(echo "$MW_MEM" | awk '{printf "%.1f / %.1f", $1 / 1024, $2 / 1024}') | $(echo "$NE_MEM" | awk '{printf "%.1f / %.1f", $1 / 1024, $2 / 1024}') | | |"
	echo
	echo "wrk errors (socket errors + non-2xx, summed over rounds): memwatchd $(vals wrk memwatchd errors | awk '{s += $1} END {print s + 0}') plain, $(vals wrkgz memwatchd errors | awk '{s += $1} END {print s + 0}') gzip; node_exporter $(vals wrk node_exporter errors | awk '{s += $1} END {print s + 0}') plain, $(vals wrkgz node_exporter errors | awk '{s += $1} END {print s + 0}') gzip."
	echo "wrk sends no \`Accept-Encoding\`; Prometheus sends \`Accept-Encoding: gzip\`. node_exporter then compresses"
	echo "every response (its gzip rows); memwatchd answers \`$(info memwatchd gzip_encoding)\` either way."
	echo
	echo "Per round (wrk requests/s and p99 ms, plain):"
	echo
	echo '```'
	paste <(vals wrk memwatchd rps) <(vals wrk memwatchd p99) <(vals wrk node_exporter rps) <(vals wrk node_exporter p99) |
		awk '{printf "round %d  memwatchd %8.0f req/s  p99 %7.3f ms   node_exporter %7.0f req/s  p99 %7.3f ms\n", NR, $1, $2, $3, $4}'
	echo '```'
	echo
	echo "Commands: \`wrk -t2 -c4 -d${DURATION}s --latency URL\` and the same with \`-H 'Accept-Encoding: gzip'\`;"
	echo "\`curl -s -H 'Accept-Encoding: gzip' -w '%{time_total}\\n' -K FILE\` with $SEQ \`url = URL\` entries (one"
	echo "process, so a server that keeps the connection open is asked on it); CPU: run time of the server's"
	echo "threads (\`/proc/PID/task/*/schedstat\`) and utime+stime (\`/proc/PID/stat\`) around \`curl -s -K FILE\`"
	echo "with $SCRAPES entries, ÷ $SCRAPES; the first minus the server's idle CPU (10 s, no scrapes) × elapsed."
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} >"$S"
cat "$S"
summary_row "scrape throughput, wrk -t2 -c4 (memwatchd / node_exporter)" "≥ 10×" "$(fmt 0 "$RPS_MW") / $(fmt 0 "$RPS_NE") req/s = $(fmt 2 "$RPS_RATIO")× ($(fmt 2 "$RLO")× … $(fmt 2 "$RHI")×); with gzip $(fmt 2 "$GZ_RATIO")×" "$(verdict_ci "$RLO" "$RHI" '>=' 10)"
summary_row "scrape throughput per format, wrk -t2 -c4 (memwatchd OpenMetrics / protobuf against node_exporter's text)" "≥ 10×" "$(fmt 2 "$OM_RATIO")× / $(fmt 2 "$PB_RATIO")×" "$(verdict "$OM_RATIO" '>=' 10), $(verdict "$PB_RATIO" '>=' 10)"
summary_row "scrape latency p99 under wrk -t2 -c4" "≤ 2 ms" "$(ms "$P99_MW") ms (median $(ms "$(med wrk memwatchd p50)") ms; one sequential client: p99 $(ms "$(med seq memwatchd p99)") ms)" "$P99_VERDICT"
summary_row "CPU per scrape (memwatchd / node_exporter)" "—" "$(ms "$CPU_MW") / $(ms "$CPU_NE") ms" ""
[ -z "$WRITE_DOC" ] || update_doc_section scrape "$S"
