# SPDX-License-Identifier: GPL-2.0
"""Reading a tests/vm guest's serial console: the "=== ... ===" blocks and
markers tests/vm/init.sh prints, the scrapes, events and tracepoint formats
in them (and the host's formats, to compare)."""
import json
import os
import re

from vm_kernels import run

# The firmware leaves escape sequences before the first marker on its console line.
MARK = re.compile(r"(?:^|\.)=== (.*) ===$")


def blocks(lines):
    """{name: [lines]} of every "=== BEGIN name ===" .. "=== END name[ ...] ===" block,
    and the list of single markers."""
    out, singles, cur, name = {}, [], None, None
    for line in lines:
        m = MARK.search(line)
        if m:
            text = m.group(1)
            if text.startswith("BEGIN "):
                name, cur = text[6:], []
                continue
            if text.startswith("END ") and cur is not None:
                out[name] = cur
                end = text[4:]
                if end != name:
                    singles.append(end)  # "END check rc=0" keeps its suffix
                cur = name = None
                continue
            singles.append(text)
            continue
        if cur is not None:
            cur.append(line)
    return out, singles


def single(singles, prefix):
    for s in singles:
        if s.startswith(prefix):
            return s[len(prefix):].strip()
    return None


LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def parse_metrics(text_lines):
    """[(name, {labels}, value)], or None when the scrape failed."""
    status = [l for l in text_lines or [] if l.startswith("# scrape exit ")]
    if not status or not status[-1].startswith("# scrape exit 0 fresh"):
        return None
    samples = []
    for line in text_lines:
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            continue
        labels = dict(LABEL.findall(m.group(2) or ""))
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        samples.append((m.group(1), labels, value))
    return samples


def value(samples, name, **labels):
    vals = [v for n, lab, v in samples if n == name and all(lab.get(k) == x for k, x in labels.items())]
    return sum(vals) if vals else None


def labelled(samples, name, **labels):
    """[{labels}] of every sample of the metric whose labels include these."""
    return [lab for n, lab, _ in samples or [] if n == name and all(lab.get(k) == x for k, x in labels.items())]


MEMINFO_LINE = re.compile(r"^# meminfo MemAvailable bytes before (\d+) after (\d+)$")


def scrape_meminfo(text_lines):
    """(before, after): /proc/meminfo MemAvailable in bytes, read by the guest right
    before and right after the scrape it kept; None when not printed."""
    for line in reversed(text_lines or []):
        m = MEMINFO_LINE.match(line)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def parse_events(text_lines):
    """(events list, None) of an /api/v1/events answer, or (None, why not)."""
    if not text_lines or not "".join(text_lines).strip():
        return None, "empty"
    try:
        doc = json.loads("\n".join(text_lines))
    except json.JSONDecodeError as e:
        return None, f"not JSON: {e}"
    if not isinstance(doc, dict) or not isinstance(doc.get("events"), list):
        return None, 'no "events" list'
    return [e for e in doc["events"] if isinstance(e, dict)], None


def parse_kv(block):
    kv = {}
    for line in block or []:
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            kv[parts[0]] = int(parts[1])
    return kv


FIELD = re.compile(r"^\s*field:(.*);\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);")


def format_fields(text_lines):
    """[(declaration, offset, size, signed)] of the event's own fields."""
    fields = []
    for line in text_lines:
        m = FIELD.match(line)
        if m and not m.group(1).split()[-1].startswith("common_"):
            fields.append((m.group(1).strip(), int(m.group(2)), int(m.group(3)), int(m.group(4))))
    return fields


def host_formats(tps):
    """{tracepoint: format lines or None} of the running host kernel. Where tracefs
    is not mounted, mounts it in a private mount namespace (unshare -m), which
    leaves the host's mount table alone."""
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(os.path.join(root, "events")):
            out = {}
            for tp in tps:
                try:
                    with open(os.path.join(root, "events", tp, "format")) as f:
                        out[tp] = f.read().splitlines()
                except OSError:
                    out[tp] = None
            return out
    script = ('d=$(mktemp -d) && mount -t tracefs tracefs "$d" && for tp in "$@"; do '
              'echo "=== BEGIN format $tp ==="; cat "$d/events/$tp/format" 2>/dev/null; '
              'echo "=== END format $tp ==="; done; umount "$d"; rmdir "$d"')
    r = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"] + list(tps))
    b, _ = blocks(r.stdout.splitlines())
    return {tp: (b.get(f"format {tp}") or None) for tp in tps}


def compare_format(host, guest):
    """Human-readable differences of two field lists (host first)."""
    if host is None and guest is None:
        return ["absent on both"]
    if host is None:
        return ["absent on the host"]
    if guest is None:
        return ["absent in the guest"]
    hf, gf = format_fields(host), format_fields(guest)
    hname = {f[0].split()[-1]: f for f in hf}
    gname = {f[0].split()[-1]: f for f in gf}
    diffs = []
    for n, f in hname.items():
        if n not in gname:
            diffs.append(f"host only: {f[0]} (offset {f[1]}, size {f[2]})")
        elif gname[n] != f:
            g = gname[n]
            diffs.append(f"{n}: host '{f[0]}' offset {f[1]} size {f[2]} signed {f[3]}, "
                         f"guest '{g[0]}' offset {g[1]} size {g[2]} signed {g[3]}")
    for n, g in gname.items():
        if n not in hname:
            diffs.append(f"guest only: {g[0]} (offset {g[1]}, size {g[2]})")
    hp = [l for l in host if l.startswith("print fmt:")]
    gp = [l for l in guest if l.startswith("print fmt:")]
    if not diffs and hp != gp:
        # Mostly the table of gfp flag names in __print_flags(), which BPF never reads.
        same_head = [l.split("__print_flags(")[0] for l in hp] == [l.split("__print_flags(")[0] for l in gp]
        diffs.append("same fields; print fmt differs " +
                     ("only in its flag-name table" if same_head else "before its flag-name table"))
    return diffs
