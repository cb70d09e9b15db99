"""The clock starts when the inputs leave the grader: a worker patched to answer ahead of the clock earns nothing.

The attack (issue 35): once the student's cells have run, the worker is the student's process. A cell starts a
thread that walks the main thread's frames (``[sys][0]._current_frames``) up to the worker's object and patches its
class (from a thread, so that nothing ``row_sum`` reaches touches a frame): whatever request reaches the
worker before a timed one (staging its inputs, as the grader once did, or flushing the cache) computes the right
answers with ``torch.sum`` there, outside the clock, and the timed request returns them. With the inputs drawn
inside the timed request (``timing.measure_remote_speedup``), no request before it holds anything to work on.

Graded by the real grader (``nbgrader autograde`` with the sandbox, ``grade_all``) beside its control, the same
visible slicing loop without the patch: the attack scores no more than the control on every item, and
``row_sum_speed`` fails for both. A second test runs the attack in a plain worker and times it directly, so that
what it shows does not depend on the source rules (which may put the item under review for the frame access).
"""

import pytest

from autograder.checks import items_of, operators
from autograder.errors import CheckFailure
from autograder.measuring.timing import expect_speedup
from autograder.settings import override
from tests.adversarial.attacks import REFERENCE, Attack, everything_but, submit
from tests.adversarial.test_attacks import course_with_assignments, expected_grades, grade_once_going_on_after_crashes

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

SLICING_LOOP = '''import torch


def row_sum(x):
    """The sum of x over dimension 0, one slice per row."""
    total = torch.zeros_like(x[0])
    for i in range(x.shape[0]):
        total += x[i]
    return total
'''

ANSWER_AHEAD_OF_THE_CLOCK = '''import sys
import threading
import time

import torch

_answers = {}


def _ahead(original):
    """A request that comes before the timed one: answer every input it holds now, outside the clock."""
    def early(self, *args):
        result = original(self, *args)
        for held in list(getattr(self, "staged", {}).values()):
            _answers["next"] = [torch.sum(inputs[0], dim=0) for inputs in held]
        return result
    return early


def _late(original):
    def timed(self, fn, *args):
        ready = _answers.pop("next", None)
        if ready is not None and getattr(fn, "__name__", "") == "row_sum":
            getattr(self, "staged", {}).clear()
            return ready
        return original(self, fn, *args)
    return timed


def _patch_the_worker():
    """The worker serves requests a few frames up the main thread: find its object and patch its class once."""
    for frame in [sys][0]._current_frames().values():
        while frame is not None and type(frame.f_locals.get("self")).__name__ != "Worker":
            frame = frame.f_back
        if frame is not None:
            worker = type(frame.f_locals["self"])
            for name in ("op_stage", "op_flush"):
                if hasattr(worker, name):
                    setattr(worker, name, _ahead(getattr(worker, name)))
            worker.op_times = _late(worker.op_times)
            return True
    return False


def _watch():
    while not _patch_the_worker():
        time.sleep(0.01)


threading.Thread(target=_watch, daemon=True).start()   # from a thread of its own: row_sum stays a plain loop
'''

# the same loop, after the patch
PATCHED_LOOP = ANSWER_AHEAD_OF_THE_CLOCK + "\n\n" + SLICING_LOOP.replace("import torch\n", "")

SEED = 353535
LIMITS = {"call_timeout_s": 20, "grading": {"cell_timeout_s": 20, "submission_timeout_s": 240}}
DESERVED = everything_but("operators", "row_sum", "row_sum_vectorized", "row_sum_speed")   # the loop fails on 0 rows
CONTROL = Attack("clock_control", "operators", "the slicing loop, nothing else",
                 {"masked_mean": REFERENCE, "row_sum": SLICING_LOOP}, DESERVED)
ATTACK = Attack("clock_attack", "operators", "the slicing loop, the worker patched to answer ahead of the clock",
                {"masked_mean": REFERENCE, "row_sum": PATCHED_LOOP}, DESERVED)


def test_answering_ahead_of_the_clock_scores_no_more_than_the_same_loop_without_it(tmp_path):
    course = course_with_assignments(tmp_path / "course", ["operators"])
    for student in (CONTROL, ATTACK):
        submit(course, student)
    with override(LIMITS):
        records, crashes = grade_once_going_on_after_crashes(course, ["operators"], [CONTROL.name, ATTACK.name],
                                                             SEED)
    assert not crashes, crashes
    control, attack = (records[f"{s.name}/operators"]["grades"] for s in (CONTROL, ATTACK))
    assert control == expected_grades("operators", DESERVED), control
    assert attack["row_sum_speed"][0] == 0 and control["row_sum_speed"][0] == 0, (attack, control)
    more = {item.id: (attack[item.id], control[item.id]) for item in items_of("operators")
            if attack[item.id][0] > control[item.id][0]}
    assert not more, f"the attack scored more than its control: {more}"


def test_the_patched_worker_times_as_slow_as_its_loop(tmp_path):
    from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher

    worker = NotebookWorker([("answer", PATCHED_LOOP)], plain_launcher, str(tmp_path))
    try:
        names = RemoteNamespace(worker)
        with pytest.raises(CheckFailure) as excinfo:     # before issue 35 this attack passed
            expect_speedup("check_row_sum_speed", "row_sum", names["row_sum"], operators.slicing_loop_sum,
                           operators.speed_args("cpu"), what="row_sum")
        assert "not fast enough" in str(excinfo.value) and len(excinfo.value.measurements["ratios"]) == 3
    finally:
        worker.close()
