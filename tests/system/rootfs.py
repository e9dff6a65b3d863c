# SPDX-License-Identifier: GPL-2.0
"""The Debian root file system of the systemd guests (tests/system), built
by mmdebstrap from Debian's packages and kept as an lz4'd newc cpio archive
that the kernel unpacks as its initramfs; systemd then runs as PID 1 from it
(rdinit=/lib/systemd/systemd).

amd64: mmdebstrap's minbase variant, maintainer scripts and all. Another
architecture (arm64) would run every maintainer script under qemu-user
emulation: 126 s for this package set on the CI machine, against 7 s for
unpacking alone. So there the packages are only unpacked (--variant=extract,
merged /usr as debootstrap lays it out), and the few things their scripts
would have done for this guest are done here with the host's own tools
(fixup(), an extract hook: the variant runs no customize hooks): the dpkg database, passwd/group, system users, machine-id, the awk
alternative and nsswitch.conf; and a machine-id in the archive (mmdebstrap
empties it last, and an empty one makes the boot a first boot, where
systemd-firstboot waits at a prompt on the console).

The archive is cached beside the kernels of tests/vm (run_vm.cache_dir()),
under a name derived from everything that goes into it (suite, variant,
package list, the units masked below), so a changed package list builds a new
one. One archive is kept per release and architecture.

Releases: bookworm (Debian 12, systemd 252, the default) and trixie (Debian
13, systemd 257, no cgroup v1 at all). The package list is the .deb's Depends
as they are named there: trixie's t64 libraries (libcurl4t64,
libmicrohttpd12t64) Provide the old names with their versions, and apt picks
the one provider. Stdlib only."""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

SUITE = "bookworm"
VARIANT = "minbase"
# The same mirror for each release: the host's own (deb.debian.org).
RELEASES = {
    release: [f"deb http://deb.debian.org/debian {release} main",
              f"deb http://deb.debian.org/debian {release}-updates main",
              f"deb http://deb.debian.org/debian-security {release}-security main"]
    for release in ("bookworm", "trixie")
}
MIRRORS = RELEASES[SUITE]
# What the issue asks for besides the .deb's own dependencies: systemd as PID 1,
# udev for /dev, dbus for systemd-run and systemctl's bus, iproute2 and curl;
# the user-space OOM killers whose kills the daemon counts.
BASE_PACKAGES = ["systemd-sysv", "udev", "dbus", "iproute2", "curl", "systemd-oomd", "earlyoom"]
# Units that would only add noise to a test guest: a login prompt on the
# serial console (it would write over the test's lines) and apt's and dpkg's
# daily timers (work in cgroups the test compares).
MASKED = ["serial-getty@ttyS0.service", "getty@tty1.service", "apt-daily.timer",
          "apt-daily-upgrade.timer", "dpkg-db-backup.timer", "fstrim.timer", "e2scrub_all.timer",
          # The user-space killers run only in their own scenario (guest.sh): earlyoom's
          # defaults would kill in the other workloads, and systemd-oomd's polling
          # moves its own cgroup's figures under the cgroup files check.
          "earlyoom.service", "systemd-oomd.service", "systemd-oomd.socket"]
# The container scenario's runtimes (guest_containers.sh), amd64 only: Podman
# with crun, Docker with containerd and runc, busybox-static for its image. In
# an archive of their own (systemd-rootfs-containers-<key>): 350 MB more files,
# which only the guest running the containers unpacks.
CONTAINER_PACKAGES = ["podman", "crun", "conmon", "docker.io", "containerd", "runc", "busybox-static"]
# Debian 13 splits the docker command out of docker.io.
CONTAINER_PACKAGES_RELEASE = {"trixie": ["docker-cli"]}
# Started only for their part of the scenario (dockerd and containerd would
# run, and Podman restart its containers, through every other check).
# netavark's DHCP proxy (Debian 13's Podman) starts at boot and exits when
# idle: a cgroup coming and going under the cgroup files check.
CONTAINER_MASKED = ["docker.service", "docker.socket", "containerd.service", "podman.socket",
                    "podman-restart.service", "podman-auto-update.timer",
                    "netavark-dhcp-proxy.socket", "netavark-dhcp-proxy.service"]
# The serial console of other architectures' guests.
MASKED_ARCH = {"arm64": ["serial-getty@ttyAMA0.service"]}
# Bumped when the archive's layout changes in a way the key does not see.
LAYOUT = 1
# Unpack-only (foreign architecture) root: what apt would pull in for minbase.
EXTRACT_INCLUDE = ["?essential", "apt"]
MERGED_USR_HOOK = "/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh"


class RootfsError(Exception):
    pass


def depends_packages(deb):
    """Package names of a .deb's Depends (first of each alternative)."""
    r = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RootfsError(f"dpkg-deb -f {deb} Depends: {r.stderr.strip()}")
    names = []
    for dep in r.stdout.split(","):
        first = dep.split("|")[0].strip()
        if first:
            names.append(first.split()[0].split(":")[0])
    return names


def masked_units(arch, containers=False):
    return MASKED + MASKED_ARCH.get(arch, []) + (CONTAINER_MASKED if containers else [])


def prefix_of(arch="amd64", release=SUITE):
    """Cache names: systemd-rootfs-[RELEASE-][ARCH-][containers-]KEY.cpio.lz4;
    the default release's names are as they were (its cache stays valid)."""
    return "systemd-rootfs-" + ("" if release == SUITE else f"{release}-") + ("" if arch == "amd64" else f"{arch}-")


def key(packages, arch="amd64", containers=False, release=SUITE):
    blob = {"suite": release, "variant": VARIANT, "mirrors": RELEASES[release],
            "packages": sorted(set(packages)), "masked": masked_units(arch, containers), "layout": LAYOUT}
    if arch != "amd64":  # the amd64 key stays what it was: its cache stays valid
        blob.update(arch=arch, variant="extract", include=EXTRACT_INCLUDE,
                    masked=MASKED + MASKED_ARCH.get(arch, []))
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]


def fixup(root):
    """What the maintainer scripts of an unpacked-only root would have done,
    as far as this guest needs it; runs on the host (mmdebstrap extract hook)
    with native tools, so nothing is emulated."""
    archives = os.path.join(root, "var", "cache", "apt", "archives")
    debs = sorted(f for f in os.listdir(archives) if f.endswith(".deb"))
    if not debs:
        raise RootfsError(f"no .deb in {archives}")
    # dpkg's database: every unpacked package installed, with its file list,
    # so that dpkg -i in the guest finds the Depends and sees the owners.
    info = os.path.join(root, "var", "lib", "dpkg", "info")
    entries = []
    for deb in debs:
        path = os.path.join(archives, deb)
        control = subprocess.run(["dpkg-deb", "-f", path], capture_output=True, text=True, check=True).stdout
        fields = control.rstrip("\n").split("\n")
        name = fields[0].split(":", 1)[1].strip()
        arch = next(l.split(":", 1)[1].strip() for l in fields if l.startswith("Architecture:"))
        entries.append("\n".join(fields[:1] + ["Status: install ok installed"] + fields[1:]) + "\n")
        listing = subprocess.run(["dpkg-deb", "--fsys-tarfile", path], capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(listing)) as t:
            files = ["/." if m.name in (".", "./") else "/" + m.name.lstrip("./") for m in t]
        qual = f"{name}:{arch}" if arch not in ("all",) and "Multi-Arch: same" in control else name
        with open(os.path.join(info, f"{qual}.list"), "w") as f:
            f.write("\n".join(files) + "\n")
    # Appended: the merged-/usr setup hook installed usr-is-merged already.
    status = os.path.join(root, "var", "lib", "dpkg", "status")
    with open(status, "a") as f:
        if os.path.getsize(status):
            f.write("\n")
        f.write("\n".join(entries))
    for name in ("diversions", "statoverride", "available"):
        open(os.path.join(root, "var", "lib", "dpkg", name), "a").close()
    etc = os.path.join(root, "etc")
    # base-passwd's preinst, then the system users of sysusers.d (systemd's,
    # dbus's), as systemd's and dbus's postinst run systemd-sysusers.
    for name in ("passwd", "group"):
        shutil.copyfile(os.path.join(root, "usr", "share", "base-passwd", f"{name}.master"),
                        os.path.join(etc, name))
    for name in ("shadow", "gshadow"):
        open(os.path.join(etc, name), "a").close()
    subprocess.run(["systemd-sysusers", f"--root={root}"], check=True, capture_output=True)
    # base-files' postinst; mawk's update-alternatives (guest.sh uses awk).
    nss = os.path.join(root, "usr", "share", "base-files", "nsswitch.conf")
    if os.path.exists(nss):
        shutil.copyfile(nss, os.path.join(etc, "nsswitch.conf"))
    alt = os.path.join(etc, "alternatives", "awk")
    os.symlink("/usr/bin/mawk", alt)
    os.symlink("/etc/alternatives/awk", os.path.join(root, "usr", "bin", "awk"))


class CpioWriter:
    """Streams newc entries (with owners and times) into a file object."""

    def __init__(self, out):
        self.out = out
        self.ino = 1
        self.size = 0

    def entry(self, name, mode, data=b"", uid=0, gid=0, mtime=0, rdev=(0, 0), nlink=1):
        name_b = name.encode() + b"\0"
        fields = [self.ino, mode, uid, gid, nlink, int(mtime), len(data), 0, 0, rdev[0], rdev[1],
                  len(name_b), 0]
        self.ino += 1
        hdr = b"070701" + b"".join(b"%08X" % v for v in fields)
        chunk = (hdr + name_b + b"\0" * (-(len(hdr) + len(name_b)) % 4)
                 + data + b"\0" * (-len(data) % 4))
        self.out.write(chunk)
        self.size += len(data)

    def finish(self):
        self.entry("TRAILER!!!", 0)


# The archive's compression: the guest's kernel unpacks it under software
# emulation before anything runs, and lz4 (the kernel's legacy lz4 format)
# unpacks the containers archive in 7 s where gzip took 15 (Debian 13's
# 6.18 to its first process; every kernel of the suite has CONFIG_RD_LZ4).
ARCHIVE_SUFFIX = ".cpio.lz4"


def write_archive(path, data):
    """A newc cpio archive (bytes) into path as ARCHIVE_SUFFIX says: the
    per-run parts appended to the cached one must be lz4 too, as the
    kernel's lz4 decoder reads a second lz4 stream after the first but not a
    gzip one ("Initramfs unpacking failed: Decoding failed")."""
    with open(path, "wb") as f:
        subprocess.run(["lz4", "-l", "-1", "-q", "-", "-"], input=data, stdout=f, check=True)


def read_archive(path):
    """The cpio bytes of an archive written by this module."""
    return subprocess.run(["lz4", "-dc", path], capture_output=True, check=True).stdout


def tar_to_cpio(tar_path, archive, arch="amd64", containers=False):
    """Repacks mmdebstrap's tar as the initramfs; hard links become copies."""
    with open(archive, "wb") as out:
        lz4 = subprocess.Popen(["lz4", "-l", "-1", "-q", "-", "-"], stdin=subprocess.PIPE, stdout=out)
    try:
        size = write_cpio(tar_path, lz4.stdin, arch, containers)
    finally:
        lz4.stdin.close()
        rc = lz4.wait()
    if rc != 0:
        raise RootfsError(f"lz4 failed ({rc}) writing {archive}")
    return size


def write_cpio(tar_path, out, arch, containers):
    with tarfile.open(tar_path) as tar:
        w = CpioWriter(out)
        names = set()
        for m in tar:
            name = m.name[2:] if m.name.startswith("./") else m.name.lstrip("/")
            if not name or name == "." or (arch != "amd64" and name == "etc/machine-id"):
                continue
            perm = m.mode & 0o7777
            own = dict(uid=m.uid, gid=m.gid, mtime=m.mtime)
            if m.isdir():
                w.entry(name, 0o040000 | perm, nlink=2, **own)
            elif m.issym():
                w.entry(name, 0o120000 | 0o777, m.linkname.encode(), **own)
            elif m.isfile() or m.islnk():
                w.entry(name, 0o100000 | perm, tar.extractfile(m).read(), **own)
            elif m.ischr() or m.isblk():
                kind = 0o020000 if m.ischr() else 0o060000
                w.entry(name, kind | perm, rdev=(m.devmajor, m.devminor), **own)
            elif m.isfifo():
                w.entry(name, 0o010000 | perm, **own)
            else:
                continue
            names.add(name)
        if arch != "amd64":
            w.entry("etc/machine-id", 0o100444, hashlib.sha256(tar_path.encode()).hexdigest()[:32].encode() + b"\n")
        for unit in masked_units(arch, containers):
            w.entry(f"etc/systemd/system/{unit}", 0o120777, b"/dev/null")
        runtimes = ("usr/bin/podman", "usr/sbin/dockerd", "usr/bin/busybox") if containers else ()
        for need in ("usr/lib/systemd/systemd", "usr/bin/dpkg", "usr/bin/curl", "usr/bin/systemd-run") + runtimes:
            if need not in names:
                raise RootfsError(f"{need} is not in the root file system")
        w.finish()
    return w.size


def cached(cache, arch="amd64", release=SUITE, containers=False):
    """The cached archive of arch and release (with the container runtimes, or
    without), whatever its package list, or None."""
    prefix = prefix_of(arch, release) + ("containers-" if containers else "")
    names = sorted(n for n in os.listdir(cache) if n.startswith(prefix) and n.endswith(ARCHIVE_SUFFIX)
                   and n[len(prefix):].count("-") == 0)
    return os.path.join(cache, names[-1]) if names else None


def cached_any(cache, arch="amd64", release=SUITE):
    """(archive, with the container runtimes) of arch and release, the one
    without them first, or (None, False)."""
    for containers in (False, True):
        path = cached(cache, arch, release, containers)
        if path:
            return path, containers
    return None, False


def ensure(cache, packages, log, arch="amd64", containers=False, release=SUITE):
    """Path of the cached archive of release holding these packages (and with
    containers, CONTAINER_PACKAGES: amd64 only), built when missing. The caller
    holds the cache's lock."""
    prefix = prefix_of(arch, release)
    if containers:
        prefix = prefix + "containers-"
        packages = packages + CONTAINER_PACKAGES + CONTAINER_PACKAGES_RELEASE.get(release, [])
    path = os.path.join(cache, f"{prefix}{key(packages, arch, containers, release)}{ARCHIVE_SUFFIX}")
    if os.path.exists(path):
        return path, False
    if not shutil.which("mmdebstrap"):
        raise RootfsError("mmdebstrap not found: install the Debian package mmdebstrap")
    if not shutil.which("lz4"):
        raise RootfsError("lz4 not found: install the Debian package lz4")
    include = ",".join(sorted(set(packages)))
    if arch == "amd64":
        how = [f"--variant={VARIANT}"]
    else:
        # Each pattern its own --include: a comma would split it.
        how = ([f"--arch={arch}", "--variant=extract", f"--setup-hook={MERGED_USR_HOOK}",
                f"--extract-hook={sys.executable} {os.path.abspath(__file__)} --fixup \"$1\""]
               + [f"--include={p}" for p in EXTRACT_INCLUDE])
    log(f"rootfs: building {release} {arch} {how[1] if arch != 'amd64' else VARIANT} + {include} with mmdebstrap")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(dir=cache, prefix=".rootfs-") as tmp:
        tar_path = os.path.join(tmp, "rootfs.tar")
        # The mirrors are given, so mmdebstrap does not read sources from stdin.
        r = subprocess.run(["mmdebstrap", "--quiet"] + how + [f"--include={include}",
                            "--format=tar", release, tar_path] + RELEASES[release],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(tar_path):
            raise RootfsError(f"mmdebstrap failed ({r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
        part = os.path.join(tmp, "rootfs" + ARCHIVE_SUFFIX)
        size = tar_to_cpio(tar_path, part, arch, containers)
        os.rename(part, path)
    log(f"rootfs: {size / 1e6:.0f} MB of files, {os.path.getsize(path) / 1e6:.0f} MB archive, "
        f"built in {time.monotonic() - start:.0f} s: {path}")
    for name in os.listdir(cache):
        if name.startswith(prefix) and name[len(prefix):].count("-") == 0 and os.path.join(cache, name) != path:
            os.unlink(os.path.join(cache, name))
    return path, True


if __name__ == "__main__":
    # mmdebstrap's extract hook: rootfs.py --fixup ROOT
    if len(sys.argv) == 3 and sys.argv[1] == "--fixup":
        fixup(sys.argv[2])
    else:
        sys.exit(__doc__)
