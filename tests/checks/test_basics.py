"""The basics checks pass correct solutions and catch each realistic mistake."""

import numpy as np
import pytest
import torch

from autograder.checks import basics
from tests.mutants.basics import MUTANTS
from tests.proving import failing, reference, with_replacements

TOPIC = "basics"


@pytest.mark.gpu
def test_cuda_cases_are_graded_on_a_gpu():
    seen = []

    def recording(t):
        seen.append(t.device.type)
        return t.detach().cpu().numpy()

    basics.check_to_numpy_values(recording)
    assert "cuda" in seen and "cpu" in seen


def test_backward_on_x_message_names_the_grad_left_behind():
    replacements, _ = MUTANTS["grad_of with .backward() on x"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_grad_of_values"]
    assert "has a .grad" in message and "torch.autograd.grad" in message


def test_grad_of_is_graded_where_x_was_computed_from_a_leaf():
    def backward_on_a_view(f, x):   # leaves x's flag alone, but accumulates into the leaf x came from
        if not x.is_leaf:
            f(x).backward()
        leaf = x.detach().requires_grad_(True)
        return torch.autograd.grad(f(leaf), leaf)[0]

    failed = failing(TOPIC, with_replacements(TOPIC, {"grad_of": backward_on_a_view}))
    assert "the leaf w that x = 1.5 * w was computed from" in failed["check_grad_of_values"]


def test_sgd_message_points_at_adam():
    replacements, _ = MUTANTS["fit_quadratic with SGD"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_fit_quadratic"]
    assert "NaN" in message and "Adam" in message


def test_fit_tolerance_holds_for_the_reference_on_other_seeds():
    fit_quadratic = reference(TOPIC)["fit_quadratic"]
    for seed in (3, 4, 5):
        basics.check_fit_quadratic(fit_quadratic, seed=seed, cases=2)


def test_fit_tolerance_rejects_a_half_trained_fit():
    fit_quadratic = reference(TOPIC)["fit_quadratic"]
    with pytest.raises(AssertionError) as excinfo:
        basics.check_fit_quadratic(fit_quadratic, steps=150)
    assert "atol=0.05" in str(excinfo.value)


def test_to_numpy_oracle_keeps_nan_and_exact_int64():
    t = torch.tensor([2 ** 62 + 1, -(2 ** 62)], dtype=torch.int64)
    basics._expect_array("probe", t.numpy(), t, kind="an int64 tensor,")
    f = torch.tensor([float("nan"), 1.0])
    basics._expect_array("probe", f.numpy(), f, kind="a float tensor,")
    with pytest.raises(AssertionError) as excinfo:
        basics._expect_array("probe", (t + 1).numpy(), t, kind="an int64 tensor,")
    assert "2 of 2 elements" in str(excinfo.value)
    with pytest.raises(AssertionError):
        basics._expect_array("probe", np.array([1.0, 1.0]), f, kind="a float tensor,")


def test_flood_of_prints_in_fit_costs_only_its_checks():
    def chatty(generate_data, steps=1000, lr=0.1):
        print("loss" * 50_000)
        raise ValueError("diverged")

    failed = failing(TOPIC, with_replacements(TOPIC, {"fit_quadratic": chatty}))
    assert set(failed) == {"check_fit_quadratic", "check_fit_quadratic_fresh_samples"}
    assert len(failed["check_fit_quadratic"]) < 10_000


def test_a_wrong_shaped_gradient_gets_the_gradient_hint_not_the_reduction_hint():
    from tests.proving import run_check

    def grad_of_flattened(f, x):
        x = x.detach().reshape(-1).requires_grad_(True)
        (g,) = torch.autograd.grad(f(x.reshape(-1)), x)
        return g

    result = run_check(basics.check_grad_of_values, {"grad_of": grad_of_flattened})
    assert not result.passed and "has shape" in result.message
    assert "gradient with respect to x itself" in result.message and "keepdim" not in result.message
