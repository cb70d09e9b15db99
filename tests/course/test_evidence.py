"""The evidence table in docs/security.md is the spec's, and no item's points rest on the worker's word alone."""

import pytest

from autograder.course.evidence import DOC, resting_on_the_worker, rows, with_table
from tests.proving import ROOT


@pytest.mark.quick
def test_the_evidence_table_in_the_docs_is_up_to_date():
    text = (ROOT / DOC).read_text(encoding="utf-8")
    assert with_table(text) == text, "run: python -m autograder evidence --write"


@pytest.mark.quick
def test_no_item_rests_on_the_workers_word_alone():
    assert resting_on_the_worker() == []
    assert all(r["evidence"] for r in rows())


@pytest.mark.quick
def test_an_item_with_worker_facts_and_only_data_is_caught(monkeypatch):
    from autograder.course import evidence
    fake = [{"topic": "t", "item": "i", "points": 1.0, "evidence": ["data"], "source": [], "worker_facts": "op counts"}]
    monkeypatch.setattr(evidence, "rows", lambda: fake)
    assert evidence.resting_on_the_worker() == ["t.i"]
    monkeypatch.setattr(evidence, "rows", lambda: [{**fake[0], "facts_only_cost": True}])
    assert evidence.resting_on_the_worker() == []
