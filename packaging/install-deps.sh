#!/bin/sh
# Installs what building memwatchd needs (and, with --test, running its tests)
# from Debian's archive. Does nothing when everything is already there.
set -eu

build_pkgs="meson ninja-build gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libmicrohttpd-dev libsystemd-dev libinih-dev"
test_pkgs="check libclang-rt-14-dev prometheus prometheus-alertmanager python3 python3-yaml linux-perf chromium tmux qemu-system-x86 busybox-static openssl curl systemd man-db strace dpkg-dev debhelper build-essential"

pkgs=$build_pkgs
if [ "${1:-}" = "--test" ]; then
	pkgs="$pkgs $test_pkgs"
fi

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
