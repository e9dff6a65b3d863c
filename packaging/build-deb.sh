#!/bin/sh
# Builds the Debian package of this source tree:
#   packaging/build-deb.sh [-a ARCH] [OUTDIR]
# -a ARCH cross-builds for that Debian architecture (arm64: packaging/install-deps.sh
# --arm64 installs what it needs) with the build profiles cross and nocheck.
# dpkg-buildpackage wants debian/ at the top of the source tree, and the top
# level of this one is fixed, so the tree is copied into a scratch directory
# (in git: the tracked files and the untracked ones .gitignore does not exclude;
# outside git: everything but build directories), packaging/debian becomes
# ./debian there, `dpkg-buildpackage -us -uc -b` builds, and the .deb (with the
# .buildinfo and .changes) is copied into OUTDIR (default: the current
# directory). The build needs the packages in Build-Depends of
# packaging/debian/control, and a kernel with BTF (see debian/rules).
#
# Environment: DEB_BUILD_OPTIONS passes through (nocheck skips the unit tests);
# MEMWATCHD_KEEP_BUILD=1 keeps the scratch directory and prints where it is.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
host_arch=
if [ "${1:-}" = "-a" ]; then
	host_arch=${2:?build-deb: -a needs an architecture}
	shift 2
fi
out=${1:-.}
mkdir -p "$out"
out=$(cd "$out" && pwd)

for tool in dpkg-buildpackage dpkg-parsechangelog tar; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "build-deb: $tool not found (packages dpkg-dev and debhelper)" >&2
		exit 1
	fi
done

version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
work=$(mktemp -d "${TMPDIR:-/tmp}/memwatchd-deb.XXXXXX")
cleanup() {
	if [ "${MEMWATCHD_KEEP_BUILD:-0}" = 1 ]; then
		echo "build-deb: kept $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tree="$work/memwatchd-$version"
mkdir "$tree"

if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# --ignore-failed-read: a tracked file deleted in the work tree is left out.
	(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
		(cd "$src" && tar --null --files-from=- --ignore-failed-read --no-recursion -cf - 2>/dev/null) |
		tar -C "$tree" -xf -
else
	(cd "$src" && tar --exclude='./build*' --exclude='./obj-*' --exclude='./.git' \
		--exclude='./debian' -cf - .) | tar -C "$tree" -xf -
fi
rm -rf "$tree/debian"
cp -a "$src/packaging/debian" "$tree/debian"

echo "build-deb: building memwatchd $version in $tree" >&2
if [ -n "$host_arch" ] && [ "$host_arch" != "$(dpkg --print-architecture)" ]; then
	# The unit tests are arm64 binaries: they cannot run here.
	export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }nocheck"
	(cd "$tree" && dpkg-buildpackage -us -uc -b -Jauto -a "$host_arch" -Pcross,nocheck)
else
	(cd "$tree" && dpkg-buildpackage -us -uc -b -Jauto)
fi

found=0
for f in "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes; do
	[ -e "$f" ] || continue
	cp "$f" "$out/"
	echo "$out/$(basename "$f")"
	case $f in *.deb) found=1 ;; esac
done
if [ "$found" != 1 ]; then
	echo "build-deb: dpkg-buildpackage made no .deb" >&2
	exit 1
fi
