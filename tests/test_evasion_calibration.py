"""No false alarm: honest code is never put under review, and every honest answer keeps its source rules.

Over the demo's students (``autograder/course/demo_submissions``), every reference (``source/``'s notebooks with
their example cells, ``solutions/``), every second solution (``tests/alternatives``), every mutant module
(``tests/mutants``) and the adversarial suite's honest students (the reference answers typed into the release
notebook): ``autograder.source_evidence.evasion`` finds nothing, and the references and alternatives break no source rule. The
student-style corpus (``tests/honest/``) is held to the same, entry by entry.
"""

import importlib

import pytest

from autograder.checks import items_of
from autograder.commands.build import topics
from autograder.commands.demo import _fill, buggy_cells
from autograder.engine import notebooks
from autograder.source_evidence.evasion import affecting
from autograder.source_evidence.source_rules import rule_findings
from autograder.source_evidence.submitted_source import Submission
from tests.proving import ROOT

TOPICS = topics(ROOT)


def names(topic):
    return {target for item in items_of(topic) for target in item.targets}


def notebook_cells(topic, answers=None):
    release = notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")
    source = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    filled = _fill(release, answers if answers is not None else notebooks.solution_sources(source))
    return Submission.from_cells(notebooks.code_cells(filled, topic))


def broken_rules(topic, submission):
    return {(item.id, f.text()) for item in items_of(topic) for rule in item.source
            for f in rule_findings(rule, submission)}


@pytest.mark.quick
@pytest.mark.parametrize("topic", TOPICS)
def test_no_honest_code_is_flagged(topic):
    honest = {
        "the source notebook": Submission.from_cells(notebooks.code_cells(
            notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb"), topic)),
        "the adversarial suite's honest student": notebook_cells(topic),
        "the demo's buggy student": notebook_cells(topic, buggy_cells(topic)),
        "solutions/": Submission.from_text((ROOT / "solutions" / f"{topic}.py").read_text(), "solutions"),
        "tests/alternatives": Submission.from_text((ROOT / "tests" / "alternatives" / f"{topic}.py").read_text(),
                                                   "alternatives"),
        "tests/mutants": Submission.from_text((ROOT / "tests" / "mutants" / f"{topic}.py").read_text(), "mutants"),
    }
    flagged = {who: {item.id: [f.text() for f in affecting(s, item.targets, names(topic))] for item in items_of(topic)}
               for who, s in honest.items()}
    flagged = {who: {item: found for item, found in items.items() if found} for who, items in flagged.items()}
    assert {who: found for who, found in flagged.items() if found} == {}
    mutants = vars(importlib.import_module(f"tests.mutants.{topic}"))
    for kind in ("MUTANTS", "GPU_MUTANTS"):
        for mistake, (replacements, _) in mutants.get(kind, {}).items():
            submission = Submission.of_objects(replacements)
            found = {item.id: [f.text() for f in affecting(submission, item.targets, names(topic))]
                     for item in items_of(topic)}
            assert {k: v for k, v in found.items() if v} == {}, mistake
    for who in ("the source notebook", "the adversarial suite's honest student", "solutions/", "tests/alternatives"):
        assert not [s for s in honest[who].parts if s.tree is None], who
    for who in ("the source notebook", "the adversarial suite's honest student", "solutions/"):
        assert broken_rules(topic, honest[who]) == set(), who
