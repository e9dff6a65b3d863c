#!/bin/sh
# Installs what building memwatchd needs (and, with --test, running its tests)
# from Debian's archive. Does nothing when everything is already there.
set -eu

build_pkgs="meson ninja-build gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libmicrohttpd-dev libsystemd-dev libinih-dev libcurl4-openssl-dev libjansson-dev libncurses-dev
libprotobuf-c-dev protobuf-c-compiler"
test_pkgs="locales check libclang-rt-14-dev prometheus prometheus-alertmanager python3 python3-yaml linux-perf chromium tmux qemu-system-x86 busybox-static openssl curl systemd man-db strace dpkg-dev debhelper build-essential mmdebstrap"

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

if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages:$missing (run as root to install them)" >&2
		exit 1
	fi
	echo "install-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ "${1:-}" = "--test" ]; then
	comma_locale
fi
