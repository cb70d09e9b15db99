"""The ``amp`` speed measurement on CUDA: the tutorial's model, the grader's float32 loop, a pinned baseline,
and a count of the host synchronisations a loop makes per batch.

The baseline is float32 at full IEEE precision: with TF32 on, an Ampere or later
GPU runs "float32" matmuls on tensor cores and the comparison would measure TF32
against float16, not float32. The user's setting is restored afterwards, through
the same API it was made with (PyTorch refuses to mix the legacy ``allow_tf32``
flags with the newer ``fp32_precision`` ones).

A loop that calls ``loss.item()`` every batch makes the CPU wait for the GPU every batch;
with ``torch.cuda.set_sync_debug_mode("warn")`` every such wait is a warning, so the
number of waits can be counted without a clock, and compared with the grader's own
loop (``GradScaler.step`` itself waits once per step, to see whether the gradients
overflowed).

With trusted grading ``train_amp`` lives in the student's worker: its host syncs are counted
there (:func:`student_host_syncs`, run beside it; a count reported by the student's process,
so forgeable), and for the timing its run is built there (:class:`TimedRun`) while the
float32 baseline (:func:`float32_timed_baseline`) runs in a clean worker, both timed by the
grader's clock (``timing.measure_remote_speedup``), and the grader's own float16 + GradScaler
loop (``autograder/oracles/speed.py``) is timed beside them in the clean worker: the threshold is a
fraction of its speedup, measured in the same run. Every timed call trains from the model's start on batches drawn
from the call's own seed inside the clock and returns a record of its run (:func:`timed_record`), which the grader
judges against its float32 loop's on the same batches (``timed_judge``): a fast wrong answer loses the item. On an
H200 the CUDA paths ran (issue 34); the larger timed problem (:data:`TIMED_BATCH`) and the judged records have not
yet run on a GPU.
"""


import torch

from autograder.checks.amp.probes.timed_runs import (CALL_SEED, SYNC_BATCHES, TIMED_BATCH, TIMED_LAYERS, TIMED_WIDTH,
                                                     TUTORIAL_BATCH, TUTORIAL_WIDTH, TimedRun, float32_timed_baseline,
                                                     full_float32_precision, host_syncs, student_host_syncs,
                                                     sync_problem)
from autograder.checks.amp.problems import mse
from autograder.checks.amp.timed_judge import TIMED_BATCHES, judge_timed_runs
from autograder.errors import CheckFailure
from autograder.measuring.timing import expect_speedup
from autograder.seam.handle import handle


def tutorial_batches(gen, device="cuda", width=TUTORIAL_WIDTH, batch=TUTORIAL_BATCH, count=TIMED_BATCHES):
    return [(torch.randn(batch, width, generator=gen).to(device), torch.randn(batch, width, generator=gen).to(device))
            for _ in range(count)]


def float16_loop(model, batches, optimizer, loss_fn, device_type):
    """The grader's own float16 loop with a GradScaler: how many host syncs a loop needs (one per step)."""
    scaler = torch.amp.GradScaler(device_type)
    losses = []
    for inputs, targets in batches:
        with torch.autocast(device_type, dtype=torch.float16):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss).backward()
        losses.append(loss.detach())
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    return torch.stack(losses).tolist() if losses else []


def expect_no_sync_per_batch(check, train_amp, device="cuda", *, seed=0):
    """On CUDA, ``train_amp`` (float16) waits for the GPU no more often per batch than the grader's own loop.

    Counted for 4 and 8 batches of the small checks' model after a warm-up batch; the
    growth from 4 to 8 is what each batch costs. Returns ``{"yours": {4: n, 8: m}, "grader": {...}}``.
    """
    __tracebackhide__ = True
    counts = {"yours": {}, "grader": {}}
    for count in (1,) + SYNC_BATCHES:        # 1: warm-up (lazy initialisation is not a per-batch cost)
        answer = handle(train_amp).beside(student_host_syncs, check, device, seed, count)
        if answer.get("failure"):
            detail, hint, *kind = answer["failure"]
            raise CheckFailure(check, str(detail), hint=hint, kind=str(kind[0]) if kind else None)
        yours = answer.get("syncs")
        if type(yours) is not int:
            raise CheckFailure(check, "the count of host syncs that came back from your notebook's process is "
                                      "malformed.")
        model, batches, opt = sync_problem(seed, count, device)
        grader = host_syncs(lambda: float16_loop(model, batches, opt, mse, device))
        if count in SYNC_BATCHES:
            counts["yours"][count], counts["grader"][count] = yours, grader
    (small, large), extra = SYNC_BATCHES, _extra_syncs(counts)
    if extra > 0:
        yours, grader = counts["yours"], counts["grader"]
        raise CheckFailure(check, f"train_amp made the CPU wait for the GPU {yours[small]} times over {small} "
                                  f"batches and {yours[large]} times over {large}: {extra / (large - small):g} "
                                  f"more wait(s) per batch than needed (the grader's own float16 loop waits "
                                  f"{grader[small]} and {grader[large]} times: GradScaler.step checks once per "
                                  f"step whether the gradients overflowed). Each wait stalls the GPU's queue.",
                           hint="Keep each batch's loss as a tensor (`losses.append(loss.detach())`) and convert "
                                "them once, at the end: `return torch.stack(losses).tolist()`. `loss.item()`, "
                                "`float(loss)` or `print(loss)` every batch waits for that batch to finish.",
                           measurements={"host_syncs": counts})
    return counts


def _extra_syncs(counts):
    """Host syncs the student's loop adds between the small and the large count, beyond the grader's loop."""
    small, large = SYNC_BATCHES
    return (counts["yours"][large] - counts["yours"][small]) - (counts["grader"][large] - counts["grader"][small])


def expect_faster_than_float32(check, train_amp, device, *, seed=0, width=TIMED_WIDTH):
    """Time ``train_amp`` (float16) against :func:`float32_loop` on the timed problem (:func:`timed_model`,
    :func:`timed_batches`), TF32 off for the baseline, with the grader's float16 + GradScaler loop
    (``autograder/oracles/speed.py``) timed beside them to calibrate the threshold
    (``settings.speed.thresholds["amp"]``), every timed call's record judged (``timed_judge``); return the
    :class:`SpeedResult`, its note naming the baseline's precision."""
    __tracebackhide__ = True
    # the run is built beside train_amp (in its worker under trusted grading), the float32 baseline by itself (in a
    # clean worker there); in one process both run here, on the same model drawn from the seed
    candidate, baseline = handle(train_amp).beside(TimedRun, device, seed, width), float32_timed_baseline
    # each call's batches are drawn from its own seed (position 0) inside the clock, on every side
    args = (CALL_SEED, seed, width, TIMED_LAYERS, TIMED_BATCH, str(torch.device(device)))
    with full_float32_precision() as precision:
        try:
            result = expect_speedup(check, "amp", candidate, baseline, args, device=device,
                                    what="train_amp with float16", reference="speed.amp_float16",
                                    seeded=(0,), judge=judge_timed_runs,
                                    hint="Use float16 autocast for the forward pass; keep the loop free of "
                                         "host synchronisations (no .item() per batch) and extra copies.")
        except CheckFailure as failure:
            failure.measurements["baseline_precision"] = precision
            raise
    result.note = (result.note + " " if result.note else "") + f"baseline: {precision}."
    return result


# ------------------------------------------------------------------ timed across processes (trusted grading)


