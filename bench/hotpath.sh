#!/usr/bin/env bash
# Cost of memwatchd on the workloads it watches.
#
#   bench/hotpath.sh [--pairs N] [--mixed-pairs N] [--seconds S] [--mixed-run S] [--cpu N]
#                    [--stress-ng] [--mixed-seconds S] [--no-doc]
#
# 1. loops: bench/page_alloc_loop.c, the fault loop (mmap 2 MiB, write every
#    4 KiB page, munmap, repeat) and the pipe loop (pages allocated without
#    page faults), without memwatchd and with memwatchd in its default
#    configuration (all collectors), N pairs (default 100). Each run is
#    calibrated to about S seconds of its CPU time (default 0.5; the pipe
#    loop half of that).
# 2. mixed: bench/mixed_work.c, a fixed amount of mixed work (page-cache file
#    writes and reads, anonymous faults, fork+exit, malloc churn) timed by its
#    own CPU time, inside a memory cgroup with a limit; the same alternation,
#    --mixed-pairs pairs (default 240) of runs of about --mixed-run seconds of
#    CPU time (default 1.5): its target, 1 %, is smaller than one pair's
#    noise (about 5 % between two adjacent 0.5 s runs here, less for longer
#    ones, while the daemon's start and settle cost the same per pair).
# 3. attribution: the loops with only [collector.alloc] enabled, with its
#    opt-in per-allocation tracing (trace = yes), against every collector
#    disabled, in one daemon switched between the two by SIGHUP.
# 4. in-kernel cost per event of each BPF program of the daemon during one run
#    of each loop, from kernel.bpf_stats_enabled (switched on for that run
#    only and restored after).
# 5. with --stress-ng: the old mixed workload, stress-ng --vm 1 --vm-bytes 256M
#    --page-in --hdd 1 for S seconds (--mixed-seconds, default 10), bogo-ops/s,
#    in the memory cgroup, N pairs at most 10. Its rate varies too much here
#    to show 1 %, so it is not run by default.
#
# Every workload runs pinned to one CPU (--cpu, default the last one): on these
# VMs the same loop runs 50 % slower on one vCPU than on the other, run after
# run, and an unpinned workload landing on either made the runs bimodal.
#
# The sides alternate A B B A A B B A …, so one daemon start serves two runs
# and a linear drift of the machine cancels; a pair is two adjacent runs.
#
# Writes the section "hotpath" of docs/benchmarks.md (unless --no-doc).
# Needs root (BPF, cgroups), cc, curl, bpftool; stress-ng for --stress-ng.
. "$(dirname "$0")/lib.sh"

PAIRS=100 MPAIRS=240 SECONDS_PER_RUN=0.5 MIXED_RUN=1.5 MIXED_SECONDS=10 WRITE_DOC=1 STRESS=
WORK_CPU=$(($(nproc --all) - 1))
while [ $# -gt 0 ]; do
	case $1 in
	--pairs) PAIRS=$2; shift ;;
	--mixed-pairs) MPAIRS=$2; shift ;;
	--seconds) SECONDS_PER_RUN=$2; shift ;;
	--mixed-run) MIXED_RUN=$2; shift ;;
	--mixed-seconds) MIXED_SECONDS=$2; shift ;;
	--cpu) WORK_CPU=$2; shift ;;
	--stress-ng) STRESS=1 ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
[ "$PAIRS" -ge 2 ] 2>/dev/null || die "--pairs needs a number of at least 2"
[ "$MPAIRS" -ge 2 ] 2>/dev/null || die "--mixed-pairs needs a number of at least 2"
[ "$WORK_CPU" -ge 0 ] 2>/dev/null && taskset -c "$WORK_CPU" true 2>/dev/null || die "--cpu $WORK_CPU is not a CPU this can run on"
ARGS="--pairs $PAIRS --mixed-pairs $MPAIRS --seconds $SECONDS_PER_RUN --mixed-run $MIXED_RUN --cpu $WORK_CPU${STRESS:+ --stress-ng --mixed-seconds $MIXED_SECONDS}"

[ "$(id -u)" = 0 ] || die "needs root (BPF, cgroups)"
for t in cc curl bpftool taskset; do command -v $t >/dev/null || die "$t not found"; done
[ -z "$STRESS" ] || command -v stress-ng >/dev/null || die "stress-ng not found"

prepare_memwatchd
LOOP=$BENCH_TMP/page_alloc_loop MIXED=$BENCH_TMP/mixed_work
cc -O2 -o "$LOOP" "$BENCH_DIR/page_alloc_loop.c"
cc -O2 -o "$MIXED" "$BENCH_DIR/mixed_work.c"
write_config "$BENCH_TMP/all.conf" all
write_config "$BENCH_TMP/none.conf"
write_config "$BENCH_TMP/alloc.conf" alloc
FOREIGN_AT_START=$(foreign_page_alloc_progs)

# The memory cgroup the mixed workloads run in: a limit well above what they
# use (so no reclaim inside it), there only so that nothing here can push the
# host into reclaim or an OOM kill. Removed on exit.
MEMCG_LIMIT=$((1024 << 20))
if [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
	MEMCG=/sys/fs/cgroup/memory/memwatch-hotpath.$$
	mkdir "$MEMCG"
	CLEANUP_HOOKS+=("rmdir $MEMCG")
	echo "$MEMCG_LIMIT" >"$MEMCG/memory.limit_in_bytes"
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	MEMCG=/sys/fs/cgroup/memwatch-hotpath.$$
	mkdir "$MEMCG"
	CLEANUP_HOOKS+=("rmdir $MEMCG")
	echo "$MEMCG_LIMIT" >"$MEMCG/memory.max"
else
	die "no memory cgroup hierarchy to run the mixed workload in"
fi
# pinned COMMAND...: run it on the workload CPU (in the foreground).
pinned() { taskset -c "$WORK_CPU" "$@"; }
# in_memcg COMMAND...: run it pinned, in the memory cgroup.
in_memcg() { pinned sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$MEMCG" "$@"; }

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p"; }

# Results, one per line: phase pair side metric value.
R=$BENCH_TMP/results.tsv
: >"$R"
rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$R"; }
# vals PHASE SIDE METRIC: the values in pair order
vals() { awk -F'\t' -v p="$1" -v s="$2" -v m="$3" '$1 == p && $3 == s && $4 == m {print $2, $5}' "$R" | sort -n | cut -d' ' -f2; }
# ratios PHASE METRIC NUM_SIDE DEN_SIDE: NUM/DEN per pair
ratios() {
	awk -F'\t' -v p="$1" -v m="$2" -v a="$3" -v b="$4" '$1 == p && $4 == m { if ($3 == a) x[$2] = $5; if ($3 == b) y[$2] = $5; if ($2 > n) n = $2 }
		END { for (i = 1; i <= n; i++) if ((i in x) && (i in y) && y[i] > 0) printf "%.6f\n", x[i] / y[i] }' "$R"
}

# Calibrate the iteration counts to about SECONDS_PER_RUN per fault-loop run,
# half of it per pipe-loop run and MIXED_RUN per mixed run (CPU time, which is what is
# compared; wall time is longer when the machine is busy).
cal=$(pinned "$LOOP" 20 2)
ITER=$(awk -v s="$(echo "$cal" | field cpu_ns_per_page)" -v t="$SECONDS_PER_RUN" 'BEGIN { n = int(t * 1e9 / (s * 512)); print n < 20 ? 20 : n }')
cal2=$(pinned "$LOOP" --pipe 20000)
PITER=$(awk -v s="$(echo "$cal2" | field cpu_ns_per_page)" -v t="$SECONDS_PER_RUN" 'BEGIN { n = int(t / 2 * 1e9 / (s * 16)); print n < 20000 ? 20000 : n }')
cal3=$(in_memcg "$MIXED" --dir "$BENCH_TMP" 20)
MROUNDS=$(awk -v s="$(echo "$cal3" | field cpu_ns_per_round)" -v t="$MIXED_RUN" 'BEGIN { n = int(t * 1e9 / s); print n < 20 ? 20 : n }')
log "fault loop: $ITER iterations of 2 MiB per run ($cal); pipe loop: $PITER iterations of 64 KiB ($cal2); mixed: $MROUNDS rounds ($cal3)"

# Both loops on one side of a pair: records cpu and wall ns/page of each.
loops() {
	local phase=$1 pair=$2 side=$3 out
	out=$(pinned "$LOOP" "$ITER" 2)
	echo "$phase $pair $side fault $out" >>"$BENCH_TMP/loop.log"
	rec "$phase" "$pair" "$side" fault_cpu "$(echo "$out" | field cpu_ns_per_page)"
	rec "$phase" "$pair" "$side" fault_wall "$(echo "$out" | field wall_ns_per_page)"
	out=$(pinned "$LOOP" --pipe "$PITER")
	echo "$phase $pair $side pipe $out" >>"$BENCH_TMP/loop.log"
	rec "$phase" "$pair" "$side" pipe_cpu "$(echo "$out" | field cpu_ns_per_page)"
	rec "$phase" "$pair" "$side" pipe_wall "$(echo "$out" | field wall_ns_per_page)"
}
# The mixed runs come from one process (mixed_work --serve: a run per line
# read) for MIXED_BLOCK pairs, then a new one, so that both runs of a pair
# share one address-space layout and file (processes can differ in speed by
# a few percent here). A block holds whole A B B A cycles, so each process
# serves both sides alike.
MIXED_BLOCK=8
mixed() {
	local phase=$1 pair=$2 side=$3 out
	if [ "$side" = off ] && ((pair % 2 == 1 && (pair - 1) % MIXED_BLOCK == 0)); then
		# in_memcg's command, not the function: the server's PID is then mixed_work's own.
		serve_start taskset -c "$WORK_CPU" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$MEMCG" \
			"$MIXED" --dir "$BENCH_TMP" --serve "$MROUNDS"
	fi
	out=$(serve_request "the mixed workload")
	echo "$phase $pair $side mixed $out" >>"$BENCH_TMP/loop.log"
	rec "$phase" "$pair" "$side" mixed_cpu "$(echo "$out" | field cpu_ns_per_round)"
	rec "$phase" "$pair" "$side" mixed_wall "$(echo "$out" | field wall_ns_per_round)"
}
# Start-up (BTF parsing, verification, the heap handed back) and shutdown
# (programs and maps freed through RCU and kworkers) leave work behind on
# every CPU for a while; the runs measure the steady state around them.
SETTLE=1
daemon_up() { start_memwatchd "$1"; sleep "$SETTLE"; }
daemon_down() { stop_pid "$MW_PID"; sleep "$SETTLE"; }
last() { vals "$1" "$2" "$3" | tail -1; }

# alternate PHASE NPAIRS CONF WORK: WORK PHASE PAIR off without the daemon
# and WORK PHASE PAIR on with it, in the order off on | on off | off on …
# (pair 2k-1 off first, pair 2k on first): one daemon start per two pairs.
alternate() {
	local phase=$1 n=$2 conf=$3 work=$4 i
	for ((i = 1; i <= n; i += 2)); do
		"$work" "$phase" "$i" off
		daemon_up "$conf"
		"$work" "$phase" "$i" on
		if ((i + 1 <= n)); then
			"$work" "$phase" "$((i + 1))" on
			daemon_down
			"$work" "$phase" "$((i + 1))" off
		else
			daemon_down
		fi
		progress "$phase" "$i" "$n"
	done
}
progress() {
	local phase=$1 i=$2 n=$3 to
	to=$((i + 1 <= n ? i + 1 : n))
	case $phase in
	loop) log "loops pairs $i-$to/$n: fault cpu ns/page $(last loop off fault_cpu) / $(last loop on fault_cpu), pipe $(last loop off pipe_cpu) / $(last loop on pipe_cpu) (off / on)" ;;
	mixed) log "mixed pairs $i-$to/$n: cpu ms/round $(fmt 2 "$(calc "$(last mixed off mixed_cpu)" / 1e6)") / $(fmt 2 "$(calc "$(last mixed on mixed_cpu)" / 1e6)") (off / on)" ;;
	esac
}

# --- 1. page loops: no daemon / default daemon ----------------------------------
alternate loop "$PAIRS" "$BENCH_TMP/all.conf" loops

# --- 2. mixed workload: no daemon / default daemon ------------------------------
alternate mixed "$MPAIRS" "$BENCH_TMP/all.conf" mixed
serve_stop

# --- 3. attribution: every collector disabled / only alloc ----------------------
# One daemon; its configuration is switched between the two by SIGHUP (the
# alloc collector is started or stopped in place), the same A B B A order.
# The switch is done when the daemon holds (or no longer holds) a program
# named page_alloc*.
ATTR_CONF=$BENCH_TMP/attr.conf
holds_alloc_prog() {
	local id
	for id in $(cat /proc/"$MW_PID"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ {print $2}' | sort -un); do
		bpftool prog show id "$id" 2>/dev/null | grep -q ' name page_alloc' && return 0
	done
	return 1
}
attr_switch() { # none|alloc
	local want=$1 i
	cp "$BENCH_TMP/$want.conf" "$ATTR_CONF"
	kill -HUP "$MW_PID"
	for ((i = 0; i < 100; i++)); do
		if [ "$want" = alloc ]; then holds_alloc_prog && break; else holds_alloc_prog || break; fi
		sleep 0.1
	done
	((i < 100)) || die "memwatchd did not switch to the $want configuration within 10 s"
	sleep "$SETTLE"
}
cp "$BENCH_TMP/none.conf" "$ATTR_CONF"
daemon_up "$ATTR_CONF"
for ((i = 1; i <= PAIRS; i += 2)); do
	loops attr "$i" none
	attr_switch alloc
	loops attr "$i" alloc
	if ((i + 1 <= PAIRS)); then
		loops attr "$((i + 1))" alloc
		attr_switch none
		loops attr "$((i + 1))" none
	else
		attr_switch none
	fi
	log "attribution pairs $i-$((i + 1 <= PAIRS ? i + 1 : PAIRS))/$PAIRS: fault cpu ns/page $(last attr none fault_cpu) / $(last attr alloc fault_cpu), pipe $(last attr none pipe_cpu) / $(last attr alloc pipe_cpu) (none / alloc)"
done
daemon_down

# --- 5. optional: stress-ng (before the statistics, which restore a sysctl) -------
STRESS_DIR=$BENCH_TMP/stress
STRESS_CMD="stress-ng --vm 1 --vm-bytes 256M --page-in --hdd 1 --hdd-bytes 64M --temp-path DIR --timeout ${MIXED_SECONDS}s --metrics-brief --yaml FILE"
SPAIRS=$((PAIRS < 10 ? PAIRS : 10))
stress() {
	local phase=$1 pair=$2 side=$3 y=$BENCH_TMP/stress.yaml
	rm -f "$y"
	in_memcg stress-ng --vm 1 --vm-bytes 256M --page-in --hdd 1 --hdd-bytes 64M --temp-path "$STRESS_DIR" \
		--timeout "${MIXED_SECONDS}s" --metrics-brief --yaml "$y" >>"$BENCH_TMP/stress.log" 2>&1
	# bogo-ops per second of real time, per stressor
	rec "$phase" "$pair" "$side" vm "$(awk '/- stressor:/ {s = $3} s == "vm" && /bogo-ops-per-second-real-time:/ {print $2}' "$y")"
	rec "$phase" "$pair" "$side" hdd "$(awk '/- stressor:/ {s = $3} s == "hdd" && /bogo-ops-per-second-real-time:/ {print $2}' "$y")"
	log "stress-ng pair $pair $side: vm $(last stress "$side" vm), hdd $(last stress "$side" hdd) bogo-ops/s"
}
if [ -n "$STRESS" ]; then
	mkdir -p "$STRESS_DIR"
	# One untimed run first: the first touch of memory the guest has not used
	# for a while is much slower here than later ones.
	stress stress 0 warmup
	alternate stress "$SPAIRS" "$BENCH_TMP/all.conf" stress
	# A throughput, so the slowdown is off/on; geometric mean of vm and hdd.
	awk -F'\t' '$1 == "stress" { v[$2 "," $3 "," $4] = $5; if ($2 > n) n = $2 }
		END { for (i = 1; i <= n; i++) if (v[i ",on,vm"] > 0 && v[i ",on,hdd"] > 0 && v[i ",off,vm"] > 0 && v[i ",off,hdd"] > 0)
			printf "stress\t%d\tx\tgeo\t%.6f\n", i, sqrt(v[i ",off,vm"] / v[i ",on,vm"] * v[i ",off,hdd"] / v[i ",on,hdd"]) }' "$R" >"$BENCH_TMP/geo.tsv"
	cat "$BENCH_TMP/geo.tsv" >>"$R"
fi

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
# stats_runs CONF TAG TOTAL_LABEL: one run of each workload under a daemon with
# CONF and the statistics on; the rows of the table into stats_TAG.md.
stats_runs() {
	local conf=$1 tag=$2 total=$3 st=$BENCH_TMP/stats_$2
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	start_memwatchd "$conf"
	sleep 1
	prog_stats "$MW_PID" | sort >"$st.0"
	ST_LOOP=$(pinned "$LOOP" "$ITER" 2)
	prog_stats "$MW_PID" | sort >"$st.1"
	ST_PIPE=$(pinned "$LOOP" --pipe "$PITER")
	prog_stats "$MW_PID" | sort >"$st.2"
	ST_MIX=$(in_memcg "$MIXED" --dir "$BENCH_TMP" "$MROUNDS")
	prog_stats "$MW_PID" | sort >"$st.3"
	stop_pid "$MW_PID"
	echo "$OLD_STATS" >/proc/sys/kernel/bpf_stats_enabled
	ST_PAGES=$(echo "$ST_LOOP" | field pages) ST_PPAGES=$(echo "$ST_PIPE" | field pages)
	ST_ROUNDS=$(echo "$ST_MIX" | field rounds)
	join "$st.0" "$st.1" | join - "$st.2" | join - "$st.3" |
		awk -v p1="$ST_PAGES" -v p2="$ST_PPAGES" -v p3="$ST_ROUNDS" -v c1="$(echo "$ST_LOOP" | field cpu_ns_per_page)" \
			-v c2="$(echo "$ST_PIPE" | field cpu_ns_per_page)" -v c3="$(echo "$ST_MIX" | field cpu_ns_per_round)" -v total="$total" '
			function per(n, t) { return n ? sprintf("%.0f", t / n) : "–" }
			{ n1 = $4 - $2; t1 = $5 - $3; n2 = $6 - $4; t2 = $7 - $5; n3 = $8 - $6; t3 = $9 - $7; T1 += t1; T2 += t2; T3 += t3
			if (n1 > 0 || n2 > 0 || n3 > 0)
				printf "| `%s` | %.3f | %s | %.1f | %.3f | %s | %.1f | %.1f | %s | %.0f |\n", $1, n1 / p1, per(n1, t1), t1 / p1,
					n2 / p2, per(n2, t2), t2 / p2, n3 / p3, per(n3, t3), t3 / p3 }
			END { printf "| **%s**, and their share of the workload'"'"'s CPU ns/page or ns/round (%.0f; %.0f; %.0f) | | | %.1f (%.2f %%) | | | %.1f (%.2f %%) | | | %.0f (%.2f %%) |\n",
				total, c1, c2, c3, T1 / p1, 100 * T1 / p1 / c1, T2 / p2, 100 * T2 / p2 / c2, T3 / p3, 100 * T3 / p3 / c3 }' \
			>"$st.md"
}
stats_runs "$BENCH_TMP/all.conf" default "all programs, default configuration"
stats_runs "$BENCH_TMP/alloc.conf" alloc "only \`[collector.alloc] trace = yes\`"
ALLOC_NS=$(join "$BENCH_TMP/stats_alloc.1" "$BENCH_TMP/stats_alloc.2" | awk '$1 ~ /^page_alloc/ && $4 > $2 {printf "%.0f", ($5 - $3) / ($4 - $2)}')
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
MIXED_R=$(ratios mixed mixed_cpu on off | median)
ATTR_R=$(ratios attr fault_cpu alloc none | median)
ATTR_PIPE_R=$(ratios attr pipe_cpu alloc none | median)
read -r _ _ COV < <(ratios loop fault_cpu on off | median_ci)
# The k of the order statistics, for the text: with n pairs the interval runs
# from the k-th smallest to the k-th largest ratio.
K=$(ratios loop fault_cpu on off | sort -g | awk -v lo="$(ratios loop fault_cpu on off | median_ci | cut -d' ' -f1)" '$1 == lo {print NR; exit}')
NP=$(ratios loop fault_cpu on off | wc -l)

S=$BENCH_TMP/section.md
{
	echo "## Hot path: page allocations and a mixed workload"
	echo
	machine_md
	echo "- command: \`bench/hotpath.sh $ARGS\`; per run: fault loop $ITER iterations of 2 MiB ($((ITER * 512)) pages), pipe loop $PITER iterations of 64 KiB ($((PITER * 16)) pages), mixed $MROUNDS rounds; BPF programs named \`page_alloc*\` loaded by others at start/end: $FOREIGN_AT_START/$FOREIGN_AT_END (they cost both sides alike but add noise)"
	echo
	echo "The two sides alternate in short runs, A B B A A B B A …: without memwatchd, then memwatchd started"
	echo "(first window published, ${SETTLE} s settle) and two runs with it, then stopped (${SETTLE} s settle), and so on; a pair is two"
	echo "adjacent runs, the ratio is taken per pair and its median reported, so the drift of the noisy"
	echo "machine cancels and one daemon start serves two pairs. *CPU* is the workload's own user+system"
	echo "time (\`CLOCK_PROCESS_CPUTIME_ID\`, plus reaped children for the mixed workload; it includes the"
	echo "kernel's page allocation and so the BPF programs, and is less disturbed by other load than *wall*,"
	echo "elapsed time). Every workload run is pinned to CPU $WORK_CPU (\`taskset\`): on these VMs one vCPU runs the"
	echo "same loop up to 50 % slower than the other, for minutes at a time, and unpinned runs were bimodal."
	echo "The daemon is not pinned."
	echo "The **fault loop** is the one the issue asks for: mmap 2 MiB, write every 4 KiB page, munmap."
	echo "The **pipe loop** allocates pages without page faults (64 KiB written into a pipe and read back:"
	echo "about one order-0 allocation and one free per 4 KiB): it shows the cost per allocation where the"
	echo "rest of the work is cheap. The **mixed** workload (\`bench/mixed_work.c\`) is a fixed amount of"
	echo "work per round — a 4 MiB page-cache file written, read back and truncated, 1 MiB of anonymous memory"
	echo "faulted in and unmapped, a fork of a child that exits at once, 1,000 malloc/free — run in a memory"
	echo "cgroup limited to $((MEMCG_LIMIT >> 20)) MiB; its CPU time per round is the measure. The loops run $PAIRS pairs,"
	echo "the mixed workload $MPAIRS pairs of longer runs ($MROUNDS rounds, about $MIXED_RUN s): its target is smaller than the"
	echo "noise of one pair (about 5 % between two adjacent 0.5 s runs of the same side here). Its runs come from one"
	echo "process (\`mixed_work --serve\`, a run per request) for $MIXED_BLOCK pairs, then a new one, so that both runs of a pair"
	echo "share one address-space layout and file: processes can differ in speed by a few percent here."
	echo
	echo "The confidence interval is distribution-free (order statistics of the per-pair ratios: for the loops' $NP"
	echo "pairs, the k-th smallest and k-th largest with k = $K, coverage $(awk -v c="$COV" 'BEGIN {printf "%.0f", c * 100}') %). A target is *met* when the whole"
	echo "interval is within it, *missed* when none of it is, and *not resolved* when the machine's noise"
	echo "is larger than the target — then the in-kernel run time below is the better estimate."
	echo
	echo "| workload | without memwatchd (median) | with memwatchd, default config (median) | median of per-pair ratios | confidence interval of that median (coverage) | target |"
	echo "|---|---|---|---|---|---|"
	num_side=on den_side=off row "fault loop, CPU ns/page" loop fault_cpu on off 0 1.03
	num_side=on den_side=off row "fault loop, wall ns/page" loop fault_wall on off 0
	num_side=on den_side=off row "pipe loop, CPU ns/page" loop pipe_cpu on off 0
	num_side=on den_side=off row "pipe loop, wall ns/page" loop pipe_wall on off 0
	num_side=on den_side=off row "mixed (bench/mixed_work.c), CPU ns/round" mixed mixed_cpu on off 0 1.01
	num_side=on den_side=off row "mixed (bench/mixed_work.c), wall ns/round" mixed mixed_wall on off 0
	if [ -n "$STRESS" ]; then
		num_side=on den_side=off row "stress-ng vm, bogo-ops/s (ratio = slowdown)" stress vm off on 1
		num_side=on den_side=off row "stress-ng hdd, bogo-ops/s (ratio = slowdown)" stress hdd off on 0
		read -r lo hi cov < <(vals stress x geo | median_ci)
		echo "| stress-ng: geometric mean of the vm and hdd slowdowns | | | $(fmt 4 "$(vals stress x geo | median)") ($(pct "$(vals stress x geo | median)")) | $(pct "$lo") … $(pct "$hi") ($(awk -v c="$cov" 'BEGIN {printf "%.0f", c * 100}') %) | |"
	fi
	echo
	echo "### Attribution: the opt-in allocation tracing (\`[collector.alloc] trace = yes\`) alone against every collector disabled"
	echo
	echo "Both sides run the same daemon, switched between the two configurations by \`SIGHUP\` (the alloc"
	echo "collector is started or stopped in place; the switch is done when the daemon holds, or no longer"
	echo "holds, its program), in the same A B B A order, so the daemon's fixed cost cancels; only the alloc"
	echo "collector with \`trace = yes\` (its BPF program on \`kmem:mm_page_alloc\`, for allocations and failures"
	echo "per order, and reading \`/proc/vmstat\` once a window) differs. It is off by default: this is what turning it"
	echo "on costs."
	echo
	echo "| workload | every collector disabled (median) | only alloc, trace = yes (median) | median of per-pair ratios | confidence interval of that median (coverage) | |"
	echo "|---|---|---|---|---|---|"
	num_side=alloc den_side=none row "fault loop, CPU ns/page" attr fault_cpu alloc none 0
	num_side=alloc den_side=none row "fault loop, wall ns/page" attr fault_wall alloc none 0
	num_side=alloc den_side=none row "pipe loop, CPU ns/page" attr pipe_cpu alloc none 0
	num_side=alloc den_side=none row "pipe loop, wall ns/page" attr pipe_wall alloc none 0
	echo
	echo "### In-kernel run time of each BPF program (\`kernel.bpf_stats_enabled=1\`)"
	echo
	echo "One fault-loop run ($ST_PAGES pages), one pipe-loop run ($ST_PPAGES pages) and one mixed run ($ST_ROUNDS rounds) with the statistics on,"
	echo "under the default configuration and then under the attribution's alloc-only configuration with \`trace = yes\`"
	echo "(they were off for every timing above). *ns/run* is the program body as the kernel times it, with two"
	echo "clock reads around it, so it is an upper bound; the tracepoint's dispatch (\`bpf_trace_run*\`,"
	echo "trampoline) is not in it. Runs per page include everything else on the machine during the run."
	echo "Programs that did not run are left out. \`dump_task_faults\` (the task iterator) and \`memavail_compute_now\`"
	echo "run in the daemon, once a window, on the daemon's CPU time, not the workload's; they are counted in"
	echo "the totals anyway."
	echo
	echo "| program | fault loop: runs per page | ns per run | ns per page | pipe loop: runs per page | ns per run | ns per page | mixed: runs per round | ns per run | ns per round |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	cat "$BENCH_TMP/stats_default.md" "$BENCH_TMP/stats_alloc.md"
	echo
	echo "Per-pair raw numbers (CPU ns/page of the loops, CPU µs/round of the mixed workload; off -> on, and"
	echo "for the attribution none -> alloc):"
	echo
	echo '```'
	awk -F'\t' -v n="$PAIRS" '{ v[$1, $2, $3, $4] = $5 }
		END { for (i = 1; i <= n; i++)
			printf "pair %3d  fault %7.0f -> %7.0f  pipe %5.0f -> %5.0f  | attr fault %7.0f -> %7.0f  pipe %5.0f -> %5.0f\n", i,
				v["loop", i, "off", "fault_cpu"], v["loop", i, "on", "fault_cpu"], v["loop", i, "off", "pipe_cpu"], v["loop", i, "on", "pipe_cpu"],
				v["attr", i, "none", "fault_cpu"], v["attr", i, "alloc", "fault_cpu"], v["attr", i, "none", "pipe_cpu"], v["attr", i, "alloc", "pipe_cpu"] }' "$R"
	awk -F'\t' -v n="$MPAIRS" '$1 == "mixed" && $4 == "mixed_cpu" { v[$2, $3] = $5 }
		END { for (i = 1; i <= n; i++)
			printf "mixed %3d %7.1f -> %7.1f%s", i, v[i, "off"] / 1000, v[i, "on"] / 1000, i % 4 == 0 || i == n ? "\n" : "   " }' "$R"
	if [ -n "$STRESS" ]; then
		for ((i = 1; i <= SPAIRS; i++)); do
			printf 'stress-ng pair %2d  vm %6.1f -> %6.1f  hdd %6.0f -> %6.0f bogo-ops/s\n' "$i" \
				"$(vals stress off vm | sed -n ${i}p)" "$(vals stress on vm | sed -n ${i}p)" \
				"$(vals stress off hdd | sed -n ${i}p)" "$(vals stress on hdd | sed -n ${i}p)"
		done
	fi
	echo '```'
	echo
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "Commands: \`cc -O2 -o page_alloc_loop bench/page_alloc_loop.c\`; \`page_alloc_loop $ITER 2\`;"
	echo "\`page_alloc_loop --pipe $PITER\`; \`cc -O2 -o mixed_work bench/mixed_work.c\`; \`mixed_work --dir TMP $MROUNDS\`"
	echo "in a memory cgroup with \`memory.limit_in_bytes\` (v1) or \`memory.max\` (v2) $MEMCG_LIMIT${STRESS:+; \`$STRESS_CMD\` (bogo-ops/s of real time from the YAML), in the same cgroup};"
	echo "\`memwatchd --config CONF --listen 127.0.0.1:PORT\` with CONF empty (the defaults: every collector),"
	echo "every \`[collector.*] enabled = no\`, or all of them off but \`[collector.alloc]\` (switched by \`kill -HUP\`);"
	echo "\`sysctl kernel.bpf_stats_enabled=1\` and \`bpftool prog show id ID\` (run_cnt, run_time_ns) of the"
	echo "programs in \`/proc/PID/fdinfo\` for the last table."
} >"$S"
cat "$S"
ci() { # PHASE METRIC NUM DEN -> "lo hi"
	ratios "$@" | median_ci | cut -d' ' -f1-2
}
read -r FLO FHI < <(ci loop fault_cpu on off)
read -r MLO MHI < <(ci mixed mixed_cpu on off)
BPF_SHARE=$(awk -F'|' '/all programs/ {print $5 " / " $8 " / " $11}' "$BENCH_TMP/stats_default.md" | sed -e 's/  */ /g' -e 's/^ //' -e 's/ $//')
summary_row "fault loop overhead, default config (CPU ns/page; median of pair ratios, CI)" "≤ 3 %" "$(pct "$FAULT_R") ($(pct "$FLO") … $(pct "$FHI"))" "$(verdict_ci "$FLO" "$FHI" '<=' 1.03)"
summary_row "pipe loop overhead (allocations without page faults)" "—" "$(pct "$PIPE_R") ($(ci loop pipe_cpu on off | awk '{printf "%+.2f %% … %+.2f %%", ($1 - 1) * 100, ($2 - 1) * 100}'))" ""
summary_row "BPF run time, share of the workload's CPU (fault, pipe: ns/page; mixed: ns/round)" "—" "$BPF_SHARE" ""
summary_row "mixed workload overhead (bench/mixed_work.c, CPU time per round)" "≤ 1 %" "$(pct "$MIXED_R") ($(pct "$MLO") … $(pct "$MHI"))" "$(verdict_ci "$MLO" "$MHI" '<=' 1.01)"
summary_row "opt-in \`[collector.alloc] trace = yes\` alone vs none: fault / pipe loop" "—" "$(pct "$ATTR_R") / $(pct "$ATTR_PIPE_R"); \`page_alloc_btf\` body ${ALLOC_NS:-?} ns/run" ""
[ -z "$WRITE_DOC" ] || update_doc_section hotpath "$S"
