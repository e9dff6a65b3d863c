# SPDX-License-Identifier: GPL-2.0
"""The kernel table of tests/vm: which kernel series the guests boot, how
each architecture's guest boots, and the tracepoints whose format every
guest prints. The packages themselves: packaging/cross/kernel_packages.py."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging", "cross"))
import kernel_packages  # noqa: E402

# Kernel series (the same names for every architecture).
SERIES = kernel_packages.SERIES["amd64"]

# The series the guests boot when run_vm.py has no --kernel and
# $MEMWATCHD_VM_KERNELS is unset: all of them. (6.18 and 6.19 were left out
# while their reclaim hog could make no direct reclaim; init.sh now repeats it
# with vm.min_free_kbytes above MemFree when the first round made none.)
DEFAULT_SERIES = tuple(SERIES)


def default_series(env):
    """The series to boot for $MEMWATCHD_VM_KERNELS: unset or empty, the
    default; 'all', every series; else a comma-separated list."""
    if not env:
        return list(DEFAULT_SERIES)
    if env.strip() == "all":
        return list(SERIES)
    wanted = [s.strip() for s in env.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SERIES]
    if unknown:
        raise kernel_packages.HarnessError(f"MEMWATCHD_VM_KERNELS names unknown series {', '.join(unknown)} "
                                           f"(known: {', '.join(SERIES)})")
    return wanted

# How each architecture's guest boots: qemu, its machine, the serial console.
# A named server CPU, not "max": under TCG every extension "max" offers is
# emulated, and the guests' libraries and kernels use them (AVX2 and AVX-512
# string functions, pointer authentication). Measured on 2026-12-05, the same
# guests one after the other: the amd64 vm guests took 34.3/33.7 s of host CPU
# with max and 24.1/25.8 with Nehalem (x86-64-v2), a systemd smoke guest 58.2
# and 52.7 s; the arm64 vm guest on 6.12 42.2 s with max (pauth-impdef: the
# architected QARMA hash had tripled it) and 38.7 s with neoverse-n1 (ARMv8.2,
# LSE atomics, no pointer authentication). Every check passed with both.
ARCHES = {
    "amd64": {"qemu": "qemu-system-x86_64", "qemu_pkg": "qemu-system-x86",
              "machine": ["-cpu", "Nehalem"], "console": "ttyS0"},
    "arm64": {"qemu": "qemu-system-aarch64", "qemu_pkg": "qemu-system-arm",
              "machine": ["-M", "virt", "-cpu", "neoverse-n1"], "console": "ttyAMA0",
              "multiarch": "aarch64-linux-gnu"},
}

# Tracepoints whose format every guest prints; compared with the host's.
TRACEPOINTS = [
    "vmscan/mm_vmscan_direct_reclaim_begin",
    "vmscan/mm_vmscan_direct_reclaim_end",
    "vmscan/mm_vmscan_memcg_reclaim_begin",
    "vmscan/mm_vmscan_memcg_reclaim_end",
    "vmscan/mm_vmscan_memcg_softlimit_reclaim_begin",
    "vmscan/mm_vmscan_memcg_softlimit_reclaim_end",
    "vmscan/mm_vmscan_kswapd_wake",
    "vmscan/mm_vmscan_kswapd_sleep",
    "vmscan/mm_vmscan_wakeup_kswapd",
    "kmem/mm_page_alloc",
    "oom/mark_victim",
]

HarnessError = kernel_packages.HarnessError
log = kernel_packages.log
run = kernel_packages.run
cache_dir = kernel_packages.cache_dir
fetch_kernel_updating = kernel_packages.fetch_kernel_updating
