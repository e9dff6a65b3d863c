#!/bin/bash
# The memwatchd system test inside a Debian 12 guest with systemd as PID 1.
# tests/system/run_system.py puts this script, the .deb built from the tree
# and memhog into the initramfs next to the cached root file system, and
# systemd runs it once multi-user.target is reached (mw-systemtest.service,
# output on the serial console). It does what an operator does, prints what
# it saw between "=== BEGIN name ===" / "=== END name ===" markers, and
# powers off; the host judges the console. Nothing here judges.
#
# /etc/mw-systemtest.conf (written by the harness) sets:
#   CACHE_DEV     block device mw-cache reads (larger than its MemoryMax)
#   CACHE_MIB     how much of it to read
#   SERIES_TTL    [collector.reclaim] series_ttl set in memwatchd.conf, seconds
#   OOM_COMM      comm of the process the OOM killer takes (memhog -n)
#   UNIT_SHA256   sha256 of systemd/memwatchd.service in the source tree
#   SMOKE         1: only the install, the collector scrape and one reload
#                 (run_system.py --checks smoke, the arm64 guests)
#   CONTAINER_TTL [collector.oom] series_ttl for the containers (guest_containers.sh,
#                 on the kernel booted with mw.containers=RUNTIME,...)
#   CONTAINERS_ONLY 1: only the install, the collector scrape and the containers
#                 (run_system.py --checks containers)
set -u
export SYSTEMD_COLORS=0 SYSTEMD_PAGER=cat SYSTEMD_LESS= LC_ALL=C.UTF-8
. /etc/mw-systemtest.conf

URL=http://127.0.0.1:9577
CONF=/etc/memwatchd/memwatchd.conf
CG=/sys/fs/cgroup
# The container runtimes this guest runs (the kernel's mw.containers=podman,docker).
CTR_RUNTIMES=$(sed -n 's/.*mw\.containers=\([a-z,]*\).*/\1/p' /proc/cmdline | tr , ' ')

# Each block's start in seconds since boot: where a guest's minutes go.
mark() {
	case $* in "BEGIN "*) read -r up _ < /proc/uptime && echo "=== at $up ===" ;; esac
	echo "=== $* ==="
}
now() { echo "$EPOCHREALTIME"; }

# Runs a command, its output in a block and its exit status after it.
block() {
	local name=$1
	shift
	mark "BEGIN $name"
	"$@" 2>&1
	local rc=$?
	mark "END $name"
	mark "rc $name $rc"
	return $rc
}

prop() { systemctl show -P "$2" "$1"; }

# Fetches /metrics until it serves a window that ended at or after $1 (epoch
# seconds; default a second from now), so everything before that is in it.
# With $2 = cgroups-read, the window must also have read the cgroups itself
# (memwatch_cgroup_age_seconds 0): between reads, which the BPF iterator's
# gate spaces while nothing signals a change, it exports the last read.
scrape_fetch() {
	local i code age
	if [ -n "${1:-}" ]; then
		after=$((${1%%.*} + 1))
	else
		after=$(($(date +%s) + 1))
	fi
	fresh=stale
	for i in $(seq 1 150); do
		code=$(curl -s -o /tmp/metrics -w '%{http_code}' --max-time 10 "$URL/metrics")
		rc=$?
		end=$(awk '$1 == "memwatch_window_end_timestamp_seconds" { printf "%d", $2 }' /tmp/metrics 2>/dev/null)
		age=0
		[ "${2:-}" = cgroups-read ] &&
			age=$(awk '$1 == "memwatch_cgroup_age_seconds" { print $2 }' /tmp/metrics 2>/dev/null)
		if [ $rc -eq 0 ] && [ "$code" = 200 ] && [ "${end:-0}" -ge "$after" ] && [ "${age:-none}" = 0 ]; then
			fresh=fresh
			return 0
		fi
		sleep 0.2
	done
	return 1
}

scrape_print() {
	mark "BEGIN metrics $1"
	cat /tmp/metrics
	echo "# scrape exit $rc $fresh: window end ${end:-none}, wanted >= $after"
	mark "END metrics $1"
}

scrape() {
	scrape_fetch "${2:-}" "${3:-}"
	scrape_print "$1"
}

# `systemctl reload` returns once SIGHUP is sent: scrapes until a window
# counts the reload ($2 successful ones in all), then prints it as $1.
scrape_reloaded() {
	local i n
	for i in $(seq 1 30); do
		scrape_fetch "$(now)"
		n=$(awk '$1 == "memwatch_config_reloads_total{result=\"success\"}" { printf "%d", $2 }' /tmp/metrics)
		[ "${n:-0}" -ge "$2" ] && break
	done
	scrape_print "$1"
}

events() {
	curl -s --max-time 10 "$URL/api/v1/events" >/tmp/events.json
	mark "BEGIN events $1"
	cat /tmp/events.json
	echo
	mark "END events $1"
}

# memory.* files of every memory cgroup, read with shell builtins (no fork
# per file, so the reads of one pass lie close together).
cgroups() {
	local d rel k v
	mark "BEGIN cgroups $1"
	echo "time $(now)"
	while read -r d; do
		[ -e "$d/memory.current" ] || continue
		rel=${d#$CG}
		echo "cg $rel"
		read -r v <"$d/memory.current" && echo "current $v"
		read -r v <"$d/memory.max" && echo "max $v"
		read -r v <"$d/memory.high" && echo "high $v"
		while read -r k v; do echo "event $k $v"; done <"$d/memory.events"
		while read -r k _ _ _ v; do echo "pressure $k ${v#total=}"; done <"$d/memory.pressure"
	done < <(find "$CG" -mindepth 1 -maxdepth 4 -type d)
	echo "time $(now)"
	mark "END cgroups $1"
}

# MemAvailable in bytes with a wall-clock stamp every 50 ms, until killed.
memavail_sampler() {
	local k v tick
	# read -t on a pipe that never delivers: a 50 ms pause without a fork.
	exec {tick}< <(exec sleep infinity)
	while :; do
		while read -r k v _; do
			if [ "$k" = MemAvailable: ]; then
				echo "$EPOCHREALTIME $((v * 1024))"
				break
			fi
		done </proc/meminfo
		read -r -t 0.05 -u "$tick" _
	done
}

unit_state() {
	echo "ActiveState=$(prop memwatchd ActiveState) SubState=$(prop memwatchd SubState)" \
		"MainPID=$(prop memwatchd MainPID) NRestarts=$(prop memwatchd NRestarts)" \
		"Result=$(prop memwatchd Result)"
}

wait_active() {
	local i
	for i in $(seq 1 ${2:-300}); do
		[ "$(prop "$1" ActiveState)" = active ] && return 0
		sleep 0.1
	done
	return 1
}

# The unit's memory as `systemctl status` shows it (memory.current of its
# cgroup: the daemon's pages and the kernel memory charged to it, BPF maps
# included) with memory.stat's split, and the daemon's own RssAnon, PSS, RSS.
memory_figures() {
	local pid cg
	pid=$(prop memwatchd MainPID)
	cg=$CG$(prop memwatchd ControlGroup)
	mark "BEGIN $1"
	echo "MemoryCurrent $(prop memwatchd MemoryCurrent)"
	echo "memory.current $(cat "$cg/memory.current")"
	grep -E '^(anon|file|kernel|kernel_stack|pagetables|percpu|sock|vmalloc|slab) ' "$cg/memory.stat"
	grep -E '^(VmRSS|RssAnon|RssFile|RssShmem|VmHWM):' "/proc/$pid/status"
	grep -E '^Pss:' "/proc/$pid/smaps_rollup"
	echo "running $(ps -o etimes= -p "$pid" | tr -d ' ')"
	mark "END $1"
}

# Reload through systemd: no counter may go backwards across it.
reload_once() {
	scrape pre-reload
	block reload systemctl reload memwatchd
	wait_active memwatchd
	mark "BEGIN reloaded"
	unit_state
	echo "StatusText=$(prop memwatchd StatusText)"
	mark "END reloaded"
	scrape_reloaded post-reload 1
}

# ------------------------------------------------------------------ guest
mark "BEGIN guest"
echo "uname $(uname -r)"
echo "mount $(grep ' - cgroup2 ' /proc/self/mountinfo)"
echo "controllers $(cat $CG/cgroup.controllers)"
echo "systemd $(systemctl --version | head -n 1)"
echo "os $(. /etc/os-release && echo "$VERSION_CODENAME")"
echo "uptime $(cut -d' ' -f1 /proc/uptime)"
# Debian's kernels add level 3 (perf_event_open needs CAP_SYS_ADMIN; the
# kprobe PMU memavail's kretprobe uses goes through it).
echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"
echo "failed-units $(systemctl --failed --no-legend --plain | awk '{ print $1 }' | tr '\n' ' ')"
mark "END guest"

# ------------------------------------------------------------------ 1 install
# As an image build installs: policy-rc.d keeps the maintainer scripts from
# starting the service (dh_installsystemd enables it either way), and the
# operator starts it.
# apt's resolver first (simulated: the guest has no network and no lists, so
# the Depends must be met by what is installed, t64 providers included).
block apt apt-get install --simulate --no-download /root/memwatchd.deb
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d
block dpkg dpkg -i /root/memwatchd.deb
rm -f /usr/sbin/policy-rc.d
mark "BEGIN unit-file"
echo "sha256 $(sha256sum /lib/systemd/system/memwatchd.service | cut -d' ' -f1) want $UNIT_SHA256"
echo "dropins $(prop memwatchd DropInPaths)"
echo "type $(prop memwatchd Type)"
echo "state-before-start $(prop memwatchd ActiveState)"
mark "END unit-file"

# A short reclaim series_ttl in the shipped configuration file, so that the
# test can see the OOM-killed unit's count outlive it: the OOM series stays for
# [collector.oom] series_ttl (5 minutes, as shipped) after its cgroup went.
sed -i "/^\[collector.reclaim\]/,/^\[/ s/^series_ttl = 5m\$/series_ttl = ${SERIES_TTL}s/" $CONF
block conf-diff grep -n '^series_ttl' $CONF

t0=$(now)
block enable systemctl enable --now memwatchd
t1=$(now)
mark "BEGIN started"
echo "seconds $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }')"
unit_state
echo "StatusText=$(prop memwatchd StatusText)"
echo "UID=$(prop memwatchd UID) GID=$(prop memwatchd GID)"
echo "enabled $(systemctl is-enabled memwatchd)"
mark "END started"
block status systemctl status memwatchd --no-pager --lines=20 --full
pid=$(prop memwatchd MainPID)
block procstatus grep -E '^(Name|Uid|Gid|Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' "/proc/$pid/status"
block cgroup-of-daemon cat "/proc/$pid/cgroup"

# ------------------------------------------------------------------ 2 collectors
scrape collectors

memory_figures memory-start

if [ "${SMOKE:-0}" = 1 ]; then
	# Why a collector degraded, as the daemon logged it (fexit/kprobe attach errors).
	block journal-memavail sh -c 'journalctl -u memwatchd -b --no-pager -o cat | grep memavail'
	reload_once
	mark "DONE"
	systemctl poweroff --no-block
	exit 0
fi

# The containers alone (run_system.py --checks containers): to work on them.
if [ "${CONTAINERS_ONLY:-0}" = 1 ]; then
	systemctl stop memwatchd
	. /usr/local/sbin/mw-containers
	containers_scenario
	mark "DONE"
	systemctl poweroff --no-block
	exit 0
fi

# ------------------------------------------------------------------ 3 workloads
# An idle unit with a limit and a memory.high: its files do not move, so the
# daemon's figures must equal them exactly.
systemd-run --quiet --unit=mw-idle -p MemoryMax=48M -p MemoryHigh=40M /bin/sleep infinity

# mw-cache: reads a block device through the page cache with a limit smaller
# than what it reads, so it reclaims its own cache at memory.max; then idles.
memavail_sampler >/tmp/memavail.samples &
sampler=$!
block vmstat-before-cache grep -E '^(pgscan|pgsteal|oom_kill)' /proc/vmstat
systemd-run --quiet --unit=mw-cache -p MemoryMax=64M /bin/sh -c \
	"dd if=$CACHE_DEV of=/dev/null bs=1M count=$CACHE_MIB 2>/run/mw-cache.dd; touch /run/mw-cache.done; exec sleep infinity"
for i in $(seq 1 600); do
	[ -e /run/mw-cache.done ] && break
	sleep 0.1
done
kill $sampler
wait $sampler 2>/dev/null
block cache-dd cat /run/mw-cache.dd
mark "BEGIN memavail-samples"
cat /tmp/memavail.samples
mark "END memavail-samples"
events cache
# The reclaim series of mw-cache, before its reclaim series_ttl (SERIES_TTL)
# runs out: the per-cgroup scrape below waits for a read of every cgroup.
scrape reclaim "$(now)"

# Per-cgroup figures: the guest's files read before and after a scrape of a
# window that ended after the first read.
sleep 1
cgroups before
scrape cgroups "$(now)" cgroups-read
cgroups after

# mw-oom: allocates past its 32M limit, no swap: the OOM killer takes it, and
# systemd removes the unit's cgroup.
block vmstat-before-oom grep -E '^oom_kill' /proc/vmstat
block slice-events-before-oom cat $CG/system.slice/memory.events
block oom systemd-run --wait --unit=mw-oom -p MemoryMax=32M -p OOMScoreAdjust=300 /usr/local/bin/memhog -n "$OOM_COMM" 256
block dmesg-oom sh -c "dmesg | grep -E 'oom-kill:|Killed process|memory: usage'"
for i in $(seq 1 100); do
	[ -d $CG/system.slice/mw-oom.service ] || break
	sleep 0.1
done
oom_gone=$(now)
mark "BEGIN oom-after"
echo "cgroup-removed $([ -d $CG/system.slice/mw-oom.service ] && echo no || echo yes) at $oom_gone"
grep -E '^oom_kill' /proc/vmstat
echo "slice-oom_kill $(awk '$1 == "oom_kill" { print $2 }' $CG/system.slice/memory.events)"
mark "END oom-after"
scrape oom
for i in $(seq 1 25); do
	curl -s --max-time 10 "$URL/api/v1/events" | grep -q '"kind":"oom_kill"' && break
	sleep 0.2
done
events oom

# User-space killers. systemd-oomd kills mw-oomd-hog.service, whose memory.high
# throttles it, on mw-pressure.slice's memory pressure; earlyoom (a transient
# unit of ours: the packaged one stays masked) kills mw-eo-hog on the guest's
# available memory; a shell's kill -9 into the same slice is no kill. Their
# own journal lines are the reference (run_system.py judge_userspace_kills).
scrape ukill-before
mkdir -p /etc/systemd/oomd.conf.d
printf '[OOM]\nDefaultMemoryPressureDurationSec=2s\n' >/etc/systemd/oomd.conf.d/mw.conf
printf '[Slice]\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=5%%\n' \
	>/etc/systemd/system/mw-pressure.slice
systemctl daemon-reload
block oomd-start sh -c 'systemctl unmask systemd-oomd.service systemd-oomd.socket && systemctl daemon-reload && systemctl start systemd-oomd.socket systemd-oomd.service'
# systemd-oomd kills only "with reclaim activity": anonymous memory without
# swap is never scanned, so the unit also reads the cache device past its
# memory.high, and both are throttled.
block oomd-hog systemd-run --wait --unit=mw-oomd-hog --slice=mw-pressure.slice -p MemoryHigh=40M \
	-p RuntimeMaxSec=120 sh -c "/usr/local/bin/memhog -n mw-oomdvictim 200 & \
	while :; do dd if=$CACHE_DEV of=/dev/null bs=1M 2>/dev/null; done"
block oomd-journal journalctl -u systemd-oomd -b --no-pager -o cat
block earlyoom-start systemd-run --unit=mw-earlyoom /usr/bin/earlyoom -m 25 -s 100 -r 0 --prefer '^mw-eovictim$'
sleep 2
block eo-hog systemd-run --wait --unit=mw-eo-hog -p RuntimeMaxSec=120 /usr/local/bin/memhog -n mw-eovictim 1900
block earlyoom-journal journalctl -u mw-earlyoom -b --no-pager -o cat
systemctl stop mw-earlyoom
systemd-run --unit=mw-shkill --slice=mw-pressure.slice sleep 300 >/dev/null 2>&1
sleep 1
shpid=$(prop mw-shkill.service MainPID)
kill -9 "$shpid"
mark "shell kill -9 $shpid rc $?"
sleep 1
scrape ukill-after
events ukill


# Per process: the BPF task iterator (source auto) and the /proc fallback
# (source procfs), two more instances beside the service, each against the
# guest's own /proc/PID/stat read before and after their scrapes.
procs() {
	local f line
	mark "BEGIN procs $1"
	echo "time $(now)"
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null && echo "$line"
	done
	echo "time $(now)"
	mark "END procs $1"
}

# Scrapes port $2 until a window's process walk (its age before the window's
# end) came after $3, then prints it as "metrics $1".
scrape_walked() {
	local i end age fresh=stale
	for i in $(seq 1 150); do
		curl -s --max-time 10 "http://127.0.0.1:$2/metrics" >/tmp/metrics-$2
		end=$(awk '$1 == "memwatch_window_end_timestamp_seconds" { print $2 }' /tmp/metrics-$2)
		age=$(awk '$1 == "memwatch_fault_process_age_seconds" { print $2 }' /tmp/metrics-$2)
		if [ -n "$end" ] && [ -n "$age" ] && awk -v e="$end" -v a="$age" -v t="$3" 'BEGIN { exit !(e - a > t) }'; then
			fresh=fresh
			break
		fi
		sleep 0.2
	done
	mark "BEGIN metrics $1"
	grep -E '^memwatch_(process_(minor|major)_faults_total|collector_info|window_end_timestamp_seconds|fault_process_age_seconds)' /tmp/metrics-$2
	echo "# scrape exit 0 $fresh: walk after $3"
	mark "END metrics $1"
}

# An idle process of our own that both must show: all its faults come
# before the instances start.
sleep 600 &
idle_pid=$!
fault_pids=()
for src in auto:9578 procfs:9579; do
	printf '[daemon]\nlisten = 127.0.0.1:%s\n[collector.faults]\nsource = %s\ntop_k = 1000\nseries_ttl = 1h\n' \
		"${src#*:}" "${src%:*}" >/tmp/faults-${src%:*}.conf
	/usr/sbin/memwatchd --config /tmp/faults-${src%:*}.conf >/tmp/faults-${src%:*}.log 2>&1 &
	fault_pids+=($!)
done
procs before
mark "BEGIN idle-process"
echo "pid $idle_pid"
mark "END idle-process"
t=$(now)
scrape_walked faults-auto 9578 "$t"
scrape_walked faults-procfs 9579 "$t"
procs after
kill "${fault_pids[@]}" "$idle_pid"
wait "${fault_pids[@]}" "$idle_pid" 2>/dev/null

memory_figures memory-workloads

# ------------------------------------------------------------------ 4 operations
reload_once

# What an operator reloads for: an edited file. The reclaim collector's
# top_k changes, the rest stays; still no counter may go backwards.
sed -i '/^\[collector\.reclaim\]/,/^\[/ s/^top_k = 10$/top_k = 20/' $CONF
block conf-diff-edit grep -n '^top_k' $CONF
block reload-edit systemctl reload memwatchd
wait_active memwatchd
scrape_reloaded post-reload-edit 2

# A configuration that does not parse: the reload is refused, the unit stays
# active and the journal says why at priority err.
cp $CONF /tmp/memwatchd.conf.good
printf '[daemon]\nwindow = banana\n' >>$CONF
since=$(date '+%Y-%m-%d %H:%M:%S')
pid_before=$(prop memwatchd MainPID)
block bad-reload systemctl reload memwatchd
for i in $(seq 1 100); do
	[ -n "$(journalctl -u memwatchd -p err --since "$since" -q --no-pager)" ] && break
	sleep 0.2
done
sleep 1
mark "BEGIN bad-reload-after"
unit_state
echo "pid-before $pid_before"
mark "END bad-reload-after"
block journal-err journalctl -u memwatchd -p err --since "$since" --no-pager -o short-monotonic
cp /tmp/memwatchd.conf.good $CONF
systemctl reload memwatchd

# The OOM-killed unit's count, series_ttl after its cgroup went away.
while [ "$(echo "$(now) $oom_gone $SERIES_TTL" | awk '{ print ($1 - $2 > $3 + 1) }')" = 0 ]; do
	sleep 0.5
done
mark "ttl waited $(echo "$(now) $oom_gone" | awk '{ printf "%.1f", $1 - $2 }') s since the cgroup went"
scrape after-ttl
events before-restart
# The kills over a restart: read back from the journal into /api/v1/events,
# and what journalctl itself gives for them.
block restart systemctl restart memwatchd
scrape restarted
events restarted
block journal-kills journalctl -o json --no-pager MESSAGE_ID=526efab35ed147918215e66aaad4cbe1 \
	MESSAGE_ID=7276a0cda957462e860aec1a3ec66074
block journal-catalog journalctl -x -n 1 --no-pager MESSAGE_ID=526efab35ed147918215e66aaad4cbe1

# Watchdog: a drop-in shortens it to 3 s; a stopped daemon sends no pings.
mkdir -p /etc/systemd/system/memwatchd.service.d
printf '[Service]\nWatchdogSec=3s\n' >/etc/systemd/system/memwatchd.service.d/watchdog.conf
systemctl daemon-reload
systemctl restart memwatchd
mark "BEGIN watchdog-before"
unit_state
echo "WatchdogUSec=$(prop memwatchd WatchdogUSec)"
mark "END watchdog-before"
pid=$(prop memwatchd MainPID)
since=$(date '+%Y-%m-%d %H:%M:%S')
t0=$(now)
kill -STOP "$pid"
for i in $(seq 1 600); do
	[ "$(prop memwatchd NRestarts)" -ge 1 ] && [ "$(prop memwatchd ActiveState)" = active ] && break
	sleep 0.1
done
t1=$(now)
mark "BEGIN watchdog-after"
unit_state
echo "stopped-pid $pid"
echo "seconds $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')"
mark "END watchdog-after"
block journal-watchdog journalctl -u memwatchd --since "$since" --no-pager -o short-monotonic
rm -r /etc/systemd/system/memwatchd.service.d
systemctl daemon-reload

# Stop. The stop itself is timed by systemd: from leaving active (the stop
# job starts, SIGTERM follows) to inactive (the daemon exited), on the
# monotonic clock. The wall clock around systemctl also holds the client's
# start and its D-Bus round trips, which TCG makes slow and uneven.
t0=$(now)
block stop systemctl stop memwatchd
t1=$(now)
mark "BEGIN stopped"
echo "seconds $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }')"
echo "active-exit-usec $(prop memwatchd ActiveExitTimestampMonotonic)"
echo "inactive-enter-usec $(prop memwatchd InactiveEnterTimestampMonotonic)"
unit_state
mark "END stopped"

# Socket activation: the first scrape starts the service.
block socket-start systemctl start memwatchd.socket
mark "BEGIN socket-before"
echo "service $(prop memwatchd ActiveState)"
echo "socket $(prop memwatchd.socket ActiveState)"
mark "END socket-before"
code=$(curl -s -o /tmp/metrics -w '%{http_code}' --max-time 120 "$URL/metrics")
rc=$?
mark "BEGIN socket-after"
echo "curl $rc http $code lines $(wc -l </tmp/metrics)"
echo "service $(prop memwatchd ActiveState)"
echo "triggered-by $(prop memwatchd TriggeredBy)"
echo "build_info $(grep -c '^memwatch_build_info' /tmp/metrics)"
mark "END socket-after"
systemctl stop memwatchd.socket memwatchd

if [ -n "$CTR_RUNTIMES" ]; then
	. /usr/local/sbin/mw-containers
	containers_scenario
fi

mark "DONE"
systemctl poweroff --no-block
