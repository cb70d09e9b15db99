"""Comparisons whose failures a student can act on.

Built on ``torch.testing.assert_close`` (which reports mismatched elements and the
greatest differences); we add what the check was doing, the input that failed and a hint.
"""

import re

import torch

from autograder.errors import CheckFailure
from autograder.seam.student import describe, shown_values

# (rtol, atol) for a result of each dtype compared with a float64 reference.
TOLERANCES = {
    torch.float16: (5e-3, 1e-4),
    torch.bfloat16: (3e-2, 1e-3),
    torch.float32: (1e-5, 1e-6),
    torch.float64: (1e-9, 1e-12),
}


def tolerance(dtype, table=None):
    table = table or TOLERANCES
    return table.get(dtype, (0.0, 0.0))


def context(inputs):
    if not inputs:
        return ""
    return "\nInput: " + "; ".join(f"{k} = {describe(v)}" for k, v in inputs.items())


def expect_tensor(check, value, *, what, inputs=None):
    """The result must be a ``torch.Tensor``."""
    __tracebackhide__ = True
    if not isinstance(value, torch.Tensor):
        raise CheckFailure(check, f"{what} should be a torch.Tensor, got {type(value).__name__}: {describe(value)}."
                           + context(inputs), hint="Return a tensor, not a Python number, list or NumPy array.",
                           kind="wrong type")


SHAPE_HINT = "Check `dim` and `keepdim` in your reductions."


def expect_meta(check, value, *, what, shape=None, dtype=None, device=None, inputs=None, hint=None,
                known_shapes=()):
    """Type, shape, dtype and device of a result, each with its own message.

    ``hint`` is the caller's advice for a wrong shape (the default speaks of reductions). ``known_shapes``:
    ``((words, shape, hint), ...)``, the shapes known mistakes give ("a sum over the last dimension"): a result of
    one of them (when it is not ``shape``) is told as that mistake, with its own hint.
    """
    __tracebackhide__ = True
    expect_tensor(check, value, what=what, inputs=inputs)
    for words, known, known_hint in known_shapes:
        if shape is not None and tuple(value.shape) == tuple(known) != tuple(shape):
            raise CheckFailure(check, f"{what} has shape {list(value.shape)}, the shape of {words}; expected "
                                      f"{list(shape)}." + context(inputs), hint=known_hint, kind=known_kind(words))
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise CheckFailure(check, f"{what} has shape {list(value.shape)}, expected {list(shape)}." + context(inputs),
                           hint=hint or SHAPE_HINT, kind="wrong shape")
    if dtype is not None and value.dtype != dtype:
        raise CheckFailure(check, f"{what} has dtype {value.dtype}, expected {dtype}." + context(inputs),
                           hint="Compute in the input's dtype, or cast the result back with `.to(x.dtype)`.",
                           kind=dtype_kind(value.dtype, dtype))
    if device is not None and value.device.type != torch.device(device).type:
        raise CheckFailure(check, f"{what} is on {value.device}, expected {device}." + context(inputs),
                           hint="Create new tensors with `device=x.device`; never hard-code `.cuda()` or `.cpu()`.",
                           kind="wrong device")


def known_kind(words):
    """The kind of a failure told as a known mistake: "known: " and the name the check gives that mistake
    (``known=``/``known_shapes=``'s words), its numbers masked, so that it reads the same on every input."""
    return "known: " + re.sub(r"\d+", "#", words)


def dtype_kind(got, expected):
    """The kind of a result of the wrong dtype, with both dtypes: "wrong dtype: float32 for float64". Always float32,
    float32 kept from a float16 input and an int32 kept where the sum is int64 are three mistakes, not one."""
    return f"wrong dtype: {str(got).removeprefix('torch.')} for {str(expected).removeprefix('torch.')}"


def expect_finite(check, value, *, what, inputs=None, hint=None):
    """No NaN and no infinity anywhere in ``value``."""
    __tracebackhide__ = True
    bad = ~torch.isfinite(value.detach())
    if bad.any():
        where = bad.nonzero()[0].tolist()
        raise CheckFailure(check, f"{what} contains {int(torch.isnan(value).sum())} NaN and "
                                  f"{int(torch.isinf(value).sum())} infinite values out of {value.numel()} "
                                  f"(first at index {tuple(where)})." + context(inputs),
                           hint=hint or "Something overflowed: subtract the maximum before `exp`.",
                           kind=not_finite_kind(value))


def not_finite_kind(value):
    """The kind of a result that holds NaN or infinities where it should not, with which of them it holds: "not
    finite: NaN", "not finite: +inf, -inf"... NaN comes from 0 / 0 or inf - inf, +inf from an overflow, -inf from
    log(0): the same item failing with another of them is another mistake."""
    value = value.detach()
    held = [name for name, present in (("NaN", torch.isnan(value)), ("+inf", value == float("inf")),
                                       ("-inf", value == float("-inf"))) if bool(present.any())]
    return "not finite: " + ", ".join(held)


def expect_close(check, actual, expected, *, what, inputs=None, rtol=None, atol=None, table=None, hint=None,
                 equal_nan=False, known=()):
    """``actual`` matches ``expected`` within the tolerance of ``actual``'s dtype.

    ``expected`` is usually a float64 reference; both are compared in float64. ``equal_nan`` for a check whose
    reference is NaN where the exercise asks for NaN (a sum over a NaN); elsewhere NaN is a mistake.
    ``known``: ``((words, mistake, hint[, name]), ...)``, the known mistakes whose result follows from the reference
    (``mistake(expected)``, in float64): a result that matches one within the same tolerance is told as that mistake,
    "<what> is <words>", with its own hint, rather than as a difference to read; its kind is ``known_kind(name)``
    (``name``: the words, unless one mistake reached by several routes gives each the same name). A result that matches two is told
    as a difference: this input cannot tell those mistakes apart, and naming one could name the wrong one.
    """
    __tracebackhide__ = True
    expect_meta(check, actual, what=what, shape=expected.shape, inputs=inputs, hint=hint)
    default_rtol, default_atol = tolerance(actual.dtype, table)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    a = actual.detach().cpu()
    e = expected.detach().cpu()
    if a.is_floating_point() or e.is_floating_point():
        a, e = a.double(), e.double()
    try:
        torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except AssertionError as error:
        matched = [(words, known_hint, (name or [words])[0]) for words, mistake, known_hint, *name in known
                   if _matches(a, _on_cpu(mistake(e), like=a), rtol=rtol, atol=atol, equal_nan=equal_nan)]
        if len(matched) == 1:
            (words, known_hint, name), = matched
            raise CheckFailure(check, f"{what} is {words}, not what the exercise asks for." + context(inputs)
                               + "\n" + expected_and_got(actual.detach().cpu(), e, a), hint=known_hint,
                               kind=known_kind(name)) from None
        details = "\n".join(line for line in str(error).splitlines() if line.strip())
        # NaN or infinity where the reference is finite is another mistake than a finite value off (0 / 0, overflow)
        kind = not_finite_kind(a[torch.isfinite(e)]) if bool((~torch.isfinite(a) & torch.isfinite(e)).any()) \
            else "wrong value"
        raise CheckFailure(check, f"{what} differs from the reference (rtol={rtol:g}, atol={atol:g}).\n{details}"
                           + context(inputs) + "\n" + expected_and_got(actual.detach().cpu(), e, a),
                           hint=hint, kind=kind) from None


def _on_cpu(value, *, like):
    """A known mistake's value as the comparison holds ``actual``: on the CPU, in float64 where ``like`` is. A mistake
    is often built from the case's inputs, which live on the student's device (CUDA), while the comparison is made on
    the CPU."""
    value = (value if isinstance(value, torch.Tensor) else torch.as_tensor(value)).detach().cpu()
    return value.double() if like.is_floating_point() and (value.is_floating_point() or value.dtype == torch.bool) \
        else value


def _matches(a, mistaken, *, rtol, atol, equal_nan):
    """``a`` is ``mistaken`` within the tolerance, both on the CPU."""
    return torch.allclose(a, mistaken.to(a.dtype), rtol=rtol, atol=atol, equal_nan=equal_nan)


def expected_and_got(actual, expected64, actual64):
    """Expected and Got as the student sees them: in ``actual``'s dtype, with as many digits as it takes to show
    them apart (up to 17), and the difference computed in float64 beside them.

    A float16 result is shown as float16, not as the grader's float64 copy of it; when both print the same (an
    accumulation error in the last digits), more digits show where they part."""
    if actual.is_floating_point() or actual.is_complex():
        expected = expected64.to(actual.dtype)
    else:
        expected = expected64
    digits = 4
    while digits < 17 and shown_values(expected, digits=digits) == shown_values(actual, digits=digits):
        digits += 3
    lines = [f"Expected: {describe(expected, digits=digits)}", f"Got:      {describe(actual, digits=digits)}"]
    if expected64.is_floating_point() and actual64.numel():
        lines.append(f"Difference (got - expected, in float64): {shown_values(actual64 - expected64, digits=3)}")
    return "\n".join(lines)
