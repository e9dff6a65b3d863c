#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fuzz_missing.py WHY

The fuzz suite's one test when its targets cannot be built (no clang with
libFuzzer, or -Dfuzz=disabled): the suite still shows in meson's list and
totals. Under CI (CI=true) that fails; elsewhere it is skipped (77), saying
why and how to get the suite."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "expectations"))
import expectations  # noqa: E402

SKIP = 77


def main():
    why = sys.argv[1] if len(sys.argv) > 1 else "libFuzzer missing"
    if expectations.under_ci():
        print(f"fuzz: FAIL: no fuzz target was built ({why}); under CI (CI=true) the fuzz suite must run")
        return 1
    print(f"fuzz: skipped: no fuzz target was built ({why})")
    return SKIP


if __name__ == "__main__":
    sys.exit(main())
