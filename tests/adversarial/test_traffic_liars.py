"""The distributed items once decided by the worker's own counts, graded with the counts forged, in the sandbox.

``accumulate_no_sync`` (``no_sync`` around the backward only: DDP all-reduces every micro-batch) and
``average_calls`` (the parameters all-reduced as well) are wrong in what the ranks send, not in the parameters that
come back. The all-reduce counts come from the student's process (a communication hook, a ``TorchFunctionMode``),
and a cell that rewrites them (``FORGED_COUNTS``) makes them say one all-reduce a step. The grader also counts what
the ranks sent on the sandbox's own network, from outside the worker (``checks/distributed/traffic.py``): so each
wrong answer with forged counts scores no more than its control (the same answer, nothing forged), even judged by
the verdict an instructor's acceptance of the review would give (rewriting the grader's module puts the items under
review); the reference, and the second solution, keep full marks with and without the forging cell.

Graded by the trusted runner (``grade_cells``) with the real sandbox; where the worker has no network of its own
(``plain_launcher``, as in the fallback sandbox) the counts decide, and the forged ones keep the point: that gap is
written down in docs/security.md and asserted here, so that the test says when it closes.
"""

import dataclasses
import inspect
from pathlib import Path

import pytest

from autograder.engine.results import PASSED, UNDER_REVIEW
from autograder.engine.trusted_runner import grade_cells, plain_launcher, sandbox_launcher
from autograder.sandbox import bubblewrap as sandbox
from tests.mutants import distributed as mutants
from tests.proving import ROOT

pytestmark = [pytest.mark.e2e]

SEED = 3
ITEMS = {"accumulate_no_sync", "average_calls"}
REFERENCE = (ROOT / "solutions" / "distributed.py").read_text(encoding="utf-8")
ALTERNATIVE = (ROOT / "tests" / "alternatives" / "distributed.py").read_text(encoding="utf-8")

# The counts rewritten from a cell: every optimizer step reports one all-reduce (DDP's hook), and every call of
# average_gradients one all_reduce of the gradients (the TorchFunctionMode).
FORGED_COUNTS = '''
import autograder.checks.distributed.probes as _ranks

_honest_after_step = _ranks.StepRecorder._after_step


def _after_step(self, optimizer, args, kwargs):
    _honest_after_step(self, optimizer, args, kwargs)
    self.steps[-1]["allreduces"] = 1


_honest_torch_function = _ranks.AllReduceCount.__torch_function__


def _torch_function(self, func, types, args=(), kwargs=None):
    out = _honest_torch_function(self, func, types, args, kwargs)
    self.calls, self.reduced = 1, {"gradients"}
    return out


_ranks.StepRecorder._after_step = _after_step
_ranks.AllReduceCount.__torch_function__ = _torch_function
'''

BACKWARD_ONLY = (inspect.getsource(mutants._accumulating)
                 + "\n\ntrain_accumulate = _accumulating(no_sync='backward')\n")
PARAMS_TOO = inspect.getsource(mutants.average_params_too).replace("def average_params_too", "def average_gradients")


def _without(text, *names):
    """``text`` without the top-level ``def`` of each of ``names`` (up to the next top-level statement)."""
    lines, out, skipping = text.splitlines(), [], False
    for line in lines:
        if line.startswith("def ") and line[4:].split("(")[0] in names:
            skipping = True
        elif skipping and line and not line[0].isspace() and not line.startswith("#"):
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


def _cells(*texts):
    return [(f"cell-{k}", text) for k, text in enumerate(texts) if text]


def _as_accepted(result):
    """The verdict an instructor's acceptance of the review would give (the item's own check's verdict)."""
    verdict = result.evidence.get("review", {}).get("on_accept") if result.status == UNDER_REVIEW else None
    if verdict is None:
        return result
    return dataclasses.replace(result, status=verdict["status"], score=verdict["score"], message=verdict["message"])


def _grade(cells, launcher=sandbox_launcher):
    grade = grade_cells("distributed", cells, seed=SEED, launcher=launcher, only=ITEMS)
    return {r.item: _as_accepted(r) for r in grade.items}


@pytest.fixture(scope="module")
def sandboxed():
    try:
        sandbox.probe()
    except sandbox.SandboxUnavailable as why:
        pytest.skip(f"no sandbox here: {why}")


WRONG = {"accumulate_no_sync": _without(REFERENCE, "train_accumulate") + "\n" + BACKWARD_ONLY,
         "average_calls": _without(REFERENCE, "average_gradients") + "\n" + PARAMS_TOO}


@pytest.mark.parametrize("item", sorted(ITEMS))
def test_forged_counts_score_no_more_than_the_control(sandboxed, item):
    control = _grade(_cells(WRONG[item]))[item]
    forged = _grade(_cells(WRONG[item], FORGED_COUNTS))[item]
    assert control.status != PASSED, control.message
    assert forged.status != PASSED and forged.score <= control.score, forged.message
    # the forged counts said one all-reduce a step; what the grader counted on the network decided
    assert "to each other (counted by the grader" in forged.message, forged.message
    assert forged.measurements["loopback_bytes"] > forged.measurements["allowed_bytes"]


@pytest.mark.parametrize("answer", ["reference", "alternative"])
def test_correct_answers_keep_full_marks_with_and_without_the_forging_cell(sandboxed, answer):
    text = REFERENCE if answer == "reference" else ALTERNATIVE
    for cells in (_cells(text), _cells(text, FORGED_COUNTS)):
        results = _grade(cells)
        assert {i: r.status for i, r in results.items()} == dict.fromkeys(ITEMS, PASSED), \
            {i: r.message for i, r in results.items()}


def test_without_a_network_of_its_own_the_forged_counts_still_decide():
    """The worker started without a sandbox shares the grader's network: no traffic is read, the counts decide,
    and forged ones win the item (docs/security.md, "Three items whose facts still decide a mistake")."""
    forged = _grade(_cells(WRONG["average_calls"], FORGED_COUNTS), launcher=plain_launcher)["average_calls"]
    assert forged.status == PASSED, forged.message
    assert "loopback_bytes" not in forged.measurements
