#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""memwatchd as its users run it: a Debian 12 guest with systemd as PID 1 and a
pure cgroup v2 hierarchy, on Debian's stock 6.1 and 6.12 cloud kernels under
qemu (software emulation); with --release trixie a Debian 13 guest (systemd
257, no cgroup v1 in it at all) on the 6.12 series. The .deb built from this tree by
packaging/build-deb.sh is installed with dpkg and the shipped unit is started
with systemctl; tests/system/guest.sh does what an operator does and prints
what it saw on the serial console, and this script judges it.

  run_system.py --source-root DIR --memhog PATH [--deb PATH] [--kernel SERIES ...]
  run_system.py --release trixie --source-root DIR --memhog PATH ...
  run_system.py --arch arm64 --checks smoke --source-root DIR [--deb PATH] ...
  run_system.py --checks itests --daemon PATH --itest NAME=PATH ... --source-root DIR

--checks itests is the v2 scenario (system_itests.py): the host's own
integration test executables and daemon, run as they are in the guest on its
pure cgroup v2 hierarchy, a row per test; no .deb.

On the kernels --containers-kernel names (default 6.1: Debian 12's own,
which its Podman and Docker are built for) the guest then also runs
containers (guest_containers.sh, judged by system_judge_containers.py), all
runtimes or those after = (SERIES=podman, SERIES=docker): the runtimes split
over the two guests so that both end about together, where both runtimes on
one guest kept the other idle for three minutes. Debian 13's Podman 5 is the
one whose OOMKilled flag is set (tests/expectations/container_runtimes.tsv).
--checks containers runs only the install and the containers, to work on them.

--arch arm64 boots Debian's arm64 kernels with qemu-system-aarch64 -M virt on
an arm64 root file system that is only unpacked (rootfs.py), with the
cross-built .deb (build-deb.sh -a arm64, or --deb). --checks smoke stops the
guest after the install, the collector table and one reload (no workloads,
no memhog): what fits the arm64 suite's CI time under TCG.

Kernels come from tests/vm/run_vm.py (same cache). The root file system is
built by mmdebstrap (tests/system/rootfs.py) and cached next to them. Not root:
exit 77 (skipped), except under CI (CI=true), where it fails: CI must run it.
A missing tool or kernel fails the test.

Needs (Debian packages): qemu-system-x86, mmdebstrap, dpkg-dev, debhelper and
the build dependencies (packaging/build-deb.sh), apt. Stdlib only.
"""
import argparse
import concurrent.futures
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
sys.path.insert(0, os.path.join(HERE, "..", "expectations"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "packaging", "cross"))
sys.path.insert(0, HERE)
import expectations  # noqa: E402
import kernel_packages  # noqa: E402
import rootfs  # noqa: E402
import run_vm  # noqa: E402
from run_vm import HarnessError, blocks, log  # noqa: E402
import system_judge as sj  # noqa: E402
import system_itests  # noqa: E402
import system_judge_ops as ops  # noqa: E402
import system_judge_containers as ctr  # noqa: E402
from system_judge import kv_line, props  # noqa: E402

SKIP = 77
# The kernel series each Debian release boots when no --kernel is given.
# Debian 13's own kernel is a 6.12; the 6.12 the suite fetches
# (packaging/cross/kernel_packages.py) is Debian 12's build of it
# (6.12.*+deb12), the same upstream series. 6.18 comes from trixie-backports.
RELEASE_KERNELS = {"bookworm": kernel_packages.BOOKWORM_SERIES, "trixie": ("6.12", "6.18")}
GUEST_MIB = 1536
# The runtimes' archive unpacks to 606 MB in the initramfs, a tmpfs of half the RAM.
GUEST_MIB_CONTAINERS = 2048
DISK_MIB = 512
CACHE_MIB = 256          # mw-cache reads this much, against MemoryMax=64M
KERNEL_ARGS = ("console={console} rdinit=/lib/systemd/systemd panic=-1 quiet loglevel=1 "
               "systemd.show_status=0 systemd.wants=mw-systemtest.service mitigations=off")

# Terminal controls on the console: run_vm.ANSI's, and what systemd 257 writes
# as it opens the tty for StandardOutput=tty (DECSTR "ESC[!p", OSC 104 "ESC]104 BEL"),
# which would otherwise hide the first marker line.
TERMINAL = re.compile(r"\x1b(\[[0-9;?!]*[A-Za-z]|\][^\x07\x1b]*(\x07|\x1b\\)|[A-Za-z])")

TEST_UNIT = b"""[Unit]
Description=memwatchd system test (tests/system/guest.sh)
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/mw-systemtest
StandardOutput=tty
StandardError=inherit
TimeoutStartSec=infinity
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def on_ci():
    return expectations.under_ci()


# ---------------------------------------------------------------- guest image

def build_deb(source_root, out, arch="amd64"):
    start = time.monotonic()
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck")
    cross = [] if arch == "amd64" else ["-a", arch]
    r = run([os.path.join(source_root, "packaging", "build-deb.sh")] + cross + [out], env=env, timeout=1200)
    debs = [f for f in os.listdir(out) if f.endswith(".deb") and "-dbgsym" not in f] if os.path.isdir(out) else []
    if r.returncode != 0 or len(debs) != 1:
        raise HarnessError(f"packaging/build-deb.sh failed ({r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    log(f"deb: built {debs[0]} in {time.monotonic() - start:.0f} s")
    return os.path.join(out, debs[0])


def newest_source_mtime(source_root):
    """mtime of the newest file of the source tree (build and VCS directories aside)."""
    newest = 0.0
    for top, dirs, files in os.walk(source_root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build", "subprojects"))]
        for f in files:
            try:
                newest = max(newest, os.stat(os.path.join(top, f)).st_mtime)
            except OSError:
                pass
    return newest


def kept_deb(path, source_root):
    """The .deb deb or deb-arm64 kept (test_deb.py --keep), if it is newer than every
    source file; None otherwise (then this test builds its own)."""
    if path and os.path.exists(path) and os.stat(path).st_mtime >= newest_source_mtime(source_root):
        log(f"deb: {path}, kept by the deb test and newer than the source tree")
        return path
    return None


def container_runtimes(ap, specs):
    """{series: runtimes} from --containers-kernel SERIES[=RUNTIME,...] (all
    runtimes without =; none: no containers)."""
    out = {}
    for spec in specs:
        series, _, names = spec.partition("=")
        if series == "none":
            continue
        if series not in run_vm.SERIES:
            ap.error(f"--containers-kernel {spec}: unknown kernel series {series}")
        runtimes = tuple(filter(None, names.split(","))) or ctr.RUNTIMES
        if any(r not in ctr.RUNTIMES for r in runtimes):
            ap.error(f"--containers-kernel {spec}: runtimes are {', '.join(ctr.RUNTIMES)}")
        out[series] = tuple(sorted(set(out.get(series, ()) + runtimes), key=ctr.RUNTIMES.index))
    return out


def run_archive(args, deb, path):
    """The per-run part of the initramfs, appended to the cached root file system."""
    cpio = run_vm.Cpio()
    if args.memhog:
        extra = [lib for lib in run_vm.shared_libraries(args.memhog)
                 if not re.search(r"/(libc\.so\.6|ld-linux-x86-64\.so\.2)$", lib)]
        if extra:
            raise HarnessError(f"{args.memhog} needs {' '.join(extra)}, which the guest lacks "
                               "(build it without sanitizers)")
        with open(args.memhog, "rb") as f:
            cpio.file("usr/local/bin/memhog", f.read(), 0o755)
    with open(deb, "rb") as f:
        cpio.file("root/memwatchd.deb", f.read())
    with open(os.path.join(HERE, "guest.sh"), "rb") as f:
        cpio.file("usr/local/sbin/mw-systemtest", f.read(), 0o755)
    with open(os.path.join(HERE, "guest_containers.sh"), "rb") as f:
        cpio.file("usr/local/sbin/mw-containers", f.read(), 0o644)
    cpio.file("etc/systemd/system/mw-systemtest.service", TEST_UNIT)
    with open(os.path.join(args.source_root, "systemd", "memwatchd.service"), "rb") as f:
        unit_sha = hashlib.sha256(f.read()).hexdigest()
    conf = (f"CACHE_DEV=/dev/nvme0n1\nCACHE_MIB={CACHE_MIB}\nSERIES_TTL={sj.SERIES_TTL}\n"
            f"OOM_COMM={sj.OOM_COMM}\nUNIT_SHA256={unit_sha}\nSMOKE={int(args.checks == 'smoke')}\n"
            f"CONTAINER_TTL={ctr.CONTAINER_TTL}\nCONTAINERS_ONLY={int(args.checks == 'containers')}\n")
    cpio.file("etc/mw-systemtest.conf", conf.encode())
    rootfs.write_archive(path, cpio.finish())
    return unit_sha


def boot(qemu, vmlinuz, initrd, disk, console_log, timeout, smp, arch="amd64", writable=False, append="",
         mib=GUEST_MIB):
    a = run_vm.ARCHES[arch]
    cmd = [qemu, "-accel", "tcg"] + a["machine"] + ["-smp", str(smp), "-m", str(mib),
           "-nographic", "-no-reboot", "-nic", "none",
           "-kernel", vmlinuz, "-initrd", initrd]
    if disk:  # the smoke run reads no block device; the v2 scenario's /tmp is written
        cmd += ["-drive", f"file={disk},if=none,id=cache,format=raw" + ("" if writable else ",readonly=on"),
                "-device", "nvme,drive=cache,serial=memwatchsys"]
    cmd += ["-append", KERNEL_ARGS.format(console=a["console"]) + append]
    start = time.monotonic()
    lines = []
    with open(console_log, "wb") as out:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

        def reader():
            for raw in p.stdout:
                out.write(raw)
                out.flush()
                text = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
                lines.append(TERMINAL.sub("", text))

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        timed_out, cpu = run_vm.wait_guest(p, timeout)
        t.join(timeout=5)
    return lines, time.monotonic() - start, p.returncode, timed_out, cpu


# ---------------------------------------------------------------- judging

def judge(s, lines, rc, timed_out, unit_sha, rows, smoke=False, figures=None, runtimes=(),
          containers_only=False):
    v = sj.Verdict()
    b, singles = blocks(lines)
    guest = b.get("guest") or []
    release = kv_line(guest, "uname") or "?"
    log(f"[{s}] uname -r: {release}")
    log(f"[{s}] cgroup2: {kv_line(guest, 'mount')}; kernel.perf_event_paranoid {kv_line(guest, 'perf_event_paranoid')}")
    log(f"[{s}] controllers: {kv_line(guest, 'controllers')}; {kv_line(guest, 'systemd')}; "
        f"test started {kv_line(guest, 'uptime')} s after boot; failed units: {kv_line(guest, 'failed-units') or '-'}")
    if "DONE" not in singles:
        v.add("0 guest", False, f"the guest script did not finish (qemu exit {rc}"
              + (", timed out" if timed_out else "") + ")")
    if not guest:
        return v
    if not (kv_line(guest, "mount") or "").endswith("memory_recursiveprot") and "cgroup2" not in (kv_line(guest, "mount") or ""):
        v.add("0 guest", False, "no cgroup2 mount")
    try:
        want = expectations.expected(sj.ENVIRONMENT, release, rows=rows)
    except expectations.NoExpectation as e:
        v.add("2 collectors", False, str(e))
        want = {}
    log(f"[{s}] systemctl status memwatchd --no-pager:")
    for line in b.get("status") or ["(none)"]:
        log(f"[{s}]   | {line}")
    sj.judge_install(s, v, b, singles, want, unit_sha)
    sj.judge_collectors(s, v, b, want)
    if containers_only:
        ctr.judge_containers(s, v, b, singles, kv_line(guest, "os") or "?", runtimes)
        return v
    if smoke:
        for line in b.get("journal-memavail") or []:
            log(f"[{s}]   journal: {line}")
        sj.judge_metrics_lint(s, v, b)
        p = props(b.get("reloaded"))
        if p.get("ActiveState") != "active" or p.get("SubState") != "running":
            v.add("4 reload", False, f"after systemctl reload: {p.get('ActiveState')} ({p.get('SubState')})")
        ops.judge_reload(s, v, b, singles)
        ops.judge_memory(s, v, b, figures if figures is not None else {}, ("memory-start",))
        return v
    sj.judge_memavail(s, v, b, want)
    sj.judge_reclaim(s, v, b)
    log(f"[{s}] per-cgroup figures (daemon at the window end; kernel: the cgroup's files before / after):")
    sj.judge_cgroup_files(s, v, b)
    sj.judge_process_faults(s, v, b, want)
    ops.judge_oom(s, v, b, singles)
    ops.judge_userspace_kills(s, v, b, singles)
    ops.judge_restart_events(s, v, b)
    p = props(b.get("reloaded"))
    if p.get("ActiveState") != "active" or p.get("SubState") != "running":
        v.add("4 reload", False, f"after systemctl reload: {p.get('ActiveState')} ({p.get('SubState')})")
    ops.judge_reload(s, v, b, singles)
    ops.judge_reload(s, v, b, singles, "reload-edit", "post-reload", "post-reload-edit")
    ops.judge_bad_reload(s, v, b)
    ops.judge_watchdog(s, v, b)
    ops.judge_stop(s, v, b, singles)
    ops.judge_socket(s, v, b)
    ops.judge_memory(s, v, b, figures if figures is not None else {}, ("memory-start", "memory-workloads"))
    if runtimes:
        ctr.judge_containers(s, v, b, singles, kv_line(guest, "os") or "?", runtimes)
    return v


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--memhog", help="memhog built without sanitizers (the full checks need it)")
    ap.add_argument("--release", choices=sorted(RELEASE_KERNELS), default=rootfs.SUITE,
                    help="Debian release of the guest's root file system (default bookworm); "
                    "the same .deb is installed in either")
    ap.add_argument("--arch", choices=sorted(run_vm.ARCHES), default="amd64",
                    help="Debian architecture of the guest and the .deb (default amd64)")
    ap.add_argument("--checks", choices=["full", "smoke", "itests", "containers"], default="full",
                    help="smoke: install, collectors, promtool, one reload; full: everything; "
                    "containers: install, collectors and the containers (guest_containers.sh) alone; "
                    "itests: the host's integration tests (--itest) on cgroup v2 (system_itests.py)")
    ap.add_argument("--itest", action="append", metavar="NAME=PATH",
                    help="--checks itests: a test executable of the host's build to run in the guest")
    ap.add_argument("--itest-on", action="append", metavar="SERIES=NAME,...",
                    help="--checks itests: run these commands on this kernel's guest only (default: every "
                    "command on every kernel); each command must then be placed somewhere")
    ap.add_argument("--daemon", help="--checks itests: the daemon the tests start (their MEMWATCHD_PATH)")
    ap.add_argument("--command", action="append", metavar="NAME=COMMAND",
                    help="--checks itests: one more command to run as root in the guest, a row of its own "
                    "(the hook for the soak's v2 run)")
    ap.add_argument("--file", action="append", metavar="PATH",
                    help="--checks itests: a host file the commands need, copied to the same path")
    ap.add_argument("--deb", help="a prebuilt memwatchd .deb (default: packaging/build-deb.sh builds one)")
    ap.add_argument("--kept-deb", help="a .deb another test kept: used when newer than the source tree")
    ap.add_argument("--keep-deb", metavar="PATH",
                    help="copy the .deb this run built to PATH (for another release's run: --kept-deb)")
    ap.add_argument("--kernel", action="append", choices=sorted(run_vm.SERIES),
                    help="kernel series to boot (default: all)")
    ap.add_argument("--log-dir", default=".", help="where console logs go")
    ap.add_argument("--jobs", type=int, default=2, help="guests booted at once")
    ap.add_argument("--smp", type=int, default=1, help="vCPUs per guest")
    ap.add_argument("--timeout", type=float, default=420, help="seconds per boot")
    ap.add_argument("--containers-kernel", action="append", metavar="SERIES[=RUNTIME,...]",
                    help="--checks full: a kernel whose guest also runs containers, of every runtime or "
                    "those named (podman, docker); none for no containers "
                    "(guest_containers.sh; default 6.1, Debian 12's own kernel, the one its Podman and "
                    "Docker are built for)")
    ap.add_argument("--containers-timeout", type=float, default=480,
                    help="seconds the containers add to that guest's --timeout")
    ap.add_argument("--figures", help="write the guests' memory figures here (JSON; bench/system_memory.sh)")
    args = ap.parse_args()
    start = time.monotonic()
    smoke = args.checks == "smoke"
    itests = args.checks == "itests"
    if args.checks in ("full", "containers") and not args.memhog:
        ap.error(f"--memhog is needed for --checks {args.checks}")
    if itests and (not (args.itest or args.command) or not args.daemon or args.arch != "amd64"):
        ap.error("--checks itests needs --itest or --command, and --daemon (amd64: the host's own binaries)")
    suite_name = "system" if args.arch == "amd64" else f"system-{args.arch}"
    containers = {} if args.checks not in ("full", "containers") or args.arch != "amd64" else \
        container_runtimes(ap, args.containers_kernel or ["6.1"])
    if args.checks == "containers" and not args.kernel:
        args.kernel = sorted(containers)
    unbooted = sorted(set(containers) - set(args.kernel or RELEASE_KERNELS[args.release]))
    if unbooted:
        ap.error(f"--containers-kernel {', '.join(unbooted)}: not among the kernels booted")
    if itests:
        suite_name = "system-v2"
    if args.release != rootfs.SUITE:
        suite_name += f"-{args.release}"

    if args.arch != "amd64" and kernel_packages.missing_cross_tools(args.arch):
        return kernel_packages.cross_missing_exit(args.arch, suite_name)
    if os.geteuid() != 0:
        if on_ci():
            log(f"{suite_name}: FAIL: not root under CI (CI=true): this suite must run there")
            return 1
        log(f"{suite_name}: not root: skipped (mmdebstrap, apt-get download and the caches need root)")
        return SKIP
    try:
        arch = run_vm.ARCHES[args.arch]
        qemu = shutil.which(arch["qemu"])
        if not qemu:
            raise HarnessError(f"{arch['qemu']} not found: install the Debian package {arch['qemu_pkg']}")
        for tool, pkg in (("mmdebstrap", "mmdebstrap"), ("apt-get", "apt"), ("dpkg-deb", "dpkg"),
                          ("dpkg-buildpackage", "dpkg-dev"), ("dh", "debhelper")):
            if not shutil.which(tool):
                raise HarnessError(f"{tool} not found: install the Debian package {pkg}")
        if itests and not shutil.which("mkfs.ext4"):
            raise HarnessError("mkfs.ext4 not found: install the Debian package e2fsprogs (the guest's /tmp)")
        rows = expectations.load()
        os.makedirs(args.log_dir, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="memwatchd-system-") as work:
            cache = run_vm.cache_dir()
            cmds = system_itests.guest_commands(args) if itests else []
            if itests:
                system_itests.place(cmds, args.itest_on, args.kernel or list(RELEASE_KERNELS[args.release]))
            # The v2 scenario installs no .deb: any cached root file system
            # will do (what it lacks comes from the host), the one without the
            # container runtimes first. With them (on a fresh machine the
            # system test has built only that one) its guests get the
            # containers' memory, the runtimes' files taking as much of it.
            any_base, any_ctr = rootfs.cached_any(cache, release=args.release) if itests else (None, False)
            deb = None if itests and any_base else (
                args.deb or kept_deb(args.kept_deb, os.path.abspath(args.source_root))
                or build_deb(os.path.abspath(args.source_root), os.path.join(work, "deb"), args.arch))
            if deb and args.keep_deb and deb.startswith(work):
                shutil.copyfile(deb, args.keep_deb)
            packages = rootfs.BASE_PACKAGES + (rootfs.depends_packages(deb) if deb else [])
            kernels = []
            with open(os.path.join(cache, ".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                updated = [False]
                for s in args.kernel or list(RELEASE_KERNELS[args.release]):
                    kernels.append((s,) + run_vm.fetch_kernel_updating(s, cache, updated, args.arch))
                # The guests running the containers boot the archive with their runtimes.
                bases = {}
                for with_ctr in sorted({k[0] in containers for k in kernels}):
                    try:
                        base, built = (any_base, False) if not deb else \
                            rootfs.ensure(cache, packages, log, args.arch, containers=with_ctr, release=args.release)
                    except rootfs.RootfsError as e:
                        raise HarnessError(str(e)) from e
                    if not built:
                        log(f"rootfs: cached {args.release} {base} ({', '.join(sorted(set(packages)))}"
                            f"{' + ' + ', '.join(rootfs.CONTAINER_PACKAGES) if with_ctr or any_ctr else ''})")
                    bases[with_ctr] = base
                # The per-run part is appended, so the cached archive is never rewritten.
                extra = os.path.join(work, "run.cpio.lz4")
                if itests:
                    system_itests.run_archive(args, cmds, bases[False], extra,
                                             TEST_UNIT.replace(b"guest.sh", b"guest_itests.sh"))
                    unit_sha = None
                else:
                    unit_sha = run_archive(args, deb, extra)
                initrds = {}
                for with_ctr, base in bases.items():
                    initrds[with_ctr] = os.path.join(work, "initrd-containers.img" if with_ctr else "initrd.img")
                    with open(initrds[with_ctr], "wb") as out:
                        for part in (base, extra):
                            with open(part, "rb") as f:
                                shutil.copyfileobj(f, out, 1 << 20)
            prepared = time.monotonic() - start
            log(f"prepared in {prepared:.0f} s; booting {len(kernels)} guests, {args.jobs} at a time, "
                f"{args.smp} vCPU and {GUEST_MIB} MiB each ({GUEST_MIB_CONTAINERS} MiB with the containers)")

            def one(k):
                series, name, version, slot = k
                disk = None
                if itests:
                    disk = system_itests.tmp_disk(os.path.join(work, f"tmp-{series}.img"))
                elif not smoke:
                    disk = os.path.join(work, f"cache-{series}.img")
                    with open(disk, "wb") as f:
                        f.truncate(DISK_MIB << 20)  # sparse: reads cost no host disk
                prefix = "console-" if args.arch == "amd64" else f"console-{args.arch}-"
                prefix = "console-v2-" if itests else prefix
                if args.release != rootfs.SUITE:  # beside the default release's logs
                    prefix += f"{args.release}-"
                console = os.path.join(args.log_dir, f"{prefix}{series}.log")
                log(f"[{series}] booting {name} {version}")
                with_ctr = series in containers
                out = boot(qemu, os.path.join(slot, "vmlinuz"), initrds[with_ctr], disk, console,
                           args.timeout + (args.containers_timeout if with_ctr else 0),
                           args.smp, args.arch, writable=itests,
                           append=(" mw.containers=" + ",".join(containers[series]) if with_ctr else "")
                           + (system_itests.kernel_append(cmds, series) if itests else ""),
                           mib=GUEST_MIB_CONTAINERS if with_ctr or (itests and any_ctr and not deb) else GUEST_MIB)
                log(f"[{series}] qemu exited {out[2]} after {out[1]:.1f} s (CPU {out[4]:.1f} s)"
                    f"{' (TIMEOUT)' if out[3] else ''}; console: {console}")
                return out[:4]

            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                outs = list(pool.map(one, kernels))
    except HarnessError as e:
        log(f"{suite_name}: FAIL: {e}")
        return 1

    results = []
    figures = {}
    for (series, name, version, slot), (lines, secs, rc, timed_out) in zip(kernels, outs):
        log()
        figures[series] = {"version": version, "release": kv_line(blocks(lines)[0].get("guest") or [], "uname")}
        if itests:
            v = system_itests.judge(series, lines, rc, timed_out, cmds)
        else:
            v = judge(series, lines, rc, timed_out, unit_sha, rows, smoke, figures[series], containers.get(series, ()),
                      args.checks == "containers")
        results.append((series, version, secs, v))
        if not v.ok:
            log(f"[{series}] last console lines:")
            for line in lines[-40:]:
                log(f"  | {line}")
    log()
    log(f"{'kernel':<8} {'version':<22} {'secs':>6}  {'check':<18} result  detail")
    for series, version, secs, v in results:
        for scenario, ok, detail in v.rows:
            log(f"{series:<8} {version:<22} {secs:6.1f}  {scenario:<18} {'PASS' if ok else 'FAIL':<6}  {detail}")
    passed = sum(ok for *_, v in results for _, ok, _ in v.rows)
    failed = sum(not ok for *_, v in results for _, ok, _ in v.rows)
    log(f"{suite_name}: {passed} of {passed + failed} checks passed in {time.monotonic() - start:.0f} s "
        f"(preparation {prepared:.0f} s)")
    if args.figures:
        with open(args.figures, "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    return 0 if results and all(v.ok for *_, v in results) else 1


if __name__ == "__main__":
    sys.exit(main())