"""Inputs and the oracle for ``masked_batch_mean(x, lengths)``: x ``[B, T, F]``, lengths ``[B]`` (int64).

The oracle is a plain loop over the batch in float64: ``x[b, :lengths[b]].mean(0)``, or zeros for
an empty row. Steps past ``lengths[b]`` are padding: the inputs fill them with garbage, inf or NaN,
which a correct answer never lets through.
"""

import re

import torch

# (B, T, F, lengths) every seed sees first: a single step, empty rows, full rows, T = 0, B = 0. The mixed lengths
# come second, before the single empty step: a wrong mask fails first where its known mistakes (``mistaken``) give
# different results (with T = 1 and lengths [0], a mean over all T and a mask with <= both give x itself).
FIXED_CASES = [(1, 1, 1, [1]), (4, 5, 3, [0, 5, 1, 3]), (1, 1, 1, [0]), (2, 3, 4, [0, 0]), (3, 4, 2, [4, 4, 4]),
               (3, 0, 2, [0, 0, 0]), (0, 4, 3, []), (2, 6, 1, [6, 2]), (5, 2, 7, [1, 2, 0, 2, 1])]
SCALES = (1.0, 1e30, 1e-30)          # magnitudes of the values, float32's range included
PADDINGS = ("random", "nan", "inf")

# Tolerance of a result against the float64 oracle: rtol, and atol relative to the largest |value| kept
# (a sum of T terms in float32 is off by up to about T * 6e-8 of it). Calibrated on 2026-11-22, torch 2.13.0,
# 2000 cases of value_case (T <= 12): the largest error, relative to the largest |value| kept, was 7.3e-8 (float32)
# and 1.1e-16 (float64) for the reference, 4.9e-8 and 1.2e-16 for the cumsum solution; a wrong mean is off by
# O(1) of it, or NaN. Half precision (2026-11-25, same machine, 3000 draws of value_case): the reference and the
# cumsum solution were both off by at most 4.5e-4 (float16) and 3.4e-3 (bfloat16) of the largest |value| kept, the
# final rounding (CPU sums accumulate in float32); the tolerance also admits a sum accumulated in the dtype itself,
# as a GPU kernel may do (T <= 12 steps of half an ulp each: 5.9e-3 and 4.7e-2).
TOLERANCE = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12), torch.float16: (5e-3, 1e-2),
             torch.bfloat16: (3e-2, 5e-2)}
MEAN_HINT = ("out[b] is the mean of x[b, :lengths[b]] over the steps (0 for an empty row): build the mask "
             "`torch.arange(T, device=x.device) < lengths[:, None]` ([B, T]), replace the padding with "
             "`torch.where(mask[:, :, None], x, 0)`, sum over T and divide by `lengths.clamp(min=1)`.")


def oracle(x, lengths):
    """``out[b] = x[b, :lengths[b]].mean(0)`` in float64, 0 for an empty row: one row at a time."""
    rows = []
    for b in range(x.shape[0]):
        n = int(lengths[b])
        kept = x[b, :n].detach().to("cpu", torch.float64)
        rows.append(kept.mean(0) if n else torch.zeros(x.shape[2], dtype=torch.float64))
    return torch.stack(rows) if rows else torch.zeros(0, x.shape[2], dtype=torch.float64)


def mistaken(x, lengths):
    """``expect_close``'s ``known`` for a result of ``masked_batch_mean``: two masks that are not the lesson's, each
    as a loop in float64 like :func:`oracle`. Every one of the T steps averaged, padding and all; the step at
    ``lengths[b]`` kept too (an off-by-one ``<=``), still divided by ``lengths[b]`` (1 for an empty row)."""
    def loop(kept_of, count_of):
        rows = [x[b, :kept_of(int(lengths[b]))].detach().to("cpu", torch.float64).sum(0)
                / max(count_of(int(lengths[b])), 1) for b in range(x.shape[0])]
        return torch.stack(rows) if rows else torch.zeros(0, x.shape[2], dtype=torch.float64)

    t = x.shape[1]
    return (("the mean over all T steps, padding included", lambda _: loop(lambda n: t, lambda n: t),
             "Average only the first lengths[b] steps of row b: " + MEAN_HINT),
            ("the sum of the steps up to and including lengths[b] divided by lengths[b] (a mask with <=)",
             lambda _: loop(lambda n: n + 1, lambda n: n),
             "Step t is kept when t < lengths[b]: steps 0 to lengths[b] - 1. " + MEAN_HINT))


def oracle_vjp(x, lengths, grad_output):
    """The gradient of ``sum(oracle(x, lengths) * grad_output)`` with respect to ``x``: step ``t < n`` of row
    ``b`` gets ``grad_output[b] / n``, padding gets 0."""
    steps = torch.arange(x.shape[1], device=x.device)
    kept = (steps < lengths[:, None]).to(grad_output.dtype)
    count = lengths.clamp(min=1).to(grad_output.dtype)
    return kept[:, :, None] * (grad_output / count[:, None])[:, None, :]


def tolerance(x, lengths):
    """``(rtol, atol)`` for a result computed from ``x``: atol relative to the largest |value| kept."""
    rtol, atol = TOLERANCE.get(x.dtype, TOLERANCE[torch.float32])
    steps = torch.arange(x.shape[1], device=x.device)
    kept = x.detach().abs().masked_fill(~(steps < lengths[:, None])[:, :, None], 0)
    scale = float(kept.max()) if kept.numel() else 0.0
    return rtol, atol * scale if scale > 0 else atol


def make_input(gen, b, t, f, lengths=None, *, dtype=torch.float32, scale=1.0, padding="random",
               non_contiguous=False, device="cpu", empty_rows=True):
    """``(x, lengths)``: random values of magnitude ``scale`` in the first ``lengths[b]`` steps, ``padding``
    after them ("random": other random values, "nan", "inf": +-inf). Random lengths include a full row and,
    with ``empty_rows``, an empty one (the checks of other properties leave empty rows to the values check)."""
    if lengths is None:
        lengths = torch.randint(0 if empty_rows else min(1, t), t + 1, (b,), generator=gen)
        if b >= 2 and t >= 1:       # a full row in every batch of two or more, and an empty one if asked
            lengths[-1] = t
            if empty_rows:
                lengths[0] = 0
    lengths = torch.as_tensor(lengths, dtype=torch.int64).reshape(b)
    x = torch.randn(b, t, f, generator=gen, dtype=torch.float64) * scale
    padded = ~(torch.arange(t) < lengths[:, None])
    if padding == "nan":
        x[padded] = float("nan")
    elif padding == "inf":
        signs = torch.where(torch.rand(b, t, f, generator=gen) < 0.5, -1.0, 1.0).to(torch.float64)
        x = torch.where(padded[:, :, None], signs * float("inf"), x)
    x = x.to(dtype)
    if non_contiguous:              # the same values in a non-contiguous view
        x = x.transpose(1, 2).contiguous().transpose(1, 2)
    return x.to(device), lengths.to(device)


def value_case(gen, i, devices):
    """Case ``i`` of the values check: the fixed edge shapes first (random padding), then random shapes,
    dtypes, scales, paddings (random, NaN, inf) and layouts."""
    dtype = value_dtype(i)
    device = devices[i % len(devices)]
    if i < len(FIXED_CASES):
        b, t, f, lengths = FIXED_CASES[i]
        return make_input(gen, b, t, f, lengths, dtype=dtype, device=device)
    b, t, f = (int(torch.randint(low, high, (1,), generator=gen)) for low, high in ((1, 7), (1, 13), (1, 6)))
    scale = 1.0 if dtype == torch.float16 else SCALES[i % 5 % 3]       # 1e30 is past float16's range
    return make_input(gen, b, t, f, dtype=dtype, scale=scale, padding=PADDINGS[i % 3],
                      non_contiguous=i % 4 == 3, device=device)


def value_dtype(i):
    """x's dtype in case ``i``: float32 and float64 in turn, and float16 and bfloat16 in every third pair ("in x's
    dtype" holds for the half-precision dtypes too: dividing by a float32 count would promote them)."""
    return {4: torch.float16, 5: torch.bfloat16}.get(i % 6, (torch.float32, torch.float64)[i % 2])


def sweep_sizes(gen, count, small=3):
    """``count`` shapes ``(B, T, F)`` for the compile checks: sizes from 2 (dynamo specializes 0 and 1), B, T and F
    different from each other in every shape (dynamo's duck sizing gives equal sizes one symbol), and no size used
    twice in a dimension, so code whose graph depends on any size recompiles at every call. The first ``small``
    shapes take sizes from 2 to 9 and the rest from 10 up (to 17 for 8 shapes): a loop, unrolled once per
    compilation, has been caught by the third call before a long one costs compile time."""
    def draw(low, high, n):
        values = torch.arange(low, high)
        return values[torch.randperm(len(values), generator=gen)][:n].tolist()

    first = min(small, count)
    while True:
        b, t, f = (draw(2, 10, first) + draw(10, 10 + max(8, count - first), count - first) for _ in range(3))
        shapes = list(zip(b, t, f))
        if all(len(set(shape)) == 3 for shape in shapes):
            return shapes


def hint_for(check, fn, x, lengths, out):
    """The most likely cause of a wrong mean. Where the result has NaN or inf, the function runs again with the
    padding set to 0: what is still NaN in an empty row is 0 / 0, what went away came from the padding."""
    if out.shape != (x.shape[0], x.shape[2]):
        return MEAN_HINT
    bad_rows = (~torch.isfinite(out.detach().cpu().double())).any(1)
    if not bad_rows.any():
        return MEAN_HINT
    padded = ~(torch.arange(x.shape[1], device=x.device) < lengths[:, None])
    again = check.student(fn, "masked_batch_mean")(x.detach().masked_fill(padded[:, :, None], 0), lengths)
    if not isinstance(again, torch.Tensor) or again.shape != out.shape:
        return MEAN_HINT
    still_bad = (~torch.isfinite(again.detach().cpu().double())).any(1)
    hints = []
    if (still_bad & (lengths.cpu() == 0)).any():
        hints.append("A row with lengths[b] == 0 must give 0; yours gives NaN or inf: 0 / 0. Divide by "
                     "`lengths.clamp(min=1)` (the masked sum of an empty row is already 0).")
    if (bad_rows & ~still_bad).any():
        hints.append("The padding leaks into your result: the steps past lengths[b] hold NaN or inf here, and "
                     "multiplying them by a 0/1 mask keeps them (0 * nan = nan, 0 * inf = nan). Select with "
                     "`torch.where(mask[:, :, None], x, 0)` instead.")
    return " ".join(hints) or MEAN_HINT


def explain_guard(reason):
    """A guard failure, with the dimension of x it names spelled out: "... size mismatch at index 1 (T) ..."."""
    names = {"0": "B", "1": "T", "2": "F"}
    reason = re.sub(r"^\d+/\d+: ", "", reason.split("\n")[0])          # dynamo's compile id ("0/1: ")
    return re.sub(r"(tensor '\w+' size mismatch at index )(\d)",
                  lambda m: f"{m.group(1)}{m.group(2)} ({names.get(m.group(2), '?')})", reason)
