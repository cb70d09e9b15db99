"""`check` and the notebook's test cells give the same points: for every topic's reference, second solution,
stub and each mutant, the test cells' text (hidden tests included, as nbgrader restores them at autograde)
executed against the same objects with the same run seed scores exactly what ``grade_items`` scores.

Real nbgrader runs the same cells in a kernel: ``tests/course/test_grading.py`` compares its gradebook with
``check`` on the demo course, and ``test_build.py`` proves the cells are the spec's text.
"""

import importlib

import pytest
import torch

from autograder.checks import items_of
from autograder.course import notebooks
from autograder.course.results import grade_items
from tests.checks.test_proofs import MUTANTS, TOPICS
from tests.proving import ROOT, alternative, reference, stub, with_replacements

SEED = 4242


def cell_points(topic, namespace, only=None):
    """``{item id: points}`` from executing each graded test cell of the source notebook, as nbgrader does."""
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    points = {}
    for cell in nb["cells"]:
        if not notebooks.is_graded_test(cell):
            continue
        item_id = notebooks.grade_id(cell).removeprefix("test_")
        if only is not None and item_id not in only:
            continue
        torch.manual_seed(0)
        try:
            exec(notebooks.source_text(cell), dict(namespace))  # noqa: S102 - the kit's own cells
            points[item_id] = cell["metadata"]["nbgrader"]["points"]
        except AssertionError:
            points[item_id] = 0
    return points


def check_points(topic, namespace, only=None):
    torch.manual_seed(0)
    return {r.item: r.score for r in grade_items(topic, namespace, seed=SEED, only=only)}


@pytest.fixture(autouse=True)
def grading_run(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_GRADING", "1")
    monkeypatch.setenv("AUTOGRADER_GRADING_SEED", str(SEED))


@pytest.mark.parametrize("solution", [reference, alternative, stub])
@pytest.mark.parametrize("topic", TOPICS)
def test_cells_and_check_agree_on_solutions_and_the_stub(topic, solution):
    namespace = solution(topic)
    assert cell_points(topic, namespace) == check_points(topic, namespace)


@pytest.mark.parametrize("topic, mistake", MUTANTS, ids=[f"{t}: {m}" for t, m in MUTANTS])
def test_cells_and_check_agree_on_each_mutant(topic, mistake):
    replacements, targets = importlib.import_module(f"tests.mutants.{topic}").MUTANTS[mistake]
    only = {item.id for item in items_of(topic) if item.name in targets}
    namespace = with_replacements(topic, replacements)
    assert cell_points(topic, namespace, only) == check_points(topic, namespace, only)
