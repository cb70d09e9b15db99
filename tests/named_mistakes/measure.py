"""How often the named-mistake hint is right on mistakes written apart from the mutants (docs/feedback.md).

``python -m tests.named_mistakes.measure`` grades every mistake of ``tests/named_mistakes/<topic>.py`` as grading
does (every item, the hidden variants, seed 0) and prints, for each, what the hint named against the truth.
An outcome is one of:

* ``right``: the hint named the truth's mistake (or a mutant with the same description: the same mistake, told
  the same way), or named nothing where no mutant is that mistake;
* ``wrong``: it named another mistake (worse than naming nothing);
* ``silent``: it named nothing although a mutant is that mistake;
* ``passed``: the mistake lost no point (nothing to name; counted apart, a gap for the proofs).
"""

import importlib
import sys
from collections import Counter

import torch

from autograder.engine.results import FAILED, grade_items
from tests.proving import with_replacements

TOPICS = ("operators", "stability", "basics", "broadcasting", "memory", "modules")


def outcome(topic, truth, results):
    """``(outcome, id of the mistake named or None)`` of one graded mistake."""
    failed = [r for r in results if r.status == FAILED]
    if not failed:
        return "passed", None
    named = failed[0].evidence.get("looks_like")
    if named is None:
        return ("right" if truth is None else "silent"), None
    says = importlib.import_module(f"tests.mutants.{topic}").DESCRIPTIONS
    same = truth is not None and says[named] == says[truth]
    return ("right" if same else "wrong"), named


def measure(topics=TOPICS, seed=0):
    """``[(topic, what it is, truth, outcome, named, {check: message})]`` for every mistake of ``topics``."""
    rows = []
    for topic in topics:
        for what, (replacements, truth) in importlib.import_module(f"tests.named_mistakes.{topic}").MISTAKES.items():
            torch.manual_seed(0)
            results = grade_items(topic, with_replacements(topic, replacements), seed=seed)
            messages = {r.check: r.message for r in results if r.message}
            rows.append((topic, what, truth, *outcome(topic, truth, results), messages))
    return rows


def main():
    rows = measure()
    for topic, what, truth, result, named, _ in rows:
        print(f"{result:7} {topic}: {what}\n        truth: {truth}\n        named: {named}")
    counts = Counter(row[3] for row in rows)
    print(f"{len(rows)} mistakes: " + ", ".join(f"{counts[k]} {k}" for k in ("right", "wrong", "silent", "passed")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
