"""Known results of the distributed checks: a rank's step that is one process's step times a number the problem
names (the batch size, the world size, the accumulation steps, or one over the world size).

Many mistakes leave a rank's parameters off one process's; a few leave them off by exactly such a factor, and the
factor says which: a loss summed over the batch makes every step ``batch_size`` times too long, gradients summed
over the ranks and never divided ``world_size`` times, micro-batch losses not divided by ``accumulation`` that many
times, a loss divided by the world size under DDP (which averages already) ``1 / world_size`` of it. The grader
measures the factor on the first step that differs (the parameters before it are one process's, so the step is
``after - before``); where two of these numbers are equal on the problem, the factor cannot tell the mistakes
apart and nothing is told by name (docs/feedback.md). One more known step: a rank that stepped on the gradient of
its own samples alone, as one process on them would (the gradients never averaged over the ranks). And known
orders: the samples a rank trained on in the order of a sampler built or used another way (epoch 0's order again,
not shuffled, seed 0).
"""

import torch
from torch.utils.data import DistributedSampler

from autograder.checks.distributed import problems
from autograder.errors import CheckFailure
from autograder.measuring.expected_outputs import oracle

FIT_RTOL = 1e-3       # the step, against one process's step times the factor (float32 ranks, float64 oracle)
FIT_ATOL = 1e-5

CAUSES = {
    "batch_size": ("a loss summed over each batch instead of its mean",
                   "Use `torch.nn.functional.mse_loss(out, y)`, whose default reduction is the mean over the batch."),
    "world_size": ("gradients summed over the ranks instead of averaged",
                   "After `dist.all_reduce(p.grad)` (a sum over the ranks), divide by `dist.get_world_size()`."),
    "accumulation": ("micro-batch losses added up instead of divided by `accumulation`",
                     "Divide every micro-batch's loss by `accumulation` before its backward."),
    "1/world_size": ("an extra division by the world size (DDP averages the gradients over the ranks already)",
                     "Do not divide the loss by `world_size`: DDP's all-reduce already averages the gradients."),
}


ORDERS = (   # (how the sampler was built, the words, the hint, the kind)
    ({"epoch": 0}, ": the samples of epoch 0 again, as if `set_epoch` had not been called",
     "Call `sampler.set_epoch(epoch)` at the start of every epoch: the sampler shuffles with seed + epoch.",
     "failed: a rank trained on epoch 0's samples again"),
    ({"shuffle": False}, ": the dataset's order, not shuffled",
     "Build the sampler with `shuffle=True` (and no `shuffle=` on the DataLoader).",
     "failed: a rank trained on samples in the dataset's order"),
    ({"seed": 0}, ": the order of seed 0, the sampler's default",
     "Pass `seed=seed` to `DistributedSampler`: every rank must shuffle with the same, given seed.",
     "failed: a rank trained on samples in the order of seed 0"),
)


def known_order(plan, rank, step, got):
    """``(words, hint, kind)`` of the known sampler mistake whose order ``got`` (the samples ``rank`` trained on in
    optimizer step ``step``) is, or ``None``; an order two of them give alike names neither."""
    per_step = plan["batch_size"] * plan["accumulation"]
    per_epoch = plan["samples"] // (plan["world_size"] * per_step)
    epoch, index = divmod(step, per_epoch)
    found = []
    for built, words, hint, kind in ORDERS:
        sampler = DistributedSampler(range(plan["samples"]), num_replicas=plan["world_size"], rank=rank,
                                     shuffle=built.get("shuffle", True), seed=built.get("seed", plan["sampler_seed"]))
        sampler.set_epoch(built.get("epoch", epoch))
        if list(sampler)[index * per_step:(index + 1) * per_step] == got:
            found.append((words, hint, kind))
    expected = DistributedSampler(range(plan["samples"]), num_replicas=plan["world_size"], rank=rank, shuffle=True,
                                  seed=plan["sampler_seed"])
    expected.set_epoch(epoch)
    if list(expected)[index * per_step:(index + 1) * per_step] == got:
        return None
    return found[0] if len(found) == 1 else None


def _factors(plan):
    """``{name: value}`` of the factors the plan names, all different (a value two names share names neither)."""
    values = {"batch_size": float(plan["batch_size"]), "world_size": float(plan["world_size"]),
              "1/world_size": 1.0 / plan["world_size"]}
    if plan["accumulation"] > 1:
        values["accumulation"] = float(plan["accumulation"])
    return {name: v for name, v in values.items() if sum(abs(v - w) < 1e-9 for w in values.values()) == 1}


def _flat(params):
    return torch.cat([torch.as_tensor(p, dtype=torch.float64).reshape(-1) for p in params])


def scale_of(before, after, want):
    """The factor ``k`` with ``after = before + k (want - before)`` for every parameter, or ``None`` when there is
    none (the step points elsewhere)."""
    try:
        b, a, w = _flat(before), _flat(after), _flat(want)
    except (TypeError, RuntimeError, ValueError):
        return None
    if not (b.shape == a.shape == w.shape) or not torch.isfinite(a).all():
        return None
    step, taken = w - b, a - b
    norm = float(step @ step)
    if norm == 0.0:
        return None
    k = float(taken @ step) / norm
    return k if torch.allclose(taken, k * step, rtol=FIT_RTOL, atol=FIT_ATOL) else None


def own_step(plan, before, ids):
    """The parameters after one process's step from ``before`` on the samples ``ids`` alone, or ``None`` where this
    installation cannot compute it (the student kit records no such step)."""
    model, x, y = problems.build(plan)
    with torch.no_grad():
        for p, value in zip(model.parameters(), before):
            p.copy_(value)
    try:
        return oracle("distributed.single_process", model, x, y, [[list(ids)]], plan["lr"])[0]
    except CheckFailure:
        return None


def expect_no_known_step(check, plan, before, after, want, *, what, case, ids=None, reduced=None):
    """Raise the known mistake whose factor the step from ``before`` to ``after`` is, against one process's step to
    ``want``, or the rank's step on its own samples ``ids``; return when it is none of them. ``reduced``: what the
    student's ``average_gradients`` passed to ``all_reduce`` in that step, as the rank reports it (it only
    explains: the parameters rather than the gradients)."""
    __tracebackhide__ = True
    own = own_step(plan, before, ids) if ids else None
    if own is not None and scale_of(before, after, own) is not None and abs(scale_of(before, after, own) - 1) < 1e-2:
        params = type(reduced) is list and "parameters" in reduced and "gradients" not in reduced
        also = " (all_reduce was called on the parameters, not on their gradients)" if params else ""
        raise CheckFailure(check, f"{what}: the step is one process's step on this rank's samples alone{also}: the "
                                  f"gradients were not averaged over the ranks.\nCase: {case}",
                           hint="Every rank must step on the gradient averaged over all the ranks: DDP's backward "
                                "(call the wrapped model), or `dist.all_reduce(p.grad)` then a division by the world "
                                "size.", kind="failed: the step is one process's step on this rank's samples alone"
                                              + (", the parameters all-reduced" if params else ""))
    k = scale_of(before, after, want)
    if k is None:
        return
    named = [name for name, value in _factors(plan).items() if abs(k - value) <= FIT_RTOL * 10 * value]
    if len(named) != 1:
        return
    name, = named
    cause, hint = CAUSES[name]
    raise CheckFailure(check, f"{what}: the step is one process's step times {name} ({k:.4g}): {cause}.\n"
                              f"Case: {case}", hint=hint,
                       kind=f"failed: the step is one process's step times {name}",
                       measurements={"step_factor": round(k, 6)})
