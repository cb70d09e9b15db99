"""Inputs and references for the ``Softplus`` exercise (a custom ``torch.autograd.Function``).

softplus(x) = log(1 + exp(x)); its derivative is sigmoid(x). The references are computed in float64 with a
formula different from the model answer (``logaddexp(x, 0)``; ``sigmoid``), which are exact there for every
input a lower-precision dtype can hold.
"""

import math

import torch

from autograder.checks.stability.softmax_cases import FLOAT_DTYPES  # noqa: F401 - the same dtypes, one definition
from autograder.errors import CheckFailure
from autograder.measuring.compare import tolerance
from autograder.measuring.gradients import tensor_source

# Forward and backward must not call a built-in softplus in any spelling: F.softplus / nn.Softplus
# (aten.softplus, softplus_backward), logaddexp (log(exp(x) + exp(0))), or -logsigmoid(-x) (aten.log_sigmoid_*).
FORBIDDEN = ("softplus", "softplus_backward", "logaddexp", "logaddexp2", "log_sigmoid", "log_sigmoid_forward",
             "log_sigmoid_backward", "logsigmoid")
# Moderate inputs for the forward check: |x| <= 10 stays below float16's exp overflow (x > log(65504) = 11.09),
# so the naive log1p(exp(x)) passes it and loses only the extremes check, which is about stability.
MODERATE = 10.0


def reference(x):
    """softplus in float64."""
    x64 = x.detach().double().cpu()
    return torch.logaddexp(x64, torch.zeros_like(x64))


def reference_grad(x):
    """d softplus / dx = sigmoid(x), in float64."""
    return torch.sigmoid(x.detach().double().cpu())


def extreme_points(dtype):
    """Fixed values where a naive softplus or sigmoid breaks, for ``dtype``: 0, the smallest normal and
    subnormal values, the edge of exp's overflow (log of the largest value, +-0.5), twice past it, +-1e4, and
    half the largest and the largest finite value, each with both signs."""
    info = torch.finfo(dtype)
    edge = math.log(info.max)
    subnormal = info.smallest_normal * info.eps
    values = [0.0, info.smallest_normal, subnormal, 1.0, edge - 0.5, edge + 0.5, 2 * edge, 1e4, info.max / 2,
              info.max]
    return torch.tensor([s * v for v in values for s in (1.0, -1.0)], dtype=torch.float64).to(dtype)


def random_extremes(gen, dtype, n):
    """``n`` values of random sign whose magnitude is spread evenly on a log scale up to the largest finite value."""
    top = math.log10(torch.finfo(dtype).max)
    magnitude = 10 ** (torch.rand(n, generator=gen, dtype=torch.float64) * top)
    sign = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0).double()
    return (sign * magnitude).to(dtype)


def random_moderate(gen, dtype, device="cpu"):
    """A tensor of random rank (0 to 3) and shape, values ~ N(0, s^2) clipped to [-10, 10], sometimes a
    non-contiguous view."""
    rank = int(torch.randint(0, 4, (1,), generator=gen))
    shape = [int(s) for s in torch.randint(1, 7, (rank,), generator=gen)]
    scale = [0.5, 2.0, 4.0][int(torch.randint(0, 3, (1,), generator=gen))]
    x = (torch.randn(shape, generator=gen, dtype=torch.float64) * scale).clamp(-MODERATE, MODERATE)
    if rank >= 2 and int(torch.randint(0, 2, (1,), generator=gen)):
        x = x.transpose(0, 1).contiguous().transpose(0, 1)      # same shape, non-contiguous
    return x.to(dtype).to(device)


def _value(v):
    return f"{v:.6g}"


def where_wrong(x, got, expected, *, rtol, atol, limit=4):
    """The inputs where ``got`` is not finite or not within tolerance of ``expected`` (float64): a sentence
    naming up to ``limit`` of them with what was expected and what came back, and the bad inputs themselves."""
    g = got.detach().double().cpu()
    e = expected.double().cpu()
    flat_x, flat_g, flat_e = x.detach().cpu().reshape(-1), g.reshape(-1), e.reshape(-1)
    bad = ~torch.isfinite(flat_g) | ((flat_g - flat_e).abs() > atol + rtol * flat_e.abs())
    idx = bad.nonzero().reshape(-1)
    shown = "; ".join(f"x = {_value(float(flat_x[i]))}: expected {_value(float(flat_e[i]))}, got "
                      f"{_value(float(flat_g[i]))}" for i in idx[:limit].tolist())
    more = f" (and {len(idx) - limit} more)" if len(idx) > limit else ""
    return f"Wrong at {len(idx)} of {flat_x.numel()} inputs: {shown}{more}.", flat_x[idx[:limit]]


def pointed_failure(failure, x, got, expected, repro, *, grad=False):
    """``failure`` with the inputs where ``got`` is wrong named, and a line to paste that shows it (``repro``
    with ``{x}`` replaced by those inputs, written with ``requires_grad=True`` when ``grad``)."""
    rtol, atol = tolerance(got.dtype)
    sentence, bad_x = where_wrong(x, got, expected, rtol=rtol, atol=atol)
    literal = tensor_source(bad_x.to(x.dtype).to(x.device), requires_grad=grad)
    extra = f"\n{sentence}" + (f"\nTo reproduce, run: {repro.format(x=literal)}" if literal and bad_x.numel() else "")
    return CheckFailure(failure.check, failure.detail + extra, hint=failure.hint, measurements=failure.measurements,
                        kind=_not_finite_where(failure.kind, x, got, expected))


def _not_finite_where(kind, x, got, expected):
    """A "not finite" failure's kind with the sign of the inputs where the result is not finite (and the reference
    is): the same values past an overflow at large positive x and at large negative x are two mistakes
    (``log1p(exp(x))`` against ``x + log1p(exp(-x))``); any other failure keeps its kind."""
    if not kind.startswith("not finite"):
        return kind
    flat_x = x.detach().cpu().double().reshape(-1)
    bad = ~torch.isfinite(got.detach().cpu().reshape(-1)) & torch.isfinite(expected.detach().cpu().reshape(-1))
    signs = [side for side, held in (("positive", flat_x[bad] > 0), ("negative", flat_x[bad] < 0),
                                     ("zero", flat_x[bad] == 0)) if bool(held.any())]
    return f"{kind} at {' and '.join(signs)} x" if signs else kind
