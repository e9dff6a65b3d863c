#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An OOM kill reaches a webhook: memwatchd -> Prometheus -> Alertmanager.

Everything on loopback, each with its own temporary storage:
  - memwatchd (1 s windows; its cgroup collector exports only the test's cgroup);
  - Prometheus (Debian's) scraping it every second and evaluating
    packaging/prometheus/memwatchd-rules.yml, unchanged, every second;
  - Alertmanager (Debian's prometheus-alertmanager, clustering off) with
    packaging/prometheus/alertmanager.yml in which only the webhook URLs (to
    the test's receiver) and the group timers (group_wait, group_interval) are
    rewritten; the test parses both files and fails if anything else differs;
  - a webhook receiver (http.server) recording every notification.

Case 1, firing: a process in a memory cgroup of the test's own (64 MiB, no
swap) touches 200 MiB and is OOM-killed. Within 30 s of the kill the
receiver must have MemwatchOOMKill and MemwatchCgroupOOMKill, the latter with
cgroup = the test's cgroup and event = oom_kill, both with the daemon's
instance and job, status firing.

Case 2, resolving: the shipped alerts are `increase(...[5m]) > 0`, so they
resolve exactly 5 minutes after the kill (promtool test rules checks that in
rule time). To see a resolved notification arrive without waiting those 5
minutes, the rules file is replaced by a copy in which only the range of the
two OOM alerts is 15s instead of 5m (the test checks that nothing else
differs), Prometheus reloads it (SIGHUP, which keeps the active alerts), and
the receiver must get both alerts with status resolved (send_resolved) within
30 s after the window has passed.

`amtool check-config` must pass on the shipped and on the rewritten file.

usage: test_alertmanager_e2e.py SOURCE_ROOT MEMWATCHD PROMETHEUS ALERTMANAGER AMTOOL
"""
import copy
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

DELIVERY_S = 30
LIMIT = 64 << 20
TOUCH = 200 << 20
OOM_ALERTS = ("MemwatchOOMKill", "MemwatchCgroupOOMKill")
SHORT_RANGE = "15s"
TIMERS = {"group_wait": "1s", "group_interval": "2s"}


class Receiver(http.server.BaseHTTPRequestHandler):
    """Webhook receiver: every POST body (Alertmanager's JSON) with its arrival time."""
    received = []
    lock = threading.Lock()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.lock:
            try:
                self.received.append((time.time(), self.path, json.loads(body)))
            except ValueError:
                self.received.append((time.time(), self.path, {"unparsed": body.decode("utf-8", "replace")}))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass

    @classmethod
    def alerts(cls):
        """[(arrival, path, alert)] for every alert of every notification so far."""
        with cls.lock:
            return [(t, path, a) for t, path, n in cls.received for a in n.get("alerts", [])]


def rewrite_alertmanager(doc, base_url):
    """Webhook URLs to base_url/<receiver name>, the group timers of the route
    tree to TIMERS; returns the new document."""
    new = copy.deepcopy(doc)
    for r in new.get("receivers", []):
        for w in r.get("webhook_configs", []):
            w["url"] = "%s/%s" % (base_url, r["name"])

    def route(node):
        for k, v in TIMERS.items():
            if k in node or node is new["route"]:
                node[k] = v
        for child in node.get("routes", []):
            route(child)
    route(new["route"])
    return new


def without_rewritten(doc):
    """doc with the keys rewrite_alertmanager may change removed."""
    doc = copy.deepcopy(doc)
    for r in doc.get("receivers", []):
        for w in r.get("webhook_configs", []):
            w.pop("url", None)

    def route(node):
        for k in TIMERS:
            node.pop(k, None)
        for child in node.get("routes", []):
            route(child)
    route(doc["route"])
    return doc


def shorten_oom_ranges(rules):
    new = copy.deepcopy(rules)
    n = 0
    for g in new["groups"]:
        for r in g["rules"]:
            if r.get("alert") in OOM_ALERTS:
                if "[5m]" not in r["expr"]:
                    opslib.fail("alert %s no longer has a [5m] range: %s; update this test" % (r["alert"], r["expr"]))
                r["expr"] = r["expr"].replace("[5m]", "[%s]" % SHORT_RANGE)
                n += 1
    if n != len(OOM_ALERTS):
        opslib.fail("the rules have %d of the alerts %s" % (n, OOM_ALERTS))
    return new


def amtool_check(amtool, path):
    out = subprocess.run([amtool, "check-config", path], capture_output=True, text=True, timeout=60)
    print("$ amtool check-config %s\n%s" % (os.path.basename(path), (out.stdout + out.stderr).strip()))
    return out.returncode == 0


def main():
    if len(sys.argv) != 6:
        opslib.fail(__doc__)
    source_root, exe, prometheus, alertmanager, amtool = sys.argv[1:]
    opslib.need_tool(prometheus, "prometheus (package prometheus)")
    opslib.need_tool(alertmanager, "prometheus-alertmanager (package prometheus-alertmanager)")
    opslib.need_tool(amtool, "amtool (package prometheus-alertmanager)")
    opslib.need_root("memwatchd loads BPF programs; the test makes a memory cgroup")
    try:
        import yaml
    except ImportError:
        opslib.skip("PyYAML not found (package python3-yaml)")
    pdir = os.path.join(source_root, "packaging", "prometheus")
    with open(os.path.join(pdir, "alertmanager.yml"), encoding="utf-8") as f:
        am_shipped = yaml.safe_load(f)
    with open(os.path.join(pdir, "memwatchd-rules.yml"), encoding="utf-8") as f:
        rules_text = f.read()
    problems = []
    if not amtool_check(amtool, os.path.join(pdir, "alertmanager.yml")):
        problems.append("amtool check-config fails on the shipped alertmanager.yml")

    tmp = opslib.tempdir("mw-am-e2e-")
    os.chmod(tmp, 0o755)
    procs = []
    logs = []
    cg = None
    httpd = None

    def fail(why):
        opslib.fail(why + "\n" + opslib.log_tails(logs) + "\nwebhook received: %s" % json.dumps(Receiver.alerts())[-3000:])
    try:
        started = time.monotonic()
        cg = opslib.MemoryCgroup("mwops-alert-%d" % os.getpid(), LIMIT)

        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        hook = "http://127.0.0.1:%d" % httpd.server_address[1]

        # Alertmanager
        am_doc = rewrite_alertmanager(am_shipped, hook)
        if without_rewritten(am_doc) != without_rewritten(am_shipped):
            problems.append("the rewritten alertmanager.yml differs from the shipped one beyond URLs and group timers")
        am_conf = os.path.join(tmp, "alertmanager.yml")
        with open(am_conf, "w") as f:
            yaml.safe_dump(am_doc, f)
        if not amtool_check(amtool, am_conf):
            problems.append("amtool check-config fails on the rewritten alertmanager.yml")
        am_port = opslib.free_port()
        am_log = os.path.join(tmp, "alertmanager.log")
        logs.append(am_log)
        am = opslib.start_logged([alertmanager, "--config.file=" + am_conf, "--storage.path=" + os.path.join(tmp, "am-data"),
                                  "--web.listen-address=127.0.0.1:%d" % am_port, "--cluster.listen-address=",
                                  "--log.level=info"], am_log, cwd=tmp)
        procs.append(am)
        if not opslib.wait_http_ok(am, "http://127.0.0.1:%d/-/ready" % am_port, 30):
            fail("Alertmanager did not become ready on 127.0.0.1:%d" % am_port)

        # memwatchd: the cgroup collector on the test's cgroup only.
        daemon, mport, dlog = opslib.start_memwatchd(exe, tmp, "memwatchd",
                                                     "[collector.cgroup]\ninclude = %s\n" % cg.label)
        logs.append(dlog)
        if daemon is None:
            fail("memwatchd did not serve /metrics")
        procs.append(daemon)

        # Prometheus, with a copy of the shipped rules (replaced in case 2).
        rules_copy = os.path.join(tmp, "memwatchd-rules.yml")
        with open(rules_copy, "w") as f:
            f.write(rules_text)
        prom, pport, plog, _ = opslib.start_prometheus(prometheus, tmp, "prometheus", (
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            "rule_files:\n  - %s\n"
            "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['127.0.0.1:%d']\n"
            "scrape_configs:\n  - job_name: memwatchd\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n")
            % (json.dumps(rules_copy), am_port, mport))
        logs.append(plog)
        if prom is None:
            fail("Prometheus did not become ready")
        procs.append(prom)

        # The cgroup's oom_kill counter must be in Prometheus before the kill:
        # increase() needs a sample from before it.
        series = 'memwatch_cgroup_memory_events_total{job="memwatchd",cgroup="%s",event="oom_kill"}' % cg.label
        if not opslib.wait_for(lambda: opslib.prom_query(pport, series + " == 0"), 60, interval=0.5):
            fail("%s is not 0 in Prometheus after 60 s: %s" % (series, opslib.prom_query(pport, series)))
        am_targets = lambda: (opslib.prom_api(pport, "/api/v1/alertmanagers") or {}).get("activeAlertmanagers")  # noqa: E731
        if not opslib.wait_for(am_targets, 30, interval=0.5):
            fail("Prometheus did not discover the Alertmanager")
        time.sleep(2)  # two more samples of the counter at 0
        print("set up in %.1f s" % (time.monotonic() - started))

        # Case 1: the kill, and the firing alerts at the webhook.
        spawned_at = time.time()
        rc, killed_at = opslib.oom_kill_in(cg, TOUCH)
        if rc != -signal.SIGKILL:
            fail("the process touching %d MiB in a %d MiB cgroup exited %s, want SIGKILL by the OOM killer"
                 % (TOUCH >> 20, LIMIT >> 20, rc))
        instance = "127.0.0.1:%d" % mport

        def arrived(status):
            got = {}
            for t, path, a in Receiver.alerts():
                lab = a.get("labels", {})
                if a.get("status") != status or lab.get("alertname") not in OOM_ALERTS or t < spawned_at:
                    continue
                if lab.get("instance") != instance or lab.get("job") != "memwatchd":
                    continue
                if lab["alertname"] == "MemwatchCgroupOOMKill" and (lab.get("cgroup") != cg.label or
                                                                   lab.get("event") != "oom_kill"):
                    continue
                got.setdefault(lab["alertname"], (t, path, a))
            return got if len(got) == len(OOM_ALERTS) else None
        got = opslib.wait_for(lambda: arrived("firing"), DELIVERY_S, interval=0.2)
        if not got:
            fail("within %d s of the OOM kill the webhook did not get both %s firing with instance %s and "
                 "cgroup %s" % (DELIVERY_S, OOM_ALERTS, instance, cg.label))
        for name, (t, path, a) in sorted(got.items()):
            print("firing %s at %s %.1f s after the kill: %s" % (name, path, t - killed_at, a["labels"]))
        if {path for _, path, _ in got.values()} != {"/team-tickets"}:
            problems.append("the OOM alerts went to %s, want the route for warnings (team-tickets)"
                            % sorted({path for _, path, _ in got.values()}))

        # Case 2: the same alerts resolve, with the OOM alerts' range shortened.
        shipped_rules = yaml.safe_load(rules_text)
        short = shorten_oom_ranges(shipped_rules)
        if json.loads(json.dumps(short).replace("[%s]" % SHORT_RANGE, "[5m]")) != shipped_rules:
            fail("the rules with the short range differ from the shipped ones in more than the range")
        with open(rules_copy + ".new", "w") as f:
            yaml.safe_dump(short, f, sort_keys=False)
        os.rename(rules_copy + ".new", rules_copy)
        reloaded_at = time.time()
        os.kill(prom.pid, signal.SIGHUP)

        def short_rules_loaded():
            data = opslib.prom_api(pport, "/api/v1/rules") or {}
            exprs = {r["name"]: r.get("query", "") for g in data.get("groups", []) for r in g.get("rules", [])
                     if r.get("name") in OOM_ALERTS}
            return len(exprs) == 2 and all("[%s]" % SHORT_RANGE in e for e in exprs.values())
        if not opslib.wait_for(short_rules_loaded, 15, interval=0.3):
            fail("Prometheus did not load the rules with the %s range after SIGHUP" % SHORT_RANGE)
        window_passed = max(killed_at, reloaded_at) + 15
        got = opslib.wait_for(lambda: arrived("resolved"), window_passed - time.time() + DELIVERY_S, interval=0.2)
        if not got:
            fail("the webhook did not get both %s resolved within %d s after the %s window passed"
                 % (OOM_ALERTS, DELIVERY_S, SHORT_RANGE))
        for name, (t, path, a) in sorted(got.items()):
            print("resolved %s at %s %.1f s after the kill (endsAt %s)" % (name, path, t - killed_at, a.get("endsAt")))

        if problems:
            fail("\n  ".join(["alerts end to end:"] + problems))
        rc = opslib.stop_pid(daemon, timeout=20)
        if rc != 0:
            fail("memwatchd exited %s on SIGTERM" % rc)
        print("ok: the OOM kill reached the webhook through Alertmanager and resolved (%.1f s in all)"
              % (time.monotonic() - started))
    finally:
        for p in reversed(procs):
            opslib.stop_pid(p)
        if httpd is not None:
            httpd.shutdown()
        if cg is not None and not cg.remove():
            print("note: could not remove %s" % cg.path)
        opslib.rmtree(tmp)


if __name__ == "__main__":
    main()
