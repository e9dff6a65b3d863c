#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The vm suite on arm64: cross-builds memwatchd and memhog for arm64
(packaging/cross/aarch64-linux-gnu.ini) into BUILD_DIR, configured once and
then only brought up to date, and runs tests/vm/run_vm.py --arch arm64 with
them on Debian's arm64 cloud kernels (the same series as on amd64).

  run_arm64.py --source-root DIR --build-dir DIR --init PATH [--log-dir DIR] [run_vm options]

Without the cross tools (packaging/install-deps.sh --arm64) it is skipped
(77), except in CI (CI=true), where it fails. Not root: skipped, as run_vm.
Stdlib only.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "packaging", "cross"))
import kernel_packages  # noqa: E402

sys.path.insert(0, HERE)
import run_vm  # noqa: E402

ARM64_GUEST_TIMEOUT = 240  # seconds per guest boot


def cross_build(source_root, build_dir):
    """Configures (once) and compiles the arm64 build; raises HarnessError."""
    meson = "meson"
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        cross = os.path.join(source_root, "packaging", "cross", "aarch64-linux-gnu.ini")
        # No sanitizers (the guest has no arm64 libasan) and no memwatch-top (not used here).
        r = subprocess.run([meson, "setup", build_dir, source_root, "--cross-file", cross,
                            "-Dtop=disabled"], text=True, capture_output=True)
        if r.returncode != 0:
            raise run_vm.HarnessError(f"meson setup of the arm64 build failed:\n{r.stdout[-4000:]}{r.stderr[-2000:]}")
    r = subprocess.run([meson, "compile", "-C", build_dir, "daemon/memwatchd", "tests/vm/memhog"],
                       text=True, capture_output=True)
    if r.returncode != 0:
        raise run_vm.HarnessError(f"the arm64 build failed:\n{r.stdout[-6000:]}{r.stderr[-2000:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--init", required=True)
    args, rest = ap.parse_known_args()

    if kernel_packages.missing_cross_tools("arm64"):
        return kernel_packages.cross_missing_exit("arm64", "vm-arm64")
    if os.geteuid() != 0:
        run_vm.log("vm-arm64: not root: skipped (kernels are fetched with apt-get download into a root-owned cache)")
        return run_vm.SKIP
    start = time.monotonic()
    try:
        cross_build(os.path.abspath(args.source_root), os.path.abspath(args.build_dir))
    except run_vm.HarnessError as e:
        run_vm.log(f"vm-arm64: FAIL: {e}")
        return 1
    run_vm.log(f"vm-arm64: arm64 build up to date after {time.monotonic() - start:.1f} s")
    # An arm64 guest under TCG takes longer than an x86-64 one: in a fresh-clone
    # CI run, 67-142 s for four of them, and 6.18 was cut at run_vm's 150 s
    # while it waited for memory to settle after its OOM kill.
    if not any(a == "--timeout" or a.startswith("--timeout=") for a in rest):
        rest = ["--timeout", str(ARM64_GUEST_TIMEOUT)] + rest
    sys.argv = [sys.argv[0], "--arch", "arm64", "--init", args.init,
                "--daemon", os.path.join(args.build_dir, "daemon", "memwatchd"),
                "--memhog", os.path.join(args.build_dir, "tests", "vm", "memhog")] + rest
    rc = run_vm.main()
    run_vm.log(f"vm-arm64: {time.monotonic() - start:.1f} s in all")
    return rc


if __name__ == "__main__":
    sys.exit(main())
