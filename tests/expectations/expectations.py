# SPDX-License-Identifier: GPL-2.0
"""The per-kernel expectation table (collectors.tsv beside this file).

    rows = load()
    want = expected("busybox-guest", "6.12.117+deb12-cloud-amd64", conditions={})
    problems = compare(want, seen)   # seen: {collector: (state, mode, reason)}

A collector with rows under a condition (column 7) needs that condition's
truth value in `conditions` ({"zone-managed-agree": True, ...}); the test
works it out independently of the daemon. A release no row matches raises
NoExpectation: the table gets a row for every kernel tests run on.
Stdlib only."""
import fnmatch
import os

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "collectors.tsv")
FIELDS = ("environment", "kernel", "collector", "state", "mode", "reason", "condition")


class NoExpectation(Exception):
    pass


def under_ci():
    """The one reading of CI in the test suite: the run is CI's when CI=true
    (as .ci/run's caller sets it); there a skip or a missing row is a failure."""
    return os.environ.get("CI") == "true"


def load(path=TABLE, fields=FIELDS):
    rows = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != len(fields):
                raise ValueError("%s:%d: %d columns, want %d" % (path, lineno, len(cols), len(fields)))
            rows.append(dict(zip(fields, cols), line=lineno))
    return rows


def _negated(cond):
    return cond.replace("-agree", "-disagree") if cond.endswith("-agree") else None


def expected(environment, release, conditions=None, rows=None):
    """{collector: row} for this environment and kernel release."""
    conditions = conditions or {}
    rows = rows if rows is not None else load()
    want = {}
    matched_any = False
    for r in rows:
        if r["environment"] != environment or not fnmatch.fnmatchcase(release, r["kernel"]):
            continue
        matched_any = True
        if r["collector"] in want:
            continue
        cond = r["condition"]
        if cond != "-":
            base = cond if cond in conditions else cond.replace("-disagree", "-agree")
            if base not in conditions:
                raise NoExpectation("row %d needs condition %r, which the test did not evaluate"
                                    % (r["line"], base))
            holds = conditions[base] if base == cond else not conditions[base]
            if not holds:
                continue
        want[r["collector"]] = r
    if not matched_any:
        raise NoExpectation("no row in %s for environment %r, kernel %r" % (TABLE, environment, release))
    return want


def compare(want, seen):
    """List of human-readable mismatches; empty when seen is exactly as expected."""
    problems = []
    for name, r in sorted(want.items()):
        if name not in seen:
            problems.append("%s: not reported (want %s/%s, table line %d)" % (name, r["state"], r["mode"], r["line"]))
            continue
        state, mode, reason = seen[name]
        if state != r["state"] or mode != r["mode"]:
            problems.append("%s: %s/%s, want %s/%s (table line %d)%s"
                            % (name, state, mode, r["state"], r["mode"], r["line"],
                               (" reason: " + reason) if reason else ""))
        elif r["reason"] == "-" and reason:
            problems.append("%s: reason %r, want none (table line %d)" % (name, reason, r["line"]))
        elif r["reason"] != "-" and r["reason"] not in reason:
            problems.append("%s: reason %r lacks %r (table line %d)" % (name, reason, r["reason"], r["line"]))
    for name in sorted(set(seen) - set(want)):
        problems.append("%s: reported, but the table has no row for it" % name)
    return problems


def parse_check_table(text):
    """{collector: (state, mode, reason)} from `memwatchd --check` output."""
    seen = {}
    for line in text.splitlines():
        parts = line.strip().split(None, 3)
        if len(parts) < 3 or parts[0] == "COLLECTOR":
            continue
        if parts[1] not in ("active", "degraded", "disabled", "failed"):
            continue
        seen[parts[0]] = (parts[1], parts[2], parts[3].strip() if len(parts) > 3 else "")
    return seen


KILL_FIELDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kill_fields.tsv")


CGROUP_PEAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cgroup_peak.tsv")


CONTAINER_RUNTIMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "container_runtimes.tsv")


def expected_oomkilled(distribution, runtime, path=CONTAINER_RUNTIMES):
    """(required, reason) for a runtime's OOMKilled flag in a guest of this
    Debian release (container_runtimes.tsv)."""
    for r in load(path, ("release", "runtime", "oomkilled", "reason")):
        if r["release"] == distribution and r["runtime"] == runtime:
            return r["oomkilled"] == "required", r["reason"]
    raise NoExpectation("no row in %s for release %r, runtime %r: add '%s\t%s\trequired\t-' (or reported, "
                        "with the reason)" % (path, distribution, runtime, distribution, runtime))


def expected_values(environment, release, path):
    """{key: value} for this environment and kernel from a 4-column table
    (environment, kernel, key, value): kill_fields.tsv, cgroup_peak.tsv."""
    return expected_kill_fields(environment, release, path)


def expected_kill_fields(environment, release, path=KILL_FIELDS):
    """{feature: source} for this environment and kernel (kill_fields.tsv)."""
    rows = [r for r in load(path, ("environment", "kernel", "feature", "source"))
            if r["environment"] == environment and fnmatch.fnmatchcase(release, r["kernel"])]
    if not rows:
        raise NoExpectation("no row in %s for environment %r, kernel %r" % (path, environment, release))
    want = {}
    for r in rows:
        want.setdefault(r["feature"], r["source"])
    return want


def compare_kill_fields(want, seen):
    """Mismatches between {feature: source} wanted and memwatch_oom_feature_info seen."""
    problems = []
    for feature, source in sorted(want.items()):
        if seen.get(feature) != source:
            problems.append("kill field %s: source %r, want %r (kill_fields.tsv)" % (feature, seen.get(feature), source))
    for feature in sorted(set(seen) - set(want)):
        problems.append("kill field %s: reported, but kill_fields.tsv has no row for it" % feature)
    return problems
