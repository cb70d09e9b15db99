"""The messages a student reads, over whole grades: the named-mistake hint keeps its measured rate on mistakes
written apart from the mutants (docs/feedback.md), and no message has a slip a machine can see.

One grading of the set per module; the messages of every mutant are read for
slips when the signatures are regenerated (``tests/mistakes/signatures.py``), as they are graded there.
"""

from collections import Counter

import pytest

from autograder.commands.build import topics
from autograder.engine.results import grade_items
from tests.mistakes.grammar import slips
from tests.named_mistakes.measure import measure
from tests.proving import ROOT, stub

# The first set, measured on 2026-11-28 after refinement 7 (the same as after refinement 6), right or silent (2-core
# x86_64 CPU, torch 2.13.0): see docs/feedback.md (the other sets are measured with python -m
# tests.named_mistakes.measure). A change that names more mistakes right may raise RIGHT; one that names a wrong
# mistake more often fails.
RIGHT, WRONG = 31, 0


@pytest.fixture(scope="module")
def measured():
    return measure()


def test_the_named_mistake_keeps_its_measured_rate(measured):
    counts = Counter(row[3] for row in measured)
    shown = "\n".join(f"{row[3]}: {row[0]}: {row[1]} (named {row[4]}, truth {row[2]})" for row in measured)
    assert counts["right"] >= RIGHT, shown
    assert counts["wrong"] <= WRONG, shown


def test_no_message_of_a_whole_grade_has_a_slip(measured):
    messages = {}
    for topic in topics(ROOT):
        for r in grade_items(topic, stub(topic), seed=0):
            messages[f"stub {topic} {r.check}"] = r.message
    for topic, what, _, _, _, graded in measured:
        messages.update({f"{topic} {what!r} {check}": text for check, text in graded.items()})
    found = {name: slips(text) for name, text in messages.items() if slips(text)}
    assert not found, "\n\n".join(f"{name}: {problems}\n{messages[name]}" for name, problems in found.items())
