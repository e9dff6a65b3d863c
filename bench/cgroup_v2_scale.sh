#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cgroup collector on pure cgroup v2, where most users run it: the BPF
# cgroup iterator against cgroupfs at 1,000 and 10,000 memory cgroups, side
# by side in one run, inside a systemd guest (Debian 12, kernel 6.12, qemu)
# booted by tests/system/run_system.py. The guest side is
# bench/cgroup_v2_scale_guest.sh; the section "cgroup_v2_scale" of
# docs/benchmarks.md gets the raw turns and the ratios.
#
#   sudo bench/cgroup_v2_scale.sh
#
# Environment: COUNTS ("1000 10000"), SECONDS_PER_TURN (60), ROUNDS (2),
# KERNEL (6.12). Without KVM the guest runs under TCG: absolute CPU figures
# are inflated many times; the ratio of the two sources in the same guest is
# what the section reports.
. "$(dirname "$0")/lib.sh"

counts=${COUNTS:-1000 10000}
secs=${SECONDS_PER_TURN:-60}
rounds=${ROUNDS:-2}
kernel=${KERNEL:-6.12}

[ "$(id -u)" -eq 0 ] || die "needs root (qemu, the guests' root file systems)"
prepare_memwatchd
# Kept after the run: the guest's console has every turn.
logs=${BUILD_DIR}/cgroup_v2_scale
rm -rf "$logs"
mkdir -p "$logs"
# A .deb the test build kept saves building one (the guest needs the package's dependencies).
kept=()
[ -f "$REPO/build-test/tests/ops/memwatchd_amd64.deb" ] && kept=(--kept-deb "$REPO/build-test/tests/ops/memwatchd_amd64.deb")
log "booting a systemd guest on $kernel: $counts cgroups, ${secs} s turns, $rounds rounds (takes a while under TCG)"
python3 "$REPO/tests/system/run_system.py" --checks itests --kernel "$kernel" --timeout 7200 \
	--source-root "$REPO" --daemon "$MEMWATCHD" "${kept[@]}" \
	--command "scale=bash $BENCH_DIR/cgroup_v2_scale_guest.sh $MEMWATCHD '$counts' $secs $rounds" \
	--file "$BENCH_DIR/cgroup_v2_scale_guest.sh" --itest-on "$kernel=scale" --log-dir "$logs" \
	>"$logs/run.log" 2>&1 || { tail -30 "$logs/run.log" >&2; die "the guest run failed"; }
console=$(ls "$logs"/console-*.log | head -1)
grep -a '^RESULT ' "$console" | sed 's/^RESULT //' >"$BENCH_TMP/results"
[ -s "$BENCH_TMP/results" ] || die "no RESULT lines in $console"
guest=$(grep -a -m1 '^kernel ' "$console" || echo "kernel ?")

field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p"; }
turns() { grep " source=$2 refresh_interval=$3 " "$BENCH_TMP/results" | grep "^cgroups=$1 "; }
med() { turns "$@" | field cpu_pct | median; }
# CPU milliseconds per read of every cgroup: a source whose reads overrun the
# window reads fewer times, which its % of a CPU alone hides.
per_read() { turns "$@" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	if (f["reads"] > 0) print f["cpu_pct"] / 100 * f["seconds"] / f["reads"] * 1000 }' | median; }

out=$BENCH_TMP/section.md
{
	echo "## cgroup v2: the BPF cgroup iterator against cgroupfs"
	echo
	machine_md
	echo "- guest: $guest, under qemu $(if [ -w /dev/kvm ]; then echo KVM; else echo TCG \(no KVM\): absolute CPU is inflated, compare the ratios; fi)"
	echo "- command: \`sudo bench/cgroup_v2_scale.sh\` (COUNTS=\"$counts\", ${secs} s a turn, $rounds rounds,"
	echo "  each round both sources in alternating order); only the cgroup collector is on, window 1 s"
	echo
	echo "CPU of the daemon, % of one guest CPU, median of the turns. \`bpf\` with the default"
	echo "\`refresh_interval = 5\` reads an unchanged tree every fifth window; \`bpf, every window\` has"
	echo "\`refresh_interval = 1\`, the iterator's cost per read against cgroupfs's per read."
	echo
	echo "| cgroups | cgroupfs | bpf, every window | bpf (default) | every window / cgroupfs | default / cgroupfs | CPU ms per read: cgroupfs, bpf |"
	echo "|---|---|---|---|---|---|---|"
	for n in $counts; do
		fs=$(med "$n" cgroupfs 5) each=$(med "$n" bpf 1) def=$(med "$n" bpf 5)
		echo "| $n | $(fmt 2 "$fs") | $(fmt 2 "$each") | $(fmt 2 "$def") | $(fmt 3 "$(calc "$each / $fs")") |" \
			"$(fmt 3 "$(calc "$def / $fs")") | $(fmt 1 "$(per_read "$n" cgroupfs 5)"), $(fmt 1 "$(per_read "$n" bpf 1)") |"
	done
	echo
	echo "Raw turns:"
	echo
	echo '```'
	cat "$BENCH_TMP/results"
	echo '```'
} >"$out"
for n in $counts; do
	fs=$(med "$n" cgroupfs 5) each=$(med "$n" bpf 1) def=$(med "$n" bpf 5)
	ratio=$(calc "$def / $fs")
	summary_row "cgroup v2, $n cgroups: CPU with the BPF iterator / with cgroupfs, default config (guest, TCG)" \
		"≤ 0.33" "$(fmt 3 "$ratio") ($(fmt 2 "$def") / $(fmt 2 "$fs") %; read every window: $(fmt 3 "$(calc "$each / $fs")"))" \
		"$(verdict "$ratio" '<=' 0.33)"
done
update_doc_section cgroup_v2_scale "$out"
cat "$out"
