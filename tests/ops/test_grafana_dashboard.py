#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""packaging/grafana/memwatchd.json: every PromQL expression in it parses, uses
only metrics memwatchd has, every collector has a panel that shows data in the
default configuration, and every panel on a series that only an opt-in setting
produces says which setting in its description.

promtool has no offline `query`, but `promtool check rules` parses PromQL: every
`expr` of the dashboard (panel targets, rows' panels, annotations, and the
selectors inside the variables' label_values()) becomes one recording rule of a
generated rules file, with Grafana's variables replaced by values of the same
kind ($__rate_interval by a duration, $instance by a regex, ...).

usage: test_grafana_dashboard.py SOURCE_ROOT PROMTOOL
"""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402

# A panel for each collector: a metric the dashboard must show for it, one the
# collector exports in the built-in default configuration.
COLLECTORS = {
    "meminfo": "memwatch_memory_available_bytes",
    "psi": "memwatch_pressure_memory_some_seconds_total",
    "kswapd": "memwatch_kswapd_wakeups_total",
    "reclaim": "memwatch_direct_reclaim_seconds_bucket",
    "alloc": "memwatch_page_allocated_pages_total",
    "faults": "memwatch_major_faults_total",
    "cgroup": "memwatch_cgroup_memory_working_set_bytes",
    "oom": "memwatch_oom_kills_total",
    "memavail": "memwatch_memory_available_at_pressure_bytes",
    "daemon health": "memwatch_collector_up",
}

# Series that exist only with a setting off by default: a panel showing one
# must name the setting in its description (it is empty otherwise).
OPT_IN = {
    "memwatch_page_allocations_total": "[collector.alloc] trace = yes",
    "memwatch_page_allocation_failures_total": "[collector.alloc] trace = yes",
}

VARIABLES = [
    (r'\$__rate_interval|\$\{__rate_interval\}', "1m"),
    (r'\$__interval|\$\{__interval\}', "1m"),
    (r'\$__range|\$\{__range\}', "1h"),
    (r'\$job|\$\{job\}|\[\[job\]\]', "memwatchd"),
    (r'\$instance|\$\{instance(:[a-z]+)?\}|\[\[instance\]\]', ".+"),
]


def substitute(expr):
    for pattern, value in VARIABLES:
        expr = re.sub(pattern, value, expr)
    return expr


def walk(node, where, found):
    """Collects (where, expr) for every "expr" key, and the selectors of
    label_values() queries; where names the panel, annotation or variable."""
    if isinstance(node, dict):
        if node.get("title") or node.get("name"):
            where = "%s %r" % (node.get("type") or "item", node.get("title") or node.get("name"))
        for k, v in node.items():
            if k == "expr" and isinstance(v, str):
                found.append((where, v))
            elif k in ("query", "definition") and isinstance(v, str) and v.startswith("label_values("):
                m = re.match(r'^label_values\((.*),\s*[a-zA-Z_]+\)$', v.strip())
                if m:
                    found.append((where, m.group(1)))
            else:
                walk(v, where, found)
    elif isinstance(node, list):
        for v in node:
            walk(v, where, found)


def main():
    if len(sys.argv) != 3:
        opslib.fail(__doc__)
    source_root, promtool = sys.argv[1:]
    opslib.need_tool(promtool, "promtool (package prometheus)")
    path = os.path.join(source_root, "packaging", "grafana", "memwatchd.json")
    with open(path, encoding="utf-8") as f:
        try:
            dash = json.load(f)
        except json.JSONDecodeError as e:
            opslib.fail("%s is not JSON: %s" % (path, e))
    problems = []

    found = []
    walk(dash, "dashboard", found)
    if not found:
        opslib.fail("no expr in the dashboard")

    # Panel ids unique, every query panel on the datasource variable.
    ids = []

    def panels(nodes):
        for p in nodes:
            yield p
            yield from panels(p.get("panels", []))
    for p in panels(dash.get("panels", [])):
        ids.append(p.get("id"))
        if p.get("type") != "row" and p.get("targets"):
            uid = (p.get("datasource") or {}).get("uid")
            if uid != "${datasource}":
                problems.append("panel %r does not use the ${datasource} variable" % p.get("title"))
        # An opt-in series: the description says what to turn on.
        for t in p.get("targets") or []:
            for name in opslib.metric_names_in_expr(t.get("expr") or ""):
                setting = OPT_IN.get(name)
                if setting and setting not in (p.get("description") or ""):
                    problems.append("panel %r shows %s, which only %s produces, and its description does not say so"
                                    % (p.get("title"), name, setting))
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        problems.append("panel ids used twice: %s" % sorted(dup))

    # One recording rule per expression: promtool parses them all.
    tmp = opslib.tempdir("mw-grafana-")
    try:
        rules = os.path.join(tmp, "dashboard-rules.yml")
        with open(rules, "w", encoding="utf-8") as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, (_, expr) in enumerate(found):
                f.write("      - record: dashboard:expr_%d:check\n        expr: %s\n" % (i, json.dumps(substitute(expr))))
        out = subprocess.run([promtool, "check", "rules", rules], capture_output=True, text=True, timeout=60)
        print((out.stdout + out.stderr).strip())
        if out.returncode != 0:
            # Name the panels whose expressions do not parse.
            for i, (where, expr) in enumerate(found):
                one = os.path.join(tmp, "one.yml")
                with open(one, "w", encoding="utf-8") as f:
                    f.write("groups:\n  - name: one\n    rules:\n      - record: dashboard:one:check\n        expr: %s\n"
                            % json.dumps(substitute(expr)))
                o = subprocess.run([promtool, "check", "rules", one], capture_output=True, text=True, timeout=60)
                if o.returncode != 0:
                    problems.append("%s: %s does not parse: %s" % (where, expr, (o.stdout + o.stderr).strip()[-300:]))
            if not any("does not parse" in p for p in problems):
                problems.append("promtool check rules failed on the generated file")
    finally:
        opslib.rmtree(tmp)

    known = opslib.known_metric_names(source_root)
    used = set()
    for where, expr in found:
        for name in opslib.metric_names_in_expr(expr):
            used.add(name)
            if name not in known:
                problems.append("%s uses %s, which docs/metrics.md does not document and the daemon does not write"
                                % (where, name))
    for collector, metric in COLLECTORS.items():
        if metric not in used:
            problems.append("no panel for the %s collector (none shows %s)" % (collector, metric))
    print("%d expressions, %d metrics, %d panels" % (len(found), len(used), len(ids)))

    if problems:
        opslib.fail("\n  ".join(["packaging/grafana/memwatchd.json:"] + problems))
    print("ok: every expression parses and every collector has a panel")


if __name__ == "__main__":
    main()
