#!/usr/bin/env bash
# The long soak run:
#
#   bench/soak.sh [--duration S] [--warmup S] [--daemon PATH] [--sanitized]
#                 [--without LOAD]... [--trace-memory]
#
# tests/soak/soak.py for S seconds (default 3600; CI runs 170 in the meson
# suite 'soak'): 4 clients scraping every 50 ms, SIGHUP every 5 s (broken and
# valid files in turn, the valid ones restarting collectors), 20 memory
# cgroups created and removed per second, 200 processes per second, a memcg OOM
# kill every 10 s. Fails if a counter went backwards, an OOM kill was missed,
# RSS, fds or threads moved more than 10 % after the warm-up, something was
# logged at err, or the exit was not clean. The daemon defaults to the plain
# build (build/); --daemon build-asan/daemon/memwatchd --sanitized for ASan.
# --without LOAD (scrapes, reloads, cgroups, processes, oom) leaves a load out,
# --trace-memory reports each mapping's RSS and the allocator's own figures:
# the way the RSS figures in docs/reliability.md were taken apart. Holds the
# heavy-test lock. Prints the figures (JSON) for docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=3600 WARMUP=120 DAEMON=build/daemon/memwatchd
EXTRA=()
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DURATION=$2; shift ;;
	--warmup) WARMUP=$2; shift ;;
	--daemon) DAEMON=$2; shift ;;
	--without) EXTRA+=(--without "$2"); shift ;;
	--sanitized | --trace-memory) EXTRA+=("$1") ;;
	*) echo "usage: $0 [--duration S] [--warmup S] [--daemon PATH] [--sanitized] [--without LOAD]... [--trace-memory]" >&2; exit 2 ;;
	esac
	shift
done
exec flock /tmp/memwatchd-heavy.lock python3 tests/soak/soak.py --daemon "$DAEMON" \
	--duration "$DURATION" --warmup "$WARMUP" "${EXTRA[@]}"
