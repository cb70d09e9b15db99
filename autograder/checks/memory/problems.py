"""The problems the ``memory`` checks hand to the student's functions, described as plain data (*plans*).

With trusted grading the student's functions live in a worker, and a model cannot cross the pipe: so a check
describes a problem as a plan (seeds, sizes, dtypes, which activation where), the worker builds it from the plan
beside the student's function (``probes.py``), and the grader builds its own copy from the same plan for its
oracles. Everything here is drawn from the plan's seed, so both copies hold the same values.

Nothing here computes an exercise's answer: it builds models, inputs and profiled steps.
"""

import math

import torch
from torch import nn

from autograder.measuring.threads import one_thread  # noqa: F401 - the topic's modules use them as problems.*
from autograder.measuring.threads import single_threaded

DTYPES = {"float32": torch.float32, "float64": torch.float64}
ACTIVATIONS = ("relu", "tanh", "sigmoid", "gelu", "gate")


class HalfGate(nn.Module):
    """``x[:, :h] * sigmoid(x[:, h:])`` for ``h = x.shape[1] // 2``: it saves two *views* of its input for
    backward (a view's bytes are fewer than its storage's) and sigmoid's output."""

    def forward(self, x):
        half = x.shape[1] // 2
        return x[:, :half] * torch.sigmoid(x[:, half:2 * half])


def _activation(name):
    return {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "gelu": nn.GELU, "gate": HalfGate}[name]()


def _linear(gen, fan_in, fan_out, dtype):
    layer = nn.Linear(fan_in, fan_out, dtype=dtype)
    bound = 1 / math.sqrt(fan_in)
    with torch.no_grad():
        layer.weight.copy_((torch.rand(fan_out, fan_in, generator=gen, dtype=torch.float64) * 2 - 1) * bound)
        layer.bias.copy_((torch.rand(fan_out, generator=gen, dtype=torch.float64) * 2 - 1) * bound)
    return layer


def _size(gen, low, high, even=False):
    value = int(torch.randint(low, high + 1, (1,), generator=gen))
    return value + (value % 2) if even else value


# ------------------------------------------------------------------ a model and its input

def model_plan(gen, *, dtype="float32", acts=None):
    """A plan for :func:`build_model`: 2 to 4 Linear layers with an activation after each but the last (relu,
    tanh, sigmoid, gelu or the view-saving :class:`HalfGate`), a batch of 2 to 12, an input that requires grad or
    not."""
    depth = _size(gen, 2, 4)
    if acts is None:
        acts = [ACTIVATIONS[int(torch.randint(len(ACTIVATIONS), (1,), generator=gen))] for _ in range(depth - 1)]
    widths = [_size(gen, 4, 24, even=True) for _ in range(len(acts) + 1)]
    return {"seed": int(torch.randint(1 << 30, (1,), generator=gen)), "dtype": dtype, "inputs": _size(gen, 3, 20),
            "widths": widths, "acts": list(acts) + [None], "batch": _size(gen, 2, 12),
            "x_grad": bool(torch.randint(2, (1,), generator=gen))}


def build_model(plan):
    """``(model, x, upstream)`` of ``plan``: an ``nn.Sequential``, its input, and an upstream gradient for its output,
    the same values wherever it is built."""
    gen = torch.Generator().manual_seed(plan["seed"])
    dtype = DTYPES[plan["dtype"]]
    layers, width = [], plan["inputs"]
    for out, act in zip(plan["widths"], plan["acts"]):
        layers.append(_linear(gen, width, out, dtype))
        width = out
        if act:
            layers.append(_activation(act))
            width = width // 2 if act == "gate" else width
    x = torch.randn(plan["batch"], plan["inputs"], generator=gen, dtype=torch.float64).to(dtype)
    upstream = torch.randn(plan["batch"], width, generator=gen, dtype=torch.float64).to(dtype)
    return nn.Sequential(*layers), x.requires_grad_(plan["x_grad"]), upstream


def describe_model(plan):
    """The model of ``plan`` in words, for messages."""
    model, x, _ = build_model(plan)
    layers = ", ".join(type(m).__name__ + (f"({m.in_features}->{m.out_features})" if isinstance(m, nn.Linear) else "")
                       for m in model)
    return (f"nn.Sequential({layers}) in {plan['dtype']}, x of shape {list(x.shape)} "
            f"with requires_grad={plan['x_grad']}")


# ------------------------------------------------------------------ blocks for checkpointing

def blocks_plan(gen, *, dropout=None, x_grad=None):
    """A plan for :func:`build_blocks`: 3 to 5 blocks of two Linear layers of one width, each followed by tanh or
    relu, some with dropout (checkpointing must replay the same dropout mask when it recomputes)."""
    if dropout is None:
        dropout = bool(torch.randint(2, (1,), generator=gen))
    if x_grad is None:
        x_grad = bool(torch.randint(2, (1,), generator=gen))
    count = _size(gen, 3, 5)
    return {"seed": int(torch.randint(1 << 30, (1,), generator=gen)), "blocks": count,
            "width": _size(gen, 24, 48, even=True), "batch": _size(gen, 16, 32),
            "acts": [("tanh", "relu")[int(torch.randint(2, (1,), generator=gen))] for _ in range(count)],
            "dropout": 0.25 if dropout else 0.0, "x_grad": x_grad}


def build_blocks(plan):
    """``(blocks, x, upstream)`` of ``plan``: an ``nn.ModuleList`` of ``nn.Sequential`` blocks (in training mode),
    the input and an upstream gradient for the output, in float32."""
    gen = torch.Generator().manual_seed(plan["seed"])
    width = plan["width"]
    blocks = []
    for act in plan["acts"]:
        layers = [_linear(gen, width, width, torch.float32), _activation(act)]
        if plan["dropout"]:
            layers.append(nn.Dropout(plan["dropout"]))
        layers += [_linear(gen, width, width, torch.float32), _activation(act)]
        blocks.append(nn.Sequential(*layers))
    x = torch.randn(plan["batch"], width, generator=gen).requires_grad_(plan["x_grad"])
    upstream = torch.randn(plan["batch"], width, generator=gen)
    return nn.ModuleList(blocks), x, upstream


class Shift(nn.Module):
    """``h + source(index)``: a shift that whoever built the blocks hands out, one per call (the grader draws a new
    one every time it is asked). Recomputing a block in backward asks again, so the gradients that come back say
    which shift each block's saved activations were computed with: the one of the forward pass (kept) or a later
    one (recomputed)."""

    def __init__(self, index, source):
        super().__init__()
        self.index, self.source = index, source

    def forward(self, h):
        return h + self.source(self.index).to(h.dtype)


def shifted_blocks(plan, source):
    """``(blocks, x, upstream)`` of ``plan`` (:func:`build_blocks`) with a :class:`Shift` after each block's first
    Linear layer (before the first activation, so that recomputing the block's saved activations runs it)."""
    blocks, x, upstream = build_blocks(plan)
    for index, block in enumerate(blocks):
        layers = list(block)
        blocks[index] = nn.Sequential(layers[0], Shift(index, source), *layers[1:])
    return blocks, x, upstream


def describe_blocks(plan):
    per_block = "Linear, Tanh/ReLU" + (f", Dropout({plan['dropout']})" if plan["dropout"] else "") + \
        ", Linear, Tanh/ReLU"
    return (f"{plan['blocks']} blocks of [{per_block}], width {plan['width']}, x of shape "
            f"[{plan['batch']}, {plan['width']}] with requires_grad={plan['x_grad']}")


# ------------------------------------------------------------------ a step to profile

STEP_KINDS = ("matmul", "conv", "topk")
# Sizes at which the expensive operator takes 30 to 80 ms on one thread of this 2-core CPU (2026-11-24): long
# against any pause the scheduler gives a microsecond operator on a busy machine (benchmarks/memory.py).
MATMUL_SIZE, TOPK_VALUES, CONV_HEIGHT = 640, 4_000_000, 128


def step_plan(gen, kind):
    """A plan for :class:`Step`: one expensive operation (``kind``) and a few cheap ones on its (small) result."""
    return {"kind": kind, "seed": int(torch.randint(1 << 30, (1,), generator=gen)),
            "scale": float(torch.rand(1, generator=gen)) * 0.25 + 1.0}


# How many times the step adds to its 16 values: the operator called most often in the step's profile, by a clear
# margin (a matrix product calls aten::resolve_conj three times), and never among its cheapest ones.
STEP_ADDS = 6


class Step(nn.Module):
    """A step of work that one operation dominates, as a module (``step()`` runs it): a matrix product of two
    [n, n] matrices, a top-k of a long vector, or a 3x3 convolution; then a few cheap operations on 16 of its
    values. Its inputs are buffers drawn from the plan's seed, sized by ``scale``. ``profiled``: for every call, in
    order, whether a profiler was recording (the warm-up clause of ``most_expensive_op``).

    Three wrong rankings of a profile would name the same operator on a plainer step, so the step keeps them apart:
    it starts with a cheap operator of its own (``aten::zeros``: the profile's first row is not the operator first
    by total time), and adds to its 16 values :data:`STEP_ADDS` times (``aten::add``: the most called operator is
    not one of the cheapest, which a profile sorted the wrong way round returns)."""

    def __init__(self, plan):
        super().__init__()
        gen = torch.Generator().manual_seed(plan["seed"])
        self.kind, scale = plan["kind"], plan["scale"]
        self.profiled = []
        if self.kind == "matmul":
            n = int(MATMUL_SIZE * scale)
            self.register_buffer("a", torch.randn(n, n, generator=gen))
            self.register_buffer("b", torch.randn(n, n, generator=gen))
        elif self.kind == "topk":
            self.register_buffer("a", torch.randn(int(TOPK_VALUES * scale), generator=gen))
        elif self.kind == "conv":
            self.register_buffer("a", torch.randn(8, 16, int(CONV_HEIGHT * scale), 128, generator=gen))
            self.register_buffer("b", torch.randn(32, 16, 3, 3, generator=gen))
        else:
            raise ValueError(f"unknown step kind {self.kind!r}")

    def forward(self):
        self.profiled.append(bool(torch._C._autograd._profiler_enabled()))   # one entry a call: under a profile?
        total = torch.zeros(16, device=self.a.device)
        if self.kind == "matmul":
            big = self.a @ self.b
        elif self.kind == "topk":
            big = torch.topk(self.a, 2000).values
        else:
            big = torch.nn.functional.conv2d(self.a, self.b)
        values = big.reshape(-1)[:16]
        for _ in range(STEP_ADDS):
            total = total + values
        return (total.amax() * 2 + 1).item()

