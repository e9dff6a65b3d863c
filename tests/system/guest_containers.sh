# shellcheck shell=bash
# Containers from real runtimes, sourced by tests/system/guest.sh at its end
# on the kernels the harness chose, with the runtimes it named for each
# (mw.containers=podman,docker on the kernel's command line: run_system.py
# --containers-kernel). Podman (crun) and Docker (runc,
# started only for its part) run under the systemd cgroup driver
# (libpod-<id>.scope, docker-<id>.scope) from an image built here from a
# tarball: busybox-static and memhog with its libc; no registry is reachable.
# The guest's / is the initramfs, which pivot_root cannot leave (the runtimes
# chroot instead: no_pivot_root, DOCKER_RAMDISK), and it has no kernel
# modules (no overlay: the vfs storage driver). Prints blocks
# system_judge_containers.py judges; nothing here judges.
#
# Uses guest.sh's mark, block, now, scrape_fetch and $URL, $CONF, $CG;
# CONTAINER_TTL ([collector.oom] series_ttl, seconds) from the conf file.

CTR_IMAGE=localhost/mw-image:1
CTR_RUN=(--pull never --memory 64m --memory-swap 64m --network none --security-opt apparmor=unconfined)
CTR_HOLD_MIB=16

# The image: busybox for sh, dd and sleep; memhog with the loader and libc it needs.
ctr_image_tar() (
	set -e
	img=/tmp/mw-image
	mkdir -p $img/bin $img/dev $img/proc $img/sys $img/tmp $img/lib64 $img/lib/x86_64-linux-gnu
	cp "$(command -v busybox)" $img/bin/busybox
	for a in sh dd sleep cat touch; do ln -sf busybox $img/bin/$a; done
	cp /usr/local/bin/memhog $img/bin/memhog
	cp -L /lib64/ld-linux-x86-64.so.2 $img/lib64/
	cp -L /lib/x86_64-linux-gnu/libc.so.6 $img/lib/x86_64-linux-gnu/
	tar -C $img -cf /tmp/mw-image.tar .
	du -k /tmp/mw-image.tar
	df -h / /tmp
)

# Scrapes until a window ended after now, then prints the container series
# of it (the families the checks read) as block $1.
ctr_scrape() {
	scrape_fetch "$(now)"
	mark "BEGIN metrics $1"
	grep -E '^memwatch_(window_end_timestamp_seconds|cgroup_(info|oom_kills_total|memory_(usage|limit)_bytes))[ {]' /tmp/metrics |
		grep -E 'container_id="[0-9a-f]|^memwatch_window_end'
	echo "# scrape exit $rc $fresh: window end ${end:-none}, wanted >= $after"
	mark "END metrics $1"
}

# A background scraper, from before a container starts: per scrape, its wall
# time, the window's end and the container series in it, into file $1, every
# $2 seconds (a window is 1 s). Two can run at once (the TTL's and a held
# container's): each has its own files.
ctr_poll() {
	local end
	while :; do
		if curl -s -o "$1.metrics" --max-time 10 "$URL/metrics"; then
			end=$(awk '$1 == "memwatch_window_end_timestamp_seconds" { print $2 }' "$1.metrics")
			echo "scrape $(now) ${end:-none}"
			grep -E '^memwatch_cgroup_(info|oom_kills_total)\{.*container_id="[0-9a-f]' "$1.metrics"
		fi
		sleep "$2"
	done >"$1"
}

ctr_poll_start() {
	ctr_poll "$1" "$2" &
	echo $! >"$1.pid"
}

# The series in the last complete scrape of poll file $1.
ctr_poll_last() {
	awk '/^scrape / { last = cur; cur = "" ; next } { cur = cur $0 "\n" } END { printf "%s", last }' "$1"
}

ctr_poll_stop() {
	local poller
	poller=$(cat "$2.pid")
	kill "$poller"
	wait "$poller" 2>/dev/null
	mark "BEGIN poll $1"
	cat "$2"
	mark "END poll $1"
}

# $1 runtime (podman, docker), $2 name: what the runtime records for it.
ctr_inspect() {
	local id name pid oom rc started finished
	# One call (TCG makes each take seconds); times as Go prints them, "|" apart.
	IFS='|' read -r id name pid oom rc started finished < <("$1" inspect --format \
		'{{.Id}}|{{.Name}}|{{.State.Pid}}|{{.State.OOMKilled}}|{{.State.ExitCode}}|{{.State.StartedAt}}|{{.State.FinishedAt}}' "$2")
	mark "BEGIN inspect $2"
	printf 'id %s\nname %s\npid %s\noomkilled %s\nexit %s\n' "$id" "${name#/}" "$pid" "$oom" "$rc"
	# Podman prints Go's time.Time ("2026-12-04 19:40:01.5 +0000 UTC"), Docker RFC 3339.
	echo "started $(date -u -d "${started% UTC}" +%s.%N) ($started)"
	echo "finished $(date -u -d "${finished% UTC}" +%s.%N) ($finished)"
	mark "END inspect $2"
}

# A container started with a name of our choosing, holding CTR_HOLD_MIB of
# tmpfs and then idle: the poller runs from before the start (its name must
# show in memwatch_cgroup_info within two windows of it), then its usage and
# limit against memory.current and memory.max read around a scrape.
ctr_hold() {
	local rt=$1 name=$2 pid path i c0 m0 c1 m1
	shift 2
	ctr_poll_start /tmp/poll-$name 0.2
	sleep 1.5
	block "run $name" "$rt" run -d --name "$name" "$@" "${CTR_RUN[@]}" $CTR_IMAGE \
		/bin/sh -c "dd if=/dev/zero of=/dev/shm/hold bs=1M count=$CTR_HOLD_MIB 2>/dev/null; touch /tmp/held; exec sleep 3600"
	for i in $(seq 1 100); do
		"$rt" exec "$name" /bin/cat /tmp/held >/dev/null 2>&1 && break
		sleep 0.2
	done
	ctr_inspect "$rt" "$name"
	pid=$("$rt" inspect --format '{{.State.Pid}}' "$name")
	path=$(awk -F: '$1 == "0" { print $3 }' "/proc/${pid:-0}/cgroup" 2>/dev/null)
	# Until a name shows or 30 s: the judge reads the first window that has it.
	for i in $(seq 1 150); do
		grep -q "container=\"$name\"" /tmp/poll-$name && break
		sleep 0.2
	done
	# Every window the daemon kept (the last 60 s), whether its cgroup_info
	# named the container: a scraper starved by the runtime misses windows.
	curl -s --max-time 60 -o /tmp/windows.json "$URL/api/v1/windows"
	mark "BEGIN windows $name"
	awk -v want="\"container\":\"$name\",\"container_id\":\"$(cut -c1-12 <<<"$("$rt" inspect --format '{{.Id}}' "$name")")\"" '
		/^\{"seq"/ { if (match($0, /"end":[0-9.]+/)) end = substr($0, RSTART + 6, RLENGTH - 6) }
		/^"memwatch_cgroup_info":/ { print "window " end " " (index($0, want) ? "shown" : "absent") }' /tmp/windows.json
	mark "END windows $name"
	sleep 2
	ctr_poll_stop "$name" /tmp/poll-$name
	# The same window: memory.current and memory.max read before and after a
	# scrape of a window that ended after the first read; again while they moved.
	mark "BEGIN usage $name"
	echo "cgroup $path"
	[ -n "$path" ] && [ "$path" != / ] || { mark "END usage $name"; return 1; }
	for i in $(seq 1 8); do
		read -r c0 <"$CG$path/memory.current"
		read -r m0 <"$CG$path/memory.max"
		scrape_fetch "$(now)" cgroups-read
		read -r c1 <"$CG$path/memory.current"
		read -r m1 <"$CG$path/memory.max"
		echo "try $i before $c0 $m0 after $c1 $m1 window ${end:-none} $fresh"
		grep -E "^memwatch_cgroup_memory_(usage|limit)_bytes\{.*cgroup=\"$path\"" /tmp/metrics
		[ "$c0" = "$c1" ] && [ "$m0" = "$m1" ] && [ $fresh = fresh ] && break
	done
	mark "END usage $name"
}

# conmon, Podman's monitor (2.1.12 in Debian 13, upstream as of 2025 too),
# stops watching the container's memory.events at the first change that shows
# no OOM yet, and reclaim's "max" events come before the kill. It then learns
# of the kill only from one more read after the container's first process
# exited, which races with systemd removing the scope: OOMKilled false in a
# CI run and a dry run of Debian 13. A shell joined to the container's cgroup
# from outside keeps the cgroup 2 s past that exit, so that read finds the
# kill. Prints the holder and, every 0.2 s, conmon's inotify descriptors.
ctr_keep_for_conmon() {
	local name=$1 pid=0 conmon=0 path i
	for i in $(seq 1 150); do
		read -r pid conmon < <(podman inspect --format '{{.State.Pid}} {{.State.ConmonPid}}' "$name" 2>/dev/null)
		[ "${pid:-0}" != 0 ] && break
		sleep 0.1
	done
	path=$(awk -F: '$1 == "0" { print $3 }' "/proc/${pid:-0}/cgroup" 2>/dev/null)
	[ -n "$path" ] || { echo "no container process to follow"; return; }
	sh -c "echo \$\$ >'$CG$path/cgroup.procs' && tail --pid=$pid -s 0.1 -f /dev/null; exec sleep 2" &
	echo "$(now) holder $! in $path (container process $pid, conmon $conmon)"
	while [ -d "/proc/$pid" ]; do
		echo "$(now) conmon inotify descriptors $(ls -l "/proc/$conmon/fd" 2>/dev/null | grep -c inotify)"
		sleep 0.2
	done
	echo "$(now) container process gone"
}

# A container that allocates past its 64 MiB until the kernel kills it; the
# runtime's record of it, then podman/docker rm and the cgroup's removal.
ctr_oom() {
	local rt=$1 name=$2 cg i keeper=""
	shift 2
	if [ "$rt" = podman ]; then
		ctr_keep_for_conmon "$name" >"/tmp/keep-$name" 2>&1 &
		keeper=$!
	fi
	# A pause first: the runtime's OOM watch is set up once the container runs.
	# The shell outlives the hog by 2 s: a runtime learns of the kill from
	# memory.events, asynchronously, and when the container's first process
	# is the victim it may tear down first (containerd 1.6 left Docker's
	# OOMKilled false in one run of two that way); the exit code is the hog's.
	block "run $name" "$rt" run --name "$name" "$@" "${CTR_RUN[@]}" $CTR_IMAGE \
		/bin/sh -c 'sleep 3; /bin/memhog -n mw-ctr-hog 256; rc=$?; sleep 2; exit $rc'
	if [ -n "$keeper" ]; then
		wait "$keeper"
		block "conmon-watch $name" cat "/tmp/keep-$name"
	fi
	cg=$(ls -d $CG/*/*-"$("$rt" inspect --format '{{.Id}}' "$name")".scope 2>/dev/null)
	ctr_inspect "$rt" "$name"
	# Where podman looks for conmon's record of the kill (its OOMKilled), and
	# what conmon said: evidence for the judge's note, not judged.
	[ "$rt" = podman ] && block "oom-record $name" sh -c "ls -l \$(podman inspect --format '{{.StaticDir}}' $name) \
		\$(podman inspect --format '{{.OCIConfigPath}}' $name | xargs dirname) 2>&1; journalctl -b --no-pager -o cat -t conmon | tail -n 15"
	ctr_scrape "oom $name"
	block "rm $name" "$rt" rm "$name"
	rm_done=$(now)
	for i in $(seq 1 100); do
		[ -z "$cg" ] || [ ! -d "$cg" ] && break
		sleep 0.1
	done
	# The scope goes when its last process exited (FinishedAt), at the latest now.
	mark "BEGIN gone $name"
	echo "rm-done $rm_done"
	echo "scope ${cg#$CG}"
	ctr_gone=$(now)
	echo "gone $([ -z "$cg" ] || [ ! -d "$cg" ] && echo yes || echo no) $ctr_gone"
	mark "END gone $name"
}

# Watches the containers' scopes every 50 ms into file $1, one line per
# change: "appear SCOPE T", "vanish SCOPE LAST_SEEN T" (gone between the two
# times): when a cgroup really went, which the runtimes' FinishedAt is not
# (systemd can remove Docker's scope tens of milliseconds before it).
ctr_watch() {
	local seen="" cur d t last=""
	while :; do
		t=$EPOCHREALTIME
		cur=""
		for d in $CG/system.slice/docker-*.scope $CG/machine.slice/libpod-*.scope; do
			[ -d "$d" ] && cur="$cur ${d#$CG}"
		done
		for d in $seen; do
			case "$cur " in *" $d "*) ;; *) echo "vanish $d $last $t" ;; esac
		done
		for d in $cur; do
			case "$seen " in *" $d "*) ;; *) echo "appear $d $t" ;; esac
		done
		seen=$cur last=$t
		sleep 0.05
	done >"$1"
}

# dockerd's configuration; $1 an exec-opt (the cgroup driver), if any.
ctr_docker_json() {
	printf '{"storage-driver": "vfs", "bridge": "none", "iptables": false, "ip-forward": false%s}\n' \
		"${1:+, \"exec-opts\": [\"$1\"]}"
}

# Whether this guest runs runtime $1 (CTR_RUNTIMES: guest.sh, from the
# kernel's mw.containers=).
ctr_runs() {
	case " $CTR_RUNTIMES " in *" $1 "*) return 0 ;; esac
	return 1
}

containers_scenario() {
	mkdir -p /etc/containers /etc/docker /etc/systemd/system/docker.service.d
	printf '[storage]\ndriver = "vfs"\nrunroot = "/run/containers/storage"\ngraphroot = "/var/lib/containers/storage"\n' \
		>/etc/containers/storage.conf
	printf '[engine]\ncgroup_manager = "systemd"\nno_pivot_root = true\n' >/etc/containers/containers.conf
	ctr_docker_json >/etc/docker/daemon.json
	printf '[Service]\nEnvironment=DOCKER_RAMDISK=1\n' >/etc/systemd/system/docker.service.d/ramdisk.conf

	# The OOM series of a removed container stays CONTAINER_TTL seconds.
	sed -i "/^\[collector.oom\]/,/^\[/ s/^series_ttl = .*\$/series_ttl = ${CONTAINER_TTL}s/" $CONF
	block ctr-conf grep -n '^series_ttl' $CONF
	# The shipped unit reads the runtimes' root-only files (their names) with
	# CAP_DAC_READ_SEARCH: no drop-in.
	systemctl daemon-reload
	# The full checks before started the unit more than StartLimitBurst=5
	# times in StartLimitIntervalSec=300 when they ran quickly (Debian 13's
	# guest): systemd then refuses a start until the count is reset.
	systemctl reset-failed memwatchd
	block ctr-start systemctl start memwatchd
	wait_active memwatchd

	block ctr-image ctr_image_tar
	mark "BEGIN ctr-runtimes"
	echo $CTR_RUNTIMES
	mark "END ctr-runtimes"
	if ctr_runs podman; then
		mark "BEGIN ctr-podman"
		podman --version
		podman info --format 'cgroupManager {{.Host.CgroupManager}} cgroupVersion {{.Host.CgroupsVersion}} runtime {{.Host.OCIRuntime.Name}} storage {{.Store.GraphDriverName}}'
		podman info --format '{{.Host.Conmon.Version}}'
		podman import --quiet /tmp/mw-image.tar $CTR_IMAGE
		mark "END ctr-podman"
		block "pod create" podman pod create --infra=false --name mw-pod
	fi
	ctr_poll_start /tmp/poll-ttl 0.5
	ctr_watch /tmp/cg-watch &
	watcher=$!
	ctr_runs podman && ctr_oom podman mw-pm-hog

	if ctr_runs docker; then
		block ctr-docker-start sh -c 'systemctl unmask containerd.service docker.service docker.socket &&
			systemctl daemon-reload && systemctl start docker.service'
		# dockerd's own choice of cgroup driver first; systemd forced if it is not.
		mark "BEGIN ctr-docker"
		echo "default cgroupDriver $(docker info --format '{{.CgroupDriver}}')"
		if [ "$(docker info --format '{{.CgroupDriver}}')" != systemd ]; then
			ctr_docker_json native.cgroupdriver=systemd >/etc/docker/daemon.json
			systemctl restart docker.service
			echo "forced native.cgroupdriver=systemd"
		fi
		docker version --format 'client {{.Client.Version}} server {{.Server.Version}}'
		docker info --format 'cgroupDriver {{.CgroupDriver}} cgroupVersion {{.CgroupVersion}} runtime {{.DefaultRuntime}} storage {{.Driver}}'
		docker import --change 'CMD ["/bin/sh"]' /tmp/mw-image.tar $CTR_IMAGE
		mark "END ctr-docker"
		ctr_oom docker mw-dk-hog
	fi
	# The held containers and the kernel's and journal's record while the
	# removed containers' OOM series wait out their TTL (the poller above runs on).
	ctr_runs podman && ctr_hold podman mw-pm-hold --pod mw-pod
	ctr_runs docker && ctr_hold docker mw-dk-hold
	block ctr-dmesg sh -c "dmesg | grep -E 'oom-kill:|Killed process'"
	block ctr-journal sh -c "journalctl -u memwatchd -b --no-pager -o cat | grep -iE 'docker|podman|container' | tail -n 20"
	mark "ttl wait from $(now)"
	# The removed containers' OOM series until they went, or TTL + 10 s.
	for i in $(seq 1 $(((CONTAINER_TTL + 10) * 5))); do
		ctr_poll_last /tmp/poll-ttl | grep -qE 'oom_kills_total\{.*container_id="[0-9a-f]' || break
		sleep 0.2
	done
	# The daemon counts the TTL from before the guest saw the scope gone: the
	# judge wants scrapes past TTL + 2 windows after that.
	while [ "$(echo "$(now) $ctr_gone $CONTAINER_TTL" | awk '{ print ($1 - $2 > $3 + 4) }')" = 0 ]; do
		sleep 0.5
	done
	ctr_poll_stop ttl /tmp/poll-ttl
	kill "$watcher"
	wait "$watcher" 2>/dev/null
	block "cgroup watch" cat /tmp/cg-watch
	if ctr_runs docker; then
		docker rm -f mw-dk-hold >/dev/null
		systemctl stop docker.service docker.socket containerd.service
	fi
	ctr_runs podman && podman rm -f mw-pm-hold >/dev/null
	systemctl stop memwatchd
}
