# SPDX-License-Identifier: GPL-2.0
"""The v2 scenario of the system test (run_system.py --checks itests): the
host's own integration test executables and daemon (the build's, sanitizers
and all) run as they are inside the Debian 12 systemd guest, whose hierarchy
is pure cgroup v2, as root. Every command is one row: PASS when it exits 0,
FAIL otherwise (77, a skip, is a failure here: these tests must run on v2).

The files go into the guest at the paths they have on the host (the test
executables have the daemon's path, the expectation table and the fixtures
compiled in), with the shared libraries the cached root file system lacks
(libasan, libubsan, libcheck's libsubunit, ...), python3 with its standard
library (test_events checks JSON with it) and promtool. /tmp in the guest is
an ext4 disk made here: the tests' sparse files must fill the page cache
(a hole of tmpfs reads as the shared zero page, charged to no cgroup).

guest_commands() is the list of what runs; another scenario adds to it (the
soak: tests/soak/soak.py with its own arguments) with add_command(). Stdlib
only."""
import os
import re
import shlex
import subprocess

import rootfs
import run_vm
from run_vm import HarnessError, blocks, log
from system_judge import Verdict, kv_line

COMMAND_TIMEOUT = 1500   # seconds per command in the guest (TCG: tens of times slower than the host)
TMP_DISK_MIB = 4096      # sparse; ext4 for /tmp in the guest
# Left out of the copy of python3's standard library: nothing the tests import.
PY_SKIP = ("test", "idlelib", "tkinter", "lib2to3", "ensurepip", "distutils", "pydoc_data", "turtledemo",
           "dist-packages", "site-packages", "__pycache__", "config-3")


class Cpio(run_vm.Cpio):
    """run_vm's archive, with symbolic links (the fixture trees have one)."""

    def symlink(self, path, target):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        self._entry(path, 0o120777, target.encode())


def guest_commands(args):
    """[(name, argv, files)] run in the guest, in order: each --itest
    NAME=PATH, then each --command NAME=COMMAND (split as a shell would, its
    --file paths copied in with the first)."""
    cmds = []
    for spec in args.itest or []:
        name, _, path = spec.partition("=")
        if not os.path.isabs(path) or not os.access(path, os.X_OK):
            raise HarnessError(f"--itest {spec}: want NAME=/absolute/path/to/an/executable")
        add_command(cmds, name, [path])
    for i, spec in enumerate(getattr(args, "command", None) or []):
        name, _, line = spec.partition("=")
        argv = shlex.split(line)
        if not argv:
            raise HarnessError(f"--command {spec}: want NAME=COMMAND")
        add_command(cmds, name, argv, (getattr(args, "file", None) or []) if i == 0 else ())
    return cmds


def place(cmds, specs, kernels):
    """Spread the commands over the guests (--itest-on SERIES=NAME,...): each
    command gets the set of kernels it runs on, all of them without any spec.
    The guests run in parallel, so the slowest guest's list is the run's time."""
    placed = {}
    for spec in specs or []:
        series, _, names = spec.partition("=")
        if series not in kernels:
            raise HarnessError(f"--itest-on {spec}: {series} is not among the kernels booted ({', '.join(kernels)})")
        for name in filter(None, names.split(",")):
            if not any(c[0] == name for c in cmds):
                raise HarnessError(f"--itest-on {spec}: no command named {name}")
            placed.setdefault(name, set()).add(series)
    for i, (name, argv, files) in enumerate(cmds):
        if specs and name not in placed:
            raise HarnessError(f"command {name} is on no kernel: add it to an --itest-on")
        cmds[i] = (name, argv, files, frozenset(placed.get(name, kernels)))


def on_kernel(cmds, series):
    return [c for c in cmds if series in c[3]]


def kernel_append(cmds, series):
    """The guest's kernel command line names the commands it runs (guest_itests.sh)."""
    return " mw.itests=" + ",".join(c[0] for c in on_kernel(cmds, series))


def add_command(cmds, name, argv, files=()):
    """The hook for other scenarios (the soak's v2 run): one more command, run
    as root in the guest in list order, its exit status a row of its own.
    argv[0] and files (host paths: scripts, configs) go into the guest at
    the same paths, with the shared libraries of argv[0]."""
    if any(c[0] == name for c in cmds) or not re.fullmatch(r"[\w.-]+", name):
        raise HarnessError(f"command name {name!r}: taken, or not a plain word")
    cmds.append((name, list(argv), list(files)))
    return cmds


def rootfs_names(path):
    """Every path in the cached root file system's newc cpio archive."""
    names = set()
    data = rootfs.read_archive(path)
    i = 0
    while data[i:i + 6] == b"070701":
        fsize, nsize = int(data[i + 54:i + 62], 16), int(data[i + 94:i + 102], 16)
        name = data[i + 110:i + 110 + nsize - 1].decode("utf-8", "replace")
        if name == "TRAILER!!!":
            break
        i += 110 + nsize
        i += -i % 4
        i += fsize + (-fsize % 4)
        names.add(name)
    return names


# The guest's /tmp is not the initramfs's (its boot hides what was put there,
# and /tmp is then an ext4 disk): a host file under /tmp waits here and
# guest_itests.sh copies it into /tmp after mounting the disk.
HOST_TMP_STASH = "var/lib/mw-host-tmp"


def guest_path(path):
    """Where a host file goes in the guest: under its real directory (merged
    /usr: /lib is usr/lib), keeping its own name (a soname's link); under
    HOST_TMP_STASH when that is /tmp."""
    where = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)).lstrip("/")
    return os.path.join(HOST_TMP_STASH, where) if where.startswith("tmp/") else where


def data_files(source_root, cmds):
    """{host path: mode} of the data the commands read: the expectation
    tables and fixture trees the tests have compiled in, and each command's
    own files."""
    files = {}
    for sub in ("tests/expectations", "tests/fixtures"):
        for top, dirs, names in os.walk(os.path.join(source_root, sub)):
            for n in names + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
                if not n.endswith(".pyc"):
                    files[os.path.join(top, n)] = 0o644
    for _, _, extra, *_ in cmds:
        files.update({f: 0o755 if os.access(f, os.X_OK) else 0o644 for f in extra})
    return files


def python_files():
    """python3 and its standard library, lib-dynload included, minus PY_SKIP."""
    exe = os.path.realpath("/usr/bin/python3")
    lib = os.path.join("/usr/lib", os.path.basename(exe))
    files = {exe: 0o755}
    for top, dirs, names in os.walk(lib):
        dirs[:] = [d for d in dirs if not d.startswith(PY_SKIP)]
        for n in names:
            files[os.path.join(top, n)] = 0o755 if top.endswith("lib-dynload") else 0o644
    return exe, files


def run_archive(args, cmds, base, path, unit):
    """The per-run part of the initramfs for the v2 scenario; unit runs guest_itests.sh."""
    cpio = Cpio()
    have = rootfs_names(base)
    # A command named by PATH (python3, sh) is the guest's or python's own.
    binaries = [argv[0] for _, argv, *_ in cmds if os.path.isabs(argv[0])] + [os.path.abspath(args.daemon)]
    wanted = {b: 0o755 for b in binaries}
    data = data_files(os.path.abspath(args.source_root), cmds)
    wanted.update(data)
    exe, py = python_files()
    wanted.update(py)
    promtool = "/usr/bin/promtool"
    if os.path.exists(promtool):
        wanted[promtool] = 0o755
    libs = set()
    for b in binaries + [exe]:
        libs.update(run_vm.shared_libraries(b))
    for lib in sorted(libs):
        if guest_path(lib) not in have:
            wanted[lib] = 0o755
    copied = []
    for host, mode in sorted(wanted.items()):
        if host in data and os.path.islink(host):
            cpio.symlink(guest_path(host), os.readlink(host))
            continue
        with open(host, "rb") as f:
            cpio.file(guest_path(host), f.read(), mode)
        if host in libs:
            copied.append(os.path.basename(host))
    with open(exe, "rb") as f:
        cpio.file("usr/bin/python3", f.read(), 0o755)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "guest_itests.sh"), "rb") as f:
        cpio.file("usr/local/sbin/mw-systemtest", f.read(), 0o755)
    cpio.file("etc/systemd/system/mw-systemtest.service", unit)
    lines = "".join(f"{name}\t{COMMAND_TIMEOUT}\t{shlex.join(argv)}\n" for name, argv, *_ in cmds)
    cpio.file("etc/mw-itests.list", lines.encode())
    ci = os.environ.get("CI", "")
    cpio.file("etc/mw-itests.conf", f"TMP_DEV=/dev/nvme0n1\nHOST_TMP=/{HOST_TMP_STASH}/tmp\nCI_VALUE={shlex.quote(ci)}\n".encode())
    rootfs.write_archive(path, cpio.finish())
    log(f"itests: {len(wanted)} files into the guest; libraries the root file system lacks: "
        f"{', '.join(copied) or 'none'}")


def tmp_disk(path):
    """A sparse ext4 image for the guest's /tmp."""
    with open(path, "wb") as f:
        f.truncate(TMP_DISK_MIB << 20)
    r = subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise HarnessError(f"mkfs.ext4 {path}: {r.stderr.strip()}")
    return path


CHECK_SUMMARY = re.compile(r"^\d+%: Checks: \d+, Failures: \d+, Errors: \d+")
CHECK_FAILURE = re.compile(r":[FE]:")


def judge(s, lines, rc, timed_out, cmds):
    """A row for the guest (pure cgroup v2, /tmp on ext4) and one per command."""
    v = Verdict()
    b, singles = blocks(lines)
    guest = b.get("guest") or []
    log(f"[{s}] uname -r: {kv_line(guest, 'uname') or '?'}; cgroup2: {kv_line(guest, 'mount')}; "
        f"controllers: {kv_line(guest, 'controllers')}; v1 memory: {kv_line(guest, 'v1-memory')}")
    problems = []
    if "DONE" not in singles:
        problems.append(f"the guest script did not finish (qemu exit {rc}" + (", timed out" if timed_out else "") + ")")
    if "cgroup2" not in (kv_line(guest, "mount") or "") or "memory" not in (kv_line(guest, "controllers") or "").split():
        problems.append("no cgroup2 mount with the memory controller")
    if kv_line(guest, "v1-memory") != "no":
        problems.append(f"a v1 memory hierarchy: {kv_line(guest, 'v1-memory')} (not pure v2)")
    if run_vm.single(singles, "rc tmp-mount") != "0":
        problems.append(f"mounting /tmp on the ext4 disk: exit {run_vm.single(singles, 'rc tmp-mount')}: "
                        + " | ".join(b.get("tmp-mount") or []))
    v.add("0 guest v2", not problems, "; ".join(problems) or
          f"pure cgroup v2 ({kv_line(guest, 'controllers')}), /tmp on ext4")
    for name, *_ in on_kernel(cmds, s):
        out = b.get(f"itest {name}")
        code = run_vm.single(singles, f"rc itest {name} ")
        secs = run_vm.single(singles, f"secs itest {name} ")
        summary = next((l for l in out or [] if CHECK_SUMMARY.match(l)), None)
        if out is None or code is None:
            v.add(f"6 v2 {name}", False, "did not run to its end in the guest")
            continue
        for line in out[-400:]:
            log(f"[{s}] {name} | {line}")
        if code == "0":
            v.add(f"6 v2 {name}", True, f"{summary or 'exit 0'} in {secs} s")
            continue
        fails = [l.strip()[:240] for l in out if CHECK_FAILURE.search(l)]
        why = "skipped (77): must run on cgroup v2" if code == "77" else f"exit {code}"
        v.add(f"6 v2 {name}", False, f"{why} after {secs} s; {summary or 'no summary'}"
              + (": " + " | ".join(fails[:4]) if fails else ""))
    return v
