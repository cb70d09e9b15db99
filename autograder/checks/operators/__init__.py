"""Checks for the ``operators`` assignment: ``row_sum`` and ``masked_mean``.

References are PyTorch's own reductions in float64 (exact integer sums for integer
inputs), on seeded random inputs with odd shapes, every dtype, non-contiguous views
and, for ``masked_mean``, NaN, infinities, values exactly on the bounds and columns
with nothing in range.
"""

import torch

from autograder.checks.operators.contract import masked_mean_labels
from autograder.checks.operators.probes import slicing_loop_sum
from autograder.contracts import exercised, exercised_as, tensor_labels
from autograder.errors import CheckFailure
from autograder.measuring.compare import context, expect_close, expect_meta
from autograder.measuring.expected_outputs import oracle
from autograder.measuring.oprecorder import expect_constant_work
from autograder.measuring.timing import expect_speedup
from autograder.source_evidence.source_rules import no_loop
from autograder.spec import graded

SUM_DTYPES = (torch.float32, torch.int64, torch.float64, torch.float16, torch.int32, torch.bfloat16, torch.bool)
FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
SPEED_SHAPE = (500, 10)          # row_sum against the slicing loop
COUNT_ROWS = (4, 64)             # row counts whose op counts must agree
SUM_HINT = "One reduction does it: `torch.sum(x, dim=0)` (it also promotes integers and booleans to int64)."


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _shape(gen, i, max_rank=4):
    rank = int(torch.randint(1, max_rank + 1, (1,), generator=gen))
    shape = [int(s) for s in torch.randint(1, 6, (rank,), generator=gen)]
    shape[0] = (0, 1, 7, 3)[i % 4] if i < 8 else int(torch.randint(1, 10, (1,), generator=gen))
    return shape


def _values(gen, shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen, dtype=torch.float64) * 4).to(dtype)
    return torch.randint(-100, 100, shape, generator=gen).to(dtype)


def _sum_atol(x):
    """Summing in another order costs a few ulps of the sum of magnitudes (of the finite values: a column with NaN
    or inf is compared by what it is, not within a tolerance)."""
    if not x.is_floating_point() or x.numel() == 0:
        return 0.0
    finite = x.detach().double()
    scale = float(torch.where(torch.isfinite(finite), finite, 0).abs().sum(dim=0).max())
    return max(1e-12, 4 * torch.finfo(x.dtype).eps * scale)


def _with_special_values(x, gen):
    """``x`` with NaN, inf and -inf at positions drawn apart from the case's own stream (the other cases keep their
    inputs): "the sum of x" of a column holding NaN is NaN, and a column with inf and -inf is NaN too. A sum that
    skips NaN (``nansum``, ``nan_to_num``) is another function."""
    pick = torch.rand(x.shape, generator=gen)
    x = x.clone()
    x[pick < 0.15] = float("nan")
    x[(pick >= 0.15) & (pick < 0.25)] = float("inf")
    x[(pick >= 0.25) & (pick < 0.3)] = float("-inf")
    x[(0,) * x.dim()] = float("nan")
    return x


NAN_HINT = ("A column that holds NaN sums to NaN: `torch.sum` keeps NaN, while `nansum` or `nan_to_num` drop it and "
            "return another number. " + SUM_HINT)


def _nan_left_out(x, out):
    """How many columns of ``x`` hold NaN where ``out`` (of the right shape) holds a number: NaN left out of the sum,
    by whatever route (``nansum``, ``nan_to_num``, a mask)."""
    if not (x.is_floating_point() and isinstance(out, torch.Tensor) and out.shape == x.shape[1:]):
        return 0
    return int((torch.isnan(x.detach()).any(dim=0).cpu() & ~torch.isnan(out.detach().cpu())).sum())


def _other_reductions(x):
    """The shapes of the two reductions a row sum is mistaken for (``expect_meta``'s ``known_shapes``)."""
    return (("a sum over the last dimension", x.shape[:-1],
             "The rows are dimension 0: `torch.sum(x, dim=0)`, not the last dimension."),
            ("a sum over dimension 0 that keeps it (keepdim=True)", (1, *x.shape[1:]),
             "Leave `keepdim` at False: the result has the shape of `x[0]`."))


def _expect_row_sum(check, row_sum, x):
    __tracebackhide__ = True
    inputs = {"x": x}
    exercised_as(tensor_labels, x)
    out = row_sum(x)
    reference = torch.sum(x, dim=0)
    expect_meta(check, out, what="row_sum's result", shape=reference.shape, dtype=reference.dtype,
                device=x.device.type, inputs=inputs, known_shapes=_other_reductions(x))
    left_out = _nan_left_out(x, out)
    if left_out:
        raise CheckFailure(check, f"row_sum's result is a number where x's column holds NaN, in {left_out} of "
                                  f"{out.numel()} columns: NaN was left out of the sum." + context(inputs),
                           hint=NAN_HINT)
    expected = torch.sum(x.double(), dim=0) if x.is_floating_point() else reference
    expect_close(check, out, expected, what="row_sum's result", inputs=inputs, atol=_sum_atol(x),
                 hint=SUM_HINT, equal_nan=True)


# ----------------------------------------------------------------------- row_sum

@graded(2, hidden=[{"cases": 56}])
def check_row_sum(check, row_sum, *, seed=0, cases=28):
    """The sum over dimension 0 for tensors of rank 1 to 4 (0, 1 or many rows), every float, integer and
    boolean dtype, non-contiguous views, CPU and CUDA: ``torch.sum(x, dim=0)``'s shape, dtype and device,
    values equal to a float64 (or exact integer) sum; floats holding NaN, inf and -inf in every fourth case
    (a column with NaN sums to NaN)."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        shape = _shape(gen, i)
        dtype = SUM_DTYPES[i % len(SUM_DTYPES)]
        x = _values(gen, shape, dtype)
        if i % 4 == 1 and dtype.is_floating_point and x.numel():
            x = _with_special_values(x, check.generator(f"special values {i}"))
        if i % 3 == 2 and x.dim() >= 2:      # the same shape as a non-contiguous view
            x = x.movedim(0, -1).contiguous().movedim(-1, 0)
        _expect_row_sum(check, row_sum, x.to(_devices()[i % len(_devices())]))


def _count_args(check):
    """``make_args(rows)`` for the op counts: ``(x,)``, x a [rows, 10] float32 tensor drawn from the check's stream
    for that number of rows (the same x each time a size is asked for; the counts depend on the size alone)."""
    return lambda rows: (torch.randn(rows, 10, generator=check.generator(f"count inputs {rows}")),)


@graded(1, source=[no_loop("row_sum")], worker_facts="op counts at 4 and 64 rows", facts_only_cost=True)
def check_row_sum_vectorized(check, row_sum, *, seed=0):
    """One vectorized reduction, measured without a clock: as many torch calls and ATen kernels for 4 rows
    as for 64 (a loop over the rows makes one more per row)."""
    __tracebackhide__ = True
    counted = _count_args(check)
    _expect_row_sum(check, row_sum, counted(5 + seed)[0])
    exercised("rows_4_and_64")
    expect_constant_work(check, row_sum, counted, COUNT_ROWS, what="row_sum",
                         hint="Do not loop over `x[i]` or `torch.unbind(x)`: " + SUM_HINT)


def speed_args(device, gen=None):
    """The timed input: ``(x,)`` with ``x`` a ``[500, 10]`` float32 tensor on ``device``, drawn from ``gen`` (the
    check's generator). Without one, a fixed draw: for speed calibration (``benchmarks/speed.py``) and tests, which
    time the reference and the loops, not a student's code, and have no check."""
    return (torch.randn(*SPEED_SHAPE, generator=gen or torch.Generator().manual_seed(0)).to(device),)


@graded(2, hidden=[{}], evidence=("data", "clock"))
def check_row_sum_speed(check, row_sum, *, seed=0):
    """On the best device here (CUDA when present), at least ``settings.speed.thresholds["row_sum"]`` times
    faster than the slicing loop on a ``[500, 10]`` float32 tensor, timed interleaved in one process."""
    __tracebackhide__ = True
    device = _devices()[-1]
    (x,) = speed_args(device, check.generator())
    _expect_row_sum(check, row_sum, x)
    exercised("timed_500x10")
    return expect_speedup(check, "row_sum", row_sum, slicing_loop_sum, (x,), what="row_sum",
                          reference="speed.row_sum",
                          hint="Every `x[i]` is a Python call that builds a new tensor view: " + SUM_HINT)


# -------------------------------------------------------------------- masked_mean

def _bound(gen, shape, dtype, as_tensor):
    """A bound on a 0.25 grid (exact in every float dtype), as a Python float or a tensor of ``shape``."""
    if as_tensor:
        return (torch.randint(-8, 9, shape, generator=gen).double() / 4).to(dtype)
    return int(torch.randint(-8, 9, (1,), generator=gen)) / 4


def _masked_case(gen, i, special):
    shape = _shape(gen, i, max_rank=3)
    dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
    device = _devices()[i % len(_devices())]
    # Values on a 0.25 grid, so that many of them sit exactly on a bound.
    x = torch.randint(-12, 13, shape, generator=gen).double() / 4
    tensor_bounds = i % 2 == 1 and len(shape) > 1
    low = _bound(gen, shape[1:], dtype, tensor_bounds)
    high = _bound(gen, shape[1:], dtype, tensor_bounds)
    if isinstance(low, torch.Tensor):
        low, high = torch.minimum(low, high), torch.maximum(low, high) + 0.5
    else:
        low, high = min(low, high), max(low, high) + 0.5
    if special and x.numel():
        pick = torch.rand(shape, generator=gen)
        x[pick < 0.15] = float("nan")
        x[(pick >= 0.15) & (pick < 0.25)] = float("inf")
        x[(pick >= 0.25) & (pick < 0.3)] = float("-inf")
        if x.dim() >= 2:                   # one column with nothing in range
            x[:, 0] = float("nan") if i % 2 else 100.0
            exercised("empty_column")
        low, high = _infinite_bounds(i, low, high)
    if isinstance(low, torch.Tensor):
        low, high = low.to(device), high.to(device)
    return x.to(dtype).to(device), low, high


def _rows_first(cases):
    """``cases`` (drawn in their order) graded with the inputs of no rows last, and those of one value just before:
    on ``N = 0`` dividing by ``N`` and dividing by a count of 0 both give NaN, and on a single NaN counting it and
    multiplying by the mask do, while on more values they fail apart (a wrong mean, NaN where nothing is in range);
    the first failure then says which mistake it is."""
    return sorted(cases, key=lambda case: (case[0].shape[0] == 0, case[0].numel() < 2))


def _infinite_bounds(i, low, high):
    """Every fourth special case has ``high = inf`` and the next ``low = -inf`` (per-column bounds: in every other
    column): an infinite bound is a bound like any other, so ``inf <= inf`` keeps ``x = inf`` in the range (and a
    column whose range holds ``inf`` and ``-inf`` has the mean NaN, as the reference computes it)."""
    if i % 4 == 2:
        return low, _made_infinite(high, float("inf"))
    if i % 4 == 3:
        return _made_infinite(low, float("-inf")), high
    return low, high


def _made_infinite(bound, value):
    """``bound`` as ``value``: a Python number replaced, a per-column tensor copied with every other column set."""
    if isinstance(bound, torch.Tensor):
        bound = bound.clone()
        bound.view(-1)[::2] = value
        return bound
    return value


def _infinite(bound):
    return bool(torch.isinf(bound).any()) if isinstance(bound, torch.Tensor) else abs(bound) == float("inf")


def _expect_masked_mean(check, masked_mean, x, low, high):
    __tracebackhide__ = True
    inputs = {"x": x, "low": low, "high": high}
    exercised_as(masked_mean_labels, x, low, high)
    out = masked_mean(x, low, high)
    expected = oracle("operators.masked_mean", x, low, high)
    mistaken = oracle("operators.masked_mean_mistakes", x, low, high)
    expect_meta(check, out, what="masked_mean's result", shape=expected.shape, dtype=x.dtype,
                device=x.device.type, inputs=inputs)
    hint = ("Keep x where `(x >= low) & (x <= high)` (with `&`, not `and`; bounds included), "
            "sum with `torch.where(inside, x, 0)` and divide by the count, clamped to at least 1.")
    if _infinite(low) or _infinite(high):
        hint += (" An infinite bound is a bound like any other: `x <= inf` holds for x = inf, so compare with the "
                 "bounds as given, without clipping or replacing them.")
    known = (("the mean without the values that sit exactly on a bound (the bounds are included)",
              lambda _: mistaken["bounds excluded"], "Keep x where `(x >= low) & (x <= high)`: `>=` and `<=`."),
             ("the sum of the entries in range divided by N, the number of rows, not by how many are in range",
              lambda _: mistaken["divided by N"],
              "Divide by the count of entries in range per position (`inside.sum(dim=0)`, clamped to at least 1)."),
             ("NaN where nothing is in range: 0 / 0 (a position with no entry in range gives 0)",
              lambda _: mistaken["0 / 0"],
              "Divide by the count clamped to at least 1, `inside.sum(dim=0).clamp(min=1)`: the sum of nothing is "
              "0 already, and 0 / 1 = 0."),
             ("NaN where x times the 0/1 mask keeps a NaN or an infinity from outside the range (0 * inf is NaN)",
              lambda _: mistaken["multiplied by the mask"],
              "Select, do not multiply: `torch.where(inside, x, 0)` gives 0 outside the range whatever x holds "
              "there, while `x * inside` keeps NaN (0 * nan and 0 * inf are both NaN)."),
             ("NaN where a NaN of x was counted as in range: NaN is neither below nor above a bound, and in no range",
              lambda _: mistaken["NaN counted"],
              "Test for being inside, `(x >= low) & (x <= high)`, which is False for NaN; `~(x < low) & ~(x > high)` "
              "is True for it."))
    expect_close(check, out, expected, what="masked_mean's result", inputs=inputs,
                 atol=16 * torch.finfo(x.dtype).eps, hint=hint, equal_nan=True, known=known)


@graded(2, hidden=[{"cases": 48}])
def check_masked_mean(check, masked_mean, *, seed=0, cases=24):
    """The mean over dimension 0 of the entries with ``low <= x <= high`` (bounds included; many values sit
    exactly on them), for Python-number bounds and per-column tensor bounds, every float dtype, CPU and CUDA;
    the shape of ``x[0]``, the dtype and device of ``x``."""
    __tracebackhide__ = True
    gen = check.generator()
    for case in _rows_first([_masked_case(gen, i, special=False) for i in range(cases)]):
        _expect_masked_mean(check, masked_mean, *case)


@graded(2, hidden=[{"cases": 32}])
def check_masked_mean_special_values(check, masked_mean, *, seed=0, cases=16):
    """NaN is in no range, +-inf lie outside finite bounds (and inside infinite ones: ``high = inf`` or
    ``low = -inf``, Python numbers and per-column tensors), and a column with nothing in range (or no rows at all)
    gives 0: the result is finite wherever the reference is, and inf or NaN where it is."""
    __tracebackhide__ = True
    gen = check.generator()
    for case in _rows_first([_masked_case(gen, i, special=True) for i in range(cases)]):
        _expect_masked_mean(check, masked_mean, *case)
