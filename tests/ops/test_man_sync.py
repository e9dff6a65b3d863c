#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The man pages keep up with the program and its configuration file.

- every option `memwatchd --help` prints (long and short) is in memwatchd.8,
  and every option `memwatch-top --help` prints is in memwatch-top.1;
- every key of conf/memwatchd.conf (`key = value` or `#key = value` lines) is
  described in memwatchd.conf.5 under its own [section];
- every page names the version in meson.build and formats without a groff
  warning.

usage: test_man_sync.py SOURCE_ROOT MEMWATCHD [MEMWATCH_TOP]
(without MEMWATCH_TOP, when the build left it out, its page is still checked
for version and formatting)
"""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opslib  # noqa: E402


def plain(roff):
    """roff source with the escapes that hide words removed."""
    s = roff.replace("\\-", "-").replace("\\&", "")
    s = re.sub(r'\\f(\[[^\]]*\]|\(..|.)', "", s)
    return s


def help_options(exe):
    name = os.path.basename(exe)
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        opslib.fail("%s --help exited %d: %s" % (name, out.returncode, out.stderr))
    longs = set(re.findall(r'(?<![\w-])--([a-z][a-z0-9-]*)', out.stdout))
    shorts = set(re.findall(r'^\s+-([a-zA-Z]),', out.stdout, re.M))
    if not longs:
        opslib.fail("no long option in %s --help:\n" % name + out.stdout)
    return longs, shorts


def options_described(exe, page_name, page, problems):
    """Every option exe --help prints is in the page."""
    longs, shorts = help_options(exe)
    text = plain(page)
    for opt in sorted(longs):
        if not re.search(r'(?<![\w-])--%s(?![\w-])' % re.escape(opt), text):
            problems.append("%s does not describe --%s (printed by --help)" % (page_name, opt))
    for opt in sorted(shorts):
        if not re.search(r'(?<![\w-])-%s(?![\w-])' % re.escape(opt), text):
            problems.append("%s does not describe -%s (printed by --help)" % (page_name, opt))
    print("%s --help options: " % os.path.basename(exe) + " ".join("--" + o for o in sorted(longs)) + " " +
          " ".join("-" + o for o in sorted(shorts)))


def conf_keys(path):
    """[(section, key)] in file order."""
    keys, section = [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'^\s*\[([^\]]+)\]\s*$', line)
            if m:
                section = m.group(1)
                continue
            m = re.match(r'^#?([A-Za-z0-9_.-]+)\s*=', line)
            if m:
                if section is None:
                    opslib.fail("%s:%d: key outside a section" % (path, n))
                keys.append((section, m.group(1)))
    return keys


def man_sections(roff):
    """{header text: [lines]} for every .SH/.SS of a page."""
    sections, current = {}, None
    for line in roff.splitlines():
        m = re.match(r'^\.S[HS]\s+"?(.*?)"?\s*$', line)
        if m:
            current = m.group(1)
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return sections


def described(lines, key):
    """key is an item of the section: `.B key`, `.BR key ...` or \\fBkey\\fR."""
    for line in lines:
        if re.match(r'^\.B[IR]?\s+"?%s"?(\s|$)' % re.escape(key), line):
            return True
        if re.search(r'\\fB%s\\f[RP]' % re.escape(key), line):
            return True
    return False


def meson_version(source_root):
    with open(os.path.join(source_root, "meson.build"), encoding="utf-8") as f:
        m = re.search(r"version\s*:\s*'([^']+)'", f.read())
    return m.group(1) if m else None


def main():
    if len(sys.argv) not in (3, 4):
        opslib.fail(__doc__)
    source_root, exe = sys.argv[1:3]
    top_exe = sys.argv[3] if len(sys.argv) == 4 else None
    man8_path = os.path.join(source_root, "packaging", "man", "memwatchd.8")
    man5_path = os.path.join(source_root, "packaging", "man", "memwatchd.conf.5")
    man1_path = os.path.join(source_root, "packaging", "man", "memwatch-top.1")
    with open(man8_path, encoding="utf-8") as f:
        man8 = f.read()
    with open(man5_path, encoding="utf-8") as f:
        man5 = f.read()
    with open(man1_path, encoding="utf-8") as f:
        man1 = f.read()
    problems = []

    options_described(exe, "memwatchd.8", man8, problems)
    if top_exe:
        options_described(top_exe, "memwatch-top.1", man1, problems)
    else:
        print("note: memwatch-top not built, its options not checked")

    keys = conf_keys(os.path.join(source_root, "conf", "memwatchd.conf"))
    sections = man_sections(man5)
    for section, key in keys:
        header = "[%s]" % section
        if header not in sections:
            problems.append("memwatchd.conf.5 has no section %s (conf/memwatchd.conf has)" % header)
            continue
        if not described(sections[header], key):
            problems.append("memwatchd.conf.5 does not describe %s %s (conf/memwatchd.conf has it)" % (header, key))
    print("conf/memwatchd.conf: %d keys in %d sections" % (len(keys), len({s for s, _ in keys})))

    version = meson_version(source_root)
    for name, page in (("memwatchd.8", man8), ("memwatchd.conf.5", man5), ("memwatch-top.1", man1)):
        th = re.search(r'^\.TH\s+.*$', page, re.M)
        if not th or (version and "memwatchd " + version not in th.group(0)):
            problems.append("%s: .TH does not name memwatchd %s: %s" % (name, version, th.group(0) if th else "no .TH"))

    groff = shutil.which("groff")
    if groff:
        for path in (man8_path, man5_path, man1_path):
            out = subprocess.run([groff, "-man", "-ww", "-z", "-Tutf8", path], capture_output=True, text=True)
            if out.returncode != 0 or out.stderr.strip():
                problems.append("groff warns about %s: %s" % (os.path.basename(path), out.stderr.strip()))
    else:
        print("note: groff not found, formatting not checked")

    if problems:
        opslib.fail("\n  ".join(["the man pages are out of sync:"] + problems))
    print("ok: man pages in sync with --help and conf/memwatchd.conf")


if __name__ == "__main__":
    main()
