#!/usr/bin/env bash
# The unit's memory where users run it: the systemd guests of the system test.
#
#   bench/system_memory.sh [--kernel SERIES ...] [--no-doc]
#
# Runs tests/system/run_system.py (Debian 12, systemd as PID 1, cgroup v2;
# Debian's 6.1 and 6.12 cloud kernels by default, both guests at once, one
# vCPU and 1536 MiB each) with the .deb that packaging/build-deb.sh builds
# from this tree, and every check of the system test. The guest reads, a few
# seconds after `systemctl enable --now memwatchd` and again after the
# workloads (a cgroup reclaiming its page cache, an OOM kill, two more
# daemons walking the processes):
#
# - the unit's MemoryCurrent, which `systemctl status memwatchd` shows as
#   "Memory:": memory.current of memwatchd.service's cgroup, so the daemon's
#   pages and the kernel memory charged to it (its BPF maps among them);
# - memory.stat's anon, file and kernel of that cgroup;
# - the daemon's RssAnon, PSS and RSS (/proc/PID/status, smaps_rollup).
#
# The test itself checks MemoryCurrent against memory.current and the
# daemon's RssAnon against memory.stat's anon (check "5 memory"). Writes the
# section "system-memory" of docs/benchmarks.md (unless --no-doc).
. "$(dirname "$0")/lib.sh"

KERNELS=() WRITE_DOC=1
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNELS+=(--kernel "$2"); shift ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
[ ${#KERNELS[@]} -gt 0 ] || KERNELS=(--kernel 6.1 --kernel 6.12)
[ "$(id -u)" = 0 ] || die "needs root (the system test boots its guests as root)"

prepare_memwatchd
log "ninja -C $BUILD_DIR tests/system/memhog-plain"
ninja -C "$BUILD_DIR" tests/system/memhog-plain >"$BENCH_TMP/ninja-memhog.log" 2>&1 ||
	{ tail -20 "$BENCH_TMP/ninja-memhog.log" >&2; die "memhog-plain did not build"; }
log "tests/system/run_system.py ${KERNELS[*]} (a few minutes)"
python3 "$REPO/tests/system/run_system.py" --source-root "$REPO" --memhog "$BUILD_DIR/tests/system/memhog-plain" \
	"${KERNELS[@]}" --log-dir "$BENCH_TMP" --figures "$BENCH_TMP/figures.json" >"$BENCH_TMP/system.log" 2>&1 ||
	{ tail -40 "$BENCH_TMP/system.log" >&2; die "the system test failed (its log: above)"; }
CHECKS=$(grep -E '^system: [0-9]+ of [0-9]+ checks passed' "$BENCH_TMP/system.log" | tail -1)

S=$BENCH_TMP/section.md
python3 - "$BENCH_TMP/figures.json" >"$BENCH_TMP/tables.md" <<'EOF'
import json, sys

fig = json.load(open(sys.argv[1]))
mib = lambda b: f"{b / 1048576:.1f}"
stages = (("memory-start", "after the start"), ("memory-workloads", "after the workloads"))
print("| kernel | when | up, s | MemoryCurrent (`systemctl status`) | memory.stat anon / file / kernel | daemon RssAnon / PSS / RSS | VmHWM |")
print("|---|---|---|---|---|---|---|")
for series in sorted(fig):
    for key, when in stages:
        m = fig[series].get(key)
        if not m:
            continue
        print(f"| {fig[series].get('release') or series} | {when} | {m.get('running', 0)} | {mib(m['MemoryCurrent'])} MiB "
              f"| {mib(m['anon'])} / {mib(m['file'])} / {mib(m['kernel'])} "
              f"| {mib(m['RssAnon'])} / {mib(m['Pss'])} / {mib(m['VmRSS'])} | {mib(m.get('VmHWM', 0))} |")
# The summary row: the newest kernel, after the workloads.
last = sorted(fig)[-1]
m = fig[last].get("memory-workloads") or fig[last].get("memory-start")
with open(sys.argv[1] + ".row", "w") as f:
    f.write(f"{fig[last].get('release') or last}|{mib(m['MemoryCurrent'])}|{mib(m['RssAnon'])}|{mib(m['Pss'])}|{mib(m['VmRSS'])}\n")
EOF
IFS='|' read -r ROW_KERNEL ROW_CURRENT ROW_ANON ROW_PSS ROW_RSS <"$BENCH_TMP/figures.json.row"
{
	echo "## The unit's memory in the systemd guests"
	echo
	# The guests run the package, not build-release's binary.
	machine_md | sed '/^- memwatchd /d'
	echo "- memwatchd $MEMWATCHD_VERSION, git $GIT_DESC: the .deb that \`packaging/build-deb.sh\` built from this tree (Debian's build flags), under the shipped unit (\`DynamicUser=yes\`, CAP_BPF and CAP_PERFMON), the shipped configuration but for a reclaim \`series_ttl\` of 10 s"
	echo "- command: \`bench/system_memory.sh ${KERNELS[*]}\`: \`tests/system/run_system.py\`, every check ($CHECKS)"
	echo
	echo "MemoryCurrent is memory.current of \`memwatchd.service\`'s cgroup: what \`systemctl status\` shows. It"
	echo "holds the daemon's anonymous pages, the file pages charged to the unit (its binary and libraries"
	echo "where it read them first) and the kernel memory charged to it: BPF maps and programs (charged to"
	echo "the cgroup since Linux 5.11), page tables, slab. The daemon's own figures beside it: RssAnon (its"
	echo "anonymous memory, what the scale goal counts), PSS (shared pages divided among their users) and RSS."
	echo
	cat "$BENCH_TMP/tables.md"
	echo
	echo "Commands (in the guest, tests/system/guest.sh \`memory_figures\`): \`systemctl show -P MemoryCurrent memwatchd\`;"
	echo "\`memory.current\` and \`memory.stat\` of \`/sys/fs/cgroup\$(systemctl show -P ControlGroup memwatchd)\`;"
	echo "\`VmRSS\`, \`RssAnon\`, \`VmHWM\` of \`/proc/PID/status\`; \`Pss\` of \`/proc/PID/smaps_rollup\`; up: \`ps -o etimes=\`."
} >"$S"
cat "$S"
summary_row "unit memory in the systemd guest ($ROW_KERNEL, after the workloads): MemoryCurrent" "—" "$ROW_CURRENT MiB (daemon RssAnon $ROW_ANON, PSS $ROW_PSS, RSS $ROW_RSS MiB)" ""
[ -z "$WRITE_DOC" ] || update_doc_section system-memory "$S" bench/system_memory.sh
