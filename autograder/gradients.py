"""Gradient checks: analytic comparison and ``torch.autograd.gradcheck`` in float64."""

import torch
from torch.autograd.gradcheck import GradcheckError

from .compare import expect_close, expect_tensor
from .errors import CheckFailure
from .student import call_student, describe


def student_grad(check, fn, inputs, *, wrt=0, grad_output=None, what=None, seed=0):
    """The gradient of ``fn(*inputs)`` with respect to ``inputs[wrt]``.

    The output is reduced with a fixed random ``grad_output`` (a vector-Jacobian
    product), so every element of the Jacobian matters. Returns ``(output, grad, grad_output)``.
    """
    __tracebackhide__ = True
    inputs = list(inputs)
    x = inputs[wrt].detach().clone().requires_grad_(True)
    inputs[wrt] = x
    out = call_student(check, fn, *inputs, what=what)
    expect_tensor(check, out, what="the result")
    if not out.requires_grad:
        raise CheckFailure(check, f"the result of {what or 'your function'} is not connected to the autograd "
                                  f"graph of input {wrt} ({describe(x)}).",
                           hint="Do not call `.detach()`, `.item()`, `.numpy()` or `torch.no_grad()` on the way.")
    if grad_output is None:
        generator = torch.Generator().manual_seed(seed)
        grad_output = torch.randn(out.shape, generator=generator, dtype=torch.float64).to(out.dtype).to(out.device)
    try:
        (grad,) = torch.autograd.grad(out, x, grad_output, allow_unused=True)
    except RuntimeError as error:
        raise CheckFailure(check, f"backward through {what or 'your function'} failed: {error}") from None
    if grad is None:
        grad = torch.zeros_like(x)
    return out, grad, grad_output


def expect_grad_close(check, fn, inputs, expected_vjp, *, wrt=0, what=None, hint=None, **tolerances):
    """The student's vector-Jacobian product equals ``expected_vjp(grad_output)``."""
    __tracebackhide__ = True
    _, grad, grad_output = student_grad(check, fn, inputs, wrt=wrt, what=what)
    expect_close(check, grad, expected_vjp(grad_output), what=f"the gradient with respect to input {wrt}",
                 inputs={f"input {i}": v for i, v in enumerate(inputs)}, hint=hint, **tolerances)


def expect_gradcheck(check, fn, inputs, *, what=None, eps=1e-6, atol=1e-5, rtol=1e-3):
    """``torch.autograd.gradcheck`` in float64 on every floating input."""
    __tracebackhide__ = True
    prepared = [t.detach().double().requires_grad_(True) if isinstance(t, torch.Tensor) and t.is_floating_point()
                else t for t in inputs]

    def wrapped(*args):
        return call_student(check, fn, *args, what=what)

    try:
        torch.autograd.gradcheck(wrapped, prepared, eps=eps, atol=atol, rtol=rtol, raise_exception=True)
    except CheckFailure:
        raise
    except (GradcheckError, RuntimeError) as error:
        text = str(error)
        if len(text) > 1500:
            text = text[:1500] + " ..."
        raise CheckFailure(check, f"gradcheck (float64 finite differences) disagrees with the gradient of "
                                  f"{what or 'your function'}:\n{text}\nInputs: "
                                  + "; ".join(describe(t) for t in inputs),
                           hint="Use differentiable torch operations end to end, in the input's dtype.") from None
