"""The evidence table: every graded item, its points, what earns them, and what only the worker says.

Generated from the spec (``@graded(..., evidence=..., source=[...], worker_facts=...)``) and written into
``docs/security.md`` between the ``evidence-table`` markers (``python -m autograder evidence --write``;
``python -m autograder evidence --check`` and ``tests/course/test_evidence.py`` fail when the document is stale, or
when an item can earn a point on the worker's word: :func:`resting_on_the_worker`).

Evidence kinds: **data** (what comes back, judged in the grader), **clock** (the grader's clock on inputs drawn at
grading time), **source** (the submitted source as the grader parses it: the item's rules), **traffic** (what the
worker's processes sent on the sandbox's own network, counted by the grader from outside: only where the worker has
a network namespace of its own, :data:`TRAFFIC_NOTE`).
"""

import re
from pathlib import Path

from autograder.checks import TOPICS, items_of

BEGIN, END = "<!-- evidence-table -->", "<!-- /evidence-table -->"
DOC = Path("docs") / "security.md"


def rows():
    """``[{"topic", "item", "points", "evidence", "source", "worker_facts"}]`` in course order."""
    return [{"topic": item.topic, "item": item.id, "points": item.points, "evidence": list(item.evidence),
             "source": [rule.describe() for rule in item.source], "worker_facts": item.worker_facts,
             "facts_only_cost": item.facts_only_cost}
            for topic in TOPICS for item in items_of(topic)]


def resting_on_the_worker():
    """Items that can earn a point on the worker's word: the worker reports facts for them, and the item does not
    declare that its points stand on the grader's own evidence alone (``facts_only_cost``: data, drawn state, the
    clock or the source, with the facts a precondition that can only take points away). Source rules or the clock
    beside the facts are not enough by themselves: a fact that decides a wrong answer the other evidence passes
    earns that answer the point when the worker forges it (``predict`` with a dead ``no_grad`` block once passed on
    its source and a forged "no graph")."""
    return [f"{r['topic']}.{r['item']}" for r in rows() if r["worker_facts"] and not r.get("facts_only_cost")]


TRAFFIC_NOTE = ("traffic*: read only where the worker has a network namespace of its own (bubblewrap). Without one "
                "(`--no-sandbox`, one process) the grader cannot tell the worker's traffic from its own: those items "
                "rest on the rest of their evidence, and a worker that forges its report keeps their points there. "
                "The fallback sandbox (Gradescope) grades no distributed item: gloo needs TCP, which its seccomp "
                "filter refuses.")


def _evidence(row):
    return ", ".join(kind + ("*" if kind == "traffic" else "") for kind in row["evidence"])


def _facts(row):
    if not row["worker_facts"]:
        return "-"
    return row["worker_facts"] + (" (only costs)" if row.get("facts_only_cost") else "")


def table():
    lines = ["| assignment | item | points | evidence | source rules | the worker's word (explains, may cost) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows():
        lines.append(f"| {r['topic']} | `{r['item']}` | {r['points']:g} | {_evidence(r)} | "
                     f"{'; '.join(r['source']) or '-'} | {_facts(r)} |")
    totals = {}
    for r in rows():
        totals.setdefault(r["topic"], 0.0)
        totals[r["topic"]] += r["points"]
    lines.append("")
    if any("traffic" in r["evidence"] for r in rows()):
        lines += [TRAFFIC_NOTE, ""]
    lines.append("Points per assignment: " + ", ".join(f"{t} {p:g}" for t, p in totals.items()) + ".")
    return "\n".join(lines)


def with_table(text):
    """``text`` with the generated table between the markers (which must be there)."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"no {BEGIN} ... {END} section")
    return pattern.sub(lambda _: f"{BEGIN}\n{table()}\n{END}", text)


def run(course=".", write=False, check=False):
    """Print the table; ``write``: rewrite the document's section; ``check``: exit status 1 when it is stale."""
    path = Path(course) / DOC
    if write or check:
        text = path.read_text(encoding="utf-8")
        fresh = with_table(text)
        if check:
            print(f"{path}: {'up to date' if fresh == text else 'stale: run python -m autograder evidence --write'}")
            resting = resting_on_the_worker()
            for item in resting:
                print(f"{item}: its points can rest on what the student's worker reports about itself; grade it on "
                      "data, drawn state, the clock or the source, and declare facts_only_cost=True")
            return 0 if fresh == text and not resting else 1
        path.write_text(fresh, encoding="utf-8")
        print(f"wrote the evidence table into {path}")
        return 0
    print(table())
    return 0


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("--write", action="store_true", help="write it into docs/security.md between its markers")
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/security.md's table is stale")


def from_command_line(args, parser):
    """``python -m autograder evidence``: what the command prints, and its exit status."""
    return run(args.course, write=args.write, check=args.check)
