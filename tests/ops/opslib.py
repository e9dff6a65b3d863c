# SPDX-License-Identifier: GPL-2.0
"""Helpers shared by the tests in tests/ops (stdlib only).

Every test is a script that exits 0 (pass), 1 (fail) or 77 (skipped: a tool
or a privilege it needs is missing), as meson expects."""

import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77

# Metric names the Prometheus rules and the Grafana dashboard may use although
# neither docs/metrics.md nor the daemon's sources have them yet. Keep short.
UPCOMING_METRICS = {
    # The cgroup -> Kubernetes namespace/pod mapping (issue 21's dashboard
    # variables); the dashboard works without it.
    "memwatch_cgroup_info",
}


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def need_tool(path, what):
    """path from meson (empty when find_program did not find it)."""
    if not path or not os.access(path, os.X_OK):
        skip("%s not found (%s)" % (what, path or "not installed"))
    return path


def need_root(why):
    if os.geteuid() != 0:
        skip("needs root: " + why)


def free_port():
    """A loopback port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    """(status, body text); status 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError):
        return 0, ""


def wait_for(pred, timeout, interval=0.2):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def stop_pid(proc, timeout=10):
    """SIGTERM by PID, bounded wait, SIGKILL as the last resort. Returns the exit code."""
    if proc.poll() is not None:
        return proc.returncode
    os.kill(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def parse_metrics(text):
    """{(name, frozenset(labels.items())): value} from exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)', line)
        if not m:
            continue
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        try:
            value = float(m.group(4))
        except ValueError:
            continue
        out[(m.group(1), frozenset(labels.items()))] = value
    return out


def collector_states(metrics_text):
    """{collector: (state, mode)} from memwatch_collector_info."""
    states = {}
    for (name, labels), _ in parse_metrics(metrics_text).items():
        if name == "memwatch_collector_info":
            d = dict(labels)
            states[d.get("collector")] = (d.get("state"), d.get("mode"))
    return states


def known_metric_names(source_root):
    """Every metric name documented in docs/metrics.md or written by the daemon,
    with the _bucket/_sum/_count series of histograms."""
    names = set(UPCOMING_METRICS)
    with open(os.path.join(source_root, "docs", "metrics.md"), encoding="utf-8") as f:
        names |= set(re.findall(r'\bmemwatch_[a-z0-9_]+', f.read()))
    for path in glob.glob(os.path.join(source_root, "daemon", "**", "*.c"), recursive=True):
        with open(path, encoding="utf-8", errors="replace") as f:
            names |= set(re.findall(r'"(memwatch_[a-z0-9_]+)"', f.read()))
    histograms = set()
    for n in names:
        histograms |= {n + "_bucket", n + "_sum", n + "_count"}
    return names | histograms


def metric_names_in_expr(expr):
    """memwatch_* names an expression selects (recording rule names have a ':')."""
    return set(re.findall(r'(?<![:\w])(memwatch_[a-z0-9_]+)(?![:\w])', expr))


NOBODY = 65534


def unit_settings(path):
    """{Key: [values in file order]} of a unit file (sections ignored)."""
    s = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'^\s*([A-Za-z]+)\s*=\s*(.*?)\s*$', line)
            if m:
                s.setdefault(m.group(1), []).append(m.group(2))
    return s


def unit_last(settings, key, default=""):
    return settings.get(key, [default])[-1]


def unit_caps(settings, key):
    """Capability names, lower case without cap_, as setpriv wants them."""
    caps = []
    for v in settings.get(key, []):
        if v == "":
            caps = []
        caps += [c.lower().replace("cap_", "") for c in v.split()]
    return caps


def setpriv_argv(settings):
    """setpriv arguments that give a process the unit's user and capabilities:
    DynamicUser=yes (or a User= other than root) becomes nobody's uid and gid,
    which own no files, like a dynamic user; the bounding, inheritable and
    ambient sets come from CapabilityBoundingSet= and AmbientCapabilities=."""
    bounding = unit_caps(settings, "CapabilityBoundingSet")
    ambient = unit_caps(settings, "AmbientCapabilities")
    argv = ["setpriv"]
    dynamic = unit_last(settings, "DynamicUser") == "yes"
    user = unit_last(settings, "User", "root")
    if dynamic or user not in ("", "root", "0"):
        argv += ["--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]
    if unit_last(settings, "NoNewPrivileges") == "yes" or dynamic:
        argv.append("--no-new-privs")
    argv.append("--bounding-set=" + ",".join(["-all"] + ["+" + c for c in bounding]))
    argv.append("--inh-caps=" + ",".join(["-all"] + ["+" + c for c in ambient]))
    argv.append("--ambient-caps=" + ",".join(["-all"] + ["+" + c for c in ambient]))
    return argv + ["--"]


def world_readable_copy(exe, directory):
    """A copy of the binary that an unprivileged uid can run, in directory
    (made 0755): the build tree may be below a directory it cannot enter."""
    os.chmod(directory, 0o755)
    dest = os.path.join(directory, os.path.basename(exe))
    shutil.copy2(exe, dest)
    os.chmod(dest, 0o755)
    return dest


def tempdir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def rmtree(path):
    shutil.rmtree(path, ignore_errors=True)
