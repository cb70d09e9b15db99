"""Speed thresholds calibrated in the same run, with real timed functions on the CPU: the grader's reference
(``autograder/oracles/speed.py``) is timed against the same baseline, interleaved with the candidate, and the
candidate must reach a stated fraction of its speedup (``SpeedThreshold.of_reference``, switched on for the CPU
here; by default only CUDA calibrates). In one process and under trusted grading (the reference in the clean
worker, defined there from its source): the reference passes, the slicing loop fails with both ratios in its
message, and another fast correct answer passes."""

import pytest
import torch

from autograder import settings as settings_module
from autograder.checks import operators
from autograder.errors import CheckFailure
from autograder.measuring.timing import expect_speedup

# row_sum's fixed CPU threshold (6x) is lowered to a floor of 2x: the fraction of the reference decides here
CALIBRATED = {"speed": {"repeats": 9, "warmup": 1, "retries": 1,
                        "thresholds": {"row_sum": {"cpu": 2.0, "of_reference": {"cpu": 0.25}}}}}

EINSUM_ROW_SUM = "def einsum_row_sum(x):\n    return torch.einsum('ij->j', x)\n"


def einsum_row_sum(x):
    """A second correct, vectorized answer."""
    return torch.einsum("ij->j", x)


def timed(row_sum):
    return expect_speedup("check_row_sum_speed", "row_sum", row_sum, operators.slicing_loop_sum,
                          operators.speed_args("cpu"), what="row_sum", reference="speed.row_sum")


def expect_calibrated_pass(result):
    assert result.passed and result.reference == "speed.row_sum" and result.fraction == 0.25
    assert result.reference_ratios and len(result.required) == len(result.ratios) == len(result.reference_ratios)
    assert any(r >= need >= 0.25 * ref - 1e-9
               for r, need, ref in zip(result.ratios, result.required, result.reference_ratios))
    recorded = result.as_dict()
    assert recorded["device"] == "cpu" and recorded["reference_ratios"] and recorded["ratios"]


def expect_calibrated_miss(excinfo):
    message = str(excinfo.value)
    assert "not fast enough on cpu" in message and "the grader's own reference ran" in message
    assert "at least 0.25 of it is required" in message
    measured = excinfo.value.measurements
    assert measured["reference_ratios"] and measured["ratios"] and not measured["passed"]
    assert all(r < need for r, need in zip(measured["ratios"], measured["required"]))


@pytest.mark.quick
def test_in_one_process_the_reference_and_another_fast_answer_pass_and_the_loop_fails():
    with settings_module.override(CALIBRATED):
        expect_calibrated_pass(timed(lambda x: torch.sum(x, dim=0)))
        expect_calibrated_pass(timed(einsum_row_sum))
        with pytest.raises(CheckFailure) as excinfo:
            timed(operators.slicing_loop_sum)
    expect_calibrated_miss(excinfo)


def test_without_a_fraction_for_the_device_the_fixed_threshold_applies():
    with settings_module.override({"speed": {"repeats": 3, "warmup": 1, "retries": 0}}):
        result = timed(lambda x: torch.sum(x, dim=0))
    assert result.passed and not result.reference_ratios and result.threshold == 6.0


@pytest.mark.e2e
def test_under_trusted_grading_the_reference_is_timed_in_the_clean_worker(tmp_path):
    from autograder.engine import trusted_runner
    from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher

    worker = NotebookWorker([("setup", "import torch\n"
                                       "from autograder.checks.operators import slicing_loop_sum\n"
                                       "def row_sum(x):\n    return torch.sum(x, dim=0)\n" + EINSUM_ROW_SUM)],
                            plain_launcher, str(tmp_path))
    try:
        names = RemoteNamespace(worker)
        with settings_module.override(CALIBRATED):
            expect_calibrated_pass(timed(names["row_sum"]))
            expect_calibrated_pass(timed(names["einsum_row_sum"]))
            with pytest.raises(CheckFailure) as excinfo:
                timed(names["slicing_loop_sum"])
        expect_calibrated_miss(excinfo)
        clean = trusted_runner._CLEAN.get(plain_launcher)
        assert clean is not None and clean is not worker.session
        answer = worker.session.request("lookup", "amp_float16", timeout=10)   # the oracles never reached the
        assert "raised" in answer                                              # student's worker
        assert "ok" in clean.request("lookup", "amp_float16", timeout=10)
    finally:
        worker.close()


@pytest.mark.gpu
def test_on_cuda_the_default_thresholds_are_calibrated_against_the_reference():
    args = operators.speed_args("cuda")

    def on_cuda(row_sum):
        return expect_speedup("check_row_sum_speed", "row_sum", row_sum, operators.slicing_loop_sum, args,
                              what="row_sum", reference="speed.row_sum")
    result = on_cuda(lambda x: torch.sum(x, dim=0))
    assert result.passed and result.fraction == 0.25 and result.reference_ratios and result.hardware.get("name")
    with pytest.raises(CheckFailure, match="the grader's own reference ran") as excinfo:
        on_cuda(operators.slicing_loop_sum)
    assert excinfo.value.measurements["device"] == "cuda" and excinfo.value.measurements["hardware"]["name"]
