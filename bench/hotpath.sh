#!/usr/bin/env bash
# Cost of memwatchd on the workloads it watches.
#
#   bench/hotpath.sh [--pairs N] [--seconds S] [--mixed-seconds S] [--no-doc]
#
# 1. page loop: bench/page_alloc_loop.c (mmap 2 MiB, write every 4 KiB page,
#    munmap, repeat), alternately without memwatchd and with memwatchd in its
#    default configuration (all collectors), N pairs (default 10). Each run is
#    calibrated to about S seconds (default 3).
# 2. mixed: stress-ng --vm 1 --vm-bytes 256M --page-in plus --hdd 1, bogo-ops/s,
#    the same alternation.
# 3. attribution: the page loop with only [collector.alloc] enabled against a
#    daemon with every collector disabled, alternating.
# 4. in-kernel cost per event of each BPF program of the daemon during one page
#    loop run, from kernel.bpf_stats_enabled (switched on for that run only and
#    restored after).
#
# Writes the section "hotpath" of docs/benchmarks.md (unless --no-doc).
# Needs root (BPF), cc, curl, stress-ng, bpftool.
. "$(dirname "$0")/lib.sh"

PAIRS=10 SECONDS_PER_RUN=3 MIXED_SECONDS=10 WRITE_DOC=1
while [ $# -gt 0 ]; do
	case $1 in
	--pairs) PAIRS=$2; shift ;;
	--seconds) SECONDS_PER_RUN=$2; shift ;;
	--mixed-seconds) MIXED_SECONDS=$2; shift ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
ARGS="--pairs $PAIRS --seconds $SECONDS_PER_RUN --mixed-seconds $MIXED_SECONDS"

[ "$(id -u)" = 0 ] || die "needs root (BPF)"
for t in cc curl stress-ng bpftool; do command -v $t >/dev/null || die "$t not found"; done

prepare_memwatchd
LOOP=$BENCH_TMP/page_alloc_loop
cc -O2 -o "$LOOP" "$BENCH_DIR/page_alloc_loop.c"
write_config "$BENCH_TMP/all.conf" all
write_config "$BENCH_TMP/none.conf"
write_config "$BENCH_TMP/alloc.conf" alloc
FOREIGN_AT_START=$(foreign_page_alloc_progs)

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# Results, one per line: phase pair side metric value.
R=$BENCH_TMP/results.tsv
: >"$R"
rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$R"; }
# vals PHASE SIDE METRIC: the values in pair order
vals() { awk -F'\t' -v p="$1" -v s="$2" -v m="$3" '$1 == p && $3 == s && $4 == m {print $5}' "$R"; }
# ratios PHASE METRIC NUM_SIDE DEN_SIDE: NUM/DEN per pair
ratios() {
	awk -F'\t' -v p="$1" -v m="$2" -v a="$3" -v b="$4" '$1 == p && $4 == m { if ($3 == a) x[$2] = $5; if ($3 == b) y[$2] = $5; if ($2 > n) n = $2 }
		END { for (i = 1; i <= n; i++) if ((i in x) && (i in y) && y[i] > 0) printf "%.6f\n", x[i] / y[i] }' "$R"
}

# Calibrate the iteration counts to about SECONDS_PER_RUN per run.
cal=$("$LOOP" 20 2)
ITER=$(awk -v s="$(echo "$cal" | field wall_s)" -v t="$SECONDS_PER_RUN" 'BEGIN { n = int(20 * t / s); print n < 20 ? 20 : n }')
cal2=$("$LOOP" --pipe 20000)
PITER=$(awk -v s="$(echo "$cal2" | field wall_s)" -v t="$SECONDS_PER_RUN" 'BEGIN { n = int(20000 * t / s); print n < 20000 ? 20000 : n }')
log "page loop: $ITER iterations of 2 MiB per run ($cal); pipe loop: $PITER iterations of 64 KiB ($cal2)"

# Both loops on one side of a pair: records cpu and wall ns/page of each.
loops() {
	local phase=$1 pair=$2 side=$3 out
	out=$("$LOOP" "$ITER" 2)
	echo "$phase $pair $side fault $out" >>"$BENCH_TMP/loop.log"
	rec "$phase" "$pair" "$side" fault_cpu "$(echo "$out" | field cpu_ns_per_page)"
	rec "$phase" "$pair" "$side" fault_wall "$(echo "$out" | field wall_ns_per_page)"
	out=$("$LOOP" --pipe "$PITER")
	echo "$phase $pair $side pipe $out" >>"$BENCH_TMP/loop.log"
	rec "$phase" "$pair" "$side" pipe_cpu "$(echo "$out" | field cpu_ns_per_page)"
	rec "$phase" "$pair" "$side" pipe_wall "$(echo "$out" | field wall_ns_per_page)"
}
with_daemon() { # CONF COMMAND...
	local conf=$1
	shift
	start_memwatchd "$conf"
	sleep 1
	"$@"
	stop_pid "$MW_PID"
}
last() { vals "$1" "$2" "$3" | tail -1; }

# --- 1. page loops: no daemon / default daemon ----------------------------------
for ((i = 1; i <= PAIRS; i++)); do
	loops loop "$i" off
	with_daemon "$BENCH_TMP/all.conf" loops loop "$i" on
	log "loops pair $i/$PAIRS: fault cpu ns/page $(last loop off fault_cpu) -> $(last loop on fault_cpu), pipe cpu ns/page $(last loop off pipe_cpu) -> $(last loop on pipe_cpu)"
done

# --- 2. mixed workload: no daemon / default daemon ------------------------------
STRESS_DIR=$BENCH_TMP/stress
mkdir -p "$STRESS_DIR"
STRESS_CMD="stress-ng --vm 1 --vm-bytes 256M --page-in --hdd 1 --hdd-bytes 64M --temp-path DIR --timeout ${MIXED_SECONDS}s --metrics-brief --yaml FILE"
stress() {
	local pair=$1 side=$2 y=$BENCH_TMP/stress.yaml
	rm -f "$y"
	stress-ng --vm 1 --vm-bytes 256M --page-in --hdd 1 --hdd-bytes 64M --temp-path "$STRESS_DIR" \
		--timeout "${MIXED_SECONDS}s" --metrics-brief --yaml "$y" >>"$BENCH_TMP/stress.log" 2>&1
	# bogo-ops per second of real time, per stressor
	rec mixed "$pair" "$side" vm "$(awk '/- stressor:/ {s = $3} s == "vm" && /bogo-ops-per-second-real-time:/ {print $2}' "$y")"
	rec mixed "$pair" "$side" hdd "$(awk '/- stressor:/ {s = $3} s == "hdd" && /bogo-ops-per-second-real-time:/ {print $2}' "$y")"
}
# One untimed run first: the first touch of memory the guest has not used for
# a while is much slower here than later ones.
stress 0 warmup
for ((i = 1; i <= PAIRS; i++)); do
	stress "$i" off
	with_daemon "$BENCH_TMP/all.conf" stress "$i" on
	log "mixed pair $i/$PAIRS: vm $(last mixed off vm) -> $(last mixed on vm) ops/s, hdd $(last mixed off hdd) -> $(last mixed on hdd) ops/s"
done

# --- 3. attribution: every collector disabled / only alloc ----------------------
for ((i = 1; i <= PAIRS; i++)); do
	with_daemon "$BENCH_TMP/none.conf" loops attr "$i" none
	with_daemon "$BENCH_TMP/alloc.conf" loops attr "$i" alloc
	log "attribution pair $i/$PAIRS: fault cpu ns/page $(last attr none fault_cpu) -> $(last attr alloc fault_cpu), pipe $(last attr none pipe_cpu) -> $(last attr alloc pipe_cpu)"
done

# --- 4. in-kernel cost per event, from BPF run-time statistics -----------------
OLD_STATS=$(cat /proc/sys/kernel/bpf_stats_enabled)
CLEANUP_HOOKS+=("echo $OLD_STATS > /proc/sys/kernel/bpf_stats_enabled")
# "name run_cnt run_time_ns" of every BPF program memwatchd PID holds (its
# program and link fds name them in /proc/PID/fdinfo).
prog_stats() {
	local id
	for id in $(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ {print $2}' | sort -un); do
		bpftool prog show id "$id" 2>/dev/null | awk '
			/^[0-9]+: / { name = ""; cnt = 0; ns = 0
				for (i = 1; i <= NF; i++) { if ($i == "name") name = $(i + 1); if ($i == "run_time_ns") ns = $(i + 1); if ($i == "run_cnt") cnt = $(i + 1) }
				if (name != "") print name, cnt, ns }'
	done
}
echo 1 >/proc/sys/kernel/bpf_stats_enabled
start_memwatchd "$BENCH_TMP/all.conf"
sleep 1
prog_stats "$MW_PID" | sort >"$BENCH_TMP/stats0"
ST_LOOP=$("$LOOP" "$ITER" 2)
prog_stats "$MW_PID" | sort >"$BENCH_TMP/stats1"
ST_PIPE=$("$LOOP" --pipe "$PITER")
prog_stats "$MW_PID" | sort >"$BENCH_TMP/stats2"
stop_pid "$MW_PID"
echo "$OLD_STATS" >/proc/sys/kernel/bpf_stats_enabled
ST_PAGES=$(echo "$ST_LOOP" | field pages) ST_PPAGES=$(echo "$ST_PIPE" | field pages)
join "$BENCH_TMP/stats0" "$BENCH_TMP/stats1" | join - "$BENCH_TMP/stats2" |
	awk -v p1="$ST_PAGES" -v p2="$ST_PPAGES" -v c1="$(echo "$ST_LOOP" | field cpu_ns_per_page)" -v c2="$(echo "$ST_PIPE" | field cpu_ns_per_page)" '
		{ n1 = $4 - $2; t1 = $5 - $3; n2 = $6 - $4; t2 = $7 - $5; T1 += t1; T2 += t2
		if (n1 > 0 || n2 > 0) printf "| `%s` | %.3f | %s | %.1f | %.3f | %s | %.1f |\n", $1, n1 / p1, n1 ? sprintf("%.0f", t1 / n1) : "–", t1 / p1,
			n2 / p2, n2 ? sprintf("%.0f", t2 / n2) : "–", t2 / p2 }
		END { printf "| **all programs**, and their share of the loop'"'"'s CPU ns/page (%.0f; %.0f) | | | %.1f (%.2f %%) | | | %.1f (%.2f %%) |\n", c1, c2, T1 / p1, 100 * T1 / p1 / c1, T2 / p2, 100 * T2 / p2 / c2 }' \
		>"$BENCH_TMP/stats.md"
ALLOC_NS=$(join "$BENCH_TMP/stats1" "$BENCH_TMP/stats2" | awk '$1 ~ /^page_alloc/ && $4 > $2 {printf "%.0f", ($5 - $3) / ($4 - $2)}')
FOREIGN_AT_END=$(foreign_page_alloc_progs)

# --- report ----------------------------------------------------------------------
# row LABEL PHASE METRIC NUM DEN DIGITS [TARGET_RATIO]: medians of both sides
# (columns: den_side, num_side), median of the per-pair ratios NUM/DEN (a
# slowdown when > 1) with its confidence interval, and the verdict on it.
row() {
	local label=$1 phase=$2 metric=$3 num=$4 den=$5 digits=$6 target=${7:-} r lo hi cov v=""
	r=$(ratios "$phase" "$metric" "$num" "$den" | median)
	read -r lo hi cov < <(ratios "$phase" "$metric" "$num" "$den" | median_ci)
	[ -z "$target" ] || v="≤ $(pct "$target" | sed 's/^+//') — $(verdict_ci "$lo" "$hi" '<=' "$target")"
	printf '| %s | %s | %s | %s (%s) | %s … %s (%s %%) | %s |\n' "$label" \
		"$(fmt "$digits" "$(vals "$phase" "${den_side:-off}" "$metric" | median)")" \
		"$(fmt "$digits" "$(vals "$phase" "${num_side:-on}" "$metric" | median)")" \
		"$(fmt 4 "$r")" "$(pct "$r")" "$(pct "$lo")" "$(pct "$hi")" "$(awk -v c="$cov" 'BEGIN {printf "%.0f", c * 100}')" "$v"
}
FAULT_R=$(ratios loop fault_cpu on off | median)
PIPE_R=$(ratios loop pipe_cpu on off | median)
# Mixed: a throughput, so the slowdown is off/on; geometric mean of vm and hdd.
awk -F'\t' '$1 == "mixed" { v[$2 "," $3 "," $4] = $5; if ($2 > n) n = $2 }
	END { for (i = 1; i <= n; i++) if (v[i ",on,vm"] > 0 && v[i ",on,hdd"] > 0 && v[i ",off,vm"] > 0 && v[i ",off,hdd"] > 0)
		printf "mixed\t%d\tx\tgeo\t%.6f\n", i, sqrt(v[i ",off,vm"] / v[i ",on,vm"] * v[i ",off,hdd"] / v[i ",on,hdd"]) }' "$R" >>"$R"
MIXED_R=$(vals mixed x geo | median)
ATTR_R=$(ratios attr fault_cpu alloc none | median)
ATTR_PIPE_R=$(ratios attr pipe_cpu alloc none | median)

S=$BENCH_TMP/section.md
{
	echo "## Hot path: page allocations and a mixed workload"
	echo
	machine_md
	echo "- command: \`bench/hotpath.sh $ARGS\`; per run: fault loop $ITER iterations of 2 MiB ($((ITER * 512)) pages), pipe loop $PITER iterations of 64 KiB ($((PITER * 16)) pages); BPF programs named \`page_alloc*\` loaded by others at start/end: $FOREIGN_AT_START/$FOREIGN_AT_END (they cost both sides alike but add noise)"
	echo
	echo "Each pair runs the workload without memwatchd, then with it (started, first window published,"
	echo "1 s settle, workload, stopped), alternating A B A B …; the ratio is taken per pair and its median"
	echo "reported, so drift of the noisy machine between pairs cancels. *CPU* is the loop's own"
	echo "user+system time per page (\`CLOCK_PROCESS_CPUTIME_ID\`; it includes the kernel's page allocation"
	echo "and so the BPF programs, and is less disturbed by other load than *wall*, elapsed time per page)."
	echo "The **fault loop** is the one the issue asks for: mmap 2 MiB, write every 4 KiB page, munmap."
	echo "The **pipe loop** allocates pages without page faults (64 KiB written into a pipe and read back:"
	echo "about one order-0 allocation and one free per 4 KiB): it shows the cost per allocation where the"
	echo "rest of the work is cheap."
	echo
	echo "The confidence interval is distribution-free (order statistics of the per-pair ratios: with 10"
	echo "pairs, the 2nd smallest and 2nd largest, ≥ 95 % coverage). A target is *met* when the whole"
	echo "interval is within it, *missed* when none of it is, and *not resolved* when the machine's noise"
	echo "is larger than the target — then the in-kernel run time below is the better estimate."
	echo
	echo "| workload | without memwatchd (median) | with memwatchd, default config (median) | median of per-pair ratios | confidence interval of that median (coverage) | target |"
	echo "|---|---|---|---|---|---|"
	num_side=on den_side=off row "fault loop, CPU ns/page" loop fault_cpu on off 0 1.03
	num_side=on den_side=off row "fault loop, wall ns/page" loop fault_wall on off 0
	num_side=on den_side=off row "pipe loop, CPU ns/page" loop pipe_cpu on off 0
	num_side=on den_side=off row "pipe loop, wall ns/page" loop pipe_wall on off 0
	num_side=on den_side=off row "mixed: stress-ng vm, bogo-ops/s (ratio = slowdown)" mixed vm off on 1
	num_side=on den_side=off row "mixed: stress-ng hdd, bogo-ops/s (ratio = slowdown)" mixed hdd off on 0
	read -r lo hi cov < <(vals mixed x geo | median_ci)
	echo "| mixed: geometric mean of the vm and hdd slowdowns | | | $(fmt 4 "$MIXED_R") ($(pct "$MIXED_R")) | $(pct "$lo") … $(pct "$hi") ($(awk -v c="$cov" 'BEGIN {printf "%.0f", c * 100}') %) | ≤ 1 % — $(verdict_ci "$lo" "$hi" '<=' 1.01) |"
	echo
	echo "### Attribution: \`[collector.alloc]\` alone against every collector disabled"
	echo
	echo "Both sides run the daemon, so its fixed cost cancels; only the alloc collector (its BPF program on"
	echo "\`kmem:mm_page_alloc\`, and reading \`/proc/vmstat\` once a window) differs."
	echo
	echo "| workload | every collector disabled (median) | only alloc (median) | median of per-pair ratios | confidence interval of that median (coverage) | |"
	echo "|---|---|---|---|---|---|"
	num_side=alloc den_side=none row "fault loop, CPU ns/page" attr fault_cpu alloc none 0
	num_side=alloc den_side=none row "fault loop, wall ns/page" attr fault_wall alloc none 0
	num_side=alloc den_side=none row "pipe loop, CPU ns/page" attr pipe_cpu alloc none 0
	num_side=alloc den_side=none row "pipe loop, wall ns/page" attr pipe_wall alloc none 0
	echo
	echo "### In-kernel run time of each BPF program (\`kernel.bpf_stats_enabled=1\`, default configuration)"
	echo
	echo "One fault-loop run ($ST_PAGES pages) and one pipe-loop run ($ST_PPAGES pages) with the statistics on"
	echo "(they were off for every timing above). *ns/run* is the program body as the kernel times it, with two"
	echo "clock reads around it, so it is an upper bound; the tracepoint's dispatch (\`bpf_trace_run*\`,"
	echo "trampoline) is not in it. Runs per page include everything else on the machine during the run."
	echo "Programs that did not run are left out."
	echo
	echo "| program | fault loop: runs per page | ns per run | ns per page | pipe loop: runs per page | ns per run | ns per page |"
	echo "|---|---|---|---|---|---|---|"
	cat "$BENCH_TMP/stats.md"
	echo
	echo "Per-pair raw numbers (ns/page CPU; mixed bogo-ops/s):"
	echo
	echo '```'
	for ((i = 1; i <= PAIRS; i++)); do
		printf 'pair %2d  fault %7.0f -> %7.0f  pipe %5.0f -> %5.0f  vm %6.1f -> %6.1f  hdd %6.0f -> %6.0f  | attr fault %7.0f -> %7.0f  pipe %5.0f -> %5.0f\n' "$i" \
			"$(vals loop off fault_cpu | sed -n ${i}p)" "$(vals loop on fault_cpu | sed -n ${i}p)" \
			"$(vals loop off pipe_cpu | sed -n ${i}p)" "$(vals loop on pipe_cpu | sed -n ${i}p)" \
			"$(vals mixed off vm | sed -n ${i}p)" "$(vals mixed on vm | sed -n ${i}p)" \
			"$(vals mixed off hdd | sed -n ${i}p)" "$(vals mixed on hdd | sed -n ${i}p)" \
			"$(vals attr none fault_cpu | sed -n ${i}p)" "$(vals attr alloc fault_cpu | sed -n ${i}p)" \
			"$(vals attr none pipe_cpu | sed -n ${i}p)" "$(vals attr alloc pipe_cpu | sed -n ${i}p)"
	done
	echo '```'
	echo
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Pairs where a stressor completed no bogo-op are left out of the ratios."
	echo
	echo "Commands: \`cc -O2 -o page_alloc_loop bench/page_alloc_loop.c\`; \`page_alloc_loop $ITER 2\`;"
	echo "\`page_alloc_loop --pipe $PITER\`; \`$STRESS_CMD\` (bogo-ops/s of real time from the YAML);"
	echo "\`memwatchd --config CONF --listen 127.0.0.1:PORT\` with CONF empty (the defaults: every collector),"
	echo "every \`[collector.*] enabled = no\`, or all of them off but \`[collector.alloc]\`;"
	echo "\`sysctl kernel.bpf_stats_enabled=1\` and \`bpftool prog show id ID\` (run_cnt, run_time_ns) of the"
	echo "programs in \`/proc/PID/fdinfo\` for the last table."
} >"$S"
cat "$S"
ci() { # PHASE METRIC NUM DEN -> "lo hi"
	ratios "$@" | median_ci | cut -d' ' -f1-2
}
read -r FLO FHI < <(ci loop fault_cpu on off)
read -r MLO MHI < <(vals mixed x geo | median_ci | cut -d' ' -f1-2)
BPF_SHARE=$(awk -F'|' '/all programs/ {print $5 " / " $8}' "$BENCH_TMP/stats.md" | sed -e 's/  */ /g' -e 's/^ //' -e 's/ $//')
summary_row "fault loop overhead, default config (CPU ns/page; median of pair ratios, CI)" "≤ 3 %" "$(pct "$FAULT_R") ($(pct "$FLO") … $(pct "$FHI"))" "$(verdict_ci "$FLO" "$FHI" '<=' 1.03)"
summary_row "pipe loop overhead (allocations without page faults)" "—" "$(pct "$PIPE_R") ($(ci loop pipe_cpu on off | awk '{printf "%+.2f %% … %+.2f %%", ($1 - 1) * 100, ($2 - 1) * 100}'))" ""
summary_row "BPF run time per page, share of the loop's CPU (fault; pipe loop)" "—" "$BPF_SHARE ns" ""
summary_row "mixed workload slowdown (stress-ng vm + hdd)" "≤ 1 %" "$(pct "$MIXED_R") ($(pct "$MLO") … $(pct "$MHI"))" "$(verdict_ci "$MLO" "$MHI" '<=' 1.01)"
summary_row "alloc collector alone vs none: fault / pipe loop" "—" "$(pct "$ATTR_R") / $(pct "$ATTR_PIPE_R"); \`page_alloc_btf\` body ${ALLOC_NS:-?} ns/run" ""
[ -z "$WRITE_DOC" ] || update_doc_section hotpath "$S"
