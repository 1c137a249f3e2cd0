#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read pmc-report --script output (or perf script's) as profilers do.

	script-samples.py FILE

The rules are those of speedscope's perf importer (Firefox Profiler's and
hotspot's read the same fields): blocks split at blank lines; first
"comm pid/tid time: event:"; then frames, "address symbol (object)",
innermost first. Prints one line per sample, "comm pid tid time event
outermost;...;innermost" with each frame as symbol(object), and exits 1
at the first line such an importer could not read.
"""
import re
import sys

blocks, pending = [], []
for line in open(sys.argv[1]).read().split("\n"):
    if line == "":
        if pending:
            blocks.append(pending)
        pending = []
    else:
        pending.append(line)
if pending:
    blocks.append(pending)
for lines in blocks:
    lines = [l for l in lines if not re.match(r"^\s*#", l)]
    first = lines.pop(0)
    start = re.match(r"^(\S.+?)\s+(\d+)(?:/?(\d+))?\s+", first)
    time = re.search(r"\s+(\d+\.\d+):\s+", first)
    event = re.search(r"(\S+):\s*$", first)
    if not (start and start.group(3) and time and event):
        sys.exit("unreadable sample line: " + first)
    stack = []
    for line in lines:
        frame = re.match(r"^\s*(\w+)\s*(.+) \((\S*)\)", line)
        if not frame:
            sys.exit("unreadable frame line: " + line)
        stack.append("%s(%s)" % (frame.group(2), frame.group(3)))
    print(start.group(1), start.group(2), start.group(3), time.group(1),
          event.group(1), ";".join(reversed(stack)))
