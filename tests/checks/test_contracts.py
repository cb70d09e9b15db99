"""Every exercise's contract is declared clause by clause, and every clause is tested (``autograder.contracts``).

For each topic with ``autograder/checks/<topic>/contract.py``: each exercise (solution cell) has a contract; each
clause names existing items of its topic and the input cases that test it; and grading the reference once, with the
checks recording what they send, shows that each case a clause names is sent by one of its items and that each of
its items sends one of them. A label named in a clause that no check sends fails here: that is what ties the
notebook's sentence to a test input. (The notebook's text is written from the contracts by ``build``;
``tests/course/test_build.py`` fails on drift.)
"""

import re

import pytest
import torch

from autograder import contracts
from autograder.checks import items_of
from autograder.commands.build import apply_contracts, contracts_of, topics, write_contract_tables
from autograder.engine import notebooks
from autograder.engine.results import grade_items
from tests.proving import ROOT, reference

TOPICS = [topic for topic in topics(ROOT) if contracts_of(topic) is not None]
LABEL = re.compile(r"[a-z0-9]+(_[a-z0-9]+)*")


def _solution_cells(topic):
    return [notebooks.grade_id(cell) for cell in notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")["cells"]
            if cell.get("cell_type") == "code" and notebooks.is_solution(cell)]


def _needed(labels):
    """The labels this machine can exercise: a ``*_cuda`` label needs a GPU."""
    return [label for label in labels
            if not label.endswith(contracts.CUDA_SUFFIX) or torch.cuda.is_available()]


@pytest.mark.quick
@pytest.mark.parametrize("topic", TOPICS)
def test_every_exercise_has_one_contract(topic):
    declared = [contract.exercise for contract in contracts_of(topic)]
    assert sorted(declared) == sorted(set(declared)), f"{topic}: an exercise has two contracts"
    assert set(declared) == set(_solution_cells(topic))


@pytest.mark.quick
@pytest.mark.parametrize("topic", TOPICS)
def test_every_clause_names_items_of_its_topic_and_inputs(topic):
    ids = {item.id for item in items_of(topic)}
    for contract in contracts_of(topic):
        assert contract.clauses, f"{contract.exercise}: a contract with no clause"
        for clause in contract.clauses:
            assert clause.text.strip() and "\n\n" not in clause.text, clause
            assert clause.items and set(clause.items) <= ids, f"{contract.exercise}: {clause.text!r} names " \
                                                               f"{clause.items}, not items of {topic} ({sorted(ids)})"
            assert clause.inputs and all(LABEL.fullmatch(label) for label in clause.inputs), clause


@pytest.fixture(scope="module")
def sent():
    """``{topic: {(item id, label)}}``: what the checks send while grading each topic's reference once (seed 0)."""
    found = {}
    for topic in TOPICS:
        torch.manual_seed(0)
        with contracts.recording() as recorded:
            results = grade_items(topic, reference(topic), seed=0)
        assert all(r.passed for r in results), [(r.check, r.message) for r in results if not r.passed]
        found[topic] = set(recorded)
    return found


def untested(declared, sent):
    """What ties no clause of ``declared`` to a test input: a label that none of its items sends, or an item that
    sends none of its labels (``sent``: the ``(item, label)`` pairs recorded)."""
    problems = []
    for contract in declared:
        for clause in contract.clauses:
            labels = _needed(clause.inputs)
            problems += [f"{contract.exercise}: no item of {clause.items} sends {label!r} for {clause.text!r}"
                         for label in labels if not any((item, label) in sent for item in clause.items)]
            problems += [f"{contract.exercise}: {item} sends none of {labels} for {clause.text!r}"
                         for item in clause.items if labels and not any((item, l) in sent for l in labels)]
    return problems


@pytest.mark.parametrize("topic", TOPICS)
def test_every_clause_is_tested_by_its_items(topic, sent):
    problems = untested(contracts_of(topic), sent[topic])
    assert not problems, "\n".join(problems)


def test_a_clause_whose_input_is_never_sent_is_caught(sent):
    """The link is only as honest as this: a label no item sends, or an item that sends none of the labels, fails."""
    topic = TOPICS[0]
    item = sorted(sent[topic])[0][0]
    label = next(l for i, l in sorted(sent[topic]) if i == item)
    fine = contracts.Contract("f", (contracts.Clause("sent.", (item,), (label,)),))
    assert untested([fine], sent[topic]) == []
    unsent = contracts.Contract("f", (contracts.Clause("never sent.", (item,), (label, "never_sent")),))
    assert untested([unsent], sent[topic]) == [f"f: no item of ('{item}',) sends 'never_sent' for 'never sent.'"]
    other = next(i for i, _ in sorted(sent[topic]) if (i, label) not in sent[topic])
    idle = contracts.Contract("f", (contracts.Clause("idle.", (item, other), (label,)),))
    assert untested([idle], sent[topic]) == [f"f: {other} sends none of ['{label}'] for 'idle.'"]


@pytest.mark.quick
def test_exercised_records_only_inside_recording():
    from autograder.spec import _CURRENT

    token = _CURRENT.set("check_some_item")
    try:
        contracts.exercised("outside")
        with contracts.recording() as recorded:
            contracts.exercised("nan_rows", "zero_rows")
            contracts.exercised_as(lambda x: {f"rank_{x.dim()}"}, torch.zeros(2, 3))
        contracts.exercised_as(pytest.fail, "describe runs only while recording")
    finally:
        _CURRENT.reset(token)
    assert recorded == {("some_item", "nan_rows"), ("some_item", "zero_rows"), ("some_item", "rank_2")}


@pytest.mark.quick
def test_build_writes_the_list_and_names_a_missing_marker():
    topic = TOPICS[0]
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    first = contracts_of(topic)[0]
    begin = contracts.BEGIN.format(exercise=first.exercise)
    cell = next(c for c in nb["cells"] if begin in notebooks.source_text(c))
    text = notebooks.source_text(cell)
    cell["source"] = notebooks.lines(contracts.between(text, begin, contracts.END, "- an edited bullet"))
    apply_contracts(nb, topic)
    assert notebooks.source_text(cell) == text and first.markdown() in text
    cell["source"] = notebooks.lines(text.replace(begin, ""))
    with pytest.raises(ValueError) as excinfo:
        apply_contracts(nb, topic)
    assert begin in str(excinfo.value)


@pytest.mark.quick
def test_build_writes_the_docs_table_and_check_finds_it_stale(tmp_path):
    topic = TOPICS[0]
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / f"{topic}.md"
    committed = (ROOT / "docs" / f"{topic}.md").read_text(encoding="utf-8")
    assert write_contract_tables(ROOT, [topic], check=True) == []
    doc.write_text(committed.replace(contracts.TABLE_BEGIN, contracts.TABLE_BEGIN + "\n| a stale row |"),
                   encoding="utf-8")
    assert write_contract_tables(tmp_path, [topic], check=True) == [f"docs/{topic}.md: contract table differs from "
                                                                     "the spec"]
    assert write_contract_tables(tmp_path, [topic]) and doc.read_text(encoding="utf-8") == committed
    doc.write_text(committed.replace(contracts.TABLE_END, ""), encoding="utf-8")
    assert "no contract table" in write_contract_tables(tmp_path, [topic], check=True)[0]


@pytest.mark.quick
def test_the_markdown_wraps_each_clause_as_one_bullet():
    contract = contracts.Contract("f", (contracts.Clause("word " * 40 + "`a | b`;", ("f",), ("x",)),
                                        contracts.Clause("short.", ("f",), ("x",))))
    lines = contract.markdown().split("\n")
    assert lines[0].startswith("- ") and all(line.startswith("  ") for line in lines[1:-1])
    assert lines[-1] == "- short." and max(map(len, lines)) <= contracts.WIDTH
    assert "`a \\| b`" in contracts.table([contract])
    # a wrap that would put "-" or "1." first on a line starts a new list in Markdown: the build wraps narrower
    assert contracts.bullet("aaaa " * 5 + "- b c", 26) == "- aaaa aaaa aaaa aaaa\n  aaaa - b c"
