#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cgroup collector on cgroup v2, BPF iterator against cgroupfs, side by
# side in one run: for each scale (1,000 and 10,000 memory cgroups, made
# below $ROOT/memwatch-v2scale as parents of 50 children each), the daemon
# runs in turn with source = bpf and source = cgroupfs, ROUNDS times
# alternating, each turn WINDOWS windows of WINDOW_SEC after a warm-up. The
# figure is the daemon's own CPU over the turn (utime + stime of
# /proc/PID/stat, all threads: the kernel's count, not the daemon's) per
# window. Two BPF figures: as shipped (refreshes gated by the tracepoints:
# an unchanged tree is read again every refresh_interval windows) and with
# refresh_interval = 1 (every window reads the iterator); cgroupfs reads
# every window either way (nothing says when its last read went stale).
# Prints one TSV row per turn, then medians and ratios per scale.
#
#   sudo bench/cgroup_v2_scale.sh [path/to/memwatchd]
#
# Runs in tests/system's systemd guest (run_system.py --checks itests
# --command ...; pure cgroup v2) or on any host whose cgroup2 tree has the
# memory controller. Under TCG absolute times are inflated many times over:
# read the ratios. Environment: ROOT (/sys/fs/cgroup), SCALES ("1000
# 10000"), ROUNDS (2), WINDOWS (10), WINDOW_SEC (2), PORT (19598).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:-$here/../build/daemon/memwatchd}
root=${ROOT:-/sys/fs/cgroup}
base=$root/memwatch-v2scale
scales=${SCALES:-"1000 10000"}
rounds=${ROUNDS:-2}
windows=${WINDOWS:-10}
window_sec=${WINDOW_SEC:-2}
port=${PORT:-19598}
children=50

[ "$(id -u)" -eq 0 ] || { echo "needs root (creates memory cgroups)" >&2; exit 77; }
[ -x "$daemon" ] || { echo "no daemon at $daemon" >&2; exit 1; }
grep -qw memory "$root/cgroup.controllers" 2>/dev/null || { echo "$root: no cgroup2 memory controller" >&2; exit 77; }
[ ! -e "$base" ] || { echo "$base exists (a previous run?); remove it first" >&2; exit 1; }

tmp=$(mktemp -d /tmp/memwatch-v2scale.XXXXXX)
pid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	[ ! -d "$base" ] || find "$base" -depth -type d -exec rmdir {} + 2>/dev/null || true
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

clk=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
scrape() { curl -fsS --max-time 30 "http://127.0.0.1:$port/metrics" 2>/dev/null || true; }
metric() { scrape | awk -v m="$1" '$1 == m || index($1, m "{") == 1 { print $NF; exit }'; }

# Waits for the window after the one current now; prints its end time.
next_window() {
	local now end i
	now=$(metric memwatch_window_end_timestamp_seconds)
	for ((i = 0; i < 600; i++)); do
		end=$(metric memwatch_window_end_timestamp_seconds)
		if [ -n "$end" ] && [ "$end" != "$now" ]; then
			echo "$end"
			return 0
		fi
		sleep 0.2
	done
	echo "no new window in 120 s" >&2
	return 1
}

# Grows the tree to n cgroups (parents of $children children each).
grow() {
	local n=$1 have p c
	mkdir -p "$base"
	echo "+memory" >"$base/cgroup.subtree_control"
	have=$(find "$base" -mindepth 1 -type d | wc -l)
	for ((p = 0; have < n; p++)); do
		if [ ! -d "$base/p$p" ]; then
			mkdir "$base/p$p"
			echo "+memory" >"$base/p$p/cgroup.subtree_control"
			have=$((have + 1))
		fi
		for ((c = 0; c < children && have < n; c++)); do
			[ -d "$base/p$p/c$c" ] && continue
			mkdir "$base/p$p/c$c"
			have=$((have + 1))
		done
	done
}

# One turn: prints "scale source windows cpu_ms_per_window mode discovered".
turn() {
	local n=$1 source=$2 refresh=$3 t0 t1 w mode found key="source = $2"
	[ "$source" != off ] || key="enabled = no"
	cat >"$tmp/memwatchd.conf" <<EOF
[daemon]
window = ${window_sec}s
max_series = 100000

[collector.cgroup]
$key
max_cgroups = 20000
refresh_interval = $refresh
EOF
	"$daemon" --config "$tmp/memwatchd.conf" --listen "127.0.0.1:$port" >"$tmp/daemon.log" 2>&1 &
	pid=$!
	# Warm-up: the first windows open files and fill the caches.
	for w in 1 2 3; do next_window >/dev/null; done
	t0=$(cpu_ticks "$pid")
	for ((w = 0; w < windows; w++)); do next_window >/dev/null; done
	t1=$(cpu_ticks "$pid")
	mode=$(scrape | sed -n 's/^memwatch_collector_info{.*collector="cgroup".*mode="\([^"]*\)".*/\1/p' | head -1)
	found=$(metric memwatch_cgroups_discovered)
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	awk -v n="$n" -v s="$source" -v r="$refresh" -v w="$windows" -v t0="$t0" -v t1="$t1" -v clk="$clk" \
		-v mode="${mode:-?}" -v found="${found:-?}" \
		'BEGIN { printf "%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n", n, s, r, w, (t1 - t0) * 1000 / clk / w, mode, found }' 
}

echo "# $(uname -r), $(nproc) CPUs, $(date -u +%FT%TZ), windows of ${window_sec}s, $windows per turn, $rounds rounds"
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'cgroups\tsource\trefresh_interval\twindows\tcpu_ms_per_window\tmode\tdiscovered\n'
for n in $scales; do
	grow "$n"
	for ((r = 0; r < rounds; r++)); do
		turn "$n" bpf 5
		turn "$n" bpf 1
		turn "$n" cgroupfs 5
		turn "$n" off 5
	done
done | tee "$tmp/rows.tsv"
echo "# medians per scale (ms of daemon CPU per window); the ratio to cgroupfs of the whole daemon, and of"
echo "# the cgroup collector's share (each turn less the turn with the collector off)"
median() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f", m }'; }
for n in $scales; do
	fs=$(awk -F'\t' -v n="$n" '$1 == n && $2 == "cgroupfs" { print $5 }' "$tmp/rows.tsv" | median)
	off=$(awk -F'\t' -v n="$n" '$1 == n && $2 == "off" { print $5 }' "$tmp/rows.tsv" | median)
	for refresh in 5 1; do
		b=$(awk -F'\t' -v n="$n" -v r="$refresh" '$1 == n && $2 == "bpf" && $3 == r { print $5 }' "$tmp/rows.tsv" | median)
		awk -v n="$n" -v r="$refresh" -v b="$b" -v fs="$fs" -v off="$off" \
			'BEGIN { whole = (fs > 0) ? b / fs : 0; share = (fs > off) ? (b - off) / (fs - off) : 0
			printf "%s cgroups: bpf (refresh_interval %s) %.2f ms, cgroupfs %.2f ms, collector off %.2f ms: ratio %.3f, of the collector'"'"'s share %.3f\n", n, r, b, fs, off, whole, share }'
	done
done
