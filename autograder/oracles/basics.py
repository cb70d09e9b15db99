"""The ``basics`` answers the checks compare against (grader-only)."""

import torch


def grad(f, x):
    """The gradient of the scalar ``f`` at ``x``, in float64 (``grad_of``'s answer)."""
    leaf = x.detach().double().requires_grad_(True)
    with torch.enable_grad():
        (gradient,) = torch.autograd.grad(f(leaf), leaf)
    return gradient
