# SPDX-License-Identifier: GPL-2.0
"""The memory cgroups the soak makes, on cgroup v1 or v2 alike: where they go,
how a limit is set, and the kernel's own count of OOM kills in one."""
import os

V1_ROOT = "/sys/fs/cgroup/memory"


def find_root():
    """The v1 memory hierarchy if mounted, else the cgroup2 mount whose
    controllers include memory; None if neither."""
    if os.path.exists(V1_ROOT + "/memory.limit_in_bytes"):
        return V1_ROOT
    for line in open("/proc/self/mounts"):
        fields = line.split()
        if fields[2] == "cgroup2" and "memory" in read(fields[1] + "/cgroup.controllers", "").split():
            return fields[1]
    return None


def mount_of(path):
    """The cgroup mount point path is in: the daemon's cgroup labels are
    paths relative to it."""
    best = None
    for line in open("/proc/self/mounts"):
        fields = line.split()
        if fields[2] in ("cgroup", "cgroup2") and (path + "/").startswith(fields[1].rstrip("/") + "/"):
            if best is None or len(fields[1]) > len(best):
                best = fields[1]
    return best


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        if default is None:
            raise
        return default


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class MemoryCgroups:
    """parent: an existing memory cgroup (v1: a directory of the memory
    hierarchy; v2: a cgroup whose cgroup.controllers lists memory) under which
    the soak makes its own, name, and everything in it."""

    def __init__(self, parent, name):
        self.v2 = os.path.exists(parent + "/cgroup.controllers")
        self.root = os.path.join(parent, name)
        self.parent = parent
        self.enabled_in_parent = False

    def problem(self):
        """Why the soak cannot use parent, or None."""
        if self.v2:
            if "memory" not in read(self.parent + "/cgroup.controllers", "").split():
                return "%s: no memory controller in cgroup.controllers" % self.parent
        elif not os.path.exists(self.parent + "/memory.limit_in_bytes"):
            return "%s is not a v1 memory cgroup" % self.parent
        return None

    def make_root(self):
        """v2: memory must be on in the parent's subtree_control for our
        cgroup to have memory.* files, and in ours for its children (which
        is allowed: ours holds no process). Turned on in the parent only if
        it was off, and turned off again by cleanup()."""
        if self.v2 and "memory" not in read(self.parent + "/cgroup.subtree_control").split():
            write(self.parent + "/cgroup.subtree_control", "+memory")
            self.enabled_in_parent = True
        os.mkdir(self.root)
        if self.v2:
            write(self.root + "/cgroup.subtree_control", "+memory")

    def limit(self, path, nbytes):
        """A hard limit with no swap to escape to: over it, the OOM killer."""
        if self.v2:
            write(path + "/memory.max", str(nbytes))
            if os.path.exists(path + "/memory.swap.max"):
                write(path + "/memory.swap.max", "0")
        else:
            write(path + "/memory.limit_in_bytes", str(nbytes))
            if os.path.exists(path + "/memory.memsw.limit_in_bytes"):
                write(path + "/memory.memsw.limit_in_bytes", str(nbytes))

    def oom_kills(self, path):
        """The kernel's count of OOM kills in the cgroup: oom_kill in
        memory.events (v2) or memory.oom_control (v1)."""
        name = "memory.events" if self.v2 else "memory.oom_control"
        for line in read(os.path.join(path, name)).splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def cleanup(self):
        """Removes our cgroups (the deepest first); returns what is left."""
        left = []
        if os.path.isdir(self.root):
            for name in sorted(os.listdir(self.root), reverse=True):
                p = os.path.join(self.root, name)
                if os.path.isdir(p):
                    try:
                        os.rmdir(p)
                    except OSError:
                        pass
            try:
                os.rmdir(self.root)
            except OSError as e:
                left.append("cannot remove %s: %s" % (self.root, e))
        if self.enabled_in_parent:
            try:
                write(self.parent + "/cgroup.subtree_control", "-memory")
            except OSError as e:
                left.append("cannot turn memory off again in %s: %s" % (self.parent, e))
        return left
