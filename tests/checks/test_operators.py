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
    from autograder.oracles.operators import masked_mean
    assert torch.equal(masked_mean(x, 0.0, 1.0), torch.tensor([0.75, 0.0], dtype=torch.float64))


def _lesson_cells():
    from autograder.engine import notebooks
    from tests.proving import ROOT
    nb = notebooks.read(ROOT / "source" / "operators" / "operators.ipynb")
    return {c.get("id"): notebooks.source_text(c) for c in nb["cells"]}


def test_lesson_quotes_the_calibrated_speedups():
    """The slicing lesson quotes the figures recorded in settings (docs/speed.md): the lowest reference
    measurement, both medians and the default threshold, not a range narrower than what was measured."""
    import re

    from autograder.settings import settings
    spec = settings.speed.thresholds["row_sum"]
    text = _lesson_cells()["slicing"]
    low = float(re.search(r"reference min ([\d.]+)x", spec.calibration).group(1))
    medians = [float(m) for m in re.findall(r"median ([\d.]+)x", spec.calibration)]
    assert f"{low:.0f}x" in text and all(f"{m:.0f}x" in text for m in medians)
    assert f"{spec.cpu:.0f}x" in text and "370x" not in text


def test_speed_demos_time_like_the_grader():
    cells = _lesson_cells()
    for cell in ("slicing_demo", "try_row_sum"):
        assert "measure_speedup(" in cells[cell] and "perf_counter" not in cells[cell]
    assert "measure_speedup" in cells["slicing"] and "interleaved" in cells["slicing"]
