#!/usr/bin/env bash
# memwatchd against the exporters a user would run instead, side by side in
# one run:
#
#   bench/peers.sh [--turn S] [--interval S] [--rounds R] [--settle S]
#                  [--processes N] [--parents P --children C] [--limit BYTES]
#                  [--exporters "A B ..."] [--scales "rest procs cgroups"]
#                  [--quick] [--no-doc]
#
# - memwatchd (conf/memwatchd.conf as shipped, --listen on a free port);
# - node_exporter with its meminfo, vmstat and pressure collectors only;
# - process-exporter over every process (grouped by command name);
# - netdata with its cgroups and apps plugins only (no registry, health, ML,
#   statsd, anonymous statistics or other plugin; its cloud is not built in
#   Debian's package), memory-mode ram, on 127.0.0.1.
#
# At three scales: at rest; with N sleeping processes (default 10,000,
# bench/sleepers.c); with N processes and P + P*C memory cgroups (default
# 100 + 900 = 1,000, each with a memory limit, default 64M; 10 processes in
# each leaf, the rest where the script runs). At each scale every exporter has
# its turn alone, one after the other (the order rotates by one each round):
# it is started in the foreground by this script, left to settle (until three
# scrapes 5 s apart give the same number of series, at least 20 s, at most S
# s, default 90), scraped twice INTERVAL s apart (not measured: the turn
# starts inside Prometheus's rhythm),
# then scraped every INTERVAL s (default 15, as Prometheus) for TURN s
# (default 120), and stopped. Per turn:
#
# - CPU of the exporter and every descendant, as % of one core: utime + stime
#   + cutime + cstime of each process of its tree (/proc/PID/stat) at the end
#   of the turn minus at its start (children that exit are counted through
#   their parent's cutime/cstime);
# - RssAnon, PSS and RSS summed over the tree (/proc/PID/smaps_rollup:
#   Anonymous, Pss, Rss) at the end of the turn;
# - scrape time (curl's time_total), median and max; series in the last scrape.
#
# Every scrape asks for gzip (Accept-Encoding: gzip), as Prometheus does
# unless told otherwise: compressing is part of what each exporter costs it.
#
# --quick: turns of 30 s scraped every 5 s, 1,000 processes, 100 cgroups,
# settle at most 30 s (about 8 minutes; for a trial). Needs root and the
# Debian packages prometheus-node-exporter, prometheus-process-exporter,
# netdata-core and netdata-plugins-bash (packaging/install-deps.sh --bench).
# Every process started here is stopped by its PID, and so are the exporters'
# children still running after their parent stopped; the cgroups are removed,
# on any exit. Writes the section "peers" of docs/benchmarks.md (unless --no-doc).
. "$(dirname "$0")/lib.sh"

TURN=120 INTERVAL=15 ROUNDS=1 SETTLE=90 NPROC=10000 PARENTS=100 CHILDREN=9 LIMIT=64M WRITE_DOC=1 QUICK=
EXPORTERS="memwatchd node_exporter process-exporter netdata"
SCALES="rest procs cgroups"
while [ $# -gt 0 ]; do
	case $1 in
	--turn) TURN=$2; shift ;;
	--interval) INTERVAL=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--settle) SETTLE=$2; shift ;;
	--processes) NPROC=$2; shift ;;
	--parents) PARENTS=$2; shift ;;
	--children) CHILDREN=$2; shift ;;
	--limit) LIMIT=$2; shift ;;
	--exporters) EXPORTERS=$2; shift ;;
	--scales) SCALES=$2; shift ;;
	--quick) QUICK=1 TURN=30 INTERVAL=5 SETTLE=30 NPROC=1000 PARENTS=10 ;;
	--no-doc) WRITE_DOC= ;;
	*) die "unknown argument $1 (see the header of $0)" ;;
	esac
	shift
done
ARGS="--turn $TURN --interval $INTERVAL --rounds $ROUNDS --settle $SETTLE --processes $NPROC --parents $PARENTS --children $CHILDREN --limit $LIMIT"
NCG=$((PARENTS + PARENTS * CHILDREN))
PER_LEAF=10
SCRAPE=(curl -s -H 'Accept-Encoding: gzip' --compressed)

[ "$(id -u)" = 0 ] || die "needs root (BPF, cgroups, every process's /proc files)"
for t in cc curl prometheus-node-exporter prometheus-process-exporter netdata; do
	command -v $t >/dev/null || die "$t not found (packaging/install-deps.sh --bench)"
done
task_room "$NPROC"
cg_hierarchy
CG_ROOT=$CG_BASE/memwatch-peers
[ ! -e "$CG_ROOT" ] || die "$CG_ROOT exists (a run that did not clean up?): remove it first, deepest first"
prepare_memwatchd

pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "?"; }
declare -A VERSION COVERS CMDLINE
VERSION[memwatchd]="$MEMWATCHD_VERSION (git $GIT_DESC)"
VERSION[node_exporter]="$(prometheus-node-exporter --version 2>&1 | awk 'NR == 1 {print $3}') (Debian prometheus-node-exporter $(pkg_version prometheus-node-exporter))"
VERSION[process-exporter]="Debian prometheus-process-exporter $(pkg_version prometheus-process-exporter)"
VERSION[netdata]="$(netdata -v 2>&1 | awk 'NR == 1 {print $2}') (Debian netdata-core $(pkg_version netdata-core))"
COVERS[memwatchd]="host memory (meminfo, PSI, vmstat, kswapd, reclaim, compaction, OOM kills); per process: the top 10 by faults and by reclaim; per cgroup: every memory cgroup walked, the top 50 exported, the rest summed"
COVERS[node_exporter]="host memory only (meminfo, vmstat, pressure)"
COVERS[process-exporter]="per process group (command name): CPU, memory incl. smaps, I/O, threads; no host or cgroup figures"
COVERS[netdata]="per cgroup (cgroups plugin: CPU, memory, I/O, pressure) and per process group and user (apps plugin); no host memory with only these two plugins"

# --- the process tree of an exporter ----------------------------------------------------
# tree_pids ROOT: ROOT and every descendant, "PID STARTTIME" a line.
tree_pids() {
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$1" '{
		l = $0; sub(/^.*\) /, "", l); split(l, f, " "); pp[$1] = f[2]; st[$1] = f[20] }
		END { want[root] = 1; more = 1
			while (more) { more = 0; for (p in pp) if (!(p in want) && (pp[p] in want)) { want[p] = 1; more = 1 } }
			for (p in want) if (p in st) print p, st[p] }'
}
# tree_ticks PIDFILE: utime + stime + cutime + cstime summed over the PIDs.
tree_ticks() {
	local pid st sum=0 t
	while read -r pid st; do
		t=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk -v s="$st" '$20 == s {print $12 + $13 + $14 + $15}' || true)
		sum=$((sum + ${t:-0}))
	done <"$1"
	echo "$sum"
}
# tree_sched_ns PIDFILE: the first field of /proc/PID/task/*/schedstat (ns on
# the CPU) summed over the PIDs' threads alive now: exact where ticks are
# few (at rest), blind to threads and children that exited.
tree_sched_ns() {
	local pid st sum=0 t
	while read -r pid st; do
		for t in /proc/"$pid"/task/*/schedstat; do
			[ -r "$t" ] && sum=$((sum + $(cut -d' ' -f1 "$t" 2>/dev/null || echo 0)))
		done
	done <"$1"
	echo "$sum"
}
# sampler_s FILE: memwatchd's in-kernel sampler's seconds in a scrape (interrupt
# context, charged to no process, so added to the daemon's own for the ratios).
sampler_s() { awk '$1 == "memwatch_memory_sampler_seconds_total" {v = $2} END {print v + 0}' "$1" 2>/dev/null || echo 0; }
# tree_mem PIDFILE: "ANON PSS RSS" in KiB summed over the PIDs.
tree_mem() {
	local pid st
	while read -r pid st; do cat "/proc/$pid/smaps_rollup" 2>/dev/null || true; done <"$1" |
		awk '$1 == "Anonymous:" {a += $2} $1 == "Pss:" {p += $2} $1 == "Rss:" {r += $2} END {print a + 0, p + 0, r + 0}'
}
# The exporter's children still there once it stopped (netdata's plugins
# outlive a SIGKILLed parent): killed by PID, if the PID still is the same
# process (same start time).
kill_leftovers() {
	local pid st now
	while read -r pid st; do
		now=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $20}' || true)
		[ "$now" = "$st" ] || continue
		log "killing $pid ($(cat "/proc/$pid/comm" 2>/dev/null)), left behind by the exporter"
		kill -KILL "$pid" 2>/dev/null || true
	done <"$1"
}

# --- the exporters -----------------------------------------------------------------------
# start_exporter NAME: started in the background on 127.0.0.1, a free port;
# sets EX_PID and EX_URL once it answers.
EX_PID= EX_URL=
start_exporter() {
	local name=$1 port dir
	case $name in
	memwatchd)
		cp "$REPO/conf/memwatchd.conf" "$BENCH_TMP/memwatchd.conf"
		start_memwatchd "$BENCH_TMP/memwatchd.conf"
		EX_PID=$MW_PID EX_URL=http://127.0.0.1:$MW_PORT/metrics
		CMDLINE[$name]="memwatchd --config conf/memwatchd.conf --listen 127.0.0.1:PORT"
		return 0
		;;
	node_exporter)
		start_node_exporter
		EX_PID=$NE_PID EX_URL=http://127.0.0.1:$NE_PORT/metrics
		CMDLINE[$name]="prometheus-node-exporter ${NE_ARGS/$NE_PORT/PORT}"
		return 0
		;;
	process-exporter)
		port=$(free_port)
		printf 'process_names:\n  - name: "{{.Comm}}"\n    cmdline:\n      - ".+"\n' >"$BENCH_TMP/process-exporter.yml"
		prometheus-process-exporter -config.path "$BENCH_TMP/process-exporter.yml" \
			-web.listen-address "127.0.0.1:$port" 2>>"$BENCH_TMP/process-exporter.log" &
		EX_PID=$!
		EX_URL=http://127.0.0.1:$port/metrics
		CMDLINE[$name]="prometheus-process-exporter -config.path CONF -web.listen-address 127.0.0.1:PORT, CONF: \`process_names: [{name: \"{{.Comm}}\", cmdline: [\".+\"]}]\` (every process, grouped by command name; smaps and threads gathered, the defaults)"
		;;
	netdata)
		port=$(free_port)
		dir=$BENCH_TMP/netdata
		rm -rf "$dir"
		mkdir -p "$dir"/{conf,cache,lib,log}
		touch "$dir/conf/.opt-out-from-anonymous-statistics"
		netdata_conf "$dir" "$port" >"$dir/conf/netdata.conf"
		DO_NOT_TRACK=1 netdata -D -c "$dir/conf/netdata.conf" -u root >>"$dir/log/stdout" 2>&1 &
		EX_PID=$!
		EX_URL="http://127.0.0.1:$port/api/v1/allmetrics?format=prometheus"
		CMDLINE[$name]="DO_NOT_TRACK=1 netdata -D -c CONF -u root, CONF printed below; scraped at /api/v1/allmetrics?format=prometheus"
		;;
	esac
	STARTED_PIDS+=("$EX_PID")
	# Not wait_http: its 1 s timeout never passes for process-exporter
	# reading 10,000 processes' smaps.
	local i
	for ((i = 0; i < 120; i++)); do
		curl -s -o /dev/null --max-time 60 "$EX_URL" && return 0
		kill -0 "$EX_PID" 2>/dev/null || break
		sleep 0.5
	done
	die "$name did not come up (see $BENCH_TMP)"
}

# netdata.conf: its own directories, 127.0.0.1:PORT, memory-mode ram, only
# the cgroups (internal) and apps (external) plugins. The v1 hierarchy is
# named (auto picks the empty cgroup2 mount of a hybrid host), and the cgroup
# cap is raised above the default 1,000 so that it covers every cgroup, as
# memwatchd's walk does.
netdata_conf() {
	local dir=$1 port=$2 p unified=auto
	[ "$CG_KIND" = cgroup2 ] || unified=no
	cat <<EOF
[global]
	run as user = root
	hostname = memwatch-bench
	update every = 1
[db]
	mode = ram
[directories]
	config = $dir/conf
	stock config = /usr/lib/netdata/conf.d
	log = $dir/log
	cache = $dir/cache
	lib = $dir/lib
	home = $dir/lib
	plugins = /usr/lib/netdata/plugins.d
[logs]
	access = none
	debug = none
	error = $dir/log/error.log
[web]
	bind to = 127.0.0.1:$port
[registry]
	enabled = no
[health]
	enabled = no
[ml]
	enabled = no
[statsd]
	enabled = no
[plugin:cgroups]
	use unified cgroups = $unified
	max cgroups to allow = 20000
[plugins]
	enable running new plugins = no
	cgroups = yes
	apps = yes
EOF
	for p in proc diskspace tc idlejitter timex checks netdata\ monitoring statsd python.d go.d charts.d node.d ebpf fping perf slabinfo nfacct ioping cups freeipmi; do
		printf '\t%s = no\n' "$p"
	done
}

# --- one turn --------------------------------------------------------------------------------
R=$BENCH_TMP/results.tsv
: >"$R"
rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$R"; } # scale exporter round key value
vals() { awk -F'\t' -v s="$1" -v e="$2" -v k="$3" '$1 == s && $2 == e && $4 == k {print $5}' "$R"; }
series_of() { grep -vc '^#' "$1" || true; }

# sleep_until T0 OFFSET: until OFFSET seconds after the epoch time T0.
sleep_until() {
	sleep "$(awk -v t="$1" -v o="$2" -v n="$(date +%s.%N)" 'BEGIN { d = t + o - n; printf "%.3f\n", (d > 0 ? d : 0) }')"
}

turn() {
	local scale=$1 name=$2 round=$3 body=$BENCH_TMP/body tree=$BENCH_TMP/tree
	local n last=-1 i t0 t1 c0 c1 k code tt waited
	start_exporter "$name"
	# Settled: the same number of series in three scrapes 5 s apart, after
	# at least 20 s (netdata looks for new cgroups every 10 s and names each
	# with a script).
	local same=0 s0
	s0=$(date +%s)
	for ((waited = 0; waited < SETTLE; waited = $(date +%s) - s0)); do
		sleep 5
		"${SCRAPE[@]}" -o "$body" --max-time 60 "$EX_URL" || true
		n=$(series_of "$body")
		if [ "$n" = "$last" ]; then same=$((same + 1)); else same=0; fi
		[ "$same" -ge 2 ] && [ "$waited" -ge 15 ] && break
		last=$n
	done
	waited=$(($(date +%s) - s0 - 5))
	rec "$scale" "$name" "$round" settle_s "$((waited + 5))"
	# Prometheus scrapes at one interval from the start, never 5 s apart
	# first: two scrapes at the interval, not measured, make the first
	# measured one the third of that rhythm (memwatchd follows a steady
	# scraper from its third scrape: quiet_read_interval in conf/memwatchd.conf).
	local w0
	w0=$(date +%s.%N)
	for k in 0 1; do
		sleep_until "$w0" $((k * INTERVAL))
		"${SCRAPE[@]}" -o /dev/null --max-time $((INTERVAL * 4)) "$EX_URL" || true
	done
	sleep_until "$w0" $((2 * INTERVAL))
	tree_pids "$EX_PID" >"$tree"
	c0=$(tree_ticks "$tree") n0=$(tree_sched_ns "$tree") t0=$(date +%s.%N)
	local k0= k1= kt0= kt1=
	# A scrape longer than the interval makes the next one wait for the
	# following tick, as Prometheus never overlaps scrapes of one target.
	for ((k = 0; ; k++)); do
		k=$(awk -v t="$t0" -v n="$(date +%s.%N)" -v i="$INTERVAL" -v k="$k" 'BEGIN { m = int((n - t) / i + 0.999); print (m > k ? m : k) }')
		[ $((k * INTERVAL)) -lt "$TURN" ] || break
		sleep_until "$t0" $((k * INTERVAL))
		read -r code tt < <("${SCRAPE[@]}" -o "$body" -w '%{http_code} %{time_total}\n' --max-time $((INTERVAL * 4)) "$EX_URL" || echo "000 0")
		if [ "$code" = 200 ]; then
			rec "$scale" "$name" "$round" scrape_ms "$(calc "$tt * 1000")"
			cp "$body" "$BENCH_TMP/last-$name"
			if [ "$name" = memwatchd ]; then
				kt1=$(date +%s.%N) k1=$(sampler_s "$body")
				[ -n "$k0" ] || k0=$k1 kt0=$kt1
			fi
		else
			rec "$scale" "$name" "$round" scrape_failed 1
		fi
	done
	sleep_until "$t0" "$TURN"
	tree_pids "$EX_PID" >"$tree.end"
	# Processes alive at the start and gone by the end are in their parent's
	# cutime/cstime; those born and gone in between too.
	sort -u "$tree" "$tree.end" >"$tree.all"
	c1=$(tree_ticks "$tree.end") n1=$(tree_sched_ns "$tree.end") t1=$(date +%s.%N)
	# The sampler's rate between the turn's first and last scrapes.
	local sampler_pct=0
	if [ -n "$k0" ] && awk -v a="$kt0" -v b="$kt1" 'BEGIN {exit !(b > a)}'; then
		sampler_pct=$(calc "($k1 - $k0) / ($kt1 - $kt0) * 100")
	fi
	rec "$scale" "$name" "$round" sampler_pct "$sampler_pct"
	rec "$scale" "$name" "$round" cpu_pct "$(calc "($c1 - $c0) / $CLK_TCK / ($t1 - $t0) * 100 + $sampler_pct")"
	rec "$scale" "$name" "$round" sched_pct "$(calc "($n1 - $n0) / 1e9 / ($t1 - $t0) * 100 + $sampler_pct")"
	rec "$scale" "$name" "$round" ticks "$((c1 - c0))"
	rec "$scale" "$name" "$round" procs "$(wc -l <"$tree.end")"
	read -r i n k < <(tree_mem "$tree.end")
	rec "$scale" "$name" "$round" anon "$i"
	rec "$scale" "$name" "$round" pss "$n"
	rec "$scale" "$name" "$round" rss "$k"
	rec "$scale" "$name" "$round" series "$(series_of "$BENCH_TMP/last-$name" 2>/dev/null)"
	# Our cgroups named in the last scrape (memwatchd: exported one by one;
	# netdata: charted), and memwatchd's own count of the cgroups it walked.
	rec "$scale" "$name" "$round" our_cgroups "$({ grep -o 'memwatch-peers[^".,} ]*' "$BENCH_TMP/last-$name" 2>/dev/null || true; } | sed 's/[._]mem.*//' | sort -u | wc -l)"
	[ "$name" != memwatchd ] || rec "$scale" "$name" "$round" walked "$(awk '$1 == "memwatch_cgroups_discovered" {s += $2} END {print s + 0}' "$BENCH_TMP/last-$name" 2>/dev/null)"
	rec "$scale" "$name" "$round" load1 "$(cut -d' ' -f1 /proc/loadavg)"
	stop_pid "$EX_PID"
	kill_leftovers "$tree.all"
	rm -f "$BENCH_TMP/last-$name"
	log "$scale/$name: $(vals "$scale" "$name" cpu_pct | tail -1) % of a core ($((c1 - c0)) ticks), anon $i KiB, $(vals "$scale" "$name" series | tail -1) series, scrapes $(vals "$scale" "$name" scrape_ms | tr '\n' ' ')ms"
}

# --- the scales ------------------------------------------------------------------------------
read -ra EXS <<<"$EXPORTERS"
FOREIGN_CGROUPS=$(find "$CG_BASE" -mindepth 1 -type d 2>/dev/null | wc -l)
FOREIGN_PROCS=$( (find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null || true) | wc -l)
declare -A LOADED
for scale in $SCALES; do
	case $scale in
	rest) load_cleanup ;;
	procs)
		load_cleanup
		log "starting $NPROC sleeping processes"
		sleepers_start "$NPROC"
		log "ready in $SPAWN_S s"
		;;
	cgroups)
		load_cleanup
		log "creating $NCG cgroups under $CG_ROOT (memory limit $LIMIT each) and $NPROC processes ($PER_LEAF in each leaf)"
		cg_tree_make "$CG_ROOT" "$PARENTS" "$CHILDREN" "$LIMIT"
		sleepers_start "$NPROC" "$CG_LEAVES" "$PER_LEAF"
		log "ready in $SPAWN_S s"
		;;
	*) die "unknown scale $scale (rest, procs, cgroups)" ;;
	esac
	sleep 5
	LOADED[$scale]="$( (find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null || true) | wc -l) processes, $(find "$CG_BASE" -mindepth 1 -type d 2>/dev/null | wc -l) memory cgroups on the machine"
	for ((round = 1; round <= ROUNDS; round++)); do
		for ((j = 0; j < ${#EXS[@]}; j++)); do
			turn "$scale" "${EXS[$(((j + round - 1) % ${#EXS[@]}))]}" "$round"
		done
	done
done
load_cleanup
log "load removed"

# --- report -----------------------------------------------------------------------------------
mib() { awk -v k="$1" 'BEGIN { if (k == "" || k == "nan") print "n/a"; else printf "%.1f", k / 1024 }'; }
med() { vals "$1" "$2" "$3" | median; }
# The CPU figure a scale is compared by: at rest a turn is a tick or two.
cpu_key() { if [ "$1" = rest ]; then echo sched_pct; else echo cpu_pct; fi; }
# ratio A B -> "0.0123" with 3 significant digits
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || a == "" || b == "" || b == 0) print "n/a"; else printf "%.3g\n", a / b }'; }
label() { case $1 in rest) echo "at rest" ;; procs) echo "$NPROC processes" ;; cgroups) echo "$NPROC processes + $NCG cgroups" ;; esac; }
S=$BENCH_TMP/section.md
{
	echo "## Peers: memwatchd against node_exporter, process-exporter and netdata"
	echo
	machine_md
	echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); before the load, $FOREIGN_PROCS processes and $FOREIGN_CGROUPS memory cgroups of others on the machine (a shared host)"
	echo "- command: \`bench/peers.sh $ARGS\`$([ -z "$QUICK" ] || echo " (--quick)"): each exporter alone in its turn of $TURN s, started by the script, settled (the same number of series in three scrapes 5 s apart and at least 20 s, at most $SETTLE s, not measured), then scraped every $INTERVAL s by \`curl\` on 127.0.0.1 as Prometheus would (two scrapes at that interval before the turn, not measured, so that it starts inside the rhythm); $ROUNDS round(s) per scale, the order rotating by one each round"
	echo "- loads: $NPROC sleeping processes (\`bench/sleepers.c\`); then $NCG memory cgroups in the $CG_KIND ($PARENTS under \`$CG_ROOT\`, $CHILDREN below each, each with a memory limit of $LIMIT) and $NPROC processes, $PER_LEAF in each leaf; no allocation load"
	for scale in $SCALES; do echo "  - $(label "$scale"): ${LOADED[$scale]}"; done
	echo "- versions and commands:"
	for ex in "${EXS[@]}"; do echo "  - $ex ${VERSION[$ex]}: \`${CMDLINE[$ex]:-not run}\`"; done
	echo
	for scale in $SCALES; do
		echo "### $(label "$scale")"
		echo
		echo "| exporter | covers | CPU, % of one core (ticks) | CPU by schedstat, live threads, % | RssAnon / PSS / RSS, MiB | scrape median / max, ms | series | our cgroups in the scrape | processes | settled after |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		for ex in "${EXS[@]}"; do
			echo "| $ex | ${COVERS[$ex]} | $(fmt 3 "$(med "$scale" "$ex" cpu_pct)") ($(vals "$scale" "$ex" ticks | paste -sd/)$([ "$ex" != memwatchd ] || echo " + sampler $(fmt 4 "$(med "$scale" "$ex" sampler_pct)") %")) | $(fmt 3 "$(med "$scale" "$ex" sched_pct)") | $(mib "$(med "$scale" "$ex" anon)") / $(mib "$(med "$scale" "$ex" pss)") / $(mib "$(med "$scale" "$ex" rss)") | $(fmt 1 "$(med "$scale" "$ex" scrape_ms)") / $(fmt 1 "$(vals "$scale" "$ex" scrape_ms | minmax | cut -d' ' -f2)")$([ -z "$(vals "$scale" "$ex" scrape_failed)" ] || echo " ($(vals "$scale" "$ex" scrape_failed | wc -l) failed)") | $(med "$scale" "$ex" series) | $(med "$scale" "$ex" our_cgroups)$([ "$ex" != memwatchd ] || echo " ($(med "$scale" "$ex" walked) walked)") | $(med "$scale" "$ex" procs) | $(vals "$scale" "$ex" settle_s | paste -sd/) s |"
		done
		echo
	done
	echo "memwatchd as a ratio to each peer (below 1: memwatchd costs less; CPU at rest by schedstat, a turn there being a tick or two):"
	echo
	head="| | "
	sep="|---|"
	for ex in "${EXS[@]}"; do [ "$ex" = memwatchd ] || { head="$head CPU / $ex | anon / $ex |"; sep="$sep---|---|"; }; done
	echo "$head"
	echo "$sep"
	for scale in $SCALES; do
		line="| $(label "$scale") |"
		for ex in "${EXS[@]}"; do
			[ "$ex" = memwatchd ] && continue
			line="$line $(ratio "$(med "$scale" memwatchd "$(cpu_key "$scale")")" "$(med "$scale" "$ex" "$(cpu_key "$scale")")") | $(ratio "$(med "$scale" memwatchd anon)" "$(med "$scale" "$ex" anon)") |"
		done
		echo "$line"
	done
	echo
	echo "Every turn (scale, exporter, round: CPU %, anon KiB, scrapes in ms, 1-minute load average at its end):"
	echo
	echo '```'
	for scale in $SCALES; do
		for ex in "${EXS[@]}"; do
			for ((round = 1; round <= ROUNDS; round++)); do
				awk -F'\t' -v s="$scale" -v e="$ex" -v r="$round" '$1 == s && $2 == e && $3 == r {
					if ($4 == "scrape_ms") sc = sc sprintf(" %.1f", $5); else v[$4] = $5 }
					END { printf "%-8s %-17s %d  cpu %.3f %% (schedstat %.3f %%)  anon %d  scrapes%s  load %s\n", s, e, r, v["cpu_pct"], v["sched_pct"], v["anon"], sc, v["load1"] }' "$R"
			done
		done
	done
	echo '```'
	echo
	echo "netdata's configuration (\`-c\`; DIR a fresh directory per turn; \`.opt-out-from-anonymous-statistics\` in its config directory and \`DO_NOT_TRACK=1\` keep its statistics script from running):"
	echo
	echo '```'
	netdata_conf DIR PORT
	echo '```'
	echo
	echo "CPU: \`utime + stime + cutime + cstime\` of \`/proc/PID/stat\` summed over the exporter and its descendants (found"
	echo "by their parent PIDs; same start time checked) at the start and end of the turn, in clock ticks ($CLK_TCK/s);"
	echo "for memwatchd plus its in-kernel sampler's softirq time (\`memwatch_memory_sampler_seconds_total\` between the"
	echo "turn's first and last scrapes), which no process is charged for; beside it the first field of"
	echo "\`/proc/PID/task/*/schedstat\` summed over the threads alive at both ends (exact where ticks are few, as at rest;"
	echo "blind to children that exited: netdata's and process-exporter's figures there are lower bounds);"
	echo "memory: \`Anonymous\`, \`Pss\` and \`Rss\` of \`/proc/PID/smaps_rollup\` summed over the same processes at the end;"
	echo "scrapes: \`curl -s -H 'Accept-Encoding: gzip' --compressed -w '%{time_total}'\` (gzip asked, as Prometheus asks); series: lines of the last scrape not starting with \`#\`. With one round"
	echo "the table gives single turns: the host is shared, so read the ratios, not the third digit."
} >"$S"
cat "$S"
# Summary rows: memwatchd's CPU and anonymous memory as a ratio to each peer.
sum_cell() { # key unit-formatter scale
	local key=$1 scale=$2 ex cell mine
	mine=$(med "$scale" memwatchd "$key")
	if [ "$key" = cpu_pct ] || [ "$key" = sched_pct ]; then cell="$(fmt 3 "$mine") %:"; else cell="$(mib "$mine") MiB:"; fi
	for ex in "${EXS[@]}"; do
		[ "$ex" = memwatchd ] && continue
		if [ "$key" = cpu_pct ] || [ "$key" = sched_pct ]; then
			cell="$cell $(ratio "$mine" "$(med "$scale" "$ex" "$key")")× $ex ($(fmt 3 "$(med "$scale" "$ex" "$key")") %),"
		else
			cell="$cell $(ratio "$mine" "$(med "$scale" "$ex" "$key")")× $ex ($(mib "$(med "$scale" "$ex" "$key")")),"
		fi
	done
	echo "${cell%,}"
}
case " $EXPORTERS " in *" memwatchd "*) ;; *) WRITE_DOC= ;; esac
for scale in $SCALES; do
	target="—" verdict_cell=""
	if [ "$scale" = rest ] && [ -n "$(med rest node_exporter sched_pct | grep -v nan)" ]; then
		# At rest a turn is a handful of ticks: judged by schedstat (no child exits there).
		target="≤ 1× node_exporter"
		r=$(ratio "$(med rest memwatchd sched_pct)" "$(med rest node_exporter sched_pct)")
		verdict_cell=$(verdict "$r" '<=' 1)
		summary_row "memwatchd CPU by schedstat at rest, as a ratio to node_exporter (one run, each alone, scraped every ${INTERVAL} s)" "$target" "$(fmt 3 "$(med rest memwatchd sched_pct)") / $(fmt 3 "$(med rest node_exporter sched_pct)") % = $r" "$verdict_cell"
		target="—" verdict_cell=""
	elif [ "$scale" != rest ]; then
		target="< 1× process-exporter and netdata"
		verdict_cell=met
		for ex in process-exporter netdata; do
			r=$(ratio "$(med "$scale" memwatchd cpu_pct)" "$(med "$scale" "$ex" cpu_pct)")
			[ "$r" != n/a ] && [ "$(verdict "$r" '<=' 0.999999)" = met ] || verdict_cell="**missed**"
		done
	fi
	summary_row "memwatchd CPU$([ "$scale" != rest ] || echo " by schedstat") as a ratio to each peer, $(label "$scale") (one run, each alone, scraped every ${INTERVAL} s)" "$target" "$(sum_cell "$(cpu_key "$scale")" "$scale")" "$verdict_cell"
	summary_row "memwatchd RssAnon as a ratio to each peer, $(label "$scale")" "—" "$(sum_cell anon "$scale")" ""
done
[ -z "$WRITE_DOC" ] || update_doc_section peers "$S"
