# SPDX-License-Identifier: GPL-2.0
"""The Debian 12 root file system of the systemd guests (tests/system), built
by mmdebstrap from Debian's packages and kept as a gzip'd newc cpio archive
that the kernel unpacks as its initramfs; systemd then runs as PID 1 from it
(rdinit=/lib/systemd/systemd).

The archive is cached beside the kernels of tests/vm (run_vm.cache_dir()),
under a name derived from everything that goes into it (suite, variant,
package list, the units masked below), so a changed package list builds a new
one. One archive is kept. Stdlib only."""
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time

SUITE = "bookworm"
VARIANT = "minbase"
MIRRORS = [
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
]
# What the issue asks for besides the .deb's own dependencies: systemd as PID 1,
# udev for /dev, dbus for systemd-run and systemctl's bus, iproute2 and curl.
BASE_PACKAGES = ["systemd-sysv", "udev", "dbus", "iproute2", "curl"]
# Units that would only add noise to a test guest: a login prompt on the
# serial console (it would write over the test's lines) and apt's and dpkg's
# daily timers (work in cgroups the test compares).
MASKED = ["serial-getty@ttyS0.service", "getty@tty1.service", "apt-daily.timer",
          "apt-daily-upgrade.timer", "dpkg-db-backup.timer", "fstrim.timer", "e2scrub_all.timer"]
# Bumped when the archive's layout changes in a way the key does not see.
LAYOUT = 1


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


def key(packages):
    blob = json.dumps({"suite": SUITE, "variant": VARIANT, "mirrors": MIRRORS,
                       "packages": sorted(set(packages)), "masked": MASKED, "layout": LAYOUT},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


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


def tar_to_cpio(tar_path, cpio_gz):
    """Repacks mmdebstrap's tar as the initramfs; hard links become copies."""
    with tarfile.open(tar_path) as tar, gzip.open(cpio_gz, "wb", compresslevel=1) as gz:
        w = CpioWriter(gz)
        names = set()
        for m in tar:
            name = m.name[2:] if m.name.startswith("./") else m.name.lstrip("/")
            if not name or name == ".":
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
        for unit in MASKED:
            w.entry(f"etc/systemd/system/{unit}", 0o120777, b"/dev/null")
        for need in ("usr/lib/systemd/systemd", "usr/bin/dpkg", "usr/bin/curl", "usr/bin/systemd-run"):
            if need not in names:
                raise RootfsError(f"{need} is not in the root file system")
        w.finish()
    return w.size


def ensure(cache, packages, log):
    """Path of the cached archive holding these packages, built when missing.
    The caller holds the cache's lock."""
    path = os.path.join(cache, f"systemd-rootfs-{key(packages)}.cpio.gz")
    if os.path.exists(path):
        return path, False
    if not shutil.which("mmdebstrap"):
        raise RootfsError("mmdebstrap not found: install the Debian package mmdebstrap")
    include = ",".join(sorted(set(packages)))
    log(f"rootfs: building {SUITE} {VARIANT} + {include} with mmdebstrap")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(dir=cache, prefix=".rootfs-") as tmp:
        tar_path = os.path.join(tmp, "rootfs.tar")
        # The mirrors are given, so mmdebstrap does not read sources from stdin.
        r = subprocess.run(["mmdebstrap", "--quiet", f"--variant={VARIANT}", f"--include={include}",
                            "--format=tar", SUITE, tar_path] + MIRRORS,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(tar_path):
            raise RootfsError(f"mmdebstrap failed ({r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
        part = os.path.join(tmp, "rootfs.cpio.gz")
        size = tar_to_cpio(tar_path, part)
        os.rename(part, path)
    log(f"rootfs: {size / 1e6:.0f} MB of files, {os.path.getsize(path) / 1e6:.0f} MB archive, "
        f"built in {time.monotonic() - start:.0f} s: {path}")
    for name in os.listdir(cache):
        if name.startswith("systemd-rootfs-") and os.path.join(cache, name) != path:
            os.unlink(os.path.join(cache, name))
    return path, True
