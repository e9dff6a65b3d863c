# shellcheck shell=bash
# Helpers shared by the bench/*.sh scripts: the daemon binary, processes started
# and stopped by PID, free loopback ports, statistics, the machine description,
# and the generated sections of docs/benchmarks.md. Sourced, not run.
#
# Every server is started on 127.0.0.1 only; everything started here is
# stopped by its PID, and the temporary directory is removed, on any exit.

set -euo pipefail
export LC_ALL=C

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$BENCH_DIR")
DOC=${BENCH_DOC:-$REPO/docs/benchmarks.md}
BUILD_DIR=${BENCH_BUILD_DIR:-$REPO/build-release}

BENCH_TMP=$(mktemp -d /tmp/memwatch-bench.XXXXXX)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED_PIDS=()
CLEANUP_HOOKS=()

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Stop one process we started: SIGTERM, up to 10 s, then SIGKILL; reap it.
stop_pid() {
	local pid=$1 i
	[ -n "$pid" ] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			# A child of this shell stays a zombie until waited for.
			if [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ]; then break; fi
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] &&
			kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	forget_pid "$pid"
}

# Drop a PID from the list once this shell has waited for it itself (a reaped
# PID can be reused by someone else's process and must never be signalled).
forget_pid() {
	local keep=() p
	for p in "${STARTED_PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	STARTED_PIDS=("${keep[@]}")
}

bench_cleanup() {
	local rc=$? p h
	trap - EXIT INT TERM
	for h in "${CLEANUP_HOOKS[@]}"; do eval "$h" || true; done
	for p in "${STARTED_PIDS[@]}"; do stop_pid "$p"; done
	rm -rf "$BENCH_TMP"
	exit $rc
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# serve_start COMMAND...: runs COMMAND in the background as a server that
# answers every line on its stdin with one line on its stdout (mixed_work
# --serve); serve_request sends a line and prints the answer; serve_stop closes
# its stdin and stops it. One at a time, on fds 7 and 8.
SERVE_PID=
serve_stop() {
	[ -n "$SERVE_PID" ] || return 0
	exec 7>&- 8<&-
	stop_pid "$SERVE_PID"
	SERVE_PID=
}
serve_start() {
	serve_stop
	rm -f "$BENCH_TMP/serve.in" "$BENCH_TMP/serve.out"
	mkfifo "$BENCH_TMP/serve.in" "$BENCH_TMP/serve.out"
	"$@" <"$BENCH_TMP/serve.in" >"$BENCH_TMP/serve.out" &
	SERVE_PID=$!
	STARTED_PIDS+=("$SERVE_PID")
	exec 7>"$BENCH_TMP/serve.in" 8<"$BENCH_TMP/serve.out"
}
serve_request() {
	local out
	echo run >&7
	read -r out <&8 || die "the server (pid $SERVE_PID, $1) stopped"
	echo "$out"
}

# A TCP port nobody uses, from a random spot in 20000 up to the start of the
# kernel's ephemeral range (clients' ports, which a busy neighbour can take
# between this check and the bind), or 20000-59999 if that range starts low.
free_port() {
	local p i lo=20000 hi
	hi=$(awk '{print $1 - 1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 59999)
	[ "${hi:-0}" -gt $((lo + 1000)) ] || hi=59999
	for ((i = 0; i < 200; i++)); do
		p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
		if [ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; then
			echo "$p"
			return 0
		fi
	done
	die "no free port"
}

# Wait until URL answers 200 (at most $2 seconds, default 20).
wait_http() {
	local url=$1 limit=${2:-20} i
	for ((i = 0; i < limit * 10; i++)); do
		curl -sf -o /dev/null --max-time 1 "$url" && return 0
		sleep 0.1
	done
	return 1
}

# The release daemon: built (and configured, without sanitizers) if needed,
# then copied into the temporary directory so that a rebuild by someone else
# during the run cannot swap the binary between the two sides.
MEMWATCHD=
BUILD_NOTE=
prepare_memwatchd() {
	if [ -n "${BENCH_MEMWATCHD:-}" ]; then
		cp "$BENCH_MEMWATCHD" "$BENCH_TMP/memwatchd"
	else
		if [ ! -d "$BUILD_DIR" ]; then
			log "meson setup $BUILD_DIR --buildtype=release"
			meson setup "$BUILD_DIR" --buildtype=release >"$BENCH_TMP/meson.log" 2>&1 ||
				{ cat "$BENCH_TMP/meson.log" >&2; die "meson setup failed"; }
		fi
		local opts
		opts=$(meson introspect --buildoptions "$BUILD_DIR" 2>/dev/null |
			tr '{' '\n' | grep -E '"name": "(buildtype|b_sanitize)"' | sed 's/.*"name": "\([a-z_]*\)".*"value": "\([^"]*\)".*/\1=\2/' | tr '\n' ' ')
		case "$opts" in
		*b_sanitize=none*) ;;
		*) die "$BUILD_DIR is built with sanitizers ($opts): use a plain release build" ;;
		esac
		case "$opts" in
		*buildtype=release*) ;;
		*) log "warning: $BUILD_DIR is not a release build ($opts)" ;;
		esac
		log "ninja -C $BUILD_DIR daemon/memwatchd"
		if ! ninja -C "$BUILD_DIR" daemon/memwatchd >"$BENCH_TMP/ninja.log" 2>&1; then
			tail -20 "$BENCH_TMP/ninja.log" >&2
			[ -x "$BUILD_DIR/daemon/memwatchd" ] || die "build failed"
			# The work tree can be mid-edit; the last good binary still measures.
			BUILD_NOTE=" — the rebuild failed (work tree mid-edit), so the binary built $(date -u -r "$BUILD_DIR/daemon/memwatchd" '+%Y-%m-%d %H:%M UTC') was measured"
			log "warning: build failed; using the existing $BUILD_DIR/daemon/memwatchd"
		fi
		cp "$BUILD_DIR/daemon/memwatchd" "$BENCH_TMP/memwatchd"
	fi
	MEMWATCHD=$BENCH_TMP/memwatchd
	MEMWATCHD_VERSION=$("$MEMWATCHD" --version | awk '{print $2}')
	GIT_DESC=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
}

# A configuration file with every collector off except those named
# (or "all": an empty file, the built-in defaults).
COLLECTORS=(meminfo psi kswapd reclaim alloc faults memavail oom cgroup)
write_config() {
	local file=$1 c on
	shift
	: >"$file"
	[ "${1:-}" = all ] && return 0
	for c in "${COLLECTORS[@]}"; do
		on=no
		for want in "$@"; do [ "$want" = "$c" ] && on=yes; done
		printf '[collector.%s]\nenabled = %s\n' "$c" "$on" >>"$file"
		# Its per-order tracing is opt-in: the attribution measures what it costs.
		[ "$c" = alloc ] && [ "$on" = yes ] && printf 'trace = yes\n' >>"$file"
		printf '\n' >>"$file"
	done
}

# Start memwatchd with config $1 on 127.0.0.1 (a free port); sets MW_PID and
# MW_PORT and waits for its first window. Not in a subshell: the PID must be
# a child of this shell. A daemon that exits before it answers (someone took
# the port between free_port and its bind) is tried again on another port.
MW_PID= MW_PORT=
start_memwatchd() {
	local conf=$1 logf=${2:-$BENCH_TMP/memwatchd.log} try i
	for ((try = 1; try <= 3; try++)); do
		MW_PORT=$(free_port)
		"$MEMWATCHD" --config "$conf" --listen "127.0.0.1:$MW_PORT" 2>>"$logf" &
		MW_PID=$!
		STARTED_PIDS+=("$MW_PID")
		for ((i = 0; i < 300; i++)); do
			curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$MW_PORT/healthz" && return 0
			kill -0 "$MW_PID" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$MW_PID/stat" 2>/dev/null)" != Z ] || break
			sleep 0.1
		done
		stop_pid "$MW_PID"
		log "memwatchd did not come up on 127.0.0.1:$MW_PORT (attempt $try)"
	done
	tail -20 "$logf" >&2
	die "memwatchd did not come up"
}

# node_exporter with the three collectors comparable to memwatchd's.
NE_BIN=${BENCH_NODE_EXPORTER:-prometheus-node-exporter}
NE_PID= NE_PORT= NE_ARGS=
start_node_exporter() {
	NE_PORT=$(free_port)
	NE_ARGS="--collector.disable-defaults --collector.meminfo --collector.vmstat --collector.pressure --web.listen-address=127.0.0.1:$NE_PORT"
	# shellcheck disable=SC2086
	"$NE_BIN" $NE_ARGS 2>>"$BENCH_TMP/node_exporter.log" &
	NE_PID=$!
	STARTED_PIDS+=("$NE_PID")
	wait_http "http://127.0.0.1:$NE_PORT/metrics" 30 || die "node_exporter did not come up"
}

# utime+stime of a process (all its threads), in clock ticks.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
CLK_TCK=$(getconf CLK_TCK)
# CPU time of a process's live threads in nanoseconds, from
# /proc/PID/task/*/schedstat (exact, where utime+stime come in 10 ms ticks).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }

# Memory of a process in KiB: rss, pss, anon, file, hwm.
mem_kib() {
	local pid=$1
	local rss hwm pss anon file
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
	hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
	anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status")
	file=$(awk '/^RssFile:/ {print $2}' "/proc/$pid/status")
	pss=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup")
	echo "$rss $pss $anon $file $hwm"
}

# Statistics over numbers given one per line on stdin.
median() { sort -g | awk '{a[NR] = $1} END { if (!NR) { print "nan"; exit } if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# Nearest-rank percentile: percentile P < numbers
percentile() { sort -g | awk -v p="$1" '{a[NR] = $1} END { if (!NR) { print "nan"; exit } i = int((p / 100) * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print a[i] }'; }
# Distribution-free confidence interval of the median from order statistics:
# "LO HI COVERAGE" — the k-th smallest and k-th largest value, k the largest
# with P(Binomial(n, 1/2) < k) <= 2.5 % (so coverage >= 95 %); with fewer than
# 6 values, the smallest and largest (and their lower coverage).
median_ci() {
	sort -g | awk '{a[NR] = $1} END {
		n = NR; if (!n) { print "nan nan 0"; exit }
		p = 0.5 ^ n; cum = p; k = 1      # cum = P(X <= k - 1)
		if (cum > 0.025) { printf "%s %s %.3f\n", a[1], a[n], 1 - 2 * cum; exit }
		while (1) { p = p * (n - k + 1) / k; if (cum + p > 0.025) break; cum += p; k++ }
		printf "%s %s %.3f\n", a[k], a[n - k + 1], 1 - 2 * cum }'
}
# verdict_ci LO HI OP LIMIT: met when the whole interval satisfies the
# target, missed when none of it does, otherwise not resolved.
verdict_ci() {
	awk -v lo="$1" -v hi="$2" -v op="$3" -v l="$4" 'BEGIN {
		if (lo == "nan" || lo == "") { print "n/a"; exit }
		if (op == "<=") { if (hi <= l) print "met"; else if (lo > l) print "**missed**"; else print "not resolved" }
		else { if (lo >= l) print "met"; else if (hi < l) print "**missed**"; else print "not resolved" } }'
}
minmax() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo, hi}'; }
# fmt DIGITS NUMBER
fmt() { awk -v d="$1" -v x="$2" 'BEGIN { if (x == "nan" || x == "") print "n/a"; else printf "%.*f\n", d, x }'; }
# pct RATIO -> "+1.23 %" (ratio 1.0123)
pct() { awk -v r="$1" 'BEGIN { if (r == "nan" || r == "") print "n/a"; else printf "%+.2f %%\n", (r - 1) * 100 }'; }
calc() { awk "BEGIN { printf \"%.6g\n\", $* }"; }

machine_md() {
	local mem cpu
	mem=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
	cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
	cat <<EOF
- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- machine: $(nproc) CPUs ($cpu), $mem RAM, kernel $(uname -r) ($(uname -m)); load average at start: $LOAD_START
- memwatchd $MEMWATCHD_VERSION, git $GIT_DESC, built with \`meson setup build-release --buildtype=release && ninja -C build-release\` (no sanitizers)$BUILD_NOTE
EOF
}

# Other BPF programs on the page allocator tracepoint (e.g. another memwatchd
# of someone's test run): they cost both sides of a comparison the same but
# add noise, so the sections say how many there were.
foreign_page_alloc_progs() {
	command -v bpftool >/dev/null || { echo "?"; return; }
	bpftool prog show 2>/dev/null | grep -c 'name page_alloc' || true
}

# Replace the section between the markers for NAME in docs/benchmarks.md
# with the contents of FILE (written by SCRIPT, default bench/NAME.sh) (appending it when absent). The document is read
# again right before writing, so sections others wrote meanwhile are kept.
update_doc_section() {
	local name=$1 file=$2 script=${3:-bench/$1.sh} begin end tmp
	begin="<!-- BEGIN GENERATED: $name ($script; do not edit by hand) -->"
	end="<!-- END GENERATED: $name -->"
	[ -f "$DOC" ] || printf '# memwatchd benchmarks\n' >"$DOC"
	if [ "$name" != summary ] && [ -s "$BENCH_TMP/rows" ]; then
		{ echo; sed 's/.*/<!-- row: & -->/' "$BENCH_TMP/rows"; } >>"$file"
		: >"$BENCH_TMP/rows"
	fi
	tmp=$(mktemp "$DOC.XXXXXX")
	if grep -qF "<!-- BEGIN GENERATED: $name " "$DOC"; then
		awk -v name="$name" -v body="$file" -v begin="$begin" -v end="$end" '
			index($0, "<!-- BEGIN GENERATED: " name " ") == 1 {
				print begin; while ((getline line < body) > 0) print line; print end; skip = 1; next }
			skip && index($0, "<!-- END GENERATED: " name " -->") == 1 { skip = 0; next }
			!skip { print }' "$DOC" >"$tmp"
	else
		{ cat "$DOC"; printf '\n%s\n' "$begin"; cat "$file"; printf '%s\n' "$end"; } >"$tmp"
	fi
	chmod 644 "$tmp"
	mv "$tmp" "$DOC"
	log "updated section '$name' of $DOC"
	[ "$name" = summary ] || rebuild_summary
}

# One row of the summary table: measure, target, result, verdict. The rows go
# into the script's own section as comments, and the summary section is
# rebuilt from the rows of every section, so it stays true when only one
# script is run again.
summary_row() {
	printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$BENCH_TMP/rows"
}

# The section "summary": the rows of every generated section, in the order of
# the document, each with the date its section was measured.
rebuild_summary() {
	local body=$BENCH_TMP/summary.md
	{
		echo "## Summary"
		echo
		echo "Rebuilt from the sections below whenever one of them is measured again (\`bench/run-all.sh\` runs"
		echo "them all); each section has the machine, the exact commands and the raw numbers."
		echo
		echo "| measure | target | result | | section, measured |"
		echo "|---|---|---|---|---|"
		awk '
			/^<!-- BEGIN GENERATED: / { name = $4; date = ""; next }
			/^- date: / && name != "" && date == "" { date = substr($0, 9) }
			/^<!-- row: / { line = $0; sub(/^<!-- row: /, "", line); sub(/ -->$/, "", line)
				printf "%s %s, %s |\n", line, name, date }
			/^<!-- END GENERATED: / { name = "" }' "$DOC"
	} >"$body"
	update_doc_section summary "$body" bench/run-all.sh
}
# verdict VALUE OP LIMIT -> "met" / "missed"
verdict() { awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN { if (v == "nan" || v == "") { print "n/a"; exit }
	ok = (op == "<=") ? (v <= l) : (v >= l); print ok ? "met" : "**missed**" }'; }

# Many processes in many memory cgroups, for the scripts that measure the
# daemon at scale (scale.sh, idle.sh). load_prepare NAME: CG_BASE, CG_KIND
# and CG_ROOT (NAME under the v1 memory hierarchy, else under a cgroup2 root
# with the memory controller), the sleepers built, the cleanup hooked.
# load_start NPROC PARENTS CHILDREN: PARENTS cgroups with CHILDREN each below
# CG_ROOT, NPROC sleepers (bench/sleepers.c) LOAD_PER_LEAF to a leaf, back
# once they all sleep (SPAWN_S: how long that took; TASKS_LOADED: processes
# on the machine). load_stop: the sleepers killed by PID and reaped, the
# cgroups removed deepest first.
LOAD_PER_LEAF=10
SL_PID='' CG_MADE='' CG_ROOT='' SPAWN_S='' TASKS_LOADED=''
load_prepare() {
	if [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
		CG_BASE=/sys/fs/cgroup/memory CG_KIND="v1 memory hierarchy"
	elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		CG_BASE=/sys/fs/cgroup CG_KIND="cgroup2"
	else
		die "no memory cgroup hierarchy to create cgroups in"
	fi
	CG_ROOT=$CG_BASE/$1
	[ ! -e "$CG_ROOT" ] || die "$CG_ROOT exists (a run that did not clean up?): remove it first, deepest first"
	cc -O2 -o "$BENCH_TMP/sleepers" "$BENCH_DIR/sleepers.c"
	CLEANUP_HOOKS+=(load_stop)
}
load_start() {
	local nproc=$1 parents=$2 children=$3 leaves=$BENCH_TMP/leaves p c i t0
	CG_MADE=1
	mkdir "$CG_ROOT"
	: >"$leaves"
	for ((p = 0; p < parents; p++)); do
		mkdir "$CG_ROOT/p$p"
		for ((c = 0; c < children; c++)); do
			mkdir "$CG_ROOT/p$p/c$c"
			echo "$CG_ROOT/p$p/c$c" >>"$leaves"
		done
	done
	log "starting $nproc sleeping processes ($LOAD_PER_LEAF in each leaf cgroup)"
	t0=$(date +%s.%N)
	"$BENCH_TMP/sleepers" "$nproc" "$leaves" "$LOAD_PER_LEAF" >"$BENCH_TMP/sleepers.out" 2>"$BENCH_TMP/sleepers.err" &
	SL_PID=$!
	STARTED_PIDS+=("$SL_PID")
	for ((i = 0; i < 1800; i++)); do
		grep -q '^ready' "$BENCH_TMP/sleepers.out" && break
		kill -0 "$SL_PID" 2>/dev/null || { cat "$BENCH_TMP/sleepers.err" >&2; die "sleepers failed"; }
		sleep 0.1
	done
	grep -q '^ready' "$BENCH_TMP/sleepers.out" || die "sleepers not ready after 180 s"
	SPAWN_S=$(calc "$(date +%s.%N) - $t0")
	TASKS_LOADED=$( (find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null || true) | wc -l)
	log "$nproc processes ready in $SPAWN_S s; $TASKS_LOADED processes on the machine"
}
load_stop() {
	[ -z "$SL_PID" ] || stop_pid "$SL_PID"
	SL_PID=''
	[ -n "$CG_MADE" ] && [ -d "$CG_ROOT" ] || return 0
	local i
	for ((i = 0; i < 50; i++)); do
		find "$CG_ROOT" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null || true
		rmdir "$CG_ROOT" 2>/dev/null && break
		sleep 0.2
	done
	[ ! -d "$CG_ROOT" ] || log "warning: could not remove $CG_ROOT"
}
