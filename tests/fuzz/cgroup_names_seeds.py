#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""cgroup_names_seeds.py FIXTURES_DIR OUT_DIR

Seed scripts for fuzz_cgroup_names (see its comment for the format), made
from the trees in FIXTURES_DIR/cgroup-names at build time, so they follow
the fixtures: kubelet's pods and containers entries, and the cgroup paths of
the v2-systemd tree and of FIXTURES_DIR/cgroup-identity."""
import os
import sys


def main():
    fixtures, out = sys.argv[1], sys.argv[2]
    kubelet = os.path.join(fixtures, "cgroup-names", "kubelet")
    pods = sorted(os.listdir(os.path.join(kubelet, "pods")))
    containers = sorted(os.listdir(os.path.join(kubelet, "containers")))
    tree = os.path.join(fixtures, "cgroup-names", "v2-systemd")
    paths = sorted("/" + os.path.relpath(d, tree) for d, _, _ in os.walk(tree) if d != tree)
    identity = os.path.join(fixtures, "cgroup-identity")
    for name in sorted(os.listdir(identity)):
        with open(os.path.join(identity, name)) as f:
            line = f.read().strip()
        if line.startswith("/"):
            paths.append(line)
    listing = [f"p {p}" for p in pods] + [f"c {c}" for c in containers]
    seeds = {
        "all": listing + paths,
        # Named, then gone: kept for an hour, then forgotten.
        "gone": listing + paths + ["x", "t 6"] + paths + ["t 3601"] + paths,
        # Asked before the entries appear: a miss, then a rescan once allowed.
        "late": paths + listing + paths + ["t 6"] + paths,
    }
    for i, pod in enumerate(pods):
        seeds[f"pod-{i}"] = [f"p {pod}"] + [f"c {c}" for c in containers] + paths
    os.makedirs(out, exist_ok=True)
    for name, lines in seeds.items():
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
