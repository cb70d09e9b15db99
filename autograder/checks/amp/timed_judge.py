"""The verdict on what every timed call of ``train_amp`` returned, judged in the grader.

Each timed call trains the timed problem's model from the same start on batches drawn from the call's own seed inside
the grader's clock (``speed.TimedRun``), and sends back a record (``speed.timed_record``): the losses, and for each
parameter the projection of its step on its starting values with that projection's scale. The grader's float32 loop
(``speed.float32_timed_baseline``, in a clean worker) trains the same batches from the same start, and the two records
must agree within what float16 autocast changes: a loop that returns made-up losses, or skips the backward pass or the
optimizer's step to run faster, loses the speed item however fast it ran.

The tolerances, measured on the CPU (tests/checks/test_amp_timed.py) on the timed model at smaller sizes (the error
shrinks as the model grows): float16 autocast moved a loss by at most 4e-5 of itself, and a step's projection (which
SGD on this loss makes mostly a shrinking of the weights, so of the order of its scale or larger) by 5% of its size
at width 32 (a bias), under 5% at 64 and 0.3% at 128; the tests check the tolerances with a margin of 2 at widths 64
and 256. A loop that skips its steps leaves projections and scales at 0; one that trains other batches, or replays
an earlier call's answer, misses the losses.
"""

import math

import torch

from autograder.errors import CheckFailure

TIMED_BATCHES = 8          # batches per timed call of the training loop (speed.TimedRun): its record's first values

LOSS_RTOL = 1e-3           # a loss within this share of the float32 loop's
STEP_RTOL = 0.1            # a step's projection and scale within this share of their size (projection: + scale)


def _parameter(index):
    layer, kind = divmod(index, 2)
    return f"layer {layer + 1}'s {'bias' if kind else 'weight'}"


def timed_run_problem(got, expected):
    """What is wrong with the record ``got`` of one timed call against the grader's own ``expected`` on the same
    batches (``speed.timed_record``), in words; ``None`` when it agrees."""
    if type(got) is not torch.Tensor or got.shape != expected.shape or got.dtype != expected.dtype:
        return "did not return a record of the run"
    losses, expected_losses = got[:TIMED_BATCHES].tolist(), expected[:TIMED_BATCHES].tolist()
    if not all(math.isfinite(v) for v in losses):
        return f"did not return {TIMED_BATCHES} finite losses, one per batch"
    for b, (mine, theirs) in enumerate(zip(losses, expected_losses)):
        if abs(mine - theirs) > LOSS_RTOL * abs(theirs) + 1e-6:
            return (f"returned {mine:.6g} as the loss of batch {b + 1}, where the grader's float32 loop got "
                    f"{theirs:.6g} on the same batch")
    count = (got.numel() - TIMED_BATCHES) // 2
    steps, expected_steps = got[TIMED_BATCHES:TIMED_BATCHES + count], expected[TIMED_BATCHES:TIMED_BATCHES + count]
    scales, my_scales = expected[TIMED_BATCHES + count:], got[TIMED_BATCHES + count:]
    for i in range(count):
        mine, theirs, scale, my_scale = (float(v[i]) for v in (steps, expected_steps, scales, my_scales))
        off = abs(mine - theirs) > STEP_RTOL * (abs(theirs) + scale) or abs(my_scale - scale) > STEP_RTOL * scale
        if off or not (math.isfinite(mine) and math.isfinite(my_scale)):
            return (f"left the model's parameters where training on those batches does not take them: the step of "
                    f"{_parameter(i)}, measured along its starting values, was {mine:.3g} (spread {my_scale:.3g}), "
                    f"the grader's float32 loop's {theirs:.3g} ({scale:.3g})")
    return None


def judge_timed_runs(check, pairs, what):
    """Every ``(timed call, the student's record, the grader's on the same batches)`` agrees, or the speed item fails
    with what differed."""
    __tracebackhide__ = True
    for k, got, expected in pairs:
        problem = timed_run_problem(got, expected)
        if problem:
            raise CheckFailure(check, f"while being timed, {what} {problem} (timed call {k + 1}, on fresh batches): "
                                      "every timed result must be right too, however fast.",
                               hint="Train on the batches you are given: forward under autocast, a scaled backward, "
                                    "and a GradScaler step per batch; return every batch's loss.",
                               kind="wrong value")
