"""The stability checks pass correct solutions and catch each realistic mistake."""

import pytest
import torch

from autograder.checks import stability
from tests.mutants.stability import MUTANTS
from tests.proving import check_names, failing, with_replacements

TOPIC = "stability"


def test_global_max_message_names_the_problem():
    replacements, _ = MUTANTS["softmax with one max over the whole tensor"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_softmax_extremes"]
    assert "per row" in message and "NaN" in message and "Input: logits" in message


def test_forbidden_alias_is_named():
    def sneaky(logits, dim=-1):
        return torch.special.softmax(logits, dim)

    with pytest.raises(AssertionError) as excinfo:
        stability.check_softmax_no_builtin(sneaky)
    assert "torch.special" in str(excinfo.value)


def test_raising_function_costs_only_its_check():
    def broken(labels, logits, dim=-1):
        raise RuntimeError("boom")

    failed = failing(TOPIC, with_replacements(TOPIC, {"softmax_cross_entropy": broken}))
    assert set(failed) == {c for c in check_names(TOPIC) if "cross_entropy" in c}
    assert "raised RuntimeError: boom" in failed["check_cross_entropy_forward"]


def test_wrong_type_and_shape_get_clear_messages():
    failed = failing(TOPIC, with_replacements(TOPIC, {"stable_softmax": lambda logits, dim=-1: [0.5]}))
    assert "should be a torch.Tensor, got list" in failed["check_softmax_forward"]
    failed = failing(TOPIC, with_replacements(TOPIC, {"stable_softmax": lambda logits, dim=-1: logits.sum()}))
    assert "has shape []" in failed["check_softmax_forward"]


def test_output_flood_is_truncated_in_the_message():
    def chatty(labels, logits, dim=-1):
        print("x" * 100_000)
        raise ValueError("after printing")

    message = failing(TOPIC, with_replacements(TOPIC, {"softmax_cross_entropy": chatty}))["check_cross_entropy_forward"]
    assert "more characters of output dropped" in message
    assert len(message) < 10_000


def test_result_on_another_device_gets_a_clear_message():
    failed = failing(TOPIC, with_replacements(TOPIC, {"stable_softmax": lambda logits, dim=-1: logits.to("meta")}))
    assert "is on meta, expected cpu" in failed["check_softmax_forward"]
    assert "never hard-code" in failed["check_softmax_forward"]
