"""The evidence table: every graded item, its points, what earns them, and what only the worker says.

Generated from the spec (``@graded(..., evidence=..., source=[...], worker_facts=...)``) and written into
``docs/security.md`` between the ``evidence-table`` markers (``python -m autograder evidence --write``;
``tests/course/test_evidence.py`` fails when the document is stale, or when an item whose worker reports facts for it
has neither source rules nor the clock to earn its points: a fact the worker reports is its own word).

Evidence kinds: **data** (what comes back, judged in the grader), **clock** (the grader's clock on inputs drawn at
grading time), **source** (the submitted source as the grader parses it: the item's rules).
"""

import re
from pathlib import Path

from ..checks import TOPICS, items_of

BEGIN, END = "<!-- evidence-table -->", "<!-- /evidence-table -->"
DOC = Path("docs") / "security.md"


def rows():
    """``[{"topic", "item", "points", "evidence", "source", "worker_facts"}]`` in course order."""
    return [{"topic": item.topic, "item": item.id, "points": item.points, "evidence": list(item.evidence),
             "source": [rule.describe() for rule in item.source], "worker_facts": item.worker_facts,
             "facts_only_cost": item.facts_only_cost}
            for topic in TOPICS for item in items_of(topic)]


def resting_on_the_worker():
    """Items whose worker reports facts for them but whose points have neither source rules, drawn state nor the
    clock, unless the facts are declared to only cost (the points stand on the data alone)."""
    return [f"{r['topic']}.{r['item']}" for r in rows()
            if r["worker_facts"] and not r.get("facts_only_cost")
            and not {"source", "drawn state", "clock"} & set(r["evidence"])]


def _facts(row):
    if not row["worker_facts"]:
        return "-"
    return row["worker_facts"] + (" (only costs)" if row.get("facts_only_cost") else "")


def table():
    lines = ["| assignment | item | points | evidence | source rules | the worker's word (explains, may cost) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows():
        lines.append(f"| {r['topic']} | `{r['item']}` | {r['points']:g} | {', '.join(r['evidence'])} | "
                     f"{'; '.join(r['source']) or '-'} | {_facts(r)} |")
    totals = {}
    for r in rows():
        totals.setdefault(r["topic"], 0.0)
        totals[r["topic"]] += r["points"]
    lines.append("")
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
            return 0 if fresh == text else 1
        path.write_text(fresh, encoding="utf-8")
        print(f"wrote the evidence table into {path}")
        return 0
    print(table())
    return 0
