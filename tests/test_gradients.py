"""Gradient checks: analytic comparison and gradcheck both catch a wrong backward."""

import pytest
import torch

from autograder.errors import CheckFailure
from autograder.measuring.gradients import expect_grad_close, expect_gradcheck

pytestmark = pytest.mark.quick


class WrongSquare(torch.autograd.Function):
    """x ** 2 with a backward that forgets the factor 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


def test_right_gradient_passes():
    x = torch.randn(3, 4, dtype=torch.float64)
    expect_grad_close("c", lambda t: t * t, [x], lambda g: 2 * x * g)
    expect_gradcheck("c", lambda t: t * t, [x])


def test_wrong_gradient_fails_both():
    x = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(CheckFailure) as excinfo:
        expect_grad_close("c", WrongSquare.apply, [x], lambda g: 2 * x * g)
    assert "gradient with respect to input 0" in str(excinfo.value)
    with pytest.raises(CheckFailure) as excinfo:
        expect_gradcheck("c", WrongSquare.apply, [x])
    assert "gradcheck" in str(excinfo.value)


def test_detached_result_is_reported():
    x = torch.randn(3, dtype=torch.float64)
    with pytest.raises(CheckFailure) as excinfo:
        expect_grad_close("c", lambda t: (t * 2).detach(), [x], lambda g: 2 * g, what="double")
    assert "not connected to the autograd graph" in str(excinfo.value)


class LocalOnlySquare(WrongSquare):
    """x ** 2 with a backward that returns the local derivative alone, forgetting the upstream gradient."""

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x


def test_a_backward_that_ignores_the_upstream_gradient_is_told_so():
    x = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(CheckFailure) as excinfo:
        expect_grad_close("c", LocalOnlySquare.apply, [x], lambda g: 2 * x * g)
    assert "upstream gradient of ones" in str(excinfo.value) and "grad_output" in excinfo.value.hint
    assert excinfo.value.kind.startswith("known: ")    # the known mistake by name, not as a wrong value
    with pytest.raises(CheckFailure) as excinfo:       # any other wrong gradient is a difference to read
        expect_grad_close("c", WrongSquare.apply, [x], lambda g: 2 * x * g)
    assert "upstream" not in str(excinfo.value) and excinfo.value.kind == "wrong value"


def test_a_result_of_the_wrong_shape_has_no_gradient_to_compare():
    x = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(CheckFailure) as excinfo:       # the expected product is only defined on [3, 4]: no grader error
        expect_grad_close("c", lambda t: (t * t).sum(), [x], lambda g: 2 * x * g[:, None], shape=x.shape)
    assert excinfo.value.kind == "wrong shape" and "has shape [], expected [3, 4]" in str(excinfo.value)
