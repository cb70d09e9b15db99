"""The speed timer: ratios measured side by side, retries with every ratio in the message, pinned CPU
threads restored after, notes where speed is not graded, and (on CUDA) host synchronisations counted."""

import time

import pytest
import torch

from autograder import settings as settings_module
from autograder.errors import CheckFailure
from autograder.measuring.timing import (SpeedResult, count_host_syncs, expect_no_per_row_sync, expect_speedup,
                                         measure_speedup, pinned_threads, sync_debug_mode)
from autograder.settings import SpeedThreshold, settings
from autograder.spec import PendingGPU

FAST = {"speed": {"repeats": 3, "warmup": 1, "min_sample_s": 0.001, "retries": 2}}


def sleeper(seconds):
    def fn(*args):
        time.sleep(seconds)
    return fn


def with_threshold(cpu, cuda=None):
    values = {"speed": dict(FAST["speed"])}
    values["speed"]["thresholds"] = {"timer_test": SpeedThreshold(cpu=cpu, cuda=cuda, calibration="test")}
    return settings_module.override(values)


def test_ratio_is_baseline_time_over_candidate_time():
    with settings_module.override(FAST):
        ratio, candidate_s, baseline_s = measure_speedup(sleeper(0.002), sleeper(0.02), (torch.zeros(1),))
    assert 2.5 < ratio < 12.0             # 10 on an idle machine; a loaded one oversleeps both a little
    assert candidate_s >= 0.002 and baseline_s >= 0.02


def test_pass_returns_the_result():
    with with_threshold(cpu=1.5):
        result = expect_speedup("check_t", "timer_test", sleeper(0.001), sleeper(0.005), (torch.zeros(1),))
    assert isinstance(result, SpeedResult) and result.passed and len(result.ratios) == 1
    assert result.as_dict()["ratio"] == result.ratio


def test_a_speedup_past_the_device_ceiling_goes_under_review():
    """``settings.speed.ceilings``: a passing ratio above the device's ceiling is not believed without a person."""
    from autograder.errors import UnderReview

    with with_threshold(cpu=1.5), settings_module.override({"speed": {"ceilings": {"cpu": 2.0}}}):
        with pytest.raises(UnderReview, match="above the 2x") as raised:
            expect_speedup("check_t", "timer_test", sleeper(0.0005), sleeper(0.005), (torch.zeros(1),))
    assert raised.value.measurements["ratio"] > 2.0 and raised.value.measurements["hardware"] == {}


def test_miss_is_measured_again_and_every_ratio_is_reported():
    with with_threshold(cpu=50.0), pytest.raises(CheckFailure) as excinfo:
        expect_speedup("check_t", "timer_test", sleeper(0.001), sleeper(0.002), (torch.zeros(1),), what="fn")
    failure = excinfo.value
    ratios = failure.measurements["ratios"]
    assert len(ratios) == 3                                   # one measurement and two retries
    assert all(f"{r:.1f}x" in failure.detail for r in ratios)
    assert "in 3 measurement(s)" in failure.detail and "at least 50x is required" in failure.detail
    assert failure.measurements["threshold"] == 50.0 and failure.measurements["passed"] is False


def test_threads_are_pinned_while_timing_and_restored_after():
    seen = []
    before = torch.get_num_threads()
    with settings_module.override({"speed": {"cpu_threads": 1}}):
        with pinned_threads("cpu"):
            seen.append(torch.get_num_threads())
        with pinned_threads("cuda"):
            seen.append(torch.get_num_threads())
    assert seen == [1, before] and torch.get_num_threads() == before


def test_thread_count_is_restored_when_the_candidate_raises():
    before = torch.get_num_threads()
    calls = []

    def breaks_when_timed(x):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("boom")
        return x

    with with_threshold(cpu=1.0), pytest.raises(CheckFailure) as excinfo:
        expect_speedup("check_t", "timer_test", breaks_when_timed, sleeper(0.001), (torch.zeros(1),), what="fn")
    assert "raised RuntimeError while being timed" in excinfo.value.detail and excinfo.value.detail.endswith(": boom")
    assert torch.get_num_threads() == before


def test_a_hang_while_timing_is_a_failure():
    calls = []

    def slow_after_first_call(x):
        calls.append(1)
        if len(calls) > 1:
            time.sleep(2.0)

    with with_threshold(cpu=1.0), settings_module.override({"call_timeout_s": 0.2, "speed": {"retries": 0}}):
        with pytest.raises(CheckFailure) as excinfo:
            expect_speedup("check_t", "timer_test", slow_after_first_call, sleeper(0.001), (torch.zeros(1),))
    assert "took longer than" in excinfo.value.detail


def test_device_without_threshold_gets_a_note(capsys):
    with with_threshold(cpu=None, cuda=2.0):
        result = expect_speedup("check_t", "timer_test", sleeper(0), sleeper(0), (torch.zeros(1),), what="amp")
    assert result.threshold is None and not result.ratios and "graded on CUDA only" in result.note
    assert "graded on CUDA only" in capsys.readouterr().out


def test_instructor_can_require_a_gpu(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_GRADING", "1")
    with with_threshold(cpu=None, cuda=2.0), settings_module.override({"grading": {"gpu_items": "fail"}}):
        with pytest.raises(CheckFailure) as excinfo:
            expect_speedup("check_t", "timer_test", sleeper(0), sleeper(0), (torch.zeros(1),))
    assert "requires a GPU" in excinfo.value.detail


def test_gpu_item_is_pending_in_an_official_grade(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_GRADING", "1")
    with with_threshold(cpu=None, cuda=2.0), pytest.raises(PendingGPU) as excinfo:
        expect_speedup("check_t", "timer_test", sleeper(0), sleeper(0), (torch.zeros(1),))
    assert excinfo.value.detail.startswith("pending: needs a GPU")


def test_host_syncs_are_not_counted_off_cuda():
    result, count = count_host_syncs("check_t", torch.sum, torch.ones(3))
    assert count is None and float(result) == 3.0
    assert expect_no_per_row_sync("check_t", torch.sum, lambda n: (torch.ones(n),), (4, 8)) is None


def test_calibration_strings_are_filled_in():
    for name in ("row_sum", "batch_gather"):
        spec = settings.speed.thresholds[name]
        assert spec.cpu and spec.cpu > 1 and "reference" in spec.calibration and "naive" in spec.calibration


@pytest.mark.gpu
def test_per_row_syncs_are_counted_and_the_mode_restored():
    def item_per_row(x):
        return sum(float(x[i].sum()) for i in range(x.shape[0]))

    previous = torch.cuda.get_sync_debug_mode()
    _, count = count_host_syncs("check_t", item_per_row, torch.ones(8, 3, device="cuda"))
    assert count >= 8 and torch.cuda.get_sync_debug_mode() == previous
    with pytest.raises(CheckFailure) as excinfo:
        expect_no_per_row_sync("check_t", item_per_row, lambda n: (torch.ones(n, 3, device="cuda"),), (4, 16))
    assert "grows with the batch" in excinfo.value.detail
    assert torch.cuda.get_sync_debug_mode() == previous
    assert expect_no_per_row_sync("check_t", torch.sum, lambda n: (torch.ones(n, device="cuda"),), (4, 16)) == \
        {4: 0, 16: 0}


@pytest.mark.gpu
def test_sync_debug_mode_is_restored_after_an_error():
    previous = torch.cuda.get_sync_debug_mode()
    with pytest.raises(RuntimeError):
        with sync_debug_mode("error"):
            torch.ones(2, device="cuda").sum().item()
    assert torch.cuda.get_sync_debug_mode() == previous


@pytest.mark.gpu
def test_cuda_ratio_is_measured_with_synchronisation():
    x = torch.randn(256, 256, device="cuda")
    with settings_module.override(FAST):
        ratio, _, _ = measure_speedup(lambda x: x.sum(), lambda x: [x @ x for _ in range(20)], (x,))
    assert ratio > 1.0
