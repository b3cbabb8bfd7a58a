#!/usr/bin/env python3
"""Sums the laps of a cbtrain log's convolution searches (CBT_LOG_CONV_ALGOS=1): per kind
(engines, direct) and concurrency (x8 ...), the searches, their milliseconds and each lap's.

    python3 search_laps.py LOG              the sums
    python3 search_laps.py --choices LOG    each search's shape and choice, one a line
"""
import collections
import re
import sys

LINE = re.compile(r"cbtrain conv (engines|direct): \S+ (x\d+) .*searched in ([0-9.]+) ms: (.*)\)$")
ENGINE = re.compile(r"cbtrain conv engines: (\S+ x\d+ image=\S+ filter=\S+ s=\d+) .* chosen: (e\d+)")
DIRECT = re.compile(r"cbtrain conv direct: (\S+ x\d+ in=\S+ M=\d+ k=\d+[^:]*): best (\S+) .*: (direct|cuDNN) \(")


def choices(path):
    for line in open(path, errors="replace"):
        m = ENGINE.search(line) or DIRECT.search(line)
        if m:
            kind = "engine" if m.re is ENGINE else "direct"
            print(kind, m.group(1), "->", " ".join(m.groups()[1:]))
LAP = re.compile(r"([a-z]+[0-9]?) ([0-9.]+)")


def main(path):
    sums = collections.OrderedDict()
    for line in open(path, errors="replace"):
        m = LINE.search(line.rstrip())
        if not m:
            continue
        key = f"{m.group(1)} {m.group(2)}"
        s = sums.setdefault(key, {"n": 0, "ms": 0.0, "laps": collections.OrderedDict()})
        s["n"] += 1
        s["ms"] += float(m.group(3))
        for name, ms in LAP.findall(m.group(4)):
            s["laps"][name] = s["laps"].get(name, 0.0) + float(ms)
    for key, s in sums.items():
        laps = ", ".join(f"{k} {v:.0f}" for k, v in s["laps"].items())
        print(f"  {key}: {s['n']} searches, {s['ms']:.0f} ms ({laps})")


if __name__ == "__main__":
    if sys.argv[1] == "--choices":
        choices(sys.argv[2])
    else:
        main(sys.argv[1])
