#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A real Prometheus scrapes a real memwatchd, over loopback.

memwatchd serves on 127.0.0.1:<free port>; Prometheus (Debian's, the binary
meson found) runs with a generated configuration that scrapes it every second
and loads packaging/prometheus/memwatchd-rules.yml, its TSDB in a temporary
directory, its web API on 127.0.0.1:<another free port>. Once discovery has
handed over the target (a few seconds), the HTTP API must show:
  - up{job="memwatchd"} == 1;
  - the core series: memwatch_memory_available_bytes, memwatch_kswapd_wakeups_total,
    memwatch_direct_reclaim_total, memwatch_collector_up;
  - new windows between scrapes (changes() of the window end time);
  - /api/v1/rules: both groups loaded, every rule evaluated and healthy, and a
    recording rule with a value.
Both processes are stopped by PID at the end.

usage: test_prometheus_e2e.py SOURCE_ROOT MEMWATCHD PROMETHEUS
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

CORE_SERIES = [
    "memwatch_memory_available_bytes",
    "memwatch_kswapd_wakeups_total",
    "memwatch_direct_reclaim_total",
    "memwatch_collector_up",
]
DISCOVERY_TIMEOUT = 60   # the discovery manager batches updates every 5 s
RULES_TIMEOUT = 30


class Env:
    def __init__(self):
        self.daemon = None
        self.prom = None
        self.tmp = opslib.tempdir("mw-prom-e2e-")
        self.daemon_log = os.path.join(self.tmp, "memwatchd.log")
        self.prom_log = os.path.join(self.tmp, "prometheus.log")

    def logs(self):
        out = []
        for name, path in (("memwatchd", self.daemon_log), ("prometheus", self.prom_log)):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    out.append("---- %s log (tail) ----\n%s" % (name, f.read()[-3000:]))
            except OSError:
                pass
        return "\n".join(out)

    def fail(self, why):
        opslib.fail(why + "\n" + self.logs())


def api(port, path, **params):
    url = "http://127.0.0.1:%d%s" % (port, path)
    if params:
        url += "?" + urllib.parse.urlencode(params)
    status, body = opslib.http_get(url)
    if status != 200:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return doc.get("data") if doc.get("status") == "success" else None


def psi_some_seconds():
    """The kernel's own `some total=` of /proc/pressure/memory, in seconds."""
    with open("/proc/pressure/memory") as f:
        for line in f:
            if line.startswith("some "):
                return int(line.rsplit("total=", 1)[1]) / 1e6
    raise RuntimeError("no some line in /proc/pressure/memory")


def query(port, q):
    data = api(port, "/api/v1/query", query=q)
    return data.get("result", []) if data else []


def count_rules(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return len(re.findall(r'^\s*-\s*(record|alert):', text, re.M))


def main():
    if len(sys.argv) != 4:
        opslib.fail(__doc__)
    source_root, exe, prometheus = sys.argv[1:]
    opslib.need_tool(prometheus, "prometheus (package prometheus)")
    opslib.need_root("memwatchd loads BPF programs")
    rules = os.path.abspath(os.path.join(source_root, "packaging", "prometheus", "memwatchd-rules.yml"))

    env = Env()
    try:
        # memwatchd
        mport = opslib.free_port()
        conf = os.path.join(env.tmp, "memwatchd.conf")
        # Every window ends at its length: the test counts windows between scrapes.
        with open(conf, "w") as f:
            f.write("[daemon]\nlisten = 127.0.0.1:%d\nwindow = 1s\nquiet_read_interval = 0\nlog_level = info\n" % mport)
        denv = dict(os.environ)
        for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC"):
            denv.pop(k, None)
        env.daemon = subprocess.Popen([exe, "--config", conf], stdin=subprocess.DEVNULL,
                                      stdout=open(env.daemon_log, "w"), stderr=subprocess.STDOUT, env=denv)
        if not opslib.wait_for(lambda: env.daemon.poll() is not None or
                               opslib.http_get("http://127.0.0.1:%d/metrics" % mport)[0] == 200, 20) \
                or env.daemon.poll() is not None:
            env.fail("memwatchd did not serve /metrics on 127.0.0.1:%d" % mport)

        # Prometheus
        pport = opslib.free_port()
        pconf = os.path.join(env.tmp, "prometheus.yml")
        with open(pconf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                    "rule_files:\n  - %s\n"
                    "scrape_configs:\n  - job_name: memwatchd\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % (json.dumps(rules), mport))
        psi_start = psi_some_seconds()
        env.prom = subprocess.Popen([prometheus, "--config.file=" + pconf,
                                     "--storage.tsdb.path=" + os.path.join(env.tmp, "data"),
                                     "--web.listen-address=127.0.0.1:%d" % pport,
                                     "--log.level=info"],
                                    stdin=subprocess.DEVNULL, stdout=open(env.prom_log, "w"),
                                    stderr=subprocess.STDOUT, cwd=env.tmp)
        if not opslib.wait_for(lambda: env.prom.poll() is not None or
                               opslib.http_get("http://127.0.0.1:%d/-/ready" % pport)[0] == 200, 30) \
                or env.prom.poll() is not None:
            env.fail("Prometheus did not become ready on 127.0.0.1:%d" % pport)
        started = time.monotonic()

        def target_up():
            r = query(pport, 'up{job="memwatchd"}')
            return r and r[0]["value"][1] == "1"
        if not opslib.wait_for(target_up, DISCOVERY_TIMEOUT, interval=0.5):
            env.fail("up{job=\"memwatchd\"} is not 1 after %d s: %s" % (DISCOVERY_TIMEOUT, query(pport, "up")))
        print("up{job=\"memwatchd\"} == 1 after %.1f s" % (time.monotonic() - started))
        time.sleep(3)  # a few more scrapes, for changes() and rate()

        problems = []
        for name in CORE_SERIES:
            r = query(pport, '%s{job="memwatchd"}' % name)
            if not r:
                problems.append("no data for %s" % name)
            else:
                print("%s: %d series, e.g. %s = %s" % (name, len(r), r[0]["metric"], r[0]["value"][1]))
        r = query(pport, 'memwatch_memory_available_bytes{job="memwatchd"} > 0')
        if not r:
            problems.append("memwatch_memory_available_bytes is not > 0")
        r = query(pport, 'changes(memwatch_window_end_timestamp_seconds{job="memwatchd"}[5s])')
        if not r or float(r[0]["value"][1]) < 1:
            problems.append("no new window between scrapes: changes(memwatch_window_end_timestamp_seconds[5s]) = %s" % r)
        # The PSI counter as Prometheus stored it lies between the kernel's own
        # total read before the query and after it; its rate is a share of
        # wall-clock time, so within [0, 1] (a unit slip would be 1e6 off).
        psi0 = psi_some_seconds()
        r = query(pport, 'memwatch_pressure_memory_some_seconds_total{job="memwatchd"}')
        psi1 = psi_some_seconds()
        if not r:
            problems.append("no memwatch_pressure_memory_some_seconds_total in Prometheus")
        else:
            v = float(r[0]["value"][1])
            # Prometheus serves the latest scrape (at most a scrape interval
            # old), so the lower bound is the kernel's total a little before psi0.
            if not (v <= psi1 and v >= psi_start):
                problems.append("memwatch_pressure_memory_some_seconds_total %r in Prometheus, /proc/pressure/memory "
                                "some total %.6f s before Prometheus started and %.6f s now" % (v, psi_start, psi1))
            print("PSI some: Prometheus %.6f s, /proc/pressure/memory %.6f .. %.6f s" % (v, psi0, psi1))
        r = query(pport, 'rate(memwatch_pressure_memory_some_seconds_total{job="memwatchd"}[5s])')
        if not r or len(r) != 1:
            problems.append("rate() of the PSI counter: %r, want one series" % r)
        else:
            rate = float(r[0]["value"][1])
            if not 0 <= rate <= 1:
                problems.append("rate(memwatch_pressure_memory_some_seconds_total[5s]) = %r, not a share of time "
                                "in [0, 1]" % rate)

        # The rules: loaded, evaluated, healthy.
        expected = count_rules(rules)

        def rules_state():
            data = api(pport, "/api/v1/rules")
            if not data:
                return None
            all_rules = [r for g in data.get("groups", []) for r in g.get("rules", [])]
            evaluated = [r for r in all_rules if r.get("health") != "unknown"]
            return data, all_rules, evaluated
        state = opslib.wait_for(lambda: (lambda s: s if s and len(s[2]) == len(s[1]) == expected else None)(rules_state()),
                                RULES_TIMEOUT, interval=0.5)
        state = state or rules_state()
        if not state:
            problems.append("/api/v1/rules did not answer")
        else:
            data, all_rules, evaluated = state
            groups = sorted(g["name"] for g in data.get("groups", []))
            print("rule groups: %s; %d rules, %d evaluated" % (groups, len(all_rules), len(evaluated)))
            if groups != ["memwatchd.alerts", "memwatchd.recording"]:
                problems.append("rule groups loaded: %s" % groups)
            if len(all_rules) != expected:
                problems.append("%d rules loaded, the file has %d" % (len(all_rules), expected))
            bad = [(r.get("name"), r.get("health"), r.get("lastError")) for r in all_rules if r.get("health") != "ok"]
            if bad:
                problems.append("rules not healthy: %s" % bad)
            firing = [r["name"] for r in all_rules if r.get("type") == "alerting" and r.get("state") == "firing"]
            print("alerts firing now: %s" % (firing or "none"))
        r = query(pport, 'instance:memwatch_memory_available_window_min:ratio{job="memwatchd"}')
        if not r or not 0 < float(r[0]["value"][1]) <= 1:
            problems.append("recording rule instance:memwatch_memory_available_window_min:ratio has no value in (0, 1]: %s" % r)

        if problems:
            env.fail("\n  ".join(["Prometheus end to end:"] + problems))

        rc = opslib.stop_pid(env.prom, timeout=20)
        env.prom = None
        if rc not in (0,):
            print("note: prometheus exited %s on SIGTERM" % rc)
        rc = opslib.stop_pid(env.daemon, timeout=20)
        env.daemon = None
        if rc != 0:
            env.fail("memwatchd exited %s on SIGTERM" % rc)
        print("ok: Prometheus scraped memwatchd and evaluated the rules")
    finally:
        for p in (env.prom, env.daemon):
            if p is not None:
                opslib.stop_pid(p)
        opslib.rmtree(env.tmp)


if __name__ == "__main__":
    main()
