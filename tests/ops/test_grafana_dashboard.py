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

Fleet and Kubernetes: the variables node, instance, namespace and pod exist,
node and instance chained from memwatch_build_info, namespace and pod from
memwatch_cgroup_info; the All value of node, namespace and pod matches an
empty label, so the dashboard works where those labels are absent, and every
selector on $instance is also on $node. The reclaim latency has panels on the
native histograms (histogram_quantile / histogram_count over the histogram
itself, no _bucket) with the classic buckets as the fallback of the same query.

promtool test rules then evaluates some panels' queries on synthetic series:
the cgroup panels without memwatch_cgroup_info (All) and with it (one
namespace chosen), series without a node label under node = All, and the
native-histogram quantile answering from classic buckets alone (Debian's
promtool 2.42 cannot load native histograms as input series).

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
    "compaction": "memwatch_compaction_stalls_total",
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
    (r'\$node|\$\{node(:[a-z]+)?\}|\[\[node\]\]', ".*"),
    (r'\$namespace|\$\{namespace(:[a-z]+)?\}|\[\[namespace\]\]', ".*"),
    (r'\$pod|\$\{pod(:[a-z]+)?\}|\[\[pod\]\]', ".*"),
]


def substitute(expr, **values):
    """expr with Grafana's variables replaced; values overrides the defaults
    of VARIABLES by variable name (namespace="web")."""
    for pattern, value in VARIABLES:
        name = re.search(r'[a-z_]+', pattern).group(0)
        expr = re.sub(pattern, values.get(name.lstrip("_"), values.get(name, value)), expr)
    return expr


def check_variables(dash, problems):
    tv = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    want = {"node": r'label_values\(memwatch_build_info\{[^}]*\}, node\)',
            "instance": r'label_values\(memwatch_build_info\{[^}]*node=~"\$node"[^}]*\}, instance\)',
            "namespace": r'label_values\(memwatch_cgroup_info\{[^}]*\}, namespace\)',
            "pod": r'label_values\(memwatch_cgroup_info\{[^}]*namespace=~"\$namespace"[^}]*\}, pod\)'}
    for name, pattern in want.items():
        v = tv.get(name)
        if not v:
            problems.append("no template variable %s" % name)
            continue
        q = v.get("definition") or ""
        if not re.fullmatch(pattern, q) or (v.get("query") or {}).get("query") != q:
            problems.append("variable %s queries %r, want %s (definition and query alike)" % (name, q, pattern))
        if not v.get("includeAll") or not v.get("multi"):
            problems.append("variable %s has no All or no multiple choice" % name)
        if name != "instance" and not re.fullmatch(v.get("allValue") or "(?!)", ""):
            problems.append("variable %s: its All value %r does not match an absent label" % (name, v.get("allValue")))


def check_histograms(found, problems):
    for family in ("memwatch_direct_reclaim_seconds", "memwatch_memcg_reclaim_seconds", "memwatch_compaction_stall_seconds"):
        native = re.compile(r'histogram_(quantile\([0-9.]+, |count\()sum by \(instance\) \(rate\(%s\{' % family)
        classic = re.compile(r'\bor\b.*\b%s_(bucket|count)\{' % family)
        hits = [(w, e) for w, e in found if native.search(e)]
        if not any("histogram_quantile" in e for _, e in hits):
            problems.append("no panel takes histogram_quantile of the native histogram %s" % family)
        for where, expr in hits:
            if not classic.search(expr):
                problems.append("%s: the native-histogram query %s has no classic fallback (or ..._bucket)" % (where, expr))


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


def panel_exprs(dash):
    """{title: [expr of each target]} of every panel."""
    out = {}

    def visit(nodes):
        for p in nodes:
            if p.get("targets"):
                out[p.get("title")] = [t.get("expr") or "" for t in p["targets"]]
            visit(p.get("panels", []))
    visit(dash.get("panels", []))
    return out


EVAL_PANELS = ("Largest cgroups (usage)", "Reclaim stall quantiles (native histograms, classic fallback)",
               "Pods by working set (namespace/pod from memwatch_cgroup_info)")


def evaluate_panels(promtool, tmp, rules, exprs):
    """promtool test rules on some panels' queries; returns problems."""
    missing = [t for t in EVAL_PANELS if t not in exprs]
    if missing:
        return ["no panel titled %r (evaluated by this test)" % t for t in missing]
    usage = exprs[EVAL_PANELS[0]][0]
    quantile = exprs[EVAL_PANELS[1]][2]      # memcg p50
    pods = exprs[EVAL_PANELS[2]][0]
    u = 'memwatch_cgroup_memory_usage_bytes{job="memwatchd", instance="h1", cgroup="%s"}'
    info = 'memwatch_cgroup_info{job="memwatchd", instance="h1", cgroup="%s", namespace="%s", pod="%s"}'
    b = 'memwatch_memcg_reclaim_seconds_bucket{job="memwatchd", instance="h1", le="%s"}'
    cases = [
        ("cgroups without memwatch_cgroup_info, all namespaces, no node label",
         [(u % "/a", "100x10"), (u % "/b", "200x10")],
         substitute(usage), [(u % "/a", 100), (u % "/b", 200)]),
        ("cgroups of namespace web",
         [(u % "/a", "100x10"), (u % "/b", "200x10"), (u % "/c", "300x10"),
          (info % ("/a", "web", "p1"), "1x10"), (info % ("/b", "db", "p2"), "1x10"), (info % ("/c", "", ""), "1x10")],
         substitute(usage, namespace="web"), [(u % "/a", 100)]),
        ("pods of namespace web",
         [('memwatch_cgroup_memory_working_set_bytes{job="memwatchd", instance="h1", cgroup="/a"}', "50x10"),
          ('memwatch_cgroup_memory_working_set_bytes{job="memwatchd", instance="h1", cgroup="/b"}', "60x10"),
          (info % ("/a", "web", "p1"), "1x10"), (info % ("/b", "db", "p2"), "1x10")],
         substitute(pods, namespace="web"),
         [('{job="memwatchd", instance="h1", cgroup="/a", namespace="web", pod="p1"}', 50)]),
        ("native-histogram quantile falling back to classic buckets",
         [(b % "1", "0x10"), (b % "3", "0+10x10"), (b % "+Inf", "0+10x10")],
         substitute(quantile), [('{instance="h1"}', 2.0)]),
    ]
    path = os.path.join(tmp, "dashboard-eval.test.yml")
    with open(path, "w", encoding="utf-8") as f:
        f.write("rule_files:\n  - %s\nevaluation_interval: 15s\ntests:\n" % json.dumps(rules))
        for name, series, expr, samples in cases:
            f.write("  - name: %s\n    interval: 15s\n    input_series:\n" % json.dumps(name))
            for sname, values in series:
                f.write("      - series: %s\n        values: %s\n" % (json.dumps(sname), json.dumps(values)))
            f.write("    promql_expr_test:\n      - expr: %s\n        eval_time: 2m\n        exp_samples:\n" % json.dumps(expr))
            for labels, value in samples:
                f.write("          - labels: %s\n            value: %r\n" % (json.dumps(labels), value))
    out = subprocess.run([promtool, "test", "rules", path], capture_output=True, text=True, timeout=60)
    print("promtool test rules on %d panel queries: %s" % (len(cases), (out.stdout + out.stderr).strip()))
    if out.returncode != 0:
        return ["panel queries evaluated on synthetic series:\n%s" % (out.stdout + out.stderr).strip()[-2000:]]
    return []


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
        for t in p.get("targets") or []:
            e = t.get("expr") or ""
            if 'instance=~"$instance"' in e and e.count('instance=~"$instance"') != e.count('node=~"$node", instance=~"$instance"'):
                problems.append("panel %r: a selector on $instance is not on $node: %s" % (p.get("title"), e))
    check_variables(dash, problems)
    check_histograms(found, problems)
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
        else:
            problems += evaluate_panels(promtool, tmp, rules, panel_exprs(dash))
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
