"""The evidence table in docs/security.md is the spec's, and no item's points can rest on the worker's word."""

import pytest

from autograder.commands.evidence import DOC, resting_on_the_worker, rows, with_table
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
    from autograder.commands import evidence
    fake = [{"topic": "t", "item": "i", "points": 1.0, "evidence": ["data"], "source": [], "worker_facts": "op counts"}]
    monkeypatch.setattr(evidence, "rows", lambda: fake)
    assert evidence.resting_on_the_worker() == ["t.i"]
    monkeypatch.setattr(evidence, "rows", lambda: [{**fake[0], "facts_only_cost": True}])
    assert evidence.resting_on_the_worker() == []


@pytest.mark.quick
def test_source_rules_beside_the_facts_are_not_enough(monkeypatch):
    """``predict_no_graph`` once had a source rule (``uses no_grad``) and earned its points on the worker's "no
    graph" for a dead ``no_grad`` block: an item whose facts are not declared to only cost is caught whatever else
    it has, and ``evidence --check`` fails on it."""
    from autograder.commands import evidence
    fake = [{"topic": "memory", "item": "predict_no_graph", "points": 2.0, "evidence": ["data", "source"],
             "source": ["`predict` uses `torch.no_grad`"], "worker_facts": "whether the result requires grad"}]
    monkeypatch.setattr(evidence, "rows", lambda: fake)
    assert evidence.resting_on_the_worker() == ["memory.predict_no_graph"]
    monkeypatch.setattr(evidence, "with_table", lambda text: text)
    assert evidence.run(ROOT, check=True) == 1


@pytest.mark.quick
def test_the_command_passes_on_the_course():
    from autograder.commands import evidence
    assert evidence.run(ROOT, check=True) == 0
