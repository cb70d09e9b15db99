"""`check` and the notebook's test cells give the same points: for every topic's reference, second solution and
stub, the test cells' text (hidden tests included, as nbgrader restores them at autograde) executed against the
same objects with the same run seed scores exactly what ``grade_items`` scores. Each mutant is proved the same
way in ``test_proofs.py``: the items it targets fail under ``check`` and score 0 as test cells.

Real nbgrader runs the same cells in a kernel: ``tests/course/test_grading.py`` compares its gradebook with
``check`` on the demo course, and ``test_build.py`` proves the cells are the spec's text.
"""

import pytest
import torch

from autograder.engine.results import grade_items
from tests.checks.test_proofs import TOPICS
from tests.proving import alternative, cell_points, reference, stub

SEED = 4242


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
