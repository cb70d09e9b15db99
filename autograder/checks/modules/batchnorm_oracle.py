"""The oracle for the ``Normalizer`` exercise: ``torch.nn.BatchNorm1d(affine=False)`` in float64, the inputs the
checks draw, and the common mistakes, computed, so that a message can name the one a student made.

BatchNorm1d's documented behaviour (checked on torch 2.13 CPU; the same in the 2.11 and 2.12 docs): in training
it normalises with the batch mean and the biased variance and updates
``running = (1 - momentum) * running + momentum * batch_stat`` with the *unbiased* batch variance for
``running_var``; in evaluation it normalises with the running statistics and updates nothing.
"""

from dataclasses import dataclass

import torch

from autograder.measuring.threads import one_thread

# Every spelling of a built-in batch norm: the Python entry points (torch.batch_norm, F.batch_norm,
# torch.native_batch_norm, ...) and the ATen kernels they reach on CPU and CUDA (native_batch_norm,
# _native_batch_norm_legit*, _batch_norm_with_update*, cudnn_batch_norm, ...), after the recorder's
# normalisation (leading underscores dropped). F.instance_norm reaches the same kernels and is caught by them.
FORBIDDEN = tuple(sorted({
    "batch_norm", "native_batch_norm", "native_batch_norm_legit", "native_batch_norm_legit_functional",
    "native_batch_norm_legit_no_training", "native_batch_norm_legit_no_stats", "batch_norm_with_update",
    "batch_norm_with_update_functional", "batch_norm_no_update", "batch_norm_impl_index", "cudnn_batch_norm",
    "miopen_batch_norm", "quantized_batch_norm", "batch_norm_elemt", "batch_norm_stats", "batch_norm_update_stats",
    "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
    *(name.lstrip("_") for name in dir(torch) if "batch_norm" in name and not name.endswith("backward")),
}))

BUFFERS = {"running_mean": 0.0, "running_var": 1.0}   # name -> initial value of every element

# Tolerances of a result against BatchNorm1d in float64. Calibrated on 2026-11-22 (torch 2.13, 2-core CPU) with
# 400 random configurations x 5 train steps per dtype, drawn as below, then an eval step on each: the reference
# and the second solution, in float64, differ from BatchNorm1d by at most 1.8e-12 absolute (outputs; a constant
# feature divides rounding by sqrt(eps)) and 1.5e-12 relative (outputs above 1e-3), 5e-12 absolute on the running
# statistics. The closest mistakes, relative, on a single step: running_var updated with the biased variance
# 1.3e-8, eps outside the square root 6e-8 (train) and 2.8e-7 (eval); momentum the other way round 1.3e-2.
RTOL64, ATOL64 = 1e-9, 1e-10
# A float32 module on float32 inputs (no constant feature): the worst error was 7.7e-5 absolute on outputs of
# magnitude up to about 6 and 3.4e-5 absolute on running statistics up to 50.
# This case checks that float32 stays float32 and works; the mistakes are told apart in float64.
RTOL32, ATOL32 = 1e-3, 1e-3


def tolerance(dtype):
    """``rtol`` and ``atol`` for a result held in ``dtype`` against the float64 oracle."""
    if dtype == torch.float64:
        return {"rtol": RTOL64, "atol": ATOL64}
    return {"rtol": RTOL32, "atol": ATOL32}


@dataclass(frozen=True)
class Config:
    """The constructor's arguments for one case; ``defaults`` calls ``Normalizer(features)`` alone."""

    features: int
    momentum: float = 0.1
    eps: float = 1e-5
    defaults: bool = False

    @property
    def call(self):
        if self.defaults:
            return f"Normalizer({self.features})"
        return f"Normalizer({self.features}, momentum={self.momentum!r}, eps={self.eps!r})"

    def args(self):
        """``(args, kwargs)`` for the student's constructor."""
        return ((self.features,), {} if self.defaults else {"momentum": self.momentum, "eps": self.eps})

    def batchnorm(self, dtype=torch.float64):
        """The oracle for this configuration, in training mode."""
        return torch.nn.BatchNorm1d(self.features, momentum=self.momentum, eps=self.eps, affine=False, dtype=dtype)


def run(batchnorm, x):
    """``batchnorm(x)`` in float64, on one thread."""
    with one_thread():
        return batchnorm(x.double())


def draw_config(gen, *, max_features=12, defaults=False):
    """Random features (1 to ``max_features``), momentum in [0.05, 0.45] or [0.55, 0.95] (at 0.5 a momentum
    applied the other way round gives the same result) and eps in [1e-6, 1e-1] (log-uniform), rounded so that the
    text of the call reproduces them exactly."""
    features = int(torch.randint(1, max_features + 1, (1,), generator=gen))
    momentum = round(float(torch.empty(1).uniform_(0.05, 0.45, generator=gen)), 3)
    if float(torch.rand(1, generator=gen)) < 0.5:
        momentum = round(1 - momentum, 3)
    eps = float(f"{10 ** float(torch.empty(1).uniform_(-6, -1, generator=gen)):.2g}")
    return Config(features, defaults=True) if defaults else Config(features, momentum, eps)


def draw_batch(gen, n, features, *, dtype=torch.float64, wide=True):
    """``[n, features]`` with per-feature scales from 1e-2 to 1e2 (``wide``; else 0.1 to 10) and offsets up to
    five scales; in float64, one feature constant across the batch about one time in four (variance 0: the
    output there is (x - mean) / sqrt(eps), which amplifies float32's rounding of the mean by up to 1e3)."""
    low, high = (-2, 2) if wide else (-1, 1)
    scale = 10 ** torch.empty(features, dtype=torch.float64).uniform_(low, high, generator=gen)
    offset = torch.empty(features, dtype=torch.float64).uniform_(-5, 5, generator=gen) * scale
    x = torch.randn(n, features, generator=gen, dtype=torch.float64) * scale + offset
    if dtype == torch.float64 and features > 1 and float(torch.rand(1, generator=gen)) < 0.25:
        column = int(torch.randint(0, features, (1,), generator=gen))
        x[:, column] = torch.empty(1, dtype=torch.float64).uniform_(-3, 3, generator=gen)
    return x.to(dtype)


def draw_running(gen, features):
    """Running statistics a trained module might hold: means up to 10, variances from 1e-3 to 1e2."""
    mean = torch.empty(features, dtype=torch.float64).uniform_(-10, 10, generator=gen)
    var = 10 ** torch.empty(features, dtype=torch.float64).uniform_(-3, 2, generator=gen)
    return mean, var


def batch_size(gen, low=2, high=40):
    return int(torch.randint(low, high + 1, (1,), generator=gen))


# ------------------------------------------------------------------ the mistakes, computed

def _normalise(x, mean, var, eps):
    return (x - mean) / torch.sqrt(var + eps)


def train_output_mistakes(x, eps):
    """What the output would be in train mode for each common mistake (x in float64)."""
    mean, biased, unbiased = x.mean(0), x.var(0, correction=0), _unbiased(x)
    row_mean, row_var = x.mean(1, keepdim=True), x.var(1, correction=0, keepdim=True)
    return {
        "it divides by the unbiased batch variance (N - 1); the output uses the biased one (divide by N, "
        "`x.var(0, correction=0)`)": _normalise(x, mean, unbiased, eps),
        "eps is added outside the square root; it belongs inside: (x - mean) / sqrt(var + eps)":
            (x - mean) / (biased.sqrt() + eps),
        "eps is left out; it keeps the division finite: (x - mean) / sqrt(var + eps)": (x - mean) / biased.sqrt(),
        "it normalises each row over its features; normalise each feature over the batch (dim=0)":
            _normalise(x, row_mean, row_var, eps),
    }


def eval_output_mistakes(x, running_mean, running_var, eps):
    """What the output would be in eval mode for each common mistake."""
    return {
        "eps is added outside the square root; it belongs inside: (x - running_mean) / sqrt(running_var + eps)":
            (x - running_mean) / (running_var.sqrt() + eps),
        "eps is left out; it keeps the division finite: (x - running_mean) / sqrt(running_var + eps)":
            (x - running_mean) / running_var.sqrt(),
        "it normalises with the batch's own statistics (all zeros for a batch of one); in eval() mode use "
        "running_mean and running_var": _normalise(x, x.mean(0), x.var(0, correction=0), eps),
    }


def running_mistakes(name, previous, x, momentum):
    """What ``running_<name>`` would be after one train step for each common mistake (previous in float64)."""
    stat = x.mean(0) if name == "running_mean" else _unbiased(x)
    mistakes = {
        "momentum is applied the other way round; BatchNorm1d keeps (1 - momentum) of the old value: "
        f"{name} = (1 - momentum) * {name} + momentum * batch_statistic": momentum * previous + (1 - momentum) * stat,
        f"{name} was not updated in train() mode": previous,
    }
    if name == "running_var":
        mistakes["it was updated with the biased batch variance; BatchNorm1d's running_var takes the unbiased one "
                 "(divide by N - 1: `x.var(0, correction=1)`), while the output uses the biased one"] = (
            (1 - momentum) * previous + momentum * x.var(0, correction=0))
    return mistakes


def _unbiased(x):
    return x.var(0, correction=1)


def which_mistake(got, mistakes, rtol=1e-7, atol=1e-9):
    """The description of the one mistake whose value ``got`` matches, or ``None`` (none, or two alike on this
    input: naming one could name the wrong one, as ``expect_close``'s ``known``)."""
    got = got.detach().double().cpu()
    matched = [text for text, value in mistakes.items()
               if value.shape == got.shape and torch.allclose(got, value.double().cpu(), rtol=rtol, atol=atol)]
    return matched[0] if len(matched) == 1 else None
