"""Gradient checks: analytic comparison and ``torch.autograd.gradcheck`` in float64.

A failure names the call that failed in full: every argument of the student's function
(the ones held fixed as well as the one differentiated), and, when the inputs are small,
a call a student can paste into the notebook to reproduce it (:func:`call_source`).
"""

import math
import zlib

import torch
from torch.autograd.gradcheck import GradcheckError

from autograder.errors import CheckFailure
from autograder.measuring.compare import SHAPE_HINT, expect_close, expect_tensor
from autograder.seam.student import call_student, describe

LITERAL_MAX_ELEMENTS = 36    # a tensor with more elements is described, not written out, in a reproducing call


def _float_source(v):
    if math.isnan(v):
        return 'float("nan")'
    if math.isinf(v):
        return 'float("inf")' if v > 0 else '-float("inf")'
    return repr(v)


def tensor_source(t, *, requires_grad=False, max_elements=LITERAL_MAX_ELEMENTS):
    """Python source that rebuilds ``t`` exactly (values, shape, dtype, device), or ``None`` when it is too large.

    ``repr`` of a Python float is the shortest text that reads back as the same float64, and a float32, float16
    or bfloat16 value converts to float64 exactly, so ``torch.tensor(...)`` of the text gives the same bits back.
    """
    if not isinstance(t, torch.Tensor) or t.numel() > max_elements or t.is_complex() or t.layout != torch.strided:
        return None
    options = []
    if t.dtype != torch.float32:
        options.append(f"dtype={t.dtype}")
    if t.device.type != "cpu":
        options.append(f'device="{t.device}"')
    if requires_grad:
        options.append("requires_grad=True")
    tail = "".join(f", {o}" for o in options)
    if t.numel() == 0:
        return f"torch.empty({list(t.shape)}{tail})"

    def text(v):
        if isinstance(v, list):
            return "[" + ", ".join(text(e) for e in v) + "]"
        return _float_source(v) if isinstance(v, float) else repr(v)

    return f"torch.tensor({text(t.detach().cpu().tolist())}{tail})"


def call_source(name, args, kwargs=None, *, wrt=(), max_elements=LITERAL_MAX_ELEMENTS):
    """``name(arg, ..., key=value)`` as Python source a student can paste, or ``None`` when an argument is too
    large (or not a tensor, number, string or ``None``) to write out. Arguments whose index is in ``wrt`` are
    written with ``requires_grad=True``."""
    parts = []
    for i, a in enumerate(args):
        parts.append(_value_source(a, i in wrt, max_elements))
    for k, v in (kwargs or {}).items():
        parts.append(None if _value_source(v, False, max_elements) is None
                     else f"{k}={_value_source(v, False, max_elements)}")
    if any(p is None for p in parts):
        return None
    return f"{name}({', '.join(parts)})"


def _value_source(value, requires_grad, max_elements):
    if isinstance(value, torch.Tensor):
        return tensor_source(value, requires_grad=requires_grad, max_elements=max_elements)
    if isinstance(value, float):
        return _float_source(value)
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    return None


def _described_call(name, args, kwargs, names):
    labels = names or [None] * len(args)
    parts = [f"{label} = {describe(a)}" if label else describe(a) for label, a in zip(labels, args)]
    parts += [f"{k} = {describe(v)}" for k, v in (kwargs or {}).items()]
    return f"{name}({'; '.join(parts)})" if names else f"{name}({', '.join(parts)})"


def _with_call(failure, name, args, kwargs, wrt, names):
    """``failure`` with the full call appended: pasteable when small, described otherwise (not for a function
    that is not written yet: any call shows that)."""
    if failure.kind == "not implemented":
        return failure
    pasteable = call_source(name, args, kwargs, wrt=wrt)
    if pasteable:
        extra = f"\nTo reproduce, run: {pasteable}"
    else:
        extra = f"\nThe call: {_described_call(name, args, kwargs, names)}"
    return CheckFailure(failure.check, failure.detail + extra, hint=failure.hint, measurements=failure.measurements,
                        kind=failure.kind)


def student_grad(check, fn, inputs, *, wrt=0, grad_output=None, what=None, seed=0, kwargs=None, shape=None):
    """The gradient of ``fn(*inputs, **kwargs)`` with respect to ``inputs[wrt]``.

    The output is reduced with a fixed random ``grad_output`` (a vector-Jacobian
    product), so every element of the Jacobian matters. Returns ``(output, grad, grad_output)``.
    ``kwargs`` are passed to ``fn`` as they are (not differentiated). ``shape``: the shape the output must have
    (a failure "wrong shape" otherwise), for an expected product that is only defined on that shape.
    """
    __tracebackhide__ = True
    inputs = list(inputs)
    x = inputs[wrt].detach().clone().requires_grad_(True)
    inputs[wrt] = x
    out = call_student(check, fn, *inputs, what=what, **(kwargs or {}))
    expect_tensor(check, out, what="the result")
    if shape is not None and tuple(out.shape) != tuple(shape):
        raise CheckFailure(check, f"the result of {what or 'your function'} has shape {list(out.shape)}, expected "
                                  f"{list(shape)}, so its gradient cannot be compared.", hint=SHAPE_HINT,
                           kind="wrong shape")
    if not out.requires_grad:
        raise CheckFailure(check, f"the result of {what or 'your function'} is not connected to the autograd "
                                  f"graph of input {wrt} ({describe(x)}).",
                           hint="Do not call `.detach()`, `.item()`, `.numpy()` or `torch.no_grad()` on the way.",
                           kind="no gradient")
    if grad_output is None:
        generator = torch.Generator().manual_seed(seed)
        grad_output = torch.randn(out.shape, generator=generator, dtype=torch.float64).to(out.dtype).to(out.device)
    try:
        (grad,) = torch.autograd.grad(out, x, grad_output, allow_unused=True)
    except RuntimeError as error:
        raise CheckFailure(check, f"backward through {what or 'your function'} failed: {error}",
                           kind=f"raised: {type(error).__name__}") from None
    if grad is None:
        grad = torch.zeros_like(x)
    return out, grad, grad_output


def expect_grad_close(check, fn, inputs, expected_vjp, *, wrt=0, what=None, hint=None, kwargs=None, names=None,
                      shape=None, known=(), **tolerances):
    """The student's vector-Jacobian product equals ``expected_vjp(grad_output)``.

    ``kwargs`` go to ``fn`` unchanged; ``names`` (one per input, e.g. ``["labels", "logits"]``) label the inputs
    in the message. With either, a failure shows the whole call ``what(inputs..., **kwargs)``, written out so
    that it can be pasted when the inputs are small. ``shape``: the output's (see :func:`student_grad`).
    ``known``: ``((words, mistaken_vjp, hint), ...)``, the known mistakes of a backward, each the gradient it gives
    for an upstream gradient (told by name as ``expect_close``'s ``known`` are), beside the one every hand-written
    backward can make (the upstream gradient ignored).
    """
    __tracebackhide__ = True
    full_call = kwargs is not None or names is not None
    try:
        _, grad, grad_output = student_grad(check, fn, inputs, wrt=wrt, what=what, kwargs=kwargs, shape=shape)
        label = f"`{names[wrt]}`" if names else f"input {wrt}"
        shown = {(names[i] if names else f"input {i}"): v for i, v in enumerate(inputs)}
        shown.update(kwargs or {})
        expect_close(check, grad, expected_vjp(grad_output), what=f"the gradient with respect to {label}",
                     inputs=shown, hint=hint, known=_ignoring_upstream(expected_vjp, grad_output)
                     + tuple((words, _given(vjp, grad_output), known_hint) for words, vjp, known_hint in known),
                     **tolerances)
    except CheckFailure as failure:
        if not full_call:
            raise
        raise _with_call(failure, what or getattr(fn, "__name__", "fn"), inputs, kwargs, (wrt,), names) from None


def _given(vjp, grad_output):
    """``expect_close``'s ``mistake(expected)`` for a mistaken vector-Jacobian product, at this upstream gradient."""
    return lambda _: vjp(grad_output).detach().cpu().double()


def _ignoring_upstream(expected_vjp, grad_output):
    """The known mistake of a hand-written backward that a gradient's values show (``expect_close``'s ``known``):
    it returns the local derivative alone, as if the upstream gradient were all ones, instead of multiplying
    ``grad_output`` in (the chain rule)."""
    return (("the gradient for an upstream gradient of ones (the random upstream gradient was ignored)",
             _given(expected_vjp, torch.ones_like(grad_output)),
             "In `backward(ctx, grad_output)`, multiply the local derivative by `grad_output` (the chain rule): "
             "return `grad_output * local`, not `local` alone."),)


def _seed_of(inputs):
    """A seed drawn from the inputs' values: fast gradcheck's random directions are the same for the same inputs
    (a regrade gives the same grade), and as unpredictable as the inputs, which are drawn from the hidden seed."""
    digest = 0
    for t in inputs:
        if isinstance(t, torch.Tensor):
            digest = zlib.crc32(t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes(), digest)
    return digest


def expect_gradcheck(check, fn, inputs, *, what=None, eps=1e-6, atol=1e-5, rtol=1e-3, wrt=None, kwargs=None,
                     names=None):
    """``torch.autograd.gradcheck`` in float64 on every floating input (or on those whose index is in ``wrt``).

    In its fast mode (PyTorch's ``fast_mode=True``): the analytic and the finite-difference Jacobians are compared
    along random directions, ``v^T J u``, which takes three calls of the student's function instead of two per
    input element and one backward per output element; a wrong gradient almost surely differs along random
    directions, and when it does, gradcheck recomputes both Jacobians in full for the message. Under trusted
    grading each call is a round trip to the student's worker: a softmax of 30 logits took 2.4 s in full and
    0.16 s in fast mode (2-core x86_64, torch 2.13.0, 2026-11-24).

    ``kwargs`` go to ``fn`` unchanged; ``names`` label the inputs. With either, a failure shows the whole call.
    """
    __tracebackhide__ = True
    if isinstance(wrt, int):
        wrt = (wrt,)
    differentiated = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.is_floating_point()
                      and (wrt is None or i in wrt)]
    prepared = [t.detach().double().requires_grad_(True) if i in differentiated else t
                for i, t in enumerate(inputs)]
    kwargs_given = kwargs is not None or names is not None
    kwargs = dict(kwargs or {})

    def wrapped(*args):
        return call_student(check, fn, *args, what=what, **kwargs)

    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(_seed_of(prepared))
            torch.autograd.gradcheck(wrapped, prepared, eps=eps, atol=atol, rtol=rtol, raise_exception=True,
                                     fast_mode=True)
    except CheckFailure as failure:
        if not kwargs_given:
            raise
        raise _with_call(failure, what or "fn", prepared, kwargs, tuple(differentiated), names) from None
    except (GradcheckError, RuntimeError) as error:
        text = str(error)
        if len(text) > 1500:
            text = text[:1500] + " ..."
        if kwargs_given:
            described = _described_call(what or "fn", inputs, kwargs, names)
            pasteable = call_source(what or "fn", prepared, kwargs, wrt=tuple(differentiated))
            where = f"\nThe call: {described}" + (f"\nTo reproduce, run: {pasteable}" if pasteable else "")
        else:
            where = "\nInputs: " + "; ".join(describe(t) for t in inputs)
        raise CheckFailure(check, f"gradcheck (float64 finite differences) disagrees with the gradient of "
                                  f"{what or 'your function'}:\n{text}{where}",
                           hint="Use differentiable torch operations end to end, in the input's dtype.",
                           kind="wrong gradient") from None
