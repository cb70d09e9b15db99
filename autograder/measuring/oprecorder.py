"""Expectations on the torch operations a student's function runs, recorded by :mod:`autograder.seam.ops`: no
forbidden operation, a count that does not grow with the batch, work that stays constant."""

from autograder.errors import CheckFailure
from autograder.seam.ops import record_ops
from autograder.seam.student import call_student


def ops_of(check, fn, *args, what=None, kernels=True, **kwargs):
    """Run ``fn`` under the recorder; return ``(result, record)``."""
    __tracebackhide__ = True
    with record_ops(kernels=kernels) as record:
        result = call_student(check, fn, *args, what=what, **kwargs)
    return result, record


def expect_no_forbidden_ops(check, fn, *args, forbidden, what=None, hint=None, **kwargs):
    """``fn(*args)`` must not call any operation in ``forbidden``, in any spelling."""
    __tracebackhide__ = True
    result, record = ops_of(check, fn, *args, what=what, **kwargs)
    used = record.find(forbidden)
    if used:
        raise CheckFailure(check, f"{what or 'your function'} uses {', '.join(used)}, which this exercise forbids "
                                  f"(forbidden: {', '.join(sorted(forbidden))}).",
                           hint=hint or "Build it from elementary operations (max, exp, sum, log).",
                           kind="forbidden op")
    return result, record


def expect_constant_op_count(check, fn, make_args, sizes, *, what=None, hint=None):
    """The number of torch calls ``fn`` makes must not grow with the problem size.

    ``make_args(size)`` builds the arguments for each size in ``sizes``; the
    verdict needs no clock, so it is the same on every machine.
    """
    __tracebackhide__ = True
    counts = {}
    for size in sizes:
        _, record = ops_of(check, fn, *make_args(size), what=what, kernels=False)
        counts[size] = record.call_count
    if len(set(counts.values())) > 1:
        shown = ", ".join(f"size {s}: {c} calls" for s, c in counts.items())
        raise CheckFailure(check, f"the number of torch operations {what or 'your function'} calls grows with the "
                                  f"input size ({shown}); a vectorized version makes the same calls for any size.",
                           hint=hint or "Replace the Python loop with one batched operation.",
                           measurements={"op_counts": counts}, kind="grows with size")
    return counts


def expect_constant_work(check, fn, make_args, sizes, *, what, hint):
    """The torch calls and the ATen kernels of ``fn(*make_args(size))`` must be as many for every size.

    Calls are what the Python code asks for (``expect_constant_op_count``); kernels are
    what runs, which also counts the loop inside a TorchScript function. No clock: the
    same verdict on every machine. Returns ``(calls, kernels)``, each ``{size: count}``.
    """
    __tracebackhide__ = True
    calls = expect_constant_op_count(check, fn, make_args, sizes, what=what, hint=hint)
    kernels = {}
    for size in sizes:
        _, record = ops_of(check, fn, *make_args(size), what=what)
        kernels[size] = len(record.kernels)
    if len(set(kernels.values())) > 1:
        shown = ", ".join(f"size {s}: {c}" for s, c in kernels.items())
        raise CheckFailure(check, f"the number of ATen kernels {what} runs grows with the input size ({shown}); "
                                  "a vectorized version runs the same kernels for any size.",
                           hint=hint, measurements={"calls": calls, "kernels": kernels}, kind="grows with size")
    return calls, kernels
