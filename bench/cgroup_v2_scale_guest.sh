#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside a systemd guest on pure cgroup v2 (bench/cgroup_v2_scale.sh
# boots it): the cgroup collector's CPU with the BPF cgroup iterator and with
# cgroupfs, in alternating turns, at each count of memory cgroups. Every
# other collector is off, so the daemon's CPU is the collector's.
#
#   cgroup_v2_scale_guest.sh DAEMON [COUNTS [SECONDS [ROUNDS]]]
#
# Prints one "RESULT ..." line per turn. Removes what it made on exit.
set -uo pipefail

daemon=$1
counts=${2:-1000 10000}
secs=${3:-60}
rounds=${4:-2}
base=/sys/fs/cgroup/mw-scale
port=19611
tmp=$(mktemp -d)
pid=

cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -d "$base" ] && find "$base" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# n cgroups with the memory controller: parents of 100 (the parent and 99 children).
make_tree() {
	local n=$1 p c
	[ -d "$base" ] && find "$base" -depth -type d -exec rmdir {} + 2>/dev/null
	mkdir "$base" && echo +memory >"$base/cgroup.subtree_control" || return 1
	for ((p = 0; p < n / 100; p++)); do
		mkdir "$base/p$p" && echo +memory >"$base/p$p/cgroup.subtree_control" || return 1
		for ((c = 0; c < 99; c++)); do
			mkdir "$base/p$p/c$c" || return 1
		done
	done
	find "$base" -mindepth 1 -type d | wc -l
}

metric() { curl -s --max-time 20 "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m { print $2; exit }'; }

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

turn() {
	local n=$1 source=$2 refresh=$3 i c seen t0 t1 r0 r1 w0 w1
	{
		printf '[daemon]\nlisten = 127.0.0.1:%s\nwindow = 1s\n' "$port"
		for c in meminfo psi kswapd reclaim alloc compaction faults memavail oom; do
			printf '[collector.%s]\nenabled = no\n' "$c"
		done
		printf '[collector.cgroup]\nsource = %s\nrefresh_interval = %s\nmax_cgroups = %s\n' "$source" "$refresh" \
			$((n + 1000))
	} >"$tmp/conf"
	"$daemon" --config "$tmp/conf" >"$tmp/log" 2>&1 &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		seen=$(metric memwatch_cgroups_discovered)
		[ "${seen%.*}" -ge "$n" ] 2>/dev/null && break
		sleep 1
	done
	sleep 5
	t0=$(cpu_ticks "$pid") r0=$(metric memwatch_cgroup_reads_total)
	w0=$(date +%s.%N)
	sleep "$secs"
	t1=$(cpu_ticks "$pid") r1=$(metric memwatch_cgroup_reads_total)
	w1=$(date +%s.%N)
	echo "RESULT cgroups=$n discovered=${seen:-0} source=$source refresh_interval=$refresh" \
		"mode=$(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^memwatch_collector_info{.*collector="cgroup".*mode="\([a-z]*\)".*/\1/p')" \
		"cpu_pct=$(awk -v a="$t0" -v b="$t1" -v s="$w0" -v e="$w1" -v hz="$(getconf CLK_TCK)" \
			'BEGIN { printf "%.2f", (b - a) / hz / (e - s) * 100 }')" \
		"reads=$(awk -v a="${r0:-0}" -v b="${r1:-0}" 'BEGIN { print b - a }')" \
		"seconds=$(awk -v s="$w0" -v e="$w1" 'BEGIN { printf "%.1f", e - s }')"
	kill "$pid"
	wait "$pid" 2>/dev/null
	pid=
}

echo "kernel $(uname -r), $(nproc) CPU(s), cgroup2: $(cat /sys/fs/cgroup/cgroup.controllers)"
for n in $counts; do
	echo "tree of $(make_tree "$n") cgroups under $base"
	for ((r = 0; r < rounds; r++)); do
		# Both orders, so that neither always runs on the warmer cache.
		if ((r % 2 == 0)); then order="bpf cgroupfs"; else order="cgroupfs bpf"; fi
		for source in $order; do
			turn "$n" "$source" 5
			if [ "$source" = bpf ]; then turn "$n" bpf 1; fi
		done
	done
done
exit 0
