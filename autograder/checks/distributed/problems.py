"""The problems the ``distributed`` checks hand to the student's functions, described as plain data (*plans*).

A model and a dataset cannot cross the pipe, and they must be built again in every rank process anyway: so a check
describes a training problem as a plan (seeds, sizes, world size, learning rate), every rank builds the same model
and dataset from it (``probes.py``), and the grader builds its own copy for its single-process oracle. Everything is
drawn from the plan's seeds, so all copies hold the same values.

Nothing here computes an exercise's answer: it builds models and datasets, and says which samples PyTorch's own
``DistributedSampler`` gives each rank (the order the exercise asks the student to use).
"""

import math

import torch
from torch import nn
from torch.utils.data import DistributedSampler

# Time limits of the grader's launcher (launcher.launch). Measured 2026-11-24 on this 2-core x86_64 CPU, torch 2.13.0,
# under the load of two other engineers' test runs (load 5 to 7): a launch of 3 gloo ranks with an empty body (fork,
# rank 0's TCPStore on 127.0.0.1, two barriers) takes 0.28 s (150 launches, 0 failed); a check's run of the
# reference (2 or 3 ranks, 2 epochs) 0.1 to 0.4 s.
GROUP_TIMEOUT_S = 10     # the process group's timeout: a collective that one rank never joins raises after this
STRAGGLER_S = 3          # after one rank finished, how long the others may take before they are stopped as hung
#   (honest ranks end within milliseconds of each other: their last collective synchronizes them)
LAUNCH_DEADLINE_S = 40   # the whole run, start to the last rank's answer


class Recorded(torch.utils.data.Dataset):
    """A dataset of ``(x[i], y[i])`` pairs that records the index of every sample it gives out (``seen``): the
    samples a rank trained on, whatever sampler or loader the student put in front of it."""

    def __init__(self, x, y):
        self.x, self.y, self.seen = x, y, []

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        index = int(index)
        self.seen.append(index)
        return self.x[index], self.y[index]


def _size(gen, low, high):
    return int(torch.randint(low, high + 1, (1,), generator=gen))


WIDE_HIDDEN = 1024   # the hidden width of the plans whose traffic is judged (traffic.py): gradients of 16 KiB or more


def training_plan(gen, *, world_size, accumulation=1, epochs=2, frozen=False, unused=False, wide=False):
    """A plan for :func:`build`: a two-layer tanh network, a regression dataset whose size the ranks' batches divide
    exactly (every rank takes the same number of full batches: one process on their union is then the same step),
    a learning rate and the sampler's seed. With ``frozen`` the first layer's bias does not require grad, so it gets
    no gradient (``average_gradients`` must skip it); with ``unused`` the last Linear also holds a trainable parameter
    that the forward never uses, whose ``.grad`` stays None too (skipped by ``p.grad is None``, not by
    ``p.requires_grad``). With ``wide`` the hidden layer has ``WIDE_HIDDEN`` units (the other values are drawn as
    without it) and a learning rate scaled down to match."""
    # a batch size apart from the world size and the accumulation steps: a step off by one of these factors then
    # says which (known_steps)
    sizes = [b for b in range(2, 6) if b not in (world_size, accumulation)][:3]
    batch = sizes[_size(gen, 0, len(sizes) - 1)]
    steps = _size(gen, 2, 3)
    plan = {"seed": int(torch.randint(1 << 30, (1,), generator=gen)), "world_size": world_size,
            "inputs": _size(gen, 3, 6), "hidden": _size(gen, 4, 8), "batch_size": batch,
            "accumulation": accumulation, "samples": world_size * batch * accumulation * steps, "epochs": epochs,
            "lr": round(0.05 + 0.1 * float(torch.rand(1, generator=gen)), 3),
            "sampler_seed": _size(gen, 0, 999), "frozen": frozen, "unused": unused}
    if wide:    # a learning rate as much smaller as the layer is wider: SGD at 0.1 diverges on 1024 units
        plan.update(hidden=WIDE_HIDDEN, lr=round(plan["lr"] * 8 / WIDE_HIDDEN, 6))
    return plan


def build(plan):
    """``(model, x, y)`` of ``plan``: the same values in every process that builds them."""
    gen = torch.Generator().manual_seed(plan["seed"])
    model = nn.Sequential(nn.Linear(plan["inputs"], plan["hidden"]), nn.Tanh(), nn.Linear(plan["hidden"], 1))
    with torch.no_grad():
        for layer in (model[0], model[2]):
            bound = 1 / math.sqrt(layer.in_features)
            layer.weight.copy_((torch.rand(layer.weight.shape, generator=gen) * 2 - 1) * bound)
            layer.bias.copy_((torch.rand(layer.bias.shape, generator=gen) * 2 - 1) * bound)
    if plan.get("frozen"):
        model[0].bias.requires_grad_(False)
    if plan.get("unused"):
        model[2].register_parameter("unused", nn.Parameter(torch.zeros(plan["hidden"])))   # trainable, never used
    x = torch.randn(plan["samples"], plan["inputs"], generator=gen)
    y = torch.sin(x.sum(1, keepdim=True)) + 0.1 * torch.randn(plan["samples"], 1, generator=gen)
    return model, x, y


def sampler_order(plan, rank, epoch):
    """The indices ``DistributedSampler(dataset, num_replicas, rank, shuffle=True, seed)`` gives ``rank`` after
    ``set_epoch(epoch)``."""
    sampler = DistributedSampler(range(plan["samples"]), num_replicas=plan["world_size"], rank=rank, shuffle=True,
                                 seed=plan["sampler_seed"])
    sampler.set_epoch(epoch)
    return list(sampler)


def steps_per_epoch(plan):
    return plan["samples"] // (plan["world_size"] * plan["batch_size"] * plan["accumulation"])


def expected_ids(plan):
    """``[step][rank]`` -> the indices that rank trains on in that optimizer step (all its micro-batches, in
    order), as the exercise asks: ``DistributedSampler`` with the plan's seed, ``set_epoch`` every epoch, batches
    of ``batch_size`` in the sampler's order."""
    per_step = plan["batch_size"] * plan["accumulation"]
    steps = []
    for epoch in range(plan["epochs"]):
        orders = [sampler_order(plan, rank, epoch) for rank in range(plan["world_size"])]
        for s in range(steps_per_epoch(plan)):
            steps.append([order[s * per_step:(s + 1) * per_step] for order in orders])
    return steps


def describe(plan, call):
    """The problem, for a student's message."""
    return (f"{call} on {plan['world_size']} gloo ranks: a Linear({plan['inputs']}, {plan['hidden']}) - Tanh - "
            f"Linear({plan['hidden']}, 1) network, a dataset of {plan['samples']} samples, batch_size="
            f"{plan['batch_size']}" + (f", accumulation={plan['accumulation']}" if plan["accumulation"] > 1 else "")
            + f", epochs={plan['epochs']}, lr={plan['lr']}, seed={plan['sampler_seed']}"
            + ("; the first Linear's bias is frozen (requires_grad=False), so its .grad stays None"
               if plan.get("frozen") else "")
            + ("; the last Linear holds a trainable parameter `unused` that the forward never uses, so its .grad "
               "stays None too" if plan.get("unused") else ""))
