#!/usr/bin/env bash
# The long soak run:
#
#   bench/soak.sh [--duration S] [--warmup S] [--daemon PATH]
#
# tests/soak/soak.py for S seconds (default 3600; CI runs 170 in the meson
# suite 'soak'): 4 clients scraping every 50 ms, SIGHUP every 5 s (broken and
# valid files in turn, the valid ones restarting collectors), 20 memory
# cgroups created and removed per second, 200 processes per second, a memcg OOM
# kill every 10 s. Fails if a counter went backwards, an OOM kill was missed,
# RSS, fds or threads moved more than 10 % after the warm-up, something was
# logged at err, or the exit was not clean. The daemon defaults to the plain
# build (build/): over long runs the sanitizer's allocator grows RSS by itself
# (docs/reliability.md); --daemon build-test/daemon/memwatchd for ASan. Holds
# the host test lock. Prints the figures (JSON) for docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=3600 WARMUP=120 DAEMON=build/daemon/memwatchd
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DURATION=$2; shift ;;
	--warmup) WARMUP=$2; shift ;;
	--daemon) DAEMON=$2; shift ;;
	*) echo "usage: $0 [--duration S] [--warmup S] [--daemon PATH]" >&2; exit 2 ;;
	esac
	shift
done
exec flock /tmp/memwatchd-host-tests.lock python3 tests/soak/soak.py --daemon "$DAEMON" \
	--duration "$DURATION" --warmup "$WARMUP"
