#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""packaging/kubernetes: the DaemonSet has what memwatchd needs and nothing
more, its configuration parses, and the Prometheus scrape example is valid and
matches the DaemonSet.

- DaemonSet: hostPID; not privileged; capabilities drop ALL and add BPF and
  PERFMON (SYS_RESOURCE at most besides); read-only mounts of the node's BTF,
  tracefs, cgroup tree and /proc; readiness (and liveness) on /healthz on the
  metrics port;
- the ConfigMap's memwatchd.conf, with /host/ mapped to / as the pod's mounts
  would, passes `memwatchd --check` (exit 0, no sanitizer report; meminfo,
  psi, alloc and faults exactly as tests/expectations/collectors.tsv has them
  for this host) and its paths lie below mounts;
- prometheus-scrape.yml passes `promtool check config` (Debian's Prometheus is
  built without Kubernetes discovery, so kubernetes_sd_configs is swapped for a
  static target in a copy; rule_files point at packaging/prometheus), its job
  is "memwatchd" as the rules expect, and its relabelling keeps the pods of
  the DaemonSet by their label and port name, sets node and instance from the
  pod's node name, and sets no namespace or pod target label (they would name
  memwatchd's own pod and collide with the workloads' labels it exports);
- memwatchd-podmonitor.yml and memwatchd-servicemonitor.yml (Prometheus
  Operator): the required fields of the CRDs, selectors that match the
  DaemonSet's pods and its Service, the metrics port, job "memwatchd" through
  jobLabel, node from the node name, the operator's namespace/pod labels
  dropped; their relabelings, turned into relabel_configs of the operator's
  scrape job, pass `promtool check config` too.

usage: test_kubernetes.py SOURCE_ROOT PROMTOOL MEMWATCHD
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "expectations"))
import expectations  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402


def check_node_labels(where, relabel_configs):
    """node and instance from the pod's node name; no namespace or pod target label."""
    problems = []
    set_from = {r.get("target_label"): tuple(r.get("source_labels", [])) for r in relabel_configs
                if r.get("action", "replace") == "replace"}
    for label in ("node", "instance"):
        if set_from.get(label) != ("__meta_kubernetes_pod_node_name",):
            problems.append("%s: %s is not set from __meta_kubernetes_pod_node_name" % (where, label))
    for label in ("namespace", "pod"):
        if label in set_from:
            problems.append("%s sets a %s target label: it names memwatchd's pod and collides with the workloads' %s"
                            % (where, label, label))
    return problems


# The Prometheus Operator's RelabelConfig fields and their relabel_configs names.
OPERATOR_RELABEL = {"sourceLabels": "source_labels", "separator": "separator", "targetLabel": "target_label",
                    "regex": "regex", "modulus": "modulus", "replacement": "replacement", "action": "action"}


def check_operator(kdir, by_kind, pod_labels, prom):
    """The PodMonitor and ServiceMonitor examples; appends the scrape jobs they
    stand for to prom (checked by promtool with the rest)."""
    import yaml
    problems = []
    ds = by_kind["DaemonSet"][0]
    services = by_kind.get("Service", [])
    for fname, kind, endpoints_key in (("memwatchd-podmonitor.yml", "PodMonitor", "podMetricsEndpoints"),
                                       ("memwatchd-servicemonitor.yml", "ServiceMonitor", "endpoints")):
        with open(os.path.join(kdir, fname), encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        if len(docs) != 1 or docs[0].get("kind") != kind:
            problems.append("%s: want one %s, has %s" % (fname, kind, [d.get("kind") for d in docs]))
            continue
        m = docs[0]
        spec = m.get("spec") or {}
        if m.get("apiVersion") != "monitoring.coreos.com/v1":
            problems.append("%s: apiVersion %s, want monitoring.coreos.com/v1" % (fname, m.get("apiVersion")))
        meta = m.get("metadata") or {}
        if not meta.get("name") or not meta.get("namespace"):
            problems.append("%s: metadata has no name or namespace" % fname)
        # What the selector must match: the DaemonSet's pods, or its Service.
        if kind == "PodMonitor":
            targets = [(ds["metadata"]["namespace"], pod_labels)]
        else:
            targets = [(s["metadata"]["namespace"], s["metadata"].get("labels", {})) for s in services]
            if not targets:
                problems.append("%s: memwatchd-daemonset.yml has no Service to select" % fname)
        want = (spec.get("selector") or {}).get("matchLabels") or {}
        if not want:
            problems.append("%s: spec.selector.matchLabels is empty (it would select everything)" % fname)
        for ns, labels in targets:
            if any(labels.get(k) != v for k, v in want.items()):
                problems.append("%s: the selector %s does not match %s" % (fname, want, labels))
            if ns not in (spec.get("namespaceSelector") or {}).get("matchNames", []):
                problems.append("%s: namespaceSelector does not name %s" % (fname, ns))
            if labels.get(spec.get("jobLabel")) != "memwatchd":
                problems.append("%s: jobLabel %r does not give job=\"memwatchd\"" % (fname, spec.get("jobLabel")))
        eps = spec.get(endpoints_key) or []
        if len(eps) != 1:
            problems.append("%s: want one entry in spec.%s, has %d" % (fname, endpoints_key, len(eps)))
            continue
        ep = eps[0]
        if ep.get("port") != "metrics" or ep.get("path", "/metrics") != "/metrics":
            problems.append("%s: the endpoint is not port metrics, path /metrics: %s" % (fname, ep))
        bad = [k for r in ep.get("relabelings", []) for k in r if k not in OPERATOR_RELABEL]
        if bad:
            problems.append("%s: relabelings have fields the operator does not know: %s" % (fname, bad))
        relabel = [{OPERATOR_RELABEL[k]: v for k, v in r.items() if k in OPERATOR_RELABEL}
                   for r in ep.get("relabelings", [])]
        problems += check_node_labels(fname, relabel)
        # What the operator puts first (namespace, pod, container, job), then
        # ours: the namespace and pod labels must not survive.
        drops = [r for r in relabel if r.get("action") == "labeldrop"]
        for label in ("namespace", "pod", "container"):
            if not any(re.fullmatch(r.get("regex", ""), label) for r in drops):
                problems.append("%s: the operator's %s target label is not dropped" % (fname, label))
        prom.setdefault("scrape_configs", []).append({
            "job_name": "operator-" + kind.lower(),
            "scrape_interval": ep.get("interval", "30s"),
            "scrape_timeout": ep.get("scrapeTimeout", "10s"),
            "static_configs": [{"targets": ["127.0.0.1:9577"]}],
            "relabel_configs": relabel})
    return problems


def main():
    if len(sys.argv) != 4:
        opslib.fail(__doc__)
    source_root, promtool, exe = sys.argv[1:]
    try:
        import yaml
    except ImportError:
        opslib.skip("PyYAML not found (package python3-yaml)")
    kdir = os.path.join(source_root, "packaging", "kubernetes")
    problems = []

    with open(os.path.join(kdir, "memwatchd-daemonset.yml"), encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    if len(by_kind.get("DaemonSet", [])) != 1 or len(by_kind.get("ConfigMap", [])) != 1:
        opslib.fail("memwatchd-daemonset.yml needs one DaemonSet and one ConfigMap, has %s"
                    % {k: len(v) for k, v in by_kind.items()})
    ds = by_kind["DaemonSet"][0]
    pod = ds["spec"]["template"]["spec"]
    pod_labels = ds["spec"]["template"]["metadata"]["labels"]
    if pod.get("hostPID") is not True:
        problems.append("the DaemonSet does not set hostPID: true")
    if pod.get("hostNetwork"):
        problems.append("the DaemonSet uses hostNetwork, which memwatchd does not need")
    containers = pod["containers"]
    c = [c for c in containers if c["name"] == "memwatchd"]
    if not c:
        opslib.fail("no container named memwatchd")
    c = c[0]
    sc = c.get("securityContext", {})
    if sc.get("privileged"):
        problems.append("the container is privileged")
    if sc.get("allowPrivilegeEscalation") is not False:
        problems.append("allowPrivilegeEscalation is not false")
    if sc.get("readOnlyRootFilesystem") is not True:
        problems.append("readOnlyRootFilesystem is not true")
    caps = sc.get("capabilities", {})
    if caps.get("drop") != ["ALL"]:
        problems.append("capabilities do not drop ALL: %s" % caps.get("drop"))
    added = set(caps.get("add", []))
    if not {"BPF", "PERFMON"} <= added:
        problems.append("capabilities do not add BPF and PERFMON: %s" % sorted(added))
    if added - {"BPF", "PERFMON", "SYS_RESOURCE"}:
        problems.append("capabilities beyond BPF, PERFMON (and SYS_RESOURCE): %s" % sorted(added))

    port_names = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    if port_names.get("metrics") != 9577:
        problems.append("no container port named metrics on 9577: %s" % port_names)
    for probe in ("readinessProbe", "livenessProbe"):
        get = c.get(probe, {}).get("httpGet", {})
        if get.get("path") != "/healthz" or get.get("port") not in ("metrics", 9577):
            problems.append("%s is not an HTTP GET of /healthz on the metrics port: %s" % (probe, c.get(probe)))

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {}
    for m in c.get("volumeMounts", []):
        v = volumes.get(m["name"], {})
        mounts[m["mountPath"]] = (v.get("hostPath", {}).get("path"), m.get("readOnly"), v)
    needed = {"/sys/kernel/btf": "BTF", "/sys/kernel/tracing": "tracefs", "/sys/fs/cgroup": "the cgroup tree",
              "/proc": "/proc"}
    for host_path, what in needed.items():
        hits = [mp for mp, (hp, _, _) in mounts.items() if hp == host_path]
        if not hits:
            problems.append("the node's %s (%s) is not mounted" % (host_path, what))
        for mp in hits:
            if mounts[mp][1] is not True:
                problems.append("%s is mounted writable at %s" % (host_path, mp))
    for mp, (hp, ro, v) in mounts.items():
        if hp and not ro:
            problems.append("hostPath %s is mounted writable" % hp)

    # The configuration: the daemon's own parser, and paths below the mounts.
    cm = by_kind["ConfigMap"][0]
    conf_text = cm["data"].get("memwatchd.conf")
    if not conf_text:
        opslib.fail("the ConfigMap has no memwatchd.conf")
    args = c.get("args", [])
    conf_mount = [mp for mp, (_, _, v) in mounts.items() if "configMap" in v]
    if "--config" in args:
        cpath = args[args.index("--config") + 1]
        if not conf_mount or os.path.dirname(cpath) != conf_mount[0]:
            problems.append("--config %s is not in the ConfigMap's mount %s" % (cpath, conf_mount))
    tmp = opslib.tempdir("mw-k8s-")
    try:
        conf = os.path.join(tmp, "memwatchd.conf")
        # What the DaemonSet's mounts give the pod: the node's /proc and /sys under /host.
        with open(conf, "w", encoding="utf-8") as f:
            f.write(re.sub(r"(=\s*)/host/", r"\1/", conf_text))
        out = subprocess.run([exe, "--check", "--config", conf], capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
        print("memwatchd --check with the ConfigMap's configuration (/host/ mapped to /) exits %d:\n%s"
              % (out.returncode, out.stdout))
        if out.returncode != 0:
            problems.append("memwatchd --check with the ConfigMap's memwatchd.conf exits %d, want 0: %s"
                            % (out.returncode, out.stderr.strip()[-800:]))
        if "Sanitizer" in out.stderr or "runtime error:" in out.stderr:
            problems.append("sanitizer report from --check: %s" % out.stderr[-800:])
        seen = expectations.parse_check_table(out.stdout)
        try:
            want = expectations.expected("host", os.uname().release, conditions={"zone-managed-agree": True})
        except expectations.NoExpectation as e:
            want = None
            print("*** %s: add rows to tests/expectations/collectors.tsv; collector states not compared ***" % e)
            if expectations.under_ci():
                problems.append(str(e))
        # The collectors that read the node's files through the mounts: as on the host itself.
        if want is not None:
            problems += expectations.compare({k: want[k] for k in ("meminfo", "psi", "alloc", "faults")},
                                             {k: seen[k] for k in ("meminfo", "psi", "alloc", "faults") if k in seen})
        for m in re.finditer(r'^\s*(path|vmstat_path|proc_root|cgroup_root|v1_root|v2_root)\s*=\s*(/\S*)', conf_text, re.M):
            p = m.group(2)
            if not any(p == mp or p.startswith(mp.rstrip("/") + "/") for mp in mounts):
                problems.append("%s = %s is not below a mount of the DaemonSet" % (m.group(1), p))

        # The scrape example.
        with open(os.path.join(kdir, "prometheus-scrape.yml"), encoding="utf-8") as f:
            prom = yaml.safe_load(f)
        jobs = {j["job_name"]: j for j in prom.get("scrape_configs", [])}
        if "memwatchd" not in jobs:
            problems.append("prometheus-scrape.yml has no job \"memwatchd\" (the rules select job=\"memwatchd\")")
        else:
            job = jobs["memwatchd"]
            sd = job.get("kubernetes_sd_configs", [])
            if not sd or sd[0].get("role") != "pod":
                problems.append("the memwatchd job does not discover pods (kubernetes_sd_configs role: pod)")
            keeps = {tuple(r.get("source_labels", [])): r.get("regex") for r in job.get("relabel_configs", [])
                     if r.get("action") == "keep"}
            label = keeps.get(("__meta_kubernetes_pod_label_app_kubernetes_io_name",))
            if label is None or not re.fullmatch(label, pod_labels.get("app.kubernetes.io/name", "")):
                problems.append("the relabelling does not keep pods labelled app.kubernetes.io/name=%s"
                                % pod_labels.get("app.kubernetes.io/name"))
            port = keeps.get(("__meta_kubernetes_pod_container_port_name",))
            if port is None or not re.fullmatch(port, "metrics"):
                problems.append("the relabelling does not keep the container port named metrics")
            problems += check_node_labels("prometheus-scrape.yml", job.get("relabel_configs", []))
        problems += check_operator(kdir, by_kind, pod_labels, prom)
        for j in prom.get("scrape_configs", []):
            if "kubernetes_sd_configs" in j:
                del j["kubernetes_sd_configs"]
                j["static_configs"] = [{"targets": ["127.0.0.1:9577"]}]
        prom["rule_files"] = [os.path.abspath(os.path.join(source_root, "packaging", "prometheus", "memwatchd-rules.yml"))]
        checked = os.path.join(tmp, "prometheus.yml")
        with open(checked, "w", encoding="utf-8") as f:
            yaml.safe_dump(prom, f)
        if promtool and os.access(promtool, os.X_OK):
            out = subprocess.run([promtool, "check", "config", checked], capture_output=True, text=True, timeout=60)
            print((out.stdout + out.stderr).strip())
            if out.returncode != 0:
                problems.append("promtool check config fails on prometheus-scrape.yml: %s" % (out.stdout + out.stderr).strip()[-800:])
        else:
            print("note: promtool not found (package prometheus): prometheus-scrape.yml not checked")
    finally:
        opslib.rmtree(tmp)

    if problems:
        opslib.fail("\n  ".join(["packaging/kubernetes:"] + problems))
    print("ok: DaemonSet, its configuration and the scrape example hold together")


if __name__ == "__main__":
    main()
