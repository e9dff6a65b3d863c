#!/usr/bin/env bash
# The long soak run:
#
#   bench/soak.sh [--duration S] [--warmup S] [--daemon PATH] [--sanitized]
#                 [--without LOAD]... [--trace-memory] [--no-doc] [--report FILE]
#   bench/soak.sh --doc-from FILE
#
# tests/soak/soak.py for S seconds (default 3600; CI runs 300 in the meson
# suite 'soak'): 4 clients scraping every 50 ms, SIGHUP every 5 s (broken and
# valid files in turn, the valid ones restarting collectors), 20 memory
# cgroups created and removed per second, 200 processes per second, a memcg OOM
# kill every 10 s. Fails if a counter went below its highest value seen, an
# OOM kill was missed, RSS, heap, fds or threads grew faster than soak.py's
# GROWTH_BOUNDS (a least-squares slope after the warm-up), something was
# logged at err, or the exit was not clean. The daemon defaults to the plain
# build (build/); --daemon build/daemon/memwatchd --sanitized for ASan.
# --without LOAD (scrapes, reloads, cgroups, processes, oom) leaves a load out,
# --trace-memory reports each mapping's RSS and the allocator's own figures.
#
# Holds the heavy-test lock for the whole run. Then writes RSS, heap, fds and
# series over time, with their slopes, to the generated part of the soak
# section of docs/reliability.md (between the soak.sh markers), stating the
# duration it ran, whether it passed or not (--no-doc: only prints them;
# --report FILE keeps soak.py's report; --doc-from FILE writes the section from
# such a report, for a run made under a lock held for several runs at once;
# SOAK_COMMIT names the commit it ran, if not HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=3600 WARMUP=120 DAEMON=build/daemon/memwatchd DOC=docs/reliability.md REPORT= FROM=
EXTRA=()
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DURATION=$2; shift ;;
	--warmup) WARMUP=$2; shift ;;
	--daemon) DAEMON=$2; shift ;;
	--without) EXTRA+=(--without "$2"); shift ;;
	--sanitized | --trace-memory) EXTRA+=("$1") ;;
	--no-doc) DOC= ;;
	--report) REPORT=$2; shift ;;
	--doc-from) FROM=$2; shift ;;
	*) echo "usage: $0 [--duration S] [--warmup S] [--daemon PATH] [--sanitized] [--without LOAD]... [--trace-memory] [--no-doc] [--report FILE] | --doc-from FILE" >&2; exit 2 ;;
	esac
	shift
done
rc=0
if [ -n "$FROM" ]; then
	REPORT=$FROM
else
	if [ -z "$REPORT" ]; then
		REPORT=$(mktemp /tmp/memwatchd-soak-report.XXXXXX)
		trap 'rm -f "$REPORT"' EXIT
	fi
	flock /tmp/memwatchd-heavy.lock python3 tests/soak/soak.py --daemon "$DAEMON" \
		--duration "$DURATION" --warmup "$WARMUP" --report "$REPORT" "${EXTRA[@]}" || rc=$?
fi
if [ -z "$DOC" ] || [ ! -s "$REPORT" ]; then
	exit $rc
fi
COMMIT=${SOAK_COMMIT:-$(git rev-parse --short HEAD)} python3 - "$REPORT" "$DOC" <<'EOF'
import json, os, sys, time

report, doc = sys.argv[1], sys.argv[2]
r = json.load(open(report))
passed = r["failures"] == 0
BEGIN, END = "<!-- bench/soak.sh: begin -->", "<!-- bench/soak.sh: end -->"
g = r["growth_per_minute"]
samples = r["samples"]
step = max(1, len(samples) // 12)
rows = [s for s in samples[::step]] + ([samples[-1]] if (len(samples) - 1) % step else [])


def mib(kib):
    return "%.1f" % (kib / 1024)


def slope(k, unit):
    v = g[k]
    bound = "" if v["bound"] is None else ", bound %s" % v["bound"]
    return "%+.1f %s/min (± %.1f%s)" % (v["slope"], unit, v["stderr"], bound)


out = [BEGIN, "",
       "`bench/soak.sh` on %s, commit %s, `%s`%s: **%d s** (%d s warm-up), %s."
       % (time.strftime("%Y-%m-%d", time.gmtime(os.path.getmtime(report))), os.environ["COMMIT"], r["daemon"],
          " (sanitizer build, ASAN_OPTIONS %s)" % r["asan_options"] if r["sanitized"] else "",
          r["seconds"], r["warmup_seconds"],
          "passed" if passed else "**failed** (%s)" % "; ".join(r["failure_lines"][:3])),
       "{:,} `/metrics` answers ({} a second per client; counters compared with their highest value "
       "{:,} times), {:,} reloads, {:,} cgroups, {:,} processes ({} a second), {:,} OOM kills ({:,} counted "
       "by the daemon); load average {} at the end.".format(
           r["scrapes"], r["per_second"]["scrapes_per_client"], r["counter_comparisons"], r["reloads"],
           r["cgroups_created"], r["processes"], r["per_second"]["processes"], r["oom_kills"],
           int(r["oom_kills_counted"] or 0), r["load_average_at_end"]),
       "",
       "Slopes after the warm-up (least squares over every sample, 2.5 s apart; ± one standard error): RSS %s, heap %s, "
       "fds %s, threads %s, series %s."
       % (slope("rss_kib", "KiB"), slope("heap_kib", "KiB"), slope("fds_but_cgroup_files", "fds"),
          slope("threads", "threads"), slope("series", "series")),
       "",
       "| s | RSS MiB | heap MiB | fds (+ cgroup files) | threads | series |",
       "|---:|---:|---:|---:|---:|---:|"]
for s in rows:
    out.append("| %d | %s | %s | %d (+%d) | %d | %d |" % (s["t"], mib(s["rss_kib"]), mib(s["heap_kib"]),
                                                        s["fds_but_cgroup_files"], s["cgroup_files"],
                                                        s["threads"], s["series"]))
out += ["", END]
text = open(doc).read()
if BEGIN in text:
    head, _, rest = text.partition(BEGIN)
    text = head + "\n".join(out) + rest.partition(END)[2]
else:
    text = text.replace("\n## Fuzzing", "\n### The long run\n\n" + "\n".join(out) + "\n\n## Fuzzing", 1)
open(doc, "w").write(text)
print("wrote the long run's figures to " + doc)
EOF
exit $rc
