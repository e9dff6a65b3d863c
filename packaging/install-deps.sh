#!/bin/sh
# Installs what building memwatchd needs from Debian's archive; with --arm64
# also what cross-building it for arm64 and booting Debian's arm64 kernels in
# qemu need, and with --test what running its tests needs (--arm64 included:
# the arm64 suite is part of the default test run), and with --bench what the
# scripts in bench/ need (not part of --test: CI does not run them). Does
# nothing when everything is already there.
set -eu

build_pkgs="meson ninja-build gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libmicrohttpd-dev libsystemd-dev libinih-dev libcurl4-openssl-dev libjansson-dev libncurses-dev
libprotobuf-c-dev protobuf-c-compiler"
test_pkgs="locales check libclang-rt-14-dev prometheus prometheus-alertmanager python3 python3-yaml linux-perf chromium tmux qemu-system-x86 busybox-static openssl curl systemd man-db strace dpkg-dev debhelper build-essential mmdebstrap lz4 wrk"
# bench/: load tools, and the exporters bench/scrape.sh and bench/peers.sh
# compare with (each started by the script itself; their services must not run).
bench_pkgs="wrk curl linux-perf bpftool stress-ng prometheus-node-exporter prometheus-process-exporter
netdata-core netdata-plugins-bash"
bench_services="prometheus-node-exporter prometheus-process-exporter netdata"

# The cross compiler, the arm64 -dev packages of every library the daemon and
# memwatch-top link (Multi-Arch: same, so they install beside the amd64 ones),
# pkgconf:arm64 for aarch64-linux-gnu-pkg-config, and qemu-system-aarch64. The
# arm64 guests' busybox and kernels are fetched by apt-get download into
# tests/vm's cache instead: busybox-static:arm64 would replace the amd64 one.
# system-arm64 (tests/system) also needs the .deb tools (dpkg-dev, debhelper),
# mmdebstrap for the arm64 root file system (unpacked only: no qemu-user-static
# or binfmt_misc), lz4 for its archive and promtool (prometheus) for the scrape
# it checks.
arm64_pkgs="gcc-aarch64-linux-gnu pkgconf:arm64 libc6-dev:arm64 libbpf-dev:arm64 libelf-dev:arm64
zlib1g-dev:arm64 libmicrohttpd-dev:arm64 libsystemd-dev:arm64 libinih-dev:arm64 libcrypt-dev:arm64
libcurl4-openssl-dev:arm64 libjansson-dev:arm64 libncurses-dev:arm64 libprotobuf-c-dev:arm64 qemu-system-arm
dpkg-dev debhelper mmdebstrap lz4 prometheus"

arm64=no
pkgs=$build_pkgs
case "${1:-}" in
--test)
	pkgs="$pkgs $test_pkgs"
	arm64=yes
	;;
--arm64)
	arm64=yes
	;;
--bench)
	pkgs="$pkgs $bench_pkgs"
	;;
esac
if [ $arm64 = yes ]; then
	pkgs="$pkgs $arm64_pkgs"
fi

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

# The tests of locale-independent number formatting and parsing need a locale
# whose decimal separator is a comma.
comma_locale() {
	locale -a 2>/dev/null | grep -qix 'de_DE.utf8' && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: no de_DE.UTF-8 locale (run as root to generate it)" >&2
		return 1
	fi
	echo "install-deps: generating the de_DE.UTF-8 locale" >&2
	localedef -i de_DE -c -f UTF-8 de_DE.UTF-8
}

add_arch=no
if [ $arm64 = yes ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	add_arch=yes
fi

if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages:$missing (run as root to install them)" >&2
		exit 1
	fi
	if [ $add_arch = yes ]; then
		echo "install-deps: adding the arm64 architecture to dpkg" >&2
		dpkg --add-architecture arm64
	fi
	echo "install-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# The exporters' packages start and enable their services: a policy-rc.d
	# of our own (only when there is none) refuses the start, and on a
	# systemd host they are disabled below.
	own_policy=no
	if [ "${1:-}" = "--bench" ] && [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		own_policy=yes
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	if [ $own_policy = yes ]; then
		rm -f /usr/sbin/policy-rc.d
		trap - EXIT
	fi
fi
if [ "${1:-}" = "--bench" ] && [ -d /run/systemd/system ]; then
	for s in $bench_services; do
		systemctl disable --now "$s" >/dev/null 2>&1 || true
	done
fi
if [ "${1:-}" = "--test" ]; then
	comma_locale
fi
