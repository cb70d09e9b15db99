"""The shell blocks of docs/*.md, each with the marker comment on the line before it.

A block meant to run says which test runs it: ``<!-- KEY: tests/... runs this block ... -->`` (the README's
``instructor-flow`` block is the model); a block not meant to run says why: ``<!-- not run: REASON -->``.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from tests.proving import ROOT

DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(bash|sh|shell|console)\s*$")
MARKER = re.compile(r"^<!-- (?P<key>[a-z][a-z0-9-]*|not run): (?P<says>.+?) -->$")


@dataclass
class ShellBlock:
    path: Path
    line: int           # the fence's line number (1-based)
    marker: str         # the comment on the line before the fence ("" if none)
    text: str           # the block's lines, as a person would paste them

    @property
    def key(self):
        found = MARKER.match(self.marker)
        return found.group("key") if found else None

    @property
    def says(self):
        found = MARKER.match(self.marker)
        return found.group("says") if found else ""

    def where(self):
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def shell_blocks(paths=None):
    """Every shell block of ``paths`` (default: docs/*.md), in order."""
    found = []
    for path in paths or sorted(DOCS.glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            if FENCE.match(lines[index]):
                end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
                marker = lines[index - 1].strip() if index else ""
                found.append(ShellBlock(path, index + 1, marker, "\n".join(lines[index + 1:end]) + "\n"))
                index = end
            index += 1
    return found


def block(key):
    """The one block of docs/*.md marked ``key``."""
    matches = [b for b in shell_blocks() if b.key == key]
    assert len(matches) == 1, f"{len(matches)} blocks in docs/*.md are marked <!-- {key}: ... -->"
    return matches[0]
