#!/usr/bin/env bash
# Every benchmark, one after the other, then the summary table:
#
#   bench/run-all.sh [--quick]
#
# Each script rewrites its own generated section of docs/benchmarks.md
# (between "<!-- BEGIN GENERATED: NAME" and "<!-- END GENERATED: NAME -->")
# and the section "summary", rebuilt from the rows of every section.
# Everything outside those markers — hand-written notes, sections other
# people add — is kept.
#
# --quick: footprint with 60 s of scrapes instead of 600 s (the section says
# so), 20 hot-path pairs instead of 100 (mixed: 40 instead of 160), 3 scrape
# rounds instead of 5, peers with 30 s turns, 1,000 processes and 100 cgroups,
# cgroup v2 at 1,000 cgroups only. About 30 minutes instead of 95.
# Needs root. Debian packages (packaging/install-deps.sh --bench): wrk
# prometheus-node-exporter prometheus-process-exporter netdata-core
# netdata-plugins-bash linux-perf curl
# bpftool (stress-ng only for bench/hotpath.sh --stress-ng), and the build
# dependencies (packaging/install-deps.sh).
. "$(dirname "$0")/lib.sh"

QUICK=
case "$*" in
"") ;;
--quick) QUICK=1 ;;
*) die "usage: $0 [--quick]" ;;
esac

if [ -n "$QUICK" ]; then
	HOT=(--pairs 20 --mixed-pairs 40 --mixed-run 0.5) SCRAPE=(--rounds 3) FOOT=(--duration 60) SCALE=() PEERS=(--quick)
else
	HOT=() SCRAPE=(--rounds 5) FOOT=(--duration 600) SCALE=() PEERS=()
fi

failed=()
run() {
	local name=$1
	shift
	log "=== bench/$name.sh $*"
	"$BENCH_DIR/$name.sh" "$@" || failed+=("$name")
}
run hotpath "${HOT[@]}"
run scrape "${SCRAPE[@]}"
run footprint "${FOOT[@]}"
run scale "${SCALE[@]}"
run peers "${PEERS[@]}"
run system_memory
if [ -n "$QUICK" ]; then
	COUNTS=1000 SECONDS_PER_TURN=20 ROUNDS=1 run cgroup_v2_scale
else
	run cgroup_v2_scale
fi
sed -n '/^<!-- BEGIN GENERATED: summary/,/^<!-- END GENERATED: summary/p' "$DOC"
[ ${#failed[@]} = 0 ] || die "failed: ${failed[*]} (their sections were left as they were)"
