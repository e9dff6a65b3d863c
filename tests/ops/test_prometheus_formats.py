#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A real Prometheus (Debian's 2.42) ingests each format memwatchd negotiates.

Two runs, each a memwatchd and a Prometheus on loopback scraping it every second:
  - plain Prometheus asks for OpenMetrics first: its parser must take the
    scrape (up == 1), keep the counters under their _total names, and store
    the _created samples (2.42 keeps them as series) at the daemon's start;
  - with --enable-feature=native-histograms it asks for delimited protobuf:
    up == 1 and no _created series (the protobuf carries created timestamps,
    which 2.42 does not turn into series: the scrape was protobuf). The test
    makes memcg reclaim (page cache written in a memory cgroup with a 32 MiB
    limit) and the histogram's increase(_count[30s]) must be > 0 and equal
    increase(memwatch_memcg_reclaim_total[30s]) at the same instant (the two
    come from one read), and histogram_quantile(0.99, ...) must answer.
Every process is stopped by PID; the cgroup is removed.

usage: test_prometheus_formats.py SOURCE_ROOT MEMWATCHD PROMETHEUS
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

    def run(self, argv):
        return subprocess.run(["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', self.path] + argv,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode

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


def openmetrics_run(exe, prometheus):
    run = Run(exe, prometheus, [])
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
        if problems:
            run.fail("OpenMetrics scrape:\n  " + "\n  ".join(problems))
        print("ok: Prometheus took the OpenMetrics scrape (_created = the daemon's start)")
    finally:
        run.stop()


def protobuf_run(exe, prometheus):
    run = Run(exe, prometheus, ["native-histograms"])
    memcg = None
    try:
        time.sleep(2)
        problems = []
        if run.query('memwatch_oom_kills_created{job="memwatchd"}'):
            problems.append("memwatch_oom_kills_created is a series: the scrape was not protobuf")
        if not run.query('memwatch_oom_kills_total{job="memwatchd"}'):
            problems.append("no memwatch_oom_kills_total")
        before = run.query('memwatch_memcg_reclaim_total{job="memwatchd"}')
        memcg = Memcg("mw-prom-formats-%d" % os.getpid())
        data = os.path.join(run.tmp, "pagecache")
        # Page cache past the limit: the memcg reclaims it (no swap needed, nothing is killed).
        rc = memcg.run(["dd", "if=/dev/zero", "of=" + data, "bs=1M", "count=128", "conv=fsync"])
        if rc != 0:
            problems.append("dd in the memory cgroup exited %d" % rc)
        time.sleep(4)  # a few scrapes after the reclaim
        at = time.time()
        # Both at the same instant: the same scrapes, so the same extrapolation.
        hist = run.query('increase(memwatch_memcg_reclaim_seconds_count{job="memwatchd"}[30s])', at)
        total = run.query('increase(memwatch_memcg_reclaim_total{job="memwatchd"}[30s])', at)
        q99 = run.query('histogram_quantile(0.99, rate(memwatch_memcg_reclaim_seconds_bucket{job="memwatchd"}[30s]))')
        after = run.query('memwatch_memcg_reclaim_total{job="memwatchd"}')
        print("memcg reclaims: %s -> %s; increase of the histogram's count %s, of the counter %s; p99 %s"
              % (before and before[0]["value"][1], after and after[0]["value"][1],
                 hist and hist[0]["value"][1], total and total[0]["value"][1], q99 and q99[0]["value"][1]))
        if not hist or not float(hist[0]["value"][1]) > 0:
            problems.append("increase(memwatch_memcg_reclaim_seconds_count[30s]) = %s after the test's reclaim" % hist)
        elif not total or abs(float(hist[0]["value"][1]) - float(total[0]["value"][1])) > 1e-9 * float(total[0]["value"][1]):
            problems.append("histogram count increase %s != memwatch_memcg_reclaim_total increase %s" % (hist, total))
        if not q99 or q99[0]["value"][1] in ("NaN", "+Inf"):
            problems.append("histogram_quantile(0.99, ...) = %s" % q99)
        if problems:
            run.fail("protobuf scrape:\n  " + "\n  ".join(problems))
        print("ok: Prometheus took the protobuf scrape with native histograms enabled")
    finally:
        if memcg:
            memcg.remove()
        run.stop()


def main():
    if len(sys.argv) != 4:
        opslib.fail(__doc__)
    _, exe, prometheus = sys.argv[1:]
    opslib.need_tool(prometheus, "prometheus (package prometheus)")
    opslib.need_root("memwatchd loads BPF programs; the test makes a memory cgroup")
    openmetrics_run(exe, prometheus)
    protobuf_run(exe, prometheus)


if __name__ == "__main__":
    main()
