"""`check` and the notebook's test cells give the same points: for every topic's reference, second solution and
stub, the test cells' text (hidden tests included, as nbgrader restores them at autograde) executed against the
same objects with the same run seed scores exactly what ``grade_items`` scores. Each mutant is proved the same
way in ``test_proofs.py``: the items it targets fail under ``check`` and score 0 as test cells.

The run seed here (4242) is not the one ``test_proofs.py`` grades on (0), so these gradings also prove that the
reference and the second solution get full marks on another seed: every item passes, a GPU item on a machine
without CUDA excepted (pending, as an official grade leaves it).

Real nbgrader runs the same cells in a kernel: ``tests/course/test_grading.py`` compares its gradebook with
``check`` on the demo course, and ``test_build.py`` proves the cells are the spec's text.
"""

import pytest
import torch

from autograder.checks import items_of
from autograder.engine.results import PASSED, PENDING, grade_items
from tests.checks.test_proofs import TOPICS
from tests.proving import alternative, cell_points, reference, stub

SEED = 4242


def check_results(topic, namespace):
    torch.manual_seed(0)
    return grade_items(topic, namespace, seed=SEED)


def full_marks(topic):
    """``{item id: status}`` of a correct solution in an official grade on this machine."""
    return {item.id: PENDING if item.needs and not torch.cuda.is_available() else PASSED for item in items_of(topic)}


@pytest.fixture(autouse=True)
def grading_run(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_GRADING", "1")
    monkeypatch.setenv("AUTOGRADER_GRADING_SEED", str(SEED))


@pytest.mark.parametrize("solution", [reference, alternative, stub])
@pytest.mark.parametrize("topic", TOPICS)
def test_cells_and_check_agree_on_solutions_and_the_stub(topic, solution):
    namespace = solution(topic)
    results = check_results(topic, namespace)
    assert cell_points(topic, namespace) == {r.item: r.score for r in results}
    if solution is not stub:   # on another seed than test_proofs.py's
        assert {r.item: r.status for r in results} == full_marks(topic), [r.message for r in results if r.score == 0]
