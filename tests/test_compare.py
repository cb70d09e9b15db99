"""Comparisons fail with messages that name the property, the input and the difference."""

import pytest
import torch

from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_finite, expect_meta

pytestmark = pytest.mark.quick


def test_close_values_pass_per_dtype_tolerance():
    ref = torch.rand(4, 5, dtype=torch.float64)
    expect_close("c", ref.float(), ref, what="r")
    expect_close("c", ref.half(), ref, what="r")
    expect_close("c", ref.bfloat16(), ref, what="r")


def test_mismatch_reports_elements_input_and_hint():
    ref = torch.zeros(3, 4, dtype=torch.float64)
    got = torch.zeros(3, 4)
    got[1, 2] = 0.5
    with pytest.raises(CheckFailure) as excinfo:
        expect_close("check_y", got, ref, what="the result", inputs={"x": torch.ones(2)}, hint="try harder")
    message = str(excinfo.value)
    assert "Mismatched elements: 1 / 12" in message
    assert "index (1, 2)" in message
    assert "Input: x = tensor of shape [2]" in message
    assert message.endswith("Hint: try harder")


def test_float64_is_strict():
    ref = torch.ones(3, dtype=torch.float64)
    with pytest.raises(CheckFailure):
        expect_close("c", ref + 1e-6, ref, what="r")


@pytest.mark.parametrize("kwargs, value, words", [
    ({"shape": (2, 3)}, torch.zeros(3, 2), "has shape [3, 2], expected [2, 3]"),
    ({"dtype": torch.float16}, torch.zeros(2), "has dtype torch.float32, expected torch.float16"),
    ({"device": "meta"}, torch.zeros(2), "is on cpu, expected meta"),
    ({}, [1.0, 2.0], "should be a torch.Tensor, got list"),
])
def test_meta_mismatches(kwargs, value, words):
    with pytest.raises(CheckFailure) as excinfo:
        expect_meta("c", value, what="r", **kwargs)
    assert words in str(excinfo.value)


def test_finite_counts_nan_and_inf():
    with pytest.raises(CheckFailure) as excinfo:
        expect_finite("c", torch.tensor([1.0, float("nan"), float("inf"), float("-inf")]), what="r")
    assert "1 NaN and 2 infinite values out of 4 (first at index (1,))" in str(excinfo.value)
    expect_finite("c", torch.tensor([1.0, -3e38]), what="r")
