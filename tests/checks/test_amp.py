"""The amp checks pass correct solutions, catch each realistic mistake, and grade speed on CUDA only."""

import subprocess
import sys

import pytest
import torch

from autograder import settings as settings_module
from autograder.checks import amp
from autograder.checks.amp import speed as amp_speed
from autograder.checks.amp.problems import mse, regression_batches, small_model
from autograder.checks.amp.recording import recording
from autograder.checks import items_of
from tests.mutants.amp import MUTANTS
from tests.proving import alternative, reference, run_check, with_replacements

TOPIC = "amp"
HIDDEN = [(item.name, extra) for item in items_of(TOPIC) for extra in item.hidden if extra]  # from the spec


@pytest.mark.parametrize("solution", [reference, alternative])
@pytest.mark.parametrize("check, options", HIDDEN, ids=[name for name, _ in HIDDEN])
def test_correct_solutions_pass_the_hidden_options(solution, check, options):
    result = run_check(getattr(amp, check), solution(TOPIC), seed=11, **options)
    assert result.passed, result.message


def _message(mistake, check):
    replacements, _ = MUTANTS[mistake]
    result = run_check(getattr(amp, check), with_replacements(TOPIC, replacements))
    assert not result.passed
    return result.message


def test_messages_name_the_problem_and_the_case():
    message = _message("clipping before unscale_", "check_clipping")
    assert "unscale_" in message and "max_grad_norm=" in message and "device_type='cpu'" in message
    message = _message("backward inside autocast", "check_autocast_dtypes")
    assert "backward ran while autocast was still on" in message
    message = _message("optimizer.step() and no scaler.update()", "check_loss_scaling")
    assert "6.554e+04 times the true ones" in message and "scaler.step(optimizer)" in message
    message = _message("model cast with .half()", "check_autocast_dtypes")
    assert "torch.float16" in message and "model.half()" in message


def test_scaler_errors_become_messages_with_the_case():
    message = _message("scaler.update() before scaler.step()", "check_loss_scaling")
    assert "raised AssertionError: No inf checks were recorded" in message
    assert "dtype=torch.float16" in message and len(message) < 2000


def test_overflow_that_is_not_skipped_is_named():
    def never_skips(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                    accumulate=1, max_grad_norm=None):
        scaler = torch.amp.GradScaler(device_type)
        losses = []
        for inputs, targets in batches:
            with torch.autocast(device_type, dtype=dtype):
                loss = loss_fn(model(inputs), targets)
            scaler.scale(loss).backward()
            losses.append(loss.item())
            scaler.unscale_(optimizer)
            optimizer.step()     # steps even when the unscaled gradients hold inf
            scaler.update()
            optimizer.zero_grad()
        return losses

    result = run_check(amp.check_loss_scaling, {"train_amp": never_skips})
    assert not result.passed
    assert "overflowed float16" in result.message and "stepped anyway" in result.message


def test_recording_removes_its_hooks():
    gen = torch.Generator().manual_seed(0)
    model = small_model(gen)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with recording(model, optimizer, mse, "cpu") as (rec, loss_fn):
        loss_fn(model(regression_batches(gen, 1)[0][0]), torch.zeros(16, 8)).backward()
        optimizer.step()
    assert len(rec.forwards) == 1 and len(rec.steps) == 1 and rec.losses[0].grad == 1.0
    assert not model._forward_pre_hooks and not any(m._forward_hooks for m in model.modules())
    assert not optimizer._optimizer_step_pre_hooks and not optimizer._optimizer_step_post_hooks


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path of the speed check")
def test_speed_without_gpu_is_a_note_for_students_and_pending_in_a_grade(monkeypatch):
    result = amp.check_speed(reference(TOPIC)["train_amp"])
    assert result.threshold is None and result.device == "cpu" and "GPU" in result.note
    monkeypatch.setenv("AUTOGRADER_GRADING", "1")
    outcome = run_check(amp.check_speed, reference(TOPIC))
    assert outcome.status == "pending" and outcome.score == 0 and "pending: needs a GPU" in outcome.message
    with settings_module.override({"grading": {"gpu_items": "fail"}}):
        outcome = run_check(amp.check_speed, reference(TOPIC))
    assert outcome.status == "failed" and "requires a GPU" in outcome.message
    with settings_module.override({"grading": {"gpu_items": "waive"}}):
        outcome = run_check(amp.check_speed, reference(TOPIC))
    assert outcome.status == "passed" and outcome.score == 2
    stub = run_check(amp.check_speed, {"train_amp": lambda *a, **k: None})
    assert stub.status == "failed"   # the CPU part still grades: a broken loop is not pending


def test_float32_precision_is_pinned_and_restored_legacy_api():
    before = (torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    try:
        with amp_speed.full_float32_precision() as precision:
            assert torch.get_float32_matmul_precision() == "highest"
            assert torch.backends.cuda.matmul.allow_tf32 is False
            assert "TF32 off" in precision
        assert torch.get_float32_matmul_precision() == "high" and torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before[0]
        torch.set_float32_matmul_precision(before[1])


def test_float32_precision_is_pinned_and_restored_new_api():
    # In its own process: once the newer fp32_precision API is used, torch refuses legacy reads.
    script = (
        "import torch\n"
        "from autograder.checks.amp.speed import full_float32_precision\n"
        "if not hasattr(torch.backends.cuda.matmul, 'fp32_precision'):\n"
        "    print('skip'); raise SystemExit\n"
        "torch.backends.cuda.matmul.fp32_precision = 'tf32'\n"
        "with full_float32_precision() as precision:\n"
        "    assert torch.backends.cuda.matmul.fp32_precision == 'ieee', precision\n"
        "assert torch.backends.cuda.matmul.fp32_precision == 'tf32'\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ("ok", "skip")


@pytest.mark.gpu
def test_speed_on_gpu_passes_the_reference_and_records_the_precision():
    result = amp.check_speed(reference(TOPIC)["train_amp"])
    assert result.device == "cuda" and result.passed
    assert "TF32 off" in result.note


@pytest.mark.gpu
def test_speed_on_gpu_fails_the_float32_loop():
    replacements, _ = MUTANTS["float32 loop (no autocast, no scaler)"]
    result = run_check(amp.check_speed, with_replacements(TOPIC, replacements))
    assert not result.passed and "not fast enough on cuda" in result.message
