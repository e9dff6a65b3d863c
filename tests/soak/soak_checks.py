# SPDX-License-Identifier: GPL-2.0
"""The soak's two long-run checks, kept apart from the load (soak.py):

- growth(): the least-squares slope of a resource over every sample taken
  after the warm-up, per minute, with its standard error;
- CounterLedger: every counter's highest value seen, so that a series that
  drops out of one scrape and comes back lower in a later one is caught.
"""
import math
import os
import re

LABEL_RE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


# Neighbouring samples' scatter is not independent (a window's buffers, a
# burst of scrapes last several samples), which the ordinary standard error
# takes it to be: in three 300 s runs it said 39 to 70 KiB/min where the
# errors' correlation over 20 s (Newey-West) says 37 to 114.
GROWTH_LAG = 8


def growth(samples, lag=GROWTH_LAG):
    """samples: [(seconds, value)], evenly spaced. Returns (slope per minute,
    its standard error per minute): the ordinary least-squares line through
    all of them, and the slope's error with the residuals' correlation over
    lag neighbouring samples counted (Newey-West weights). The standard error
    says how much the samples' scatter alone moves the slope, so a bound is
    only meaningful well above it."""
    n = len(samples)
    if n < 3:
        return None, None
    t_mean = sum(t for t, _ in samples) / n
    y_mean = sum(y for _, y in samples) / n
    x = [t - t_mean for t, _ in samples]
    sxx = sum(a * a for a in x)
    slope = sum(a * (y - y_mean) for a, (_, y) in zip(x, samples)) / sxx
    u = [a * (y - y_mean - slope * a) for a, (_, y) in zip(x, samples)]
    s = sum(v * v for v in u)
    for k in range(1, min(lag, n - 1) + 1):
        s += 2 * (1 - k / (lag + 1)) * sum(u[i] * u[i - k] for i in range(k, n))
    # The small-sample factor of the ordinary error, n / (n - 2).
    stderr = math.sqrt(max(s, 0.0) * n / (n - 2)) / sxx
    return slope * 60, stderr * 60


def labels(key):
    """{name: value} of one sample's key, e.g. 'm{pid="12",comm="dd"}'."""
    _, _, rest = key.partition("{")
    return dict(LABEL_RE.findall(rest))


def start_time(pid):
    """The process's start time (in clock ticks after boot, field 22 of
    /proc/PID/stat), which tells two processes with one pid apart; None if
    there is no such process."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


class CounterLedger:
    """The highest value of every counter and histogram sample seen so far in
    one client's scrapes, present in the current scrape or not.

    A value below the ledger's fails, unless the series' own subject really
    went away and came back, which the test knows in two cases only:
    - a series of a cgroup the test itself removes and creates again under the
      same name (recreated_cgroups: the OOM kills' cgroup, a new one every
      10 s), which starts again from zero;
    - a series of a pid that now belongs to another process than when the
      series was first seen: pids are reused (pid_max is 32768 here, and the
      soak starts 200 processes a second, so they wrap every 3 minutes).
      Either the test's own churn started a process with that pid again
      since (spawns(pid) grew: its /bin/true processes live a millisecond,
      too short to be looked at), or the start time in /proc/PID/stat differs
      from the one read when the series was first seen (a process gone by
      then cannot come back, so a live one is another);
    - likewise a series of a cgroup whose directory under hierarchy (the
      cgroup mount the labels are relative to) now has another inode, the
      cgroup id, than when the series was first seen: another test's cgroup
      removed and made again under the same name."""

    def __init__(self, recreated_cgroups, spawns=lambda pid: 0, hierarchy=None):
        self.recreated = tuple(recreated_cgroups)
        self.spawns = spawns
        self.hierarchy = hierarchy
        self.highest = {}
        self.born = {}
        self.compared = 0
        self.series_compared = set()
        self.resets_explained = 0

    def _reborn(self, key):
        lab = labels(key)
        cg = lab.get("cgroup")
        if cg is not None:
            now = self._cgroup_id(cg)
            return cg.endswith(self.recreated) or (now is not None and now != self.born.get(key))
        pid = lab.get("pid")
        if pid is not None and pid.isdigit():
            started, spawned = self.born.get(key, (None, 0))
            now = start_time(pid)
            return self.spawns(int(pid)) > spawned or (now is not None and now != started)
        return False

    def _cgroup_id(self, cgroup):
        try:
            return os.stat(self.hierarchy + cgroup).st_ino if self.hierarchy else None
        except OSError:
            return None

    def _first_seen(self, key):
        lab = labels(key)
        pid = lab.get("pid")
        if pid is not None and pid.isdigit():
            self.born[key] = (start_time(pid), self.spawns(int(pid)))
        elif "cgroup" in lab:
            self.born[key] = self._cgroup_id(lab["cgroup"])

    def check(self, scrape):
        """scrape: {key: value}. Returns the failures, one line each."""
        failures = []
        for key, v in scrape.items():
            top = self.highest.get(key)
            if top is None:
                self.highest[key] = v
                self._first_seen(key)
                continue
            self.compared += 1
            self.series_compared.add(key)
            if v >= top:
                self.highest[key] = v
            elif self._reborn(key):
                self.resets_explained += 1
                self.highest[key] = v
                self._first_seen(key)
            else:
                failures.append("%s went back from %r (its highest so far) to %r" % (key, top, v))
                self.highest[key] = v  # once per drop, not at every scrape after it
        return failures
