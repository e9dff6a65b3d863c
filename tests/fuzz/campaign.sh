#!/bin/sh
# tests/fuzz/campaign.sh BUILD_DIR SECONDS [TARGET...]
#
# A longer fuzzing run than the CI suite: each target in turn, one worker,
# for SECONDS, from the same seeds plus a corpus kept in
# BUILD_DIR/fuzz-campaign/corpus/TARGET (reused by the next campaign). Prints
# one Markdown table row per target for docs/reliability.md; crashes are kept
# in BUILD_DIR/fuzz-campaign/artifacts/TARGET.
set -eu
build=$(cd "$1" && pwd) seconds=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$build/fuzz-campaign
targets=${*:-config config_values meminfo vmstat zoneinfo psi procstat cgroupfs mountinfo cgroup_controllers accept_encoding listen_addr json_writer http_args http_request}

seeds() {
	case $1 in
	config) echo config ;; config_values) echo config-values ;; cgroupfs) echo cgroup ;;
	cgroup_controllers) echo cgroup-controllers ;;
	accept_encoding) echo accept-encoding ;; listen_addr) echo listen-addr ;; json_writer) echo json ;;
	http_args) echo http-args ;; http_request) echo http-request ;; *) echo "$1" ;;
	esac
}

# cgroup_names's seeds are made by the build from the fixture trees.
seed_dir() {
	case $1 in
	cgroup_names) echo "$build/tests/fuzz/cgroup_names_seeds" ;;
	*) echo "$src/tests/fixtures/$(seeds "$1")" ;;
	esac
}

commit=$(git -C "$src" rev-parse --short HEAD)
# Copies of the binaries, taken now: a rebuild during the run must not change them.
mkdir -p "$out/bin"
for t in $targets; do
	cp "$build/tests/fuzz/fuzz_$t" "$out/bin/fuzz_$t"
done
echo "| target | executions | exec/s | cov | ft | corpus (files/size) | duration | date | commit | crashes |"
echo "|---|---:|---:|---:|---:|---:|---:|---|---|---|"
for t in $targets; do
	mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
	log=$out/logs/$t.log
	start=$(date -u +%Y-%m-%d)
	rc=0
	"$out/bin/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 -error_exitcode=1 \
		-timeout_exitcode=1 -max_len=16384 -print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" \
		"$out/corpus/$t" "$(seed_dir "$t")" >"$log" 2>&1 || rc=$?
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	execs=$(sed -n 's/^stat::number_of_executed_units: //p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
	files=$(ls "$out/corpus/$t" | wc -l)
	size=$(du -sk "$out/corpus/$t" | cut -f1)
	crashes=$(ls "$out/artifacts/$t" | wc -l)
	[ "$rc" -eq 0 ] || crashes="$crashes (exit $rc)"
	echo "| fuzz_$t | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $files / ${size} KiB | ${secs:-?} s | $start | $commit | $crashes |"
done
