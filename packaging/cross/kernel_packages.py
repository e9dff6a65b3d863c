#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Debian's stock cloud kernels (and busybox-static) for another architecture,
fetched with `apt-get download` and cached: the guests of tests/vm and
tests/system boot them, and a cross build takes its BTF from one.

  kernel_packages.py btf --arch arm64 [--series 6.12] --output FILE

writes the BTF of the newest kernel of the series to FILE (what bpftool
turns into vmlinux.h). The BTF comes out of the kernel package itself: an
arm64 vmlinuz is the uncompressed Image, and the kernel keeps its BTF
(the .BTF section, /sys/kernel/btf/vmlinux at run time) as one blob in it,
found by its header (magic 0xeb9f, version 1) and checked by its lengths.

Cache: $MEMWATCHD_VM_CACHE, else /var/cache/memwatchd-vm as root, else
$XDG_CACHE_HOME/memwatchd-vm. One directory per package version holds only
what is used: vmlinuz, config, release (and btf once extracted); busybox.
Needs apt (with the architecture added: dpkg --add-architecture) and dpkg.
Stdlib only.
"""
import argparse
import fcntl
import functools
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile

# Kernel series per Debian architecture: an apt-cache search regex that is also
# a full-match check of the package name: the package that holds
# /boot/vmlinuz. From 6.19 Debian splits the image: linux-image-* only
# depends on linux-binary-*, which holds the kernel (and no config).
SERIES = {
    "amd64": {
        "5.10": r"^linux-image-5\.10\.0-[0-9]+-cloud-amd64-unsigned$",
        "6.1": r"^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$",
        "6.12": r"^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$",
        "6.18": r"^linux-image-6\.18\.[0-9]+\+deb13-cloud-amd64$",
        "6.19": r"^linux-binary-6\.19\.[0-9]+\+deb13-cloud-amd64$",
    },
    "arm64": {
        "5.10": r"^linux-image-5\.10\.0-[0-9]+-cloud-arm64-unsigned$",
        "6.1": r"^linux-image-6\.1\.0-[0-9]+-cloud-arm64-unsigned$",
        "6.12": r"^linux-image-6\.12\.[0-9]+\+deb12-cloud-arm64-unsigned$",
        "6.18": r"^linux-image-6\.18\.[0-9]+\+deb13-cloud-arm64$",
        "6.19": r"^linux-binary-6\.19\.[0-9]+\+deb13-cloud-arm64$",
    },
}

# Series that come from another Debian release than the host's: apt looks them
# up in a state of its own (cache_dir()/apt-SERIES), so the host's sources and
# lists stay as they are. The rest come from the host's apt (Debian 12).
# Bullseye's last point release only: the security archive's index names newer
# 5.10 builds whose files its pool here answers with 404 (2026-12-04).
# trixie-backports has no unsigned cloud images: the signed ones boot as well.
FOREIGN_SUITES = {
    "5.10": ["deb http://deb.debian.org/debian bullseye main"],
    "6.18": ["deb http://deb.debian.org/debian trixie-backports main"],
    "6.19": ["deb http://deb.debian.org/debian trixie-backports main"],
}

# The series a Debian 12 root file system boots (tests/system).
BOOKWORM_SERIES = ("6.1", "6.12")

BTF_MAGIC = 0xEB9F
BTF_HEADER = struct.Struct("<HBBIIIII")  # magic version flags hdr_len type_off type_len str_off str_len


class HarnessError(Exception):
    """Something on the host is missing or broken: the caller fails loudly."""


def log(msg=""):
    print(msg, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def cache_dir():
    d = os.environ.get("MEMWATCHD_VM_CACHE")
    if not d:
        if os.geteuid() == 0:
            d = "/var/cache/memwatchd-vm"
        else:
            d = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                             "memwatchd-vm")
    os.makedirs(d, exist_ok=True)
    return d


def dpkg_cmp(a, b):
    if a == b:
        return 0
    if subprocess.run(["dpkg", "--compare-versions", a, "lt", b], check=False).returncode == 0:
        return -1
    return 1


def apt_options(series=None):
    """apt-get/apt-cache options for series: [] for the host's apt, else a
    private state holding only the series' release (FOREIGN_SUITES), whose
    lists are fetched the first time."""
    sources = FOREIGN_SUITES.get(series)
    if not sources:
        return []
    state = os.path.join(cache_dir(), "apt-" + series)
    opts = ["-o", f"Dir::Etc::SourceList={state}/sources.list", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={state}/lists", "-o", f"Dir::Cache::Archives={state}/archives",
            "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache="]
    os.makedirs(os.path.join(state, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(state, "archives", "partial"), exist_ok=True)
    with open(os.path.join(state, "sources.list"), "w") as f:
        f.write("\n".join(sources) + "\n")
    if not any(n.endswith("_Packages") or n.endswith("_Packages.lz4") for n in os.listdir(os.path.join(state, "lists"))):
        apt_update(series, opts)
    return opts


def apt_update(series=None, opts=None):
    """apt-get update, of the host's lists or of the series' private ones."""
    opts = apt_options(series) if opts is None else opts
    with open(os.path.join(cache_dir(), ".apt-update.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = run(["apt-get"] + opts + ["update", "-qq"])
    if r.returncode != 0:
        raise HarnessError(f"apt-get update{' for ' + series if series else ''} failed: {r.stderr.strip()}")


def newest_candidate(names, arch, series=None):
    """(package, version) of the newest installable candidate among names for arch."""
    r = run(["apt-cache"] + apt_options(series) + ["policy"] + [f"{n}:{arch}" for n in names])
    if r.returncode != 0:
        raise HarnessError(f"apt-cache policy failed: {r.stderr.strip()}")
    candidates, current = [], None
    for line in r.stdout.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1].split(":", 1)[0]
        m = re.match(r"\s+Candidate:\s+(\S+)", line)
        if m and current and m.group(1) != "(none)":
            candidates.append((current, m.group(1)))
    if not candidates:
        hint = "" if arch == native_arch() else \
            f" (is {arch} added: dpkg --add-architecture {arch} && apt-get update; packaging/install-deps.sh --{arch} does it)"
        raise HarnessError(f"apt has no installable {arch} candidate among {' '.join(names)}{hint}")
    return max(candidates, key=functools.cmp_to_key(lambda a, b: dpkg_cmp(a[1], b[1])))


def native_arch():
    return run(["dpkg", "--print-architecture"]).stdout.strip() or "amd64"


def newest_kernel(series, arch):
    pattern = SERIES[arch][series]
    r = run(["apt-cache"] + apt_options(series) + ["search", "--names-only", pattern])
    if r.returncode != 0:
        raise HarnessError(f"apt-cache search failed: {r.stderr.strip()}")
    names = sorted({line.split(" - ", 1)[0].strip() for line in r.stdout.splitlines()})
    names = [n for n in names if re.fullmatch(pattern, n)]
    if not names:
        raise HarnessError(f"apt offers no package matching {pattern} "
                           "(is Debian 12's archive, with bookworm-security, in sources.list, "
                           "and did 'apt-get update' run?)")
    return newest_candidate(names, arch, series)


def slot_name(*parts):
    return "_".join(parts).replace("~", "_").replace(":", "_")


def fetch_package(name, version, arch, cache, slot, members, series=None, optional=()):
    """Downloads name=version for arch and writes the files of its data archive
    whose path matches members' regexes ({output name: regex}) into slot,
    atomically (the slot appears whole or not at all). A member named in
    optional may be absent."""
    with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
        r = run(["apt-get"] + apt_options(series) + ["download", "-q", f"{name}:{arch}={version}"], cwd=tmp)
        debs = [f for f in os.listdir(tmp) if f.endswith(".deb")]
        if r.returncode != 0 or not debs:
            raise HarnessError(f"apt-get download {name}:{arch}={version} failed:\n{r.stdout}{r.stderr}")
        deb = os.path.join(tmp, debs[0])
        out = os.path.join(tmp, "x")
        os.makedirs(out)
        # dpkg-deb -x would write the whole package (a kernel's modules); take only members.
        p = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
        found = {}
        with tarfile.open(fileobj=p.stdout, mode="r|") as tar:
            for m in tar:
                for kind, regex in members.items():
                    if m.isfile() and re.match(regex, m.name):
                        with open(os.path.join(out, kind), "wb") as f:
                            shutil.copyfileobj(tar.extractfile(m), f)
                        found[kind] = os.path.basename(m.name)
        lacking = set(members) - set(found) - set(optional)
        if p.wait() != 0 or lacking:
            raise HarnessError(f"{debs[0]} lacks {', '.join(sorted(lacking))}")
        os.rename(out, slot)
    return found


def fetch_kernel(series, cache, arch="amd64"):
    """(package, version, slot): the cache directory with the vmlinuz, config and
    release of the newest kernel of the series, downloading it when needed."""
    name, version = newest_kernel(series, arch)
    slot = os.path.join(cache, slot_name(name, version))  # the name holds the architecture
    if os.path.exists(os.path.join(slot, "vmlinuz")):
        return name, version, slot
    log(f"[{series} {arch}] fetching {name}:{arch}={version} into {cache}")
    found = fetch_package(name, version, arch, cache, slot,
                          {"vmlinuz": r"^\./boot/vmlinuz-", "config": r"^\./boot/config-"}, series,
                          optional=("config",))  # linux-binary-* has no config
    with open(os.path.join(slot, "release"), "w") as f:
        f.write(found["vmlinuz"][len("vmlinuz-"):] + "\n")
    # Keep one kernel per series and architecture in the cache.
    for d in os.listdir(cache):
        path = os.path.join(cache, d)
        pkg = d.split("_", 1)[0]
        if path != slot and re.fullmatch(SERIES[arch][series], pkg):
            shutil.rmtree(path, ignore_errors=True)
    return name, version, slot


def fetch_kernel_updating(series, cache, updated, arch="amd64"):
    """fetch_kernel(), running `apt-get update` once when apt's lists are missing or
    stale: Debian's security archive drops a kernel once a newer one is out, so old
    lists name a package that no longer downloads."""
    try:
        return fetch_kernel(series, cache, arch)
    except HarnessError as e:
        if updated[0]:
            raise
        log(f"[{series} {arch}] {e}\n[{series} {arch}] running apt-get update once and trying again")
        updated[0] = True
        try:
            apt_update(series)
        except HarnessError as u:
            raise HarnessError(f"{e}\n{u}") from e
        return fetch_kernel(series, cache, arch)


def fetch_busybox(cache, arch):
    """Path of a static busybox for arch (busybox-static:ARCH, cached). Installing
    busybox-static:arm64 would remove the amd64 one the x86-64 guests use, so
    it is downloaded instead."""
    name, version = newest_candidate(["busybox-static"], arch)
    slot = os.path.join(cache, slot_name(name, version, arch))
    if not os.path.exists(os.path.join(slot, "busybox")):
        log(f"fetching {name}:{arch}={version} into {cache}")
        fetch_package(name, version, arch, cache, slot, {"busybox": r"^\./bin/busybox$"})
        os.chmod(os.path.join(slot, "busybox"), 0o755)
    return os.path.join(slot, "busybox")


def find_btf(image):
    """The BTF blob inside an uncompressed kernel image: the one place whose
    header has the magic, version 1, a 24-byte header, type data first and the
    string section right after it, starting with the empty string."""
    found = []
    head = struct.pack("<HBBI", BTF_MAGIC, 1, 0, 24)
    i = image.find(head)
    while i >= 0:
        if i + BTF_HEADER.size <= len(image):
            _, _, _, hdr_len, type_off, type_len, str_off, str_len = BTF_HEADER.unpack_from(image, i)
            end = i + hdr_len + str_off + str_len
            if type_off == 0 and str_off == type_len and type_len and str_len and end <= len(image) \
                    and image[i + hdr_len + str_off] == 0 and image[end - 1] == 0:
                found.append(image[i:end])
        i = image.find(head, i + 1)
    if len(found) != 1:
        raise HarnessError(f"{len(found)} BTF blobs in the kernel image, want exactly 1")
    return found[0]


def kernel_btf(slot):
    """Path of the BTF of the cached kernel in slot, extracted once."""
    btf = os.path.join(slot, "btf")
    if not os.path.exists(btf):
        with open(os.path.join(slot, "vmlinuz"), "rb") as f:
            image = f.read()
        if image[:2] == b"\x1f\x8b":
            raise HarnessError(f"{slot}/vmlinuz is compressed: BTF extraction needs an uncompressed image (arm64)")
        blob = find_btf(image)
        tmp = btf + ".tmp"
        with open(tmp, "wb") as f:
            f.write(blob)
        os.rename(tmp, btf)
    return btf


# What cross-building for an architecture and booting its guests need on the
# build host, with the packages packaging/install-deps.sh --ARCH installs.
CROSS_TOOLS = {
    "arm64": [("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
              ("aarch64-linux-gnu-pkg-config", "pkgconf:arm64"),
              ("qemu-system-aarch64", "qemu-system-arm")],
}
CROSS_FILES = {
    "arm64": [("/usr/lib/aarch64-linux-gnu/pkgconfig/libbpf.pc", "libbpf-dev:arm64")],
}


def missing_cross_tools(arch):
    """Packages whose programs or files a cross build and guest run for arch
    lack here (empty when nothing is missing)."""
    missing = [pkg for tool, pkg in CROSS_TOOLS[arch] if not shutil.which(tool)]
    missing += [pkg for path, pkg in CROSS_FILES[arch] if not os.path.exists(path)]
    return missing


def under_ci():
    """As tests/expectations/expectations.py reads it (this file runs at build
    time too, outside the tests): CI=true."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "expectations"))
    import expectations  # noqa: E402
    return expectations.under_ci()


def cross_missing_exit(arch, what):
    """Exit status for a test that cannot run for lack of the cross tools: 77
    (skipped) on a developer's machine, 1 in CI (CI=true), where install-deps
    --test installs them and their absence is a broken set-up."""
    missing = missing_cross_tools(arch)
    msg = (f"{what}: missing {', '.join(missing)}: install them with packaging/install-deps.sh --{arch} "
           "(--test includes it)")
    if under_ci():
        print(f"FAIL: {msg}; CI=true, so this is a failure, not a skip", flush=True)
        return 1
    print(f"SKIP: {msg}", flush=True)
    return 77


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    b = sub.add_parser("btf", help="write the BTF of a Debian cloud kernel")
    b.add_argument("--arch", required=True, choices=["arm64"])
    b.add_argument("--series", default="6.12")
    b.add_argument("--output", required=True)
    args = ap.parse_args()
    for tool, pkg in (("apt-get", "apt"), ("apt-cache", "apt"), ("dpkg-deb", "dpkg")):
        if not shutil.which(tool):
            print(f"kernel_packages: {tool} not found: install the Debian package {pkg}", file=sys.stderr)
            return 1
    try:
        cache = cache_dir()
        with open(os.path.join(cache, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            name, version, slot = fetch_kernel_updating(args.series, cache, [False], args.arch)
            btf = kernel_btf(slot)
        shutil.copyfile(btf, args.output)
    except HarnessError as e:
        print(f"kernel_packages: {e}", file=sys.stderr)
        return 1
    print(f"kernel_packages: BTF of {name}:{args.arch} {version} ({os.path.getsize(args.output)} bytes)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
