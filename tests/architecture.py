"""The drawn part of docs/architecture.md, from the package's own imports and ``tests/test_layers.LAYERS``.

    python -m tests.architecture            print it
    python -m tests.architecture --write    write it into docs/architecture.md between its markers
    python -m tests.architecture --check    exit 1 when the page's drawing is not today's

``tests/docs/test_architecture.py`` runs ``--check``, so the picture cannot drift from the code.
"""

import argparse
import ast
import sys
from pathlib import Path

from tests.test_layers import LAYERS, MODULES, PACKAGE, RANK, dotted, import_graph, package_of

ROOT = PACKAGE.parent
PAGE = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- drawn by `python -m tests.architecture --write`: do not edit by hand -->"
END = "<!-- end of the drawing -->"


def layer_edges():
    """``{layer: {layers it imports directly}}``, every import counted, the transitive ones left out."""
    edges = {name: set() for name, _, _ in LAYERS}
    for module, targets in import_graph().items():
        mine = LAYERS[RANK[package_of(module)]][0]
        for target in targets:
            theirs = LAYERS[RANK[package_of(target)]][0]
            if theirs != mine:
                edges[mine].add(theirs)

    def reaches(a, b, skip):
        seen, todo = set(), [n for n in edges[a] if (a, n) != skip]
        while todo:
            n = todo.pop()
            if n == b:
                return True
            if n not in seen:
                seen.add(n)
                todo += edges[n]
        return False

    return {a: {b for b in targets if not reaches(a, b, (a, b))} for a, targets in edges.items()}


def first_line(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    line = " ".join(doc.split("\n\n")[0].split())
    return line if len(line) <= 150 else line[:147].rsplit(" ", 1)[0] + " ..."


def commands():
    """A line per command of ``autograder/cli.py``'s table: the command, its module, its help."""
    from autograder.cli import COMMANDS

    return ["| command | module | what it does |", "| --- | --- | --- |"] + [
        f"| `{verb}` | `autograder/commands/{c.module}.py` | {c.help} |" for verb, c in COMMANDS.items()]


def drawing():
    edges = layer_edges()
    out = [BEGIN, "", *commands(), "", "```mermaid", "flowchart TD"]
    for name, packages, what in LAYERS:
        out.append(f'    {name}["<b>{name}</b><br/>{what}"]')
    for name, _, _ in LAYERS:
        for target in sorted(edges[name], key=lambda t: -[n for n, _, _ in LAYERS].index(t)):
            out.append(f"    {name} --> {target}")
    out += ["```", "", "An arrow is an import (one that another arrow already implies is left out). Every module, "
            "by layer, top first, with the first sentence of its docstring:", ""]
    by_layer = {}
    for path in MODULES:
        by_layer.setdefault(RANK[package_of(dotted(path))], []).append(path)
    for rank in sorted(by_layer, reverse=True):
        name, _, what = LAYERS[rank]
        out += [f"**{name}**: {what}", ""]
        for path in by_layer[rank]:
            nested = path.parent.parent.name in ("checks", "commands") and path.parent.name != "checks"
            if (nested and path.name != "__init__.py") or not first_line(path):
                continue        # a topic's (or the demo's) own modules: its package's line stands for them
            out.append(f"- `{path.relative_to(ROOT).as_posix()}`: {first_line(path)}")
        out.append("")
    out.append(END)
    return "\n".join(out)


def current_page():
    text = PAGE.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{PAGE} has no drawing markers; put them where the drawing goes")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head, tail


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if not (args.write or args.check):
        print(drawing())
        return 0
    head, tail = current_page()
    page = head + drawing() + tail
    if args.check:
        if page != PAGE.read_text(encoding="utf-8"):
            print(f"{PAGE.name}'s drawing is stale: python -m tests.architecture --write", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
