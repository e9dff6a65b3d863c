#!/bin/bash
# The v2 scenario of the system test inside the Debian 12 guest (systemd as
# PID 1, pure cgroup v2): run_system.py --checks itests puts the host's test
# executables, the daemon and what they need into the initramfs at their
# host paths, and the list of commands in /etc/mw-itests.list (name, timeout
# in seconds, command; tab-separated). Each runs as root in turn, its output
# between "=== BEGIN itest name ===" / "=== END itest name ===" markers, its
# exit status and seconds after it; then the guest powers off. The kernel
# command line says which of the list this guest runs (mw.itests=). The host
# judges (system_itests.py). Nothing here judges.
#
# /etc/mw-itests.conf sets TMP_DEV (the ext4 disk for /tmp), HOST_TMP (the
# host's files under /tmp, copied onto it) and CI_VALUE
# (the host's CI, passed on: under CI=true a test may not skip).
set -u
export LC_ALL=C.UTF-8
. /etc/mw-itests.conf
[ -n "$CI_VALUE" ] && export CI="$CI_VALUE"
# TCG runs everything many times slower: the bounds on a hang (a daemon's
# start, check's per-test timeout) grow; nothing measured is compared with
# them. A failure message may carry a whole scrape: check keeps it whole.
export MW_TEST_SLOWDOWN=6 CK_TIMEOUT_MULTIPLIER=3 CK_MAX_MSG_SIZE=1048576

mark() { echo "=== $* ==="; }

mark "BEGIN guest"
echo "uname $(uname -r)"
echo "mount $(grep ' - cgroup2 ' /proc/self/mountinfo)"
echo "controllers $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "v1-memory $([ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ] && echo yes || echo no)"
echo "uptime $(cut -d' ' -f1 /proc/uptime)"
echo "memtotal $(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) kB"
mark "END guest"

# The tests' sparse files must fill the page cache: /tmp on a disk. The
# host's files under /tmp (its build, when it lives there) wait in $HOST_TMP.
mark "BEGIN tmp-mount"
mount -t ext4 "$TMP_DEV" /tmp && chmod 1777 /tmp && grep ' /tmp ' /proc/self/mounts &&
	{ [ ! -d "$HOST_TMP" ] || cp -a "$HOST_TMP"/. /tmp/; }
rc=$?
mark "END tmp-mount"
mark "rc tmp-mount $rc"

# This guest's share of the list: the kernel command line's mw.itests=a,b.
mine=$(sed -n 's/.*mw\.itests=\([^ ]*\).*/\1/p' /proc/cmdline)
mark "BEGIN itests-here"
echo "$mine"
mark "END itests-here"
while IFS=$'\t' read -r name timeout cmd; do
	[ -n "$name" ] || continue
	case ",$mine," in *",$name,"*) ;; *) continue ;; esac
	t0=$(date +%s)
	mark "BEGIN itest $name"
	timeout -k 10 "$timeout" bash -c "$cmd" </dev/null 2>&1
	rc=$?
	mark "END itest $name"
	mark "rc itest $name $rc"
	mark "secs itest $name $(($(date +%s) - t0))"
done </etc/mw-itests.list

mark "DONE"
systemctl poweroff --no-block
