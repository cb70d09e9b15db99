"""The operators checks pass correct solutions and catch each realistic mistake."""

import pytest
import torch

from autograder.checks import operators
from autograder.errors import CheckFailure
from tests.mutants.operators import MUTANTS
from tests.proving import failing, with_replacements

TOPIC = "operators"


def test_looping_row_sum_is_caught_without_a_clock():
    replacements, _ = MUTANTS["row_sum as an unbind loop"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_row_sum_vectorized"]
    assert "grows with the input size" in message and "size 4" in message and "size 64" in message


def test_speed_failure_reports_every_measured_ratio():
    with pytest.raises(CheckFailure) as excinfo:
        operators.check_row_sum_speed(operators.slicing_loop_sum)
    failure = excinfo.value
    ratios = failure.measurements["ratios"]
    assert len(ratios) == 3                                  # 1 + settings.speed.retries
    assert all(f"{r:.1f}x" in failure.detail for r in ratios)
    assert "at least" in failure.detail and "required" in failure.detail


def test_row_sum_dtype_message_names_the_input():
    failed = failing(TOPIC, with_replacements(TOPIC, {"row_sum": lambda x: x.double().sum(0)}))
    assert "has dtype torch.float64, expected torch.float32" in failed["check_row_sum"]
    assert "Input: x = tensor of shape" in failed["check_row_sum"]


def test_nan_from_the_mask_product_is_reported():
    replacements, _ = MUTANTS["masked_mean multiplying by the mask"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_masked_mean_special_values"]
    assert "nan" in message.lower() and "torch.where" in message


def test_masked_mean_reference_of_known_values():
    x = torch.tensor([[0.5, 5.0], [1.0, float("nan")], [float("inf"), 7.0]])
    assert torch.equal(operators.reference_masked_mean(x, 0.0, 1.0), torch.tensor([0.75, 0.0], dtype=torch.float64))
