#!/usr/bin/env python3
"""The README's layout block ("How it is built") names every top-level folder of the
repository, and every folder it names exists: the map and the tree cannot drift apart."""
import os
import re
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
IGNORED = {"build", "node_modules"}  # build outputs (.gitignore)


def layout_block(readme):
    section = readme.split("## How it is built", 1)[1]
    return section.split("```", 2)[1]


def main():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        block = layout_block(f.read())
    described, problems, parent = set(), [], None
    for line in block.splitlines():
        # A folder at the margin, or one level down at two spaces (wider indents continue a line).
        m = re.match(r"^( {2})?([A-Za-z][\w.-]*)/", line)
        if not m:
            continue
        indent, name = m.groups()
        indent = indent or ""
        path = os.path.join(parent, name) if indent and parent else name
        if not indent:
            parent = name
            described.add(name)
        if not os.path.isdir(os.path.join(REPO, path)):
            problems.append(f"the README describes {path}/, which does not exist")
    for entry in sorted(os.listdir(REPO)):
        if entry.startswith(".") or entry in IGNORED or not os.path.isdir(os.path.join(REPO, entry)):
            continue
        if entry not in described:
            problems.append(f"top-level folder {entry}/ is not described in the README's layout block")
    for p in problems:
        print("FAIL:", p)
    print(f"{len(described)} top-level folders described, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
