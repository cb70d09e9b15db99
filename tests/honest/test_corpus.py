"""The honest corpus (``corpus.py``): every answer full marks, nothing under review.

Quick: every entry, typed into the release notebook as a student would, breaks no source rule of any item and puts
no item under review (the source analysis alone, as the grader reads the cells). Slow (``e2e``): every entry graded by
the trusted grader in its sandbox, on the items its cells answer, every one full.
"""

import ast
import json

import pytest

from autograder.checks import items_of
from autograder.engine import notebooks
from autograder.engine.jobs import grade_job_here, job_cells, source_map
from autograder.source_evidence.submitted_source import Submission
from tests.honest.corpus import CORPUS, answers
from tests.proving import ROOT, reference_cells, submission
from tests.source_findings import held_against

ENTRIES = [(topic, name) for topic, entries in CORPUS.items() for name in entries]


def filled(topic, name):
    return submission(topic, answers(topic, name, reference_cells(topic)))


def source_verdicts(topic, name):
    """``{item: [what the source analysis holds against it]}``, only the items with something."""
    return held_against(topic, Submission.from_cells(notebooks.code_cells(filled(topic, name), topic)))


@pytest.mark.quick
def test_the_corpus_covers_every_assignment_and_the_issues_eight():
    assert len(ENTRIES) >= 60 and set(CORPUS) == {t for t, _ in ENTRIES} and len(CORPUS) == 10
    assert sum(name.startswith("issue_") for _, name in ENTRIES) == 8
    for topic, name in ENTRIES:
        assert set(CORPUS[topic][name]) <= set(reference_cells(topic)), (topic, name)


@pytest.mark.quick
@pytest.mark.parametrize("topic", sorted(CORPUS))
def test_no_honest_answer_breaks_a_rule_or_goes_to_review(topic):
    found = {name: source_verdicts(topic, name) for name in CORPUS[topic]}
    assert {name: items for name, items in found.items() if items} == {}


def graded_items(topic, name, reference):
    """The items entry ``name`` can change (those whose answers its cells define), a GPU item left out."""
    defined = {node.name for cell in CORPUS[topic][name] for node in ast.parse(reference[cell]).body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    return [item.id for item in items_of(topic) if set(item.targets) & defined and not item.needs]


@pytest.mark.e2e
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("topic", sorted(CORPUS))
def test_every_honest_answer_gets_full_marks_from_the_grader(topic):
    """Each entry graded as ``grade`` grades a notebook (the trusted grader, its sandboxed worker, hidden variants),
    on the items its cells answer: every one full, none under review."""
    reference = reference_cells(topic)
    source = source_map(ROOT, topic)
    lost = {}
    for name in CORPUS[topic]:
        only = graded_items(topic, name, reference)
        assert only, (topic, name)
        cells = job_cells(json.loads(json.dumps(filled(topic, name))), topic, source)
        data = grade_job_here(topic, cells, seed=3535, sandbox=True, only=only)
        assert sorted(r["item"] for r in data["items"]) == sorted(only), (topic, name)
        lost.update({f"{name}: {r['item']}": (r["status"], r["message"][:300]) for r in data["items"]
                     if r["score"] != r["max_score"] or r["status"] != "passed"})
    assert lost == {}
