#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Boots Debian's stock cloud kernels in qemu (software emulation) with an
initramfs holding busybox, memwatchd and a memory hog, runs the scenarios of
tests/vm/init.sh inside the guest, and judges them from the serial console.

  run_vm.py --daemon PATH --memhog PATH --init PATH [--arch ARCH] [--kernel SERIES ...]

Kernels: the newest Debian cloud kernel of each series of
packaging/cross/kernel_packages.py's table (5.10 from Debian 11, 6.1 and 6.12
from Debian 12, 6.18 and 6.19 from Debian 13's backports), all but 6.18 and
6.19 (vm_kernels.DEFAULT_SERIES) unless --kernel or $MEMWATCHD_VM_KERNELS
names some ('all': every one); fetched with
`apt-get download` and cached by package version (vmlinuz and config only) in $MEMWATCHD_VM_CACHE,
else /var/cache/memwatchd-vm as root, else $XDG_CACHE_HOME/memwatchd-vm
(packaging/cross/kernel_packages.py). The guests boot --jobs at a time (one
vCPU each; the host's CPUs plus one by default). A kernel that cannot be resolved or
fetched fails the test; it is never skipped. Not root: exit 77 (skipped).

--arch amd64 (default) boots with qemu-system-x86_64 and the host's busybox;
--arch arm64 boots the cross-built binaries (packaging/cross) with
qemu-system-aarch64 -M virt, busybox-static:arm64 fetched into the same cache,
and their shared libraries from the host's :arm64 packages.

Needs (Debian packages): qemu-system-x86 (amd64) or qemu-system-arm (arm64),
busybox-static (amd64), apt, dpkg, libc-bin (ldd), binutils (readelf, arm64).
Stdlib only.
"""
import argparse
import concurrent.futures
import fcntl
import os
import shutil
import sys
import tempfile
import time

# The harness is in modules by concern: vm_kernels (the kernel table),
# vm_guest (guest assembly and boot), vm_console (reading the console),
# vm_judge (the verdicts). Their names stay importable from here, for
# tests/vm/run_arm64.py and tests/system/run_system.py.
import vm_kernels
from vm_kernels import (ARCHES, SERIES, TRACEPOINTS, HarnessError, cache_dir,  # noqa: F401
                        fetch_kernel_updating, log)
from vm_guest import ANSI, DISK_MIB, Cpio, boot, build_initramfs, shared_libraries, wait_guest  # noqa: F401
from vm_console import (blocks, host_formats, labelled, parse_events, parse_kv, parse_metrics, single,  # noqa: F401
                        value)
from vm_judge import KILLED_LINE, OOM_KILL_LINE, SCOPE_OF_CONSTRAINT, Verdict, judge  # noqa: F401

SKIP = 77



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--memhog", required=True)
    ap.add_argument("--init", required=True)
    ap.add_argument("--arch", choices=sorted(ARCHES), default="amd64",
                    help="Debian architecture of the binaries and kernels (default amd64)")
    ap.add_argument("--kernel", action="append", choices=sorted(SERIES),
                    help="kernel series to boot (default: $MEMWATCHD_VM_KERNELS, a comma-separated list "
                         f"or 'all', else {','.join(vm_kernels.DEFAULT_SERIES)})")
    # One more guest than CPUs: a busybox guest keeps its vCPU's host thread
    # busy about 60 % of the time (CPU against wall in the qemu exited lines:
    # 27.5 of 44.7 s); the five took 128 s two at a time, 108 s three at a time.
    ap.add_argument("--jobs", type=int, default=(os.cpu_count() or 1) + 1,
                    help="guests booted at once (one vCPU each; default: the host's CPUs plus one)")
    ap.add_argument("--log-dir", default=".", help="where console logs go")
    ap.add_argument("--timeout", type=float, default=150,
                    help="seconds per boot (each guest's own; the guests of a run share --jobs CPUs)")
    args = ap.parse_args()

    if os.geteuid() != 0:
        log("vm: not root: skipped (kernels are fetched with apt-get download into a root-owned cache)")
        return SKIP
    try:
        arch = ARCHES[args.arch]
        qemu = shutil.which(arch["qemu"])
        if not qemu:
            raise HarnessError(f"{arch['qemu']} not found: install the Debian package {arch['qemu_pkg']}")
        for tool, pkg in (("apt-get", "apt"), ("apt-cache", "apt"), ("dpkg-deb", "dpkg"), ("ldd", "libc-bin"),
                          ("readelf", "binutils")):
            if not shutil.which(tool):
                raise HarnessError(f"{tool} not found: install the Debian package {pkg}")
        host_release = os.uname().release
        host_fmt = host_formats(TRACEPOINTS)
        series_list = args.kernel or vm_kernels.default_series(os.environ.get("MEMWATCHD_VM_KERNELS"))
        os.makedirs(args.log_dir, exist_ok=True)
        cache = cache_dir()
        kernels = []
        with open(os.path.join(cache, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            updated = [False]
            for s in series_list:
                kernels.append((s,) + fetch_kernel_updating(s, cache, updated, args.arch))
            if args.arch == "amd64":
                busybox = shutil.which("busybox", path="/bin:/usr/bin")
                if not busybox:
                    raise HarnessError("busybox not found: install the Debian package busybox-static")
            else:
                busybox = vm_kernels.kernel_packages.fetch_busybox(cache, args.arch)
        with tempfile.TemporaryDirectory(prefix="memwatchd-vm-") as work:
            initrd = os.path.join(work, "initramfs.cpio.gz")
            size, nlibs = build_initramfs(args, initrd, busybox)
            log(f"initramfs: {size / 1e6:.1f} MB gzip, {nlibs} shared libraries")
            disk = os.path.join(work, "cache.img")
            with open(disk, "wb") as f:
                f.truncate(DISK_MIB << 20)  # sparse: reads cost no host disk
            prefix = "console-" if args.arch == "amd64" else f"console-{args.arch}-"

            def boot_one(kernel):
                series, name, version, slot = kernel
                log(f"[{series}] booting {name} {version}")
                console = os.path.join(args.log_dir, f"{prefix}{series}.log")
                lines, secs, rc, timed_out, cpu = boot(qemu, os.path.join(slot, "vmlinuz"), initrd, disk,
                                                       console, args.timeout, args.arch)
                log(f"[{series}] qemu exited {rc} after {secs:.1f} s (CPU {cpu:.1f} s)"
                    f"{' (TIMEOUT)' if timed_out else ''}; console: {console}")
                return lines, secs, rc, timed_out

            # Guests in parallel, one vCPU each; judged one after the other, in
            # kernel order, so that each kernel's report stays in one piece.
            start = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                boots = list(pool.map(boot_one, kernels))
            log(f"{len(kernels)} guest(s), {max(1, args.jobs)} at a time: {time.monotonic() - start:.1f} s")
            results = []
            for (series, name, version, slot), (lines, secs, rc, timed_out) in zip(kernels, boots):
                v = judge(series, lines, rc, timed_out, host_release, host_fmt)
                results.append((series, version, secs, v))
                if not v.ok:
                    log(f"[{series}] last console lines:")
                    for line in lines[-60:]:
                        log(f"  | {line}")
    except HarnessError as e:
        log(f"vm: FAIL: {e}")
        return 1

    log()
    log(f"{'kernel':<8} {'version':<22} {'secs':>6}  scenario           result  detail")
    for series, version, secs, v in results:
        for scenario, ok, detail in v.rows:
            log(f"{series:<8} {version:<22} {secs:6.1f}  {scenario:<18} {'PASS' if ok else 'FAIL':<6}  {detail}")
    ok = all(v.ok for *_, v in results)
    passed = sum(ok for *_, v in results for _, ok, _ in v.rows)
    failed = sum(not ok for *_, v in results for _, ok, _ in v.rows)
    log(f"vm: {passed} of {passed + failed} checks passed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
