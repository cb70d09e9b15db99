"""What ``check_loss_scaling`` and ``check_scaler_across_calls`` expect of a recorded float16 loop.

The loss is multiplied by the scaler's scale before backward (the recorder sees the gradient
that reaches the loss: ``scale / accumulate``); the optimizer sees unscaled gradients; an
overflowing step is skipped and the scale backs off; and a scaler handed to ``train_amp``
is the one used, so that its scale and growth tracker carry over from one call (one epoch)
to the next.
"""

import torch

from autograder.checks.amp import problems
from autograder.errors import CheckFailure

# Relative error (over all parameters) between the gradients a loop holds at optimizer.step() and the
# grader's own autocast gradients: the same computation, up to rounding of the loss / accumulate (the
# reference stays below 2e-4; forgetting to divide by accumulate = k gives k - 1).
GRAD_TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 2e-2}

SCALER_HINT = ("With float16, create `scaler = torch.amp.GradScaler(device_type)` (default settings) when none is "
               "given, call `scaler.scale(loss).backward()`, then `scaler.step(optimizer)` and `scaler.update()` "
               "once per effective batch.")


def loss_multiplier(check, rec, batch, case):
    __tracebackhide__ = True
    losses = rec.losses_of_batch(batch)
    if len(losses) != 1 or losses[0].grad is None:
        raise CheckFailure(check, f"batch {batch}: expected one loss_fn call and one backward through it, got "
                                  f"{len(losses)} call(s).\nCase: {case}", hint=SCALER_HINT)
    return losses[0].grad


def expect_scaled_loss(check, rec, batch, case):
    __tracebackhide__ = True
    multiplier = loss_multiplier(check, rec, batch, case)
    if not multiplier >= 2:
        raise CheckFailure(check, f"batch {batch}: the gradient that reached the loss in backward was "
                                  f"{multiplier:g}, so the loss was not scaled: small float16 gradients "
                                  f"underflow to zero.\nCase: {case}", hint=SCALER_HINT)


def only_step_of(check, rec, batch, case, what):
    __tracebackhide__ = True
    steps = rec.steps_during_batch(batch)
    if len(steps) != 1:
        raise CheckFailure(check, f"batch {batch} ({what}): expected one optimizer step after it, got "
                                  f"{len(steps)}.\nCase: {case}", hint=SCALER_HINT)
    return steps[0]


def expect_unscaled_step(check, rec, model, batches, batch, dtype, case):
    __tracebackhide__ = True
    step = only_step_of(check, rec, batch, case, "an ordinary batch")
    if any(g is None for g in step.grads):
        raise CheckFailure(check, f"batch {batch}: some parameters had no gradient at optimizer.step().\n"
                                  f"Case: {case}", hint="Call backward before stepping.")
    if not all(torch.isfinite(g).all() for g in step.grads):
        raise CheckFailure(check, f"batch {batch}: the gradients at optimizer.step() hold inf or NaN.\n"
                                  f"Case: {case}", hint=SCALER_HINT)
    mismatch = problems.gradient_mismatch(step, model, [batches[batch]], rec.device_type, dtype,
                                          GRAD_TOLERANCE[dtype])
    if mismatch:
        error, ratio = mismatch
        raise CheckFailure(check, f"batch {batch}: at optimizer.step() the gradients were {ratio:.4g} times "
                                  f"the true ones (relative error {error:.2g}); the optimizer must see "
                                  f"unscaled gradients.\nCase: {case}",
                           hint="Step with `scaler.step(optimizer)`, which unscales the gradients first "
                                "(never `optimizer.step()` directly), and unscale only once.")


def expect_skipped_overflow(check, rec, bad, case):
    __tracebackhide__ = True
    if rec.steps_during_batch(bad):
        raise CheckFailure(check, f"batch {bad}: its gradients overflowed float16 (inf/NaN), but the optimizer "
                                  f"stepped anyway.\nCase: {case}",
                           hint="`scaler.step(optimizer)` skips the step when the gradients hold inf or NaN; "
                                "`optimizer.step()` does not.")
    if len(rec.forwards) <= bad + 1:
        raise CheckFailure(check, f"training stopped at batch {bad}, the overflowing batch.\nCase: {case}",
                           hint="Go on with the next batch: the scaler recovers by itself.")
    before, after = rec.forwards[bad].params, rec.forwards[bad + 1].params
    if not all(torch.equal(a, b) for a, b in zip(before, after)):
        raise CheckFailure(check, f"batch {bad}: its gradients overflowed, yet the parameters changed.\n"
                                  f"Case: {case}", hint=SCALER_HINT)
    scale_at_overflow = loss_multiplier(check, rec, bad, case)
    scale_after = loss_multiplier(check, rec, bad + 1, case)
    if not scale_after < scale_at_overflow:
        raise CheckFailure(check, f"after the overflow at batch {bad} the loss scale did not go down "
                                  f"({scale_at_overflow:g} then {scale_after:g}).\nCase: {case}",
                           hint="Call `scaler.update()` after `scaler.step(optimizer)`: it halves the scale "
                                "after an overflow.")
    final = rec.steps[-1].params_after if rec.steps else []
    if not all(torch.isfinite(p).all() for p in final):
        raise CheckFailure(check, f"after training the parameters hold inf or NaN.\nCase: {case}", hint=SCALER_HINT)


# ------------------------------------------------------------------ a scaler handed to train_amp

GIVEN_GROWTH_INTERVAL = 2     # the scaler a check hands over grows after 2 clean steps: two short calls see it move
GIVEN_HINT = ("Use the scaler you are given, and make one only when none is: `if scaler is None: scaler = "
              "torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)`. One scaler for the whole run "
              "keeps the scale it has learned from one epoch to the next.")


def scale_schedule(init_scale, growth_interval, overflows):
    """GradScaler's rule, step by step: ``(scale used by each step, (scale, growth tracker) after the last)``.

    An overflowing step halves the scale and resets the tracker; ``growth_interval`` clean
    steps in a row double it (``torch.amp.GradScaler`` defaults for the factors).
    """
    scale, tracker, used = float(init_scale), 0, []
    for overflow in overflows:
        used.append(scale)
        if overflow:
            scale, tracker = scale * 0.5, 0
        else:
            tracker += 1
            if tracker == growth_interval:
                scale, tracker = scale * 2.0, 0
    return used, (scale, tracker)


def expect_given_scaler_used(check, rec, state, used, after, accumulate, call, case):
    """Every loss of this call was scaled by the given scaler's scale at its step (``used``, one per step; the
    gradient reaching the loss is that scale divided by ``accumulate``, or not divided: that is graded by
    ``check_accumulation``), and the scaler ends with ``after`` = (scale, growth tracker); ``state`` is the given
    scaler's ``state_dict()`` after the call."""
    __tracebackhide__ = True
    for batch in range(len(rec.forwards)):
        expected = used[batch // accumulate]
        multiplier = loss_multiplier(check, rec, batch, case)
        # scale / accumulate, or the scale itself: dividing by accumulate is check_accumulation's business
        got = multiplier * accumulate if abs(multiplier - expected) > 1e-6 * expected else multiplier
        if abs(got - expected) > 1e-6 * expected:
            if call == 1 and batch == 0:
                why = (f"but the scaler you were given has scale {expected:g}: train_amp scaled with a GradScaler "
                       f"of its own")
            elif call == 2 and batch == 0:
                why = (f"but the scaler you were given was left at {expected:g} by the first call: the second "
                       f"call did not go on with it")
            else:
                why = f"but the given scaler's scale at that step was {expected:g}"
            raise CheckFailure(check, f"call {call}, batch {batch}: the loss was multiplied by {got:g} before "
                                      f"backward, {why}.\nCase: {case}", hint=GIVEN_HINT)
    state = state if type(state) is dict else {}
    scale, tracker = state.get("scale"), state.get("_growth_tracker")
    if (scale, tracker) != after:
        raise CheckFailure(check, f"after call {call} the scaler you passed has scale {scale} and growth tracker "
                                  f"{tracker}; the steps it scaled should have left it at scale {after[0]:g}, "
                                  f"growth tracker {after[1]}.\nCase: {case}",
                           hint=GIVEN_HINT + " Call `scaler.update()` once after each `scaler.step(optimizer)`.")
