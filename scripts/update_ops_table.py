"""Regenerates the supported-op table of README.md from `cbtrain ops` (the op registry).

Usage: python3 scripts/update_ops_table.py [path/to/cbtrain]
"""
import pathlib
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
binary = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "tools" / "cbtrain")
table = subprocess.run([binary, "ops"], check=True, capture_output=True, text=True).stdout
readme = root / "README.md"
text = readme.read_text()
begin, end = "<!-- ops-table-begin -->\n", "<!-- ops-table-end -->"
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
readme.write_text(head + begin + table + end + tail)
print(f"README.md: {table.count(chr(10)) - 2} ops")
