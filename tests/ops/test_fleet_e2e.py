#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The fleet path: two memwatchd "nodes" -> a Prometheus agent -> remote write
-> a central Prometheus that evaluates packaging/prometheus/memwatchd-fleet-rules.yml.

Everything on loopback with temporary directories:
  - two daemons with the built-in defaults but their own port (memwatchd has no
    pid file or other per-host singleton; each loads its own BPF programs into
    the one kernel, so both must report the same collector states);
  - a Prometheus in agent mode (--enable-feature=agent) scraping both every
    second, job "memwatchd"; `node` is a target label (node-a, node-b), as the
    relabelling of the node name does in Kubernetes, and `cluster` an external
    label of the agent (docs/deployment.md says why); its remote write has the
    write_relabel_configs of packaging/kubernetes/prometheus-scrape.yml, which
    keep the fleet rules' inputs and leave the per-process series behind;
  - a central Prometheus with --web.enable-remote-write-receiver and the fleet
    rules, evaluated every second.

On the central server:
  - memwatch_build_info and up{job="memwatchd"} == 1 for both nodes, with
    cluster="fleet-test";
  - every fleet recording rule healthy; the per-node rules and the top-nodes
    rule return both nodes; the ETA < 10 min rule returns exactly the nodes
    whose per-node ETA, recorded by the same evaluation, is below 600, and the
    count rule their number;
  - memwatch_oom_kills_total of each node equals what that daemon serves on
    its own /metrics (no OOM kill is expected meanwhile; the comparison is
    retried once if one happens);
  - the filter worked: no series with a pid label on the central server.

usage: test_fleet_e2e.py SOURCE_ROOT MEMWATCHD PROMETHEUS
"""
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

NODES = ("node-a", "node-b")
CLUSTER = "fleet-test"
ARRIVAL_S = 60   # agent discovery (5 s batches), remote write, central evaluation


def by_node(result):
    return {r["metric"].get("node"): r for r in result}


def main():
    if len(sys.argv) != 4:
        opslib.fail(__doc__)
    source_root, exe, prometheus = sys.argv[1:]
    opslib.need_tool(prometheus, "prometheus (package prometheus)")
    opslib.need_root("memwatchd loads BPF programs")
    try:
        import yaml
    except ImportError:
        opslib.skip("PyYAML not found (package python3-yaml)")
    fleet_rules = os.path.abspath(os.path.join(source_root, "packaging", "prometheus", "memwatchd-fleet-rules.yml"))
    with open(fleet_rules, encoding="utf-8") as f:
        records = [r["record"] for g in yaml.safe_load(f)["groups"] for r in g["rules"]]
    # The remote-write filter of the shipped example: it must let through what
    # the fleet rules and this test need.
    with open(os.path.join(source_root, "packaging", "kubernetes", "prometheus-scrape.yml"), encoding="utf-8") as f:
        write_relabel = yaml.safe_load(f)["remote_write"][0]["write_relabel_configs"]

    tmp = opslib.tempdir("mw-fleet-e2e-")
    procs, logs, ports = [], [], {}
    problems = []

    def fail(why):
        opslib.fail(why + "\n" + opslib.log_tails(logs))
    try:
        started = time.monotonic()
        for node in NODES:
            d, port, log = opslib.start_memwatchd(exe, tmp, node)
            logs.append(log)
            if d is None:
                fail("memwatchd %s did not serve /metrics on 127.0.0.1:%d" % (node, port))
            procs.append(d)
            ports[node] = port
        states = {n: opslib.collector_states(opslib.http_get("http://127.0.0.1:%d/metrics" % p)[1])
                  for n, p in ports.items()}
        if states[NODES[0]] != states[NODES[1]] or not states[NODES[0]]:
            problems.append("the two daemons on one kernel report different collector states: %s" % states)
        else:
            print("both daemons: %s" % sorted("%s=%s" % (c, s[0]) for c, s in states[NODES[0]].items()))

        central, cport, clog, _ = opslib.start_prometheus(prometheus, tmp, "central", (
            "global:\n  evaluation_interval: 1s\n"
            "rule_files:\n  - %s\n" % json.dumps(fleet_rules)), ["--web.enable-remote-write-receiver"])
        logs.append(clog)
        if central is None:
            fail("the central Prometheus did not become ready")
        procs.append(central)

        agent_conf = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "external_labels": {"cluster": CLUSTER}},
            "scrape_configs": [{"job_name": "memwatchd", "static_configs": [
                {"targets": ["127.0.0.1:%d" % ports[n]], "labels": {"node": n}} for n in NODES]}],
            "remote_write": [{"url": "http://127.0.0.1:%d/api/v1/write" % cport,
                              "queue_config": {"batch_send_deadline": "1s"},
                              "write_relabel_configs": write_relabel}]}
        agent, aport, alog, _ = opslib.start_prometheus(prometheus, tmp, "agent", yaml.safe_dump(agent_conf),
                                                        ["--enable-feature=agent"])
        logs.append(alog)
        if agent is None:
            fail("the Prometheus agent did not become ready")
        procs.append(agent)

        def all_nodes(q):
            r = by_node(opslib.prom_query(cport, q))
            return r if set(r) == set(NODES) else None
        up = opslib.wait_for(lambda: all_nodes('up{job="memwatchd",cluster="%s"} == 1' % CLUSTER), ARRIVAL_S, interval=0.5)
        if not up:
            fail("the central Prometheus has up == 1 for %s, want %s" % (
                sorted(by_node(opslib.prom_query(cport, "up"))), NODES))
        print("both nodes up on the central server %.1f s after the start" % (time.monotonic() - started))
        info = all_nodes('memwatch_build_info{job="memwatchd",cluster="%s"}' % CLUSTER)
        if not info:
            problems.append("memwatch_build_info does not reach the central server for both nodes")
        else:
            for n, r in sorted(info.items()):
                print("%s: %s" % (n, r["metric"]))
            if {r["metric"].get("instance") for r in info.values()} != {"127.0.0.1:%d" % p for p in ports.values()}:
                problems.append("instance labels %s are not the two daemons' addresses"
                                % sorted(r["metric"].get("instance") for r in info.values()))

        # The fleet rules: all evaluated and healthy, with both nodes.
        def rules_ok():
            data = opslib.prom_api(cport, "/api/v1/rules") or {}
            rules = {r["name"]: r for g in data.get("groups", []) for r in g.get("rules", [])}
            if set(rules) != set(records) or any(r.get("health") != "ok" for r in rules.values()):
                return None
            return all(all_nodes(q) for q in ("node:memwatch_direct_reclaim_seconds:rate5m",
                                              "node:memwatch_memory_exhaustion_eta_seconds:min",
                                              "node:memwatch_oom_kills:increase1h",
                                              "fleet:memwatch_direct_reclaim_seconds:topk10_rate5m"))
        if not opslib.wait_for(rules_ok, ARRIVAL_S, interval=0.5):
            data = opslib.prom_api(cport, "/api/v1/rules") or {}
            problems.append("fleet rules not all healthy with both nodes: %s" % [
                (r["name"], r.get("health"), r.get("lastError")) for g in data.get("groups", []) for r in g["rules"]])
        for q in ("node:memwatch_direct_reclaim_seconds:rate5m", "node:memwatch_oom_kills:increase1h",
                  "node:memwatch_memory_exhaustion_eta_seconds:min"):
            print("%s: %s" % (q, {n: r["value"][1] for n, r in sorted(by_node(opslib.prom_query(cport, q)).items())}))

        # ETA under 10 minutes: the rule's nodes against the per-node ETA
        # recorded by the same evaluation (the rules of a group run in order at
        # one timestamp). Not against the raw series: remote write delivers
        # samples after the evaluation that would have seen them, so raw data
        # at an evaluation's timestamp can be newer than what it read.
        # An instant after the rules had both nodes (the ETA needs a few
        # windows of samples first) and before which an evaluation completed.
        time.sleep(2)
        at = "%.3f" % (time.time() - 1)

        def at_time(q):
            return (opslib.prom_api(cport, "/api/v1/query", query=q, time=at) or {}).get("result", [])
        recorded = by_node(at_time("node:memwatch_memory_exhaustion_eta_seconds:min"))
        want = sorted(n for n, r in recorded.items() if float(r["value"][1]) < 600)
        got_nodes = sorted(r["metric"].get("node") for r in at_time("fleet:memwatch_memory_exhaustion_eta_seconds:lt600"))
        count = [float(r["value"][1]) for r in at_time("fleet:memwatch_nodes_exhausting_within_10m:count")]
        print("ETA < 600 s: per-node ETA %s gives %s, the fleet rule %s, count %s"
              % ({n: r["value"][1] for n, r in sorted(recorded.items())}, want, got_nodes, count))
        if set(recorded) != set(NODES):
            problems.append("node:memwatch_memory_exhaustion_eta_seconds:min at %s: %s" % (at, sorted(recorded)))
        if got_nodes != want or count != [float(len(want))]:
            problems.append("fleet ETA rules at %s: nodes %s count %s, the per-node ETA gives %s" % (at, got_nodes, count, want))

        # Counters as the daemons serve them.
        for attempt in range(2):
            served = {n: sum(v for (name, _), v in
                             opslib.parse_metrics(opslib.http_get("http://127.0.0.1:%d/metrics" % p)[1]).items()
                             if name == "memwatch_oom_kills_total") for n, p in ports.items()}
            time.sleep(3)  # a scrape and a remote-write batch
            central_v = {n: float(r["value"][1]) for n, r in
                         by_node(opslib.prom_query(cport, 'sum by (node) (memwatch_oom_kills_total{cluster="%s"})' % CLUSTER)).items()}
            if central_v == served:
                break
        print("memwatch_oom_kills_total: daemons %s, central %s" % (served, central_v))
        if central_v != served:
            problems.append("memwatch_oom_kills_total on the central server %s, the daemons serve %s" % (central_v, served))

        r = opslib.prom_query(cport, 'count({job="memwatchd", pid!=""})')
        if r:
            problems.append("series with a pid label passed the remote-write filter: %s" % r)

        if problems:
            fail("\n  ".join(["fleet end to end:"] + problems))
        for p in procs[:len(NODES)]:
            rc = opslib.stop_pid(p, timeout=20)
            if rc != 0:
                fail("a memwatchd exited %s on SIGTERM" % rc)
        print("ok: two nodes reach the central Prometheus through the agent (%.1f s)" % (time.monotonic() - started))
    finally:
        for p in reversed(procs):
            opslib.stop_pid(p)
        opslib.rmtree(tmp)


if __name__ == "__main__":
    main()
