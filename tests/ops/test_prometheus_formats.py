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
    "value"). The test makes memcg reclaim while perf records every
    vmscan:mm_vmscan_memcg_reclaim_end system-wide with its time; histogram_count()
    of the native histogram must have grown between a sample before and one
    after by exactly perf's count over the same interval: from the cut of the
    window the first sample holds to the cut of the second's (see
    exact_growth), histogram_count(increase(...[30s])) must be > 0 and
    histogram_quantile(0.99, increase(...[30s])) must answer with a finite
    number.
Every process is stopped by PID; the cgroup is removed; tracefs is unmounted
if the test mounted it.

usage: test_prometheus_formats.py SOURCE_ROOT MEMWATCHD PROMETHEUS PERF
"""
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

DISCOVERY_TIMEOUT = 60
RECLAIM_END = "vmscan:mm_vmscan_memcg_reclaim_end"
GROWTH_ATTEMPTS = 3
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
        mport = self.mport = opslib.free_port()
        conf = os.path.join(self.tmp, "memwatchd.conf")
        # Every window ends at its length: the test counts windows between scrapes.
        with open(conf, "w") as f:
            f.write("[daemon]\nlisten = 127.0.0.1:%d\nwindow = 1s\nquiet_read_interval = 0\nlog_level = info\n" % mport)
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


class ReclaimRecorder:
    """Every memcg reclaim end system-wide with its time (perf record on
    CLOCK_MONOTONIC, which this kernel's perf takes, moved to the wall clock
    of the window ends), and when each of the daemon's windows was first seen published
    on /metrics (polled every 20 ms), until stop()."""

    def __init__(self, perf, tmp, mport):
        self.perf, self.out, self.url = perf, os.path.join(tmp, "reclaim.perf"), "http://127.0.0.1:%d/metrics" % mport
        self.seen, self.events, self.done = {}, [], threading.Event()
        ctl, ack = os.path.join(tmp, "perf.ctl"), os.path.join(tmp, "perf.ack")
        for fifo in (ctl, ack):
            if os.path.exists(fifo):
                os.unlink(fifo)
            os.mkfifo(fifo)
        # Started with its events off; "enable" is acknowledged once they are on.
        self.proc = subprocess.Popen([perf, "record", "-q", "-a", "-k", "CLOCK_MONOTONIC", "-e", RECLAIM_END,
                                      "-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack), "-o", self.out],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.poller = threading.Thread(target=self._poll, daemon=True)
        self.poller.start()
        self.ready = self._enable(ctl, ack)

    def _enable(self, ctl, ack):
        """Turns perf's events on; the wall-clock time they are on from."""
        deadline = time.monotonic() + 30
        ack_fd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
        try:
            while True:
                try:
                    ctl_fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                    break
                except OSError:  # ENXIO until perf has opened its end
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        raise RuntimeError("perf record never opened its control fifo")
                    time.sleep(0.05)
            os.write(ctl_fd, b"enable\n")
            os.close(ctl_fd)
            got = b""
            while b"ack" not in got:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("perf record did not acknowledge enable")
                if select.select([ack_fd], [], [], 0.5)[0]:
                    got += os.read(ack_fd, 64)
            return time.time()
        finally:
            os.close(ack_fd)

    def _poll(self):
        while not self.done.is_set():
            status, body = opslib.http_get(self.url, timeout=2)
            now = time.time()
            for line in body.splitlines() if status == 200 else []:
                if line.startswith("memwatch_window_end_timestamp_seconds "):
                    self.seen.setdefault(float(line.split()[-1]), now)
            time.sleep(0.02)

    def stop(self):
        self.done.set()
        self.poller.join()
        self.stopped = time.time()
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)
        r = subprocess.run([self.perf, "script", "-i", self.out, "-F", "time"], capture_output=True, text=True,
                           check=False)
        to_real = time.time() - time.monotonic()
        self.events = sorted(float(t.strip().rstrip(":")) + to_real for t in r.stdout.splitlines() if t.strip())
        return r.returncode


def exact_growth(run, rec, t0, t1, at):
    """(before, after, counted) or None: histogram_count in the last sample
    Prometheus took, of a window published before t0, and in the first of a
    window that ended after t1; counted is perf's reclaims between the two
    windows' cuts. The daemon reads its counters (the cut) after it takes the
    window's end time and before it publishes the window: a window is usable
    only when perf saw no reclaim between its end and when the poller first
    saw it published, so every reclaim perf saw falls on one side of the cut.
    A reclaim beside the test (another test's OOM kill) is then in both
    counts or in neither."""
    span = "[%ds]" % (int(at - rec.ready) + 2)
    ends = run.query('memwatch_window_end_timestamp_seconds{job="memwatchd"}' + span, at)
    hists = run.query('memwatch_memcg_reclaim_seconds{job="memwatchd"}' + span, at)
    if not ends or not hists or "histograms" not in hists[0]:
        return None
    count_at = {ts: float(h["count"]) for ts, h in hists[0]["histograms"]}
    samples = [(float(end), count_at[ts]) for ts, end in ends[0]["values"] if ts in count_at]

    def clean(end):
        seen = rec.seen.get(end)
        return (seen is not None and rec.ready < end and seen < rec.stopped and
                not any(end <= t <= seen for t in rec.events))
    before = [x for x in samples if rec.seen.get(x[0], t0) < t0 and clean(x[0])]
    after = [x for x in samples if x[0] > t1 and clean(x[0])]
    if not before or not after:
        return None
    (end_b, count_b), (end_a, count_a) = before[-1], after[0]
    return count_b, count_a, sum(1 for t in rec.events if end_b < t <= end_a)


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
        memcg = Memcg("mw-prom-formats-%d" % os.getpid())
        data = os.path.join(run.tmp, "pagecache")
        growth = None
        for attempt in range(1, GROWTH_ATTEMPTS + 1):
            if os.path.exists(data):
                os.unlink(data)
            rec = ReclaimRecorder(perf, run.tmp, run.mport)
            time.sleep(3)  # windows (and Prometheus samples of them) wholly within the recording
            t0 = time.time()
            # Page cache past the limit: the memcg reclaims it (no swap needed, nothing is killed).
            rc = memcg.run(["dd", "if=/dev/zero", "of=" + data, "bs=1M", "count=128", "conv=fsync"])
            t1 = time.time()
            time.sleep(4)  # a few scrapes after the reclaim
            at = time.time()
            perf_rc = rec.stop()
            if rc != 0 or perf_rc != 0:
                problems.append("dd in the memory cgroup exited %d, perf script %d" % (rc, perf_rc))
                break
            growth = exact_growth(run, rec, t0, t1, at)
            print("attempt %d: %d memcg reclaims recorded system-wide, %d windows seen: %s"
                  % (attempt, len(rec.events), len(rec.seen),
                     "histogram_count %s -> %s, perf counted %s between the cuts" % growth if growth
                     else "no window before and after whose cut perf left clean"))
            if growth:
                break
        before, after, fired = growth if growth else (None, None, None)
        increase = run.query('histogram_count(increase(memwatch_memcg_reclaim_seconds{job="memwatchd"}[30s]))', at)
        q99 = run.query('histogram_quantile(0.99, increase(memwatch_memcg_reclaim_seconds{job="memwatchd"}[30s]))', at)
        print("memcg reclaims (native histogram_count): %s -> %s, perf counted %s; "
              "histogram_count(increase[30s]) %s; p99 %s"
              % (before, after, fired, increase and increase[0]["value"][1], q99 and q99[0]["value"][1]))
        if growth is None:
            problems.append("in %d attempts, no pair of windows whose cuts perf left clean (reclaim all along "
                            "beside the test?)" % GROWTH_ATTEMPTS)
        elif after - before != fired:
            problems.append("histogram_count grew %s -> %s, perf counted %s memcg reclaims between the same cuts"
                            % (before, after, fired))
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
