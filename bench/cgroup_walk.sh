#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cost of the cgroup collector's walk over 1,000 v1 memory cgroups: creates
# them below $ROOT/memwatch-bench (20 parents with 49 children each), runs
# memwatchd, reads memwatch_collector_duration_seconds{collector="cgroup"}
# over $WINDOWS windows and prints the median. Everything it created is
# removed on exit, also on Ctrl-C or SIGTERM.
#
#   sudo bench/cgroup_walk.sh [path/to/memwatchd]
#
# Environment: ROOT (default /sys/fs/cgroup/memory), WINDOWS (20), PORT (19599).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:-$here/../build/daemon/memwatchd}
root=${ROOT:-/sys/fs/cgroup/memory}
base=$root/memwatch-bench
windows=${WINDOWS:-20}
port=${PORT:-19599}
parents=20
children=49 # 20 + 20 * 49 = 1,000 cgroups

[ "$(id -u)" -eq 0 ] || { echo "needs root (creates memory cgroups)" >&2; exit 77; }
[ -x "$daemon" ] || { echo "no daemon at $daemon (build first: ninja -C build)" >&2; exit 1; }
[ -e "$root/memory.usage_in_bytes" ] || { echo "$root is not a v1 memory hierarchy" >&2; exit 77; }
[ ! -e "$base" ] || { echo "$base exists (a previous run?); remove it first" >&2; exit 1; }

tmp=$(mktemp -d /tmp/memwatch-bench.XXXXXX)
pid=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	# Deepest first: a cgroup with children cannot be removed.
	if [ -d "$base" ]; then
		find "$base" -depth -type d -exec rmdir {} + 2>/dev/null || true
		[ ! -e "$base" ] || echo "warning: could not remove all of $base" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir "$base"
for ((p = 0; p < parents; p++)); do
	mkdir "$base/p$p"
	for ((c = 0; c < children; c++)); do
		mkdir "$base/p$p/c$c"
	done
done
created=$(find "$base" -mindepth 1 -type d | wc -l)

cat >"$tmp/memwatchd.conf" <<EOF
[daemon]
window = 1s
max_series = 100000

[collector.cgroup]
max_cgroups = 10000
EOF
"$daemon" --config "$tmp/memwatchd.conf" --listen "127.0.0.1:$port" 2>"$tmp/daemon.log" &
pid=$!

scrape() { curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics"; }
value() { awk -v m="$1" '$1 == m { print $2; exit }'; }

for ((i = 0; i < 100; i++)); do
	scrape >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/daemon.log" >&2; exit 1; }
	sleep 0.2
done

durations=() walks=() cpus=() last= skipped_first=0
while [ "${#durations[@]}" -lt "$windows" ]; do
	body=$(scrape)
	end=$(value memwatch_window_end_timestamp_seconds <<<"$body")
	if [ -n "$end" ] && [ "$end" != "$last" ]; then
		last=$end
		# The first window after start also holds the start-up.
		if [ "$skipped_first" -eq 0 ]; then
			skipped_first=1
		else
			durations+=("$(value 'memwatch_collector_duration_seconds{collector="cgroup"}' <<<"$body")")
			walks+=("$(value memwatch_cgroup_walk_seconds <<<"$body")")
			cpus+=("$(value memwatch_cgroup_walk_cpu_seconds <<<"$body")")
			discovered=$(value memwatch_cgroups_discovered <<<"$body")
		fi
	fi
	sleep 0.25
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f", m * 1000 }'; }
range() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo * 1000, hi * 1000 }'; }

echo "machine: $(nproc) CPUs, Linux $(uname -r), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cgroups created: $created below $base; memory cgroups walked: $discovered"
echo "windows: ${#durations[@]}"
echo "collector duration (median, ms): $(median "${durations[@]}")   range $(range "${durations[@]}")"
echo "walk (median, ms):               $(median "${walks[@]}")   range $(range "${walks[@]}")"
echo "walk CPU time (median, ms):      $(median "${cpus[@]}")   range $(range "${cpus[@]}")"
echo "files kept open: $(value memwatch_cgroup_open_files <<<"$body")"
