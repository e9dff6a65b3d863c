#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A real Prometheus (Debian's 2.42) ingests each format memwatchd negotiates.

Two runs, each a memwatchd and a Prometheus on loopback scraping it every second:
  - Prometheus with --enable-feature=exemplar-storage asks for OpenMetrics
    first: its parser must take the scrape (up == 1), keep the counters under
    their _total names, and store the _created samples (2.42 keeps them as
    series) at the daemon's start. The test then puts a dd it starts under
    memcg reclaim (it reads a sparse file in a memory cgroup with a 32 MiB
    limit), and /api/v1/query_exemplars on memwatch_memcg_reclaim_seconds_bucket
    must hold an exemplar with that dd's pid (the one the test started),
    comm "dd" and the cgroup's path;
  - with --enable-feature=native-histograms it asks for delimited protobuf:
    up == 1 and no _created series (the protobuf carries created timestamps,
    which 2.42 does not turn into series: the scrape was protobuf). The
    histogram is a native one (the query answers with "histogram", not
    "value"). The test makes memcg reclaim under perf stat, which counts
    vmscan:mm_vmscan_memcg_reclaim_end system-wide; histogram_count() of the
    native histogram must have grown by exactly perf's count between a sample
    before and one after, histogram_count(increase(...[30s])) must be > 0 and
    histogram_quantile(0.99, increase(...[30s])) must answer with a finite
    number.
Every process is stopped by PID; the cgroup is removed; tracefs is unmounted
if the test mounted it.

usage: test_prometheus_formats.py SOURCE_ROOT MEMWATCHD PROMETHEUS PERF
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

DISCOVERY_TIMEOUT = 60
MEMCG_LIMIT = 32 << 20
SPARSE_BYTES = 2 << 30
TRACEFS = "/sys/kernel/tracing"


def api_query(port, q, at=None):
    params = {"query": q}
    if at is not None:
        params["time"] = "%.3f" % at
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode(params))
    status, body = opslib.http_get(url)
    if status != 200:
        return []
    doc = json.loads(body)
    return doc.get("data", {}).get("result", []) if doc.get("status") == "success" else []


class Memcg:
    """A memory cgroup with a small limit (v2 memory.max or v1 limit_in_bytes)."""

    def __init__(self, name):
        if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            self.path = os.path.join("/sys/fs/cgroup", name)
            limit_file = "memory.max"
        else:
            self.path = os.path.join("/sys/fs/cgroup/memory", name)
            limit_file = "memory.limit_in_bytes"
        os.mkdir(self.path)
        with open(os.path.join(self.path, limit_file), "w") as f:
            f.write(str(MEMCG_LIMIT))

    def argv(self, argv):
        """argv run inside the cgroup: sh moves itself in and execs it (same pid)."""
        return ["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', self.path] + argv

    def run(self, argv):
        return subprocess.run(self.argv(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              check=False).returncode

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)


class Run:
    def __init__(self, exe, prometheus, features):
        self.tmp = opslib.tempdir("mw-prom-formats-")
        self.daemon = self.prom = None
        self.daemon_log = os.path.join(self.tmp, "memwatchd.log")
        self.prom_log = os.path.join(self.tmp, "prometheus.log")
        mport = opslib.free_port()
        conf = os.path.join(self.tmp, "memwatchd.conf")
        with open(conf, "w") as f:
            f.write("[daemon]\nlisten = 127.0.0.1:%d\nwindow = 1s\nlog_level = info\n" % mport)
        denv = {k: v for k, v in os.environ.items()
                if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC")}
        self.daemon = subprocess.Popen([exe, "--config", conf], stdin=subprocess.DEVNULL,
                                       stdout=open(self.daemon_log, "w"), stderr=subprocess.STDOUT, env=denv)
        if not opslib.wait_for(lambda: self.daemon.poll() is not None or
                               opslib.http_get("http://127.0.0.1:%d/metrics" % mport)[0] == 200, 20) \
                or self.daemon.poll() is not None:
            self.fail("memwatchd did not serve /metrics")
        self.pport = opslib.free_port()
        pconf = os.path.join(self.tmp, "prometheus.yml")
        with open(pconf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: memwatchd\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % mport)
        argv = [prometheus, "--config.file=" + pconf, "--storage.tsdb.path=" + os.path.join(self.tmp, "data"),
                "--web.listen-address=127.0.0.1:%d" % self.pport, "--log.level=info"]
        argv += ["--enable-feature=" + f for f in features]
        self.prom = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=open(self.prom_log, "w"),
                                     stderr=subprocess.STDOUT, cwd=self.tmp)
        if not opslib.wait_for(lambda: self.prom.poll() is not None or
                               opslib.http_get("http://127.0.0.1:%d/-/ready" % self.pport)[0] == 200, 30) \
                or self.prom.poll() is not None:
            self.fail("Prometheus did not become ready")

        def up():
            r = api_query(self.pport, 'up{job="memwatchd"}')
            return r and r[0]["value"][1] == "1"
        if not opslib.wait_for(up, DISCOVERY_TIMEOUT, interval=0.5):
            self.fail("up{job=\"memwatchd\"} is not 1 after %d s: %s" % (DISCOVERY_TIMEOUT, api_query(self.pport, "up")))

    def query(self, q, at=None):
        return api_query(self.pport, q, at)

    def fail(self, why):
        out = [why]
        for name, path in (("memwatchd", self.daemon_log), ("prometheus", self.prom_log)):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    out.append("---- %s log (tail) ----\n%s" % (name, f.read()[-3000:]))
            except OSError:
                pass
        self.stop()
        opslib.fail("\n".join(out))

    def stop(self):
        for p in (self.prom, self.daemon):
            if p is not None:
                opslib.stop_pid(p, timeout=20)
        self.prom = self.daemon = None
        opslib.rmtree(self.tmp)


def exemplars_of(run, start, end):
    params = urllib.parse.urlencode({"query": 'memwatch_memcg_reclaim_seconds_bucket{job="memwatchd"}',
                                     "start": "%.3f" % start, "end": "%.3f" % end})
    status, body = opslib.http_get("http://127.0.0.1:%d/api/v1/query_exemplars?%s" % (run.pport, params))
    if status != 200:
        return []
    doc = json.loads(body)
    return [e for series in doc.get("data") or [] for e in series.get("exemplars", [])]


def check_exemplars(run, tmp, problems):
    """A dd the test starts, under memcg reclaim: its pid must come back as an exemplar."""
    memcg = Memcg("mw-prom-exemplars-%d" % os.getpid())
    sparse = os.path.join(tmp, "sparse")
    try:
        with open(sparse, "wb") as f:
            f.truncate(SPARSE_BYTES)
        start = time.time()
        dd = subprocess.Popen(memcg.argv(["dd", "if=" + sparse, "of=/dev/null", "bs=1M"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if dd.wait(timeout=120) != 0:
            problems.append("dd in the memory cgroup exited %d" % dd.returncode)
        want_cgroup = "/" + os.path.basename(memcg.path)

        def found():
            return [e for e in exemplars_of(run, start - 1, time.time() + 1)
                    if e.get("labels", {}).get("pid") == str(dd.pid)]
        mine = []
        opslib.wait_for(lambda: mine.extend(found()) or mine, 10, interval=0.5)
        if not mine:
            problems.append("no exemplar of pid %d (the test's dd) in query_exemplars: %s"
                            % (dd.pid, exemplars_of(run, start - 1, time.time() + 1)[:5]))
            return
        labels = mine[0]["labels"]
        if labels.get("comm") != "dd" or labels.get("cgroup") != want_cgroup:
            problems.append("exemplar of pid %d has comm %r, cgroup %r; want 'dd', %r"
                            % (dd.pid, labels.get("comm"), labels.get("cgroup"), want_cgroup))
        if not 0 < float(mine[0]["value"]) < 10:
            problems.append("exemplar value %s is no stall time" % mine[0]["value"])
        print("ok: %d exemplars of the test's dd (pid %d), e.g. %s" % (len(mine), dd.pid, mine[0]))
    finally:
        try:
            os.unlink(sparse)
        except OSError:
            pass
        memcg.remove()


def openmetrics_run(exe, prometheus):
    run = Run(exe, prometheus, ["exemplar-storage"])
    try:
        time.sleep(3)
        problems = []
        if not run.query('memwatch_oom_kills_total{job="memwatchd"}'):
            problems.append("no memwatch_oom_kills_total")
        created = run.query('memwatch_oom_kills_created{job="memwatchd"}')
        start = run.query('memwatch_start_time_seconds{job="memwatchd"}')
        if not created or not start:
            problems.append("no memwatch_oom_kills_created (%s) or start time (%s): not scraped as OpenMetrics"
                            % (created, start))
        elif abs(float(created[0]["value"][1]) - float(start[0]["value"][1])) > 5:
            problems.append("memwatch_oom_kills_created %s, the daemon started at %s"
                            % (created[0]["value"][1], start[0]["value"][1]))
        if not run.query('memwatch_memcg_reclaim_seconds_bucket{job="memwatchd",le="+Inf"}'):
            problems.append("no memwatch_memcg_reclaim_seconds_bucket{le=\"+Inf\"}")
        check_exemplars(run, run.tmp, problems)
        if problems:
            run.fail("OpenMetrics scrape:\n  " + "\n  ".join(problems))
        print("ok: Prometheus took the OpenMetrics scrape (_created = the daemon's start)")
    finally:
        run.stop()


class Tracefs:
    """perf finds tracepoints through tracefs: mounted if it is not, and
    unmounted afterwards only then."""

    def __init__(self):
        self.mounted = False
        if not os.path.exists(os.path.join(TRACEFS, "events")):
            self.mounted = subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=False).returncode == 0

    def close(self):
        if self.mounted:
            subprocess.run(["umount", TRACEFS], check=False)


def perf_count(perf, event, argv):
    """(exit status of argv, how often event fired system-wide while it ran)."""
    r = subprocess.run([perf, "stat", "-x,", "-a", "-e", event, "--"] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    for line in r.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2] == event and fields[0].isdigit():
            return r.returncode, int(fields[0])
    return r.returncode, None


def native_count(run, at=None):
    """histogram_count of the native histogram, or None if it is not one."""
    r = run.query('histogram_count(memwatch_memcg_reclaim_seconds{job="memwatchd"})', at)
    return float(r[0]["value"][1]) if r else None


def protobuf_run(exe, prometheus, perf):
    run = Run(exe, prometheus, ["native-histograms"])
    memcg = None
    tracefs = Tracefs()
    try:
        time.sleep(2)
        problems = []
        if run.query('memwatch_oom_kills_created{job="memwatchd"}'):
            problems.append("memwatch_oom_kills_created is a series: the scrape was not protobuf")
        if not run.query('memwatch_oom_kills_total{job="memwatchd"}'):
            problems.append("no memwatch_oom_kills_total")
        raw = run.query('memwatch_memcg_reclaim_seconds{job="memwatchd"}')
        if not raw or "histogram" not in raw[0]:
            problems.append("memwatch_memcg_reclaim_seconds is no native histogram: %s" % raw)
        time.sleep(1.5)
        before = native_count(run)
        memcg = Memcg("mw-prom-formats-%d" % os.getpid())
        data = os.path.join(run.tmp, "pagecache")
        # Page cache past the limit: the memcg reclaims it (no swap needed, nothing is killed).
        rc, fired = perf_count(perf, "vmscan:mm_vmscan_memcg_reclaim_end",
                               memcg.argv(["dd", "if=/dev/zero", "of=" + data, "bs=1M", "count=128", "conv=fsync"]))
        if rc != 0 or fired is None:
            problems.append("perf stat around dd in the memory cgroup: exit %d, count %s" % (rc, fired))
        time.sleep(4)  # a few scrapes after the reclaim
        at = time.time()
        after = native_count(run, at)
        increase = run.query('histogram_count(increase(memwatch_memcg_reclaim_seconds{job="memwatchd"}[30s]))', at)
        q99 = run.query('histogram_quantile(0.99, increase(memwatch_memcg_reclaim_seconds{job="memwatchd"}[30s]))', at)
        print("memcg reclaims (native histogram_count): %s -> %s, perf counted %s; "
              "histogram_count(increase[30s]) %s; p99 %s"
              % (before, after, fired, increase and increase[0]["value"][1], q99 and q99[0]["value"][1]))
        if before is None or after is None or fired is None or after - before != fired:
            problems.append("histogram_count grew %s -> %s, perf counted %s memcg reclaims" % (before, after, fired))
        if not fired:
            problems.append("the test's dd made no memcg reclaim (perf: %s)" % fired)
        if not increase or not float(increase[0]["value"][1]) > 0:
            problems.append("histogram_count(increase(memwatch_memcg_reclaim_seconds[30s])) = %s" % increase)
        if not q99 or not 0 < float(q99[0]["value"][1]) < 10:
            problems.append("histogram_quantile(0.99, increase(...)) = %s" % q99)
        if problems:
            run.fail("protobuf scrape:\n  " + "\n  ".join(problems))
        print("ok: Prometheus took the protobuf scrape with native histograms")
    finally:
        tracefs.close()
        if memcg:
            memcg.remove()
        run.stop()


def main():
    if len(sys.argv) != 5:
        opslib.fail(__doc__)
    _, exe, prometheus, perf = sys.argv[1:]
    opslib.need_tool(prometheus, "prometheus (package prometheus)")
    opslib.need_tool(perf, "perf (package linux-perf)")
    opslib.need_root("memwatchd loads BPF programs; the test makes a memory cgroup")
    openmetrics_run(exe, prometheus)
    protobuf_run(exe, prometheus, perf)


if __name__ == "__main__":
    main()
