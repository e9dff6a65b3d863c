#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""packaging/prometheus: the rules load, their unit tests pass, and the tests
cover every alert.

- `promtool check rules memwatchd-rules.yml`;
- `promtool test rules memwatchd-rules.test.yml`;
- every alert has a test case where it fires and, later in the same case,
  one where it has resolved; every alert has a severity and a summary and a
  description; recording rules are named level:metric:operations;
- every metric the rules select is documented in docs/metrics.md or written
  by the daemon (a typo would make an alert that can never fire);
- the same for the fleet rules, memwatchd-fleet-rules.yml and its tests,
  where every recording rule is queried by a promql_expr_test;
- `amtool check-config alertmanager.yml` when amtool is installed.

usage: test_prometheus_rules.py SOURCE_ROOT PROMTOOL [AMTOOL]
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402


def run(argv, cwd=None):
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=120)
    print("$ " + " ".join(argv))
    print((out.stdout + out.stderr).rstrip())
    return out.returncode


def duration_s(d):
    total = 0
    for n, unit in re.findall(r'(\d+)(ms|s|m|h|d)', str(d)):
        total += int(n) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    return total


def main():
    if len(sys.argv) not in (3, 4):
        opslib.fail(__doc__)
    source_root, promtool = sys.argv[1:3]
    amtool = sys.argv[3] if len(sys.argv) == 4 else ""
    opslib.need_tool(promtool, "promtool (package prometheus)")
    d = os.path.join(source_root, "packaging", "prometheus")
    problems = []

    if run([promtool, "check", "rules", "memwatchd-rules.yml"], cwd=d) != 0:
        problems.append("promtool check rules failed")
    if run([promtool, "test", "rules", "memwatchd-rules.test.yml"], cwd=d) != 0:
        problems.append("promtool test rules failed")
    if run([promtool, "check", "rules", "memwatchd-fleet-rules.yml"], cwd=d) != 0:
        problems.append("promtool check rules failed on the fleet rules")
    if run([promtool, "test", "rules", "memwatchd-fleet-rules.test.yml"], cwd=d) != 0:
        problems.append("promtool test rules failed on the fleet rules")
    if amtool and os.access(amtool, os.X_OK):
        if run([amtool, "check-config", "alertmanager.yml"], cwd=d) != 0:
            problems.append("amtool check-config alertmanager.yml failed")
    else:
        print("note: amtool not found (package prometheus-alertmanager): alertmanager.yml not checked")

    try:
        import yaml
    except ImportError:
        opslib.fail("PyYAML is missing (package python3-yaml): cannot check that the tests cover every alert")
    with open(os.path.join(d, "memwatchd-rules.yml"), encoding="utf-8") as f:
        rules = yaml.safe_load(f)
    with open(os.path.join(d, "memwatchd-rules.test.yml"), encoding="utf-8") as f:
        tests = yaml.safe_load(f)

    with open(os.path.join(d, "memwatchd-fleet-rules.yml"), encoding="utf-8") as f:
        fleet = yaml.safe_load(f)
    with open(os.path.join(d, "memwatchd-fleet-rules.test.yml"), encoding="utf-8") as f:
        fleet_tests = yaml.safe_load(f)
    fleet_records = [r["record"] for g in fleet["groups"] for r in g["rules"]]
    if [r for g in fleet["groups"] for r in g["rules"] if "record" not in r]:
        problems.append("memwatchd-fleet-rules.yml has alerts; they belong in memwatchd-rules.yml")
    queried = " ".join(t["expr"] for case in fleet_tests["tests"] for t in case.get("promql_expr_test", []))
    for name in fleet_records:
        if not re.search(r'(?<![:\w])%s(?![:\w])' % re.escape(name), queried):
            problems.append("no promql_expr_test in memwatchd-fleet-rules.test.yml queries %s" % name)
    print("%d fleet recording rules, all queried by their tests" % len(fleet_records))

    known = opslib.known_metric_names(source_root)
    alerts = set()
    for group in rules["groups"] + fleet["groups"]:
        for rule in group["rules"]:
            expr = rule["expr"]
            for name in opslib.metric_names_in_expr(expr):
                if name not in known:
                    problems.append("%s uses %s, which docs/metrics.md does not document and the daemon "
                                    "does not write" % (rule.get("alert") or rule.get("record"), name))
            if "alert" in rule:
                alerts.add(rule["alert"])
                if rule.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
                    problems.append("alert %s has no severity critical, warning or info" % rule["alert"])
                for a in ("summary", "description"):
                    if not rule.get("annotations", {}).get(a):
                        problems.append("alert %s has no %s annotation" % (rule["alert"], a))
            elif not re.match(r'^[a-z_]+:[a-z0-9_]+:[a-z0-9_]+$', rule["record"]):
                problems.append("recording rule %s is not named level:metric:operations" % rule["record"])

    fires, resolves = set(), set()
    for case in tests["tests"]:
        seen_firing = {}
        for t in sorted(case.get("alert_rule_test", []), key=lambda t: duration_s(t["eval_time"])):
            name, at = t["alertname"], duration_s(t["eval_time"])
            if t.get("exp_alerts"):
                fires.add(name)
                seen_firing.setdefault(name, at)
            elif name in seen_firing and at > seen_firing[name]:
                resolves.add(name)
    for a in sorted(alerts):
        if a not in fires:
            problems.append("no test makes alert %s fire" % a)
        if a not in resolves:
            problems.append("no test shows alert %s resolving after it fired" % a)
    print("%d alerts; tests make %d fire and %d resolve" % (len(alerts), len(fires & alerts), len(resolves & alerts)))

    if problems:
        opslib.fail("\n  ".join(["packaging/prometheus:"] + problems))
    print("ok: rules load, their tests pass and cover every alert")


if __name__ == "__main__":
    main()
