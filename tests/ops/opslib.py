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
UPCOMING_METRICS = set()


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


# ---- processes the end-to-end tests start: memwatchd, Prometheus, Alertmanager ----

def daemon_env():
    """The environment of a daemon the test starts: not the test runner's
    systemd notification socket or socket activation."""
    env = dict(os.environ)
    for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC"):
        env.pop(k, None)
    return env


def start_logged(argv, log_path, cwd=None):
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=open(log_path, "w"),
                            stderr=subprocess.STDOUT, env=daemon_env(), cwd=cwd)


def wait_http_ok(proc, url, timeout):
    """True once url answers 200 while proc is still running."""
    ok = wait_for(lambda: proc.poll() is not None or http_get(url)[0] == 200, timeout)
    return bool(ok) and proc.poll() is None


def start_memwatchd(exe, directory, name, extra_conf=""):
    """memwatchd on 127.0.0.1:<free port> with 1 s windows and its own pid
    file; returns (process, port, log path) once /metrics answers, or
    (None, port, log path)."""
    port = free_port()
    conf = os.path.join(directory, name + ".conf")
    log = os.path.join(directory, name + ".log")
    with open(conf, "w") as f:
        f.write("[daemon]\nlisten = 127.0.0.1:%d\nwindow = 1s\nlog_level = info\n%s" % (port, extra_conf))
    proc = start_logged([exe, "--config", conf], log)
    if not wait_http_ok(proc, "http://127.0.0.1:%d/metrics" % port, 30):
        stop_pid(proc)
        return None, port, log
    return proc, port, log


def start_prometheus(prometheus, directory, name, config_text, extra_args=()):
    """Prometheus on 127.0.0.1:<free port>, TSDB (or WAL) in directory/name;
    returns (process, port, log path, config path), process None when it did
    not become ready."""
    port = free_port()
    conf = os.path.join(directory, name + ".yml")
    log = os.path.join(directory, name + ".log")
    with open(conf, "w") as f:
        f.write(config_text)
    storage = "--storage.agent.path=" if "--enable-feature=agent" in extra_args else "--storage.tsdb.path="
    proc = start_logged([prometheus, "--config.file=" + conf, storage + os.path.join(directory, name + "-data"),
                         "--web.listen-address=127.0.0.1:%d" % port, "--log.level=info"] + list(extra_args),
                        log, cwd=directory)
    if not wait_http_ok(proc, "http://127.0.0.1:%d/-/ready" % port, 30):
        stop_pid(proc)
        return None, port, log, conf
    return proc, port, log, conf


def prom_api(port, path, **params):
    """data of a Prometheus (or Alertmanager v1-style) API answer, None on error."""
    import json
    import urllib.parse
    url = "http://127.0.0.1:%d%s" % (port, path)
    if params:
        url += "?" + urllib.parse.urlencode(params)
    status, body = http_get(url)
    if status != 200:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return doc.get("data") if doc.get("status") == "success" else None


def prom_query(port, q):
    data = prom_api(port, "/api/v1/query", query=q)
    return data.get("result", []) if data else []


def log_tails(paths, chars=2500):
    out = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                out.append("---- %s (tail) ----\n%s" % (os.path.basename(path), f.read()[-chars:]))
        except OSError:
            pass
    return "\n".join(out)


class MemoryCgroup:
    """A memory cgroup of the test's own, directly below the memory tree's
    root (v1 memory hierarchy, or cgroup2 with the memory controller), with a
    hard limit and no swap. label is the cgroup label memwatchd gives it."""

    def __init__(self, name, limit_bytes):
        v1 = "/sys/fs/cgroup/memory"
        if os.path.exists(os.path.join(v1, "memory.limit_in_bytes")):
            self.path = os.path.join(v1, name)
            os.mkdir(self.path)
            self._write("memory.limit_in_bytes", limit_bytes)
            if os.path.exists(os.path.join(self.path, "memory.memsw.limit_in_bytes")):
                self._write("memory.memsw.limit_in_bytes", limit_bytes)
        else:
            root = "/sys/fs/cgroup"
            with open(os.path.join(root, "cgroup.controllers")) as f:
                if "memory" not in f.read().split():
                    raise OSError("no memory controller in cgroup v1 or v2")
            self.path = os.path.join(root, name)
            os.mkdir(self.path)
            self._write("memory.max", limit_bytes)
            if os.path.exists(os.path.join(self.path, "memory.swap.max")):
                self._write("memory.swap.max", 0)
        self.label = "/" + name

    def _write(self, file, value):
        with open(os.path.join(self.path, file), "w") as f:
            f.write("%s\n" % value)

    def remove(self):
        """rmdir, after SIGKILLing what is left in it (only the test's own
        workloads can be), bounded."""
        deadline = time.monotonic() + 10
        while True:
            try:
                os.rmdir(self.path)
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
            try:
                with open(os.path.join(self.path, "cgroup.procs")) as f:
                    for pid in f.read().split():
                        if int(pid) > 1:
                            os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
            time.sleep(0.05)


def oom_kill_in(cgroup, touch_bytes):
    """Runs a process in cgroup that touches touch_bytes of anonymous memory,
    more than the cgroup's limit; returns (its exit status, time.time() when it
    was reaped). The kernel's memcg OOM killer must SIGKILL it."""
    # The shell moves itself into the cgroup and becomes the workload (no
    # preexec_fn: the tests run threads, a webhook receiver for one).
    code = "b = bytearray(b'\\x01') * %d" % touch_bytes
    script = 'echo $$ > "$1/cgroup.procs" && exec "$2" -c "$3"'
    proc = subprocess.Popen(["/bin/sh", "-c", script, "sh", cgroup.path, sys.executable, code],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        rc = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        rc = proc.wait()
    return rc, time.time()
