"""Each item on a clean process state (autograder/seam/process_state.py): a student function that leaves torch's
process-wide state changed loses its own items, with a message that says what it changed, and no other item; and
what a student reads names their own objects' types, never the worker's proxies."""

import pytest
import torch

from autograder.checks import items_of
from autograder.engine.results import FAILED, PASSED, grade_item
from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
from autograder.errors import CheckFailure
from autograder.seam.student import call_student
from tests.mistakes.grammar import slips
from tests.proving import with_replacements


def predict_switching_grad_off(model, x):
    torch.set_grad_enabled(False)       # called, not a `with` block: off for every later call
    return model(x)


def double_default(model, x):
    torch.set_default_dtype(torch.float64)
    return model(x)


@pytest.mark.quick
@pytest.mark.parametrize("fn, words", [(predict_switching_grad_off, "autograd switched off"),
                                       (double_default, "the default dtype set to torch.float64")])
def test_a_call_that_leaves_the_state_changed_fails_and_the_state_is_put_back(fn, words):
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3)
    with pytest.raises(CheckFailure) as failed:
        call_student("check_predict_no_graph", fn, model, x, what="predict")
    assert words in failed.value.detail and "predict left the process's state changed" in failed.value.detail
    assert not slips(str(failed.value))
    assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32


@pytest.mark.quick
def test_a_no_grad_block_is_no_change():
    def predict(model, x):
        with torch.no_grad():
            return model(x)

    assert not call_student("check_predict_no_graph", predict, torch.nn.Linear(3, 2), torch.randn(4, 3)).requires_grad


def test_grad_switched_off_in_predict_costs_predicts_items_only():
    """The issue's case, graded with predict's item first: the items after it (saved_bytes, checkpointing,
    residual_relu) are graded on autograd switched on again, and pass."""
    namespace = with_replacements("memory", {"predict": predict_switching_grad_off})
    items = sorted(items_of("memory"), key=lambda item: not item.id.startswith("predict"))
    results = {}
    for item in items:
        torch.manual_seed(0)
        results[item.id] = grade_item(item, namespace, seed=0, hidden=True)
    failed = {i: r for i, r in results.items() if r.status == FAILED}
    assert set(failed) == {"predict_no_graph"}, {i: r.message for i, r in failed.items()}
    assert "autograd switched off" in failed["predict_no_graph"].message
    assert all(r.status == PASSED for i, r in results.items() if i != "predict_no_graph")


def test_in_a_worker_the_state_is_put_back_and_the_call_told(tmp_path):
    """Under trusted grading the worker puts its defaults back before every call and tells the call that changed
    them; a returned object's type is the student's in a message, never the proxy's."""
    cell = ("import torch\n"
            "def predict(model_size):\n"
            "    torch.set_grad_enabled(False)\n"
            "    return model_size\n"
            "def grad_is_on():\n"
            "    return torch.is_grad_enabled()\n"
            "class Row:\n"
            "    key = 'aten::mm'\n"
            "def top_row():\n"
            "    return Row()\n")
    worker = NotebookWorker([("cell", cell)], plain_launcher, str(tmp_path))
    try:
        names = RemoteNamespace(worker)
        with pytest.raises(CheckFailure) as failed:
            call_student("check_predict_no_graph", names["predict"], 3, what="predict")
        assert "predict left the process's state changed" in failed.value.detail
        assert "autograd switched off" in failed.value.detail
        assert names["grad_is_on"]() is True
        row = call_student("check_top_op", names["top_row"], what="most_expensive_op")
        assert type(row).__name__ == "Row" and row.__class__.__name__ == "Row"
        assert row.key == "aten::mm"
    finally:
        worker.close()
