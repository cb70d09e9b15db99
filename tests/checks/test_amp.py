"""The amp checks pass correct solutions, catch each realistic mistake, and grade speed on CUDA only."""

import copy
import subprocess
import sys

import pytest
import torch

from autograder import settings as settings_module
from autograder.checks import amp, items_of
from autograder.checks.amp import checkpoint as amp_checkpoint
from autograder.checks.amp import speed as amp_speed
from autograder.checks.amp.problems import mse, one_thread, regression_batches, small_model
from autograder.checks.amp.recording import recording
from tests.mutants.amp import GPU_MUTANTS, MUTANTS, _mutant
from tests.proving import alternative, reference, run_check, with_replacements

TOPIC = "amp"


@pytest.fixture(autouse=True)
def _one_thread():
    """As the checks do (problems.one_thread): the small problems need no more, and a busy machine stays fast."""
    with one_thread():
        yield
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


# ------------------------------------------------------------------ zeroed gradients, a given scaler

def test_zeroed_gradients_are_correct():
    """zero_grad(set_to_none=False) leaves zeros, which the next backward adds to: the same gradients."""
    result = run_check(amp.check_accumulation, {"train_amp": _mutant(to_none=False)}, accumulations=(2, 3))
    assert result.passed, result.message


def test_gradients_left_over_are_named():
    message = _message("gradients never cleared", "check_accumulation")
    assert "still held the previous effective batch's sum" in message and "zero_grad()" in message


def test_a_scaler_of_its_own_is_named():
    message = _message("a GradScaler of its own even when one is given", "check_scaler_across_calls")
    assert "call 1, batch 0: the loss was multiplied by 65536" in message
    assert "GradScaler of its own" in message and "if scaler is None" in message
    assert "scaler = torch.amp.GradScaler('cpu', init_scale=256, growth_interval=2)" in message


def test_a_scaler_made_again_for_the_second_call_is_named():
    def fresh_each_call(model, batches, optimizer, loss_fn, *, scaler=None, **options):
        twin = torch.amp.GradScaler("cpu", init_scale=scaler.get_scale(), growth_interval=2) if scaler else None
        return reference(TOPIC)["train_amp"](model, batches, optimizer, loss_fn, scaler=twin, **options)

    result = run_check(amp.check_scaler_across_calls, {"train_amp": fresh_each_call})
    assert not result.passed and "after call 1 the scaler you passed has scale 256.0" in result.message


def test_scale_schedule_follows_gradscaler():
    assert amp.scaling.scale_schedule(8.0, 2, [False, False, True, False, False, False]) == (
        [8.0, 8.0, 16.0, 8.0, 8.0, 16.0], (16.0, 1))


# ------------------------------------------------------------------ checkpoint and resume

@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_checkpoint_problem_makes_every_part_matter(seed):
    """At the cut Adam has state, the model's buffers have moved, the scaler is not where a new one starts; after
    the cut the scale changes again, and resuming with a new scaler changes the losses (the problem the resume
    check draws from its stream's seed, here given directly)."""
    start, data, cut = amp_checkpoint.resume_problem(seed)
    model = copy.deepcopy(start)
    optimizer, scaler = amp_checkpoint.make_optimizer(model), amp_checkpoint.make_scaler()
    losses = amp_checkpoint.train_steps(model, optimizer, scaler, data[:cut])
    assert optimizer.state, "Adam has taken no step before the cut"
    assert not torch.equal(model.state_dict()["1.running_mean"], start.state_dict()["1.running_mean"])
    assert scaler.state_dict() != amp_checkpoint.make_scaler().state_dict()
    scales = []
    for batch in data[cut:]:
        amp_checkpoint.train_steps(model, optimizer, scaler, [batch])
        scales.append(scaler.get_scale())
    assert len(set(scales)) > 1, "the scale does not change after the cut"
    twin = copy.deepcopy(start)
    twin_optimizer, twin_scaler = amp_checkpoint.make_optimizer(twin), amp_checkpoint.make_scaler()
    amp_checkpoint.train_steps(twin, twin_optimizer, twin_scaler, data[:cut])
    resumed = losses + amp_checkpoint.train_steps(twin, twin_optimizer, amp_checkpoint.make_scaler(), data[cut:])
    whole = copy.deepcopy(start)
    expected = amp_checkpoint.train_steps(whole, amp_checkpoint.make_optimizer(whole), amp_checkpoint.make_scaler(),
                                          data)
    assert not all(torch.equal(a, b) for a, b in zip(resumed, expected)), "a new scaler gives the same losses"


def test_a_resume_cut_before_adams_first_step_moves_to_the_first_after_it():
    start, data, cut = amp_checkpoint.resume_problem(0)
    assert cut == amp_checkpoint.RESUME_CUTS[0]
    overflowing = [(inputs * 1e5, targets) for inputs, targets in data[:7]] + data[7:]   # the scaler skips 7 steps
    assert amp_checkpoint.resume_cut(0, start, overflowing) == 8


def test_checkpoint_roundtrip_saves_state_a_new_run_lacks():
    gen = torch.Generator().manual_seed(900)
    run = amp_checkpoint.make_run(gen)
    before, _ = amp_checkpoint.ROUNDTRIP_STEPS
    amp_checkpoint.train_steps(*run, amp_checkpoint.batches(gen, before))
    differences = amp_checkpoint.state_differences(amp_checkpoint.snapshot(*run),
                                                   *amp_checkpoint.make_run(torch.Generator().manual_seed(901)))
    assert set(differences) == {"model", "optimizer", "scaler"}


def test_checkpoint_messages_name_the_part_and_the_fix():
    message = _message("checkpoint without the scaler", "check_checkpoint_roundtrip")
    assert "scaler.state_dict()['scale']" in message and "scaler.load_state_dict" in message
    message = _message("checkpoint without the scaler", "check_checkpoint_resume_exact")
    assert "the resumed run's loss" in message and "scaler" in message
    message = _message("model.parameters() saved as a list (BatchNorm's buffers lost)", "check_checkpoint_roundtrip")
    assert "running_mean" in message and "buffers" in message
    message = _message("load_checkpoint returns step + 1", "check_checkpoint_roundtrip")
    assert "returned step" in message and "saved with step" in message
    message = _message("torch.save of the objects themselves, loaded with weights_only=False",
                       "check_checkpoint_weights_only")
    assert "torch.load(path, weights_only=True) refuses the checkpoint" in message and "torch.nn.modules" in message
    message = _message("load_checkpoint with weights_only=False", "check_checkpoint_weights_only")
    assert "ran code from the file" in message and "weights_only=True" in message


def test_checkpoint_content_must_be_plain_data():
    assert amp_checkpoint.plain_content_problem({"a": [1, 2.0, (None, "x")], "t": torch.zeros(2)}) is None
    assert "collections.Counter" not in (amp_checkpoint.plain_content_problem({"a": {}}) or "")
    problem = amp_checkpoint.plain_content_problem({"model": {"w": torch.nn.Linear(1, 1)}})
    assert problem == "checkpoint['model']['w'] is a torch.nn.modules.linear.Linear"


def test_checkpoint_probe_runs_only_when_unpickled_unsafely(tmp_path):
    path = tmp_path / "probe.pt"
    torch.save(amp_checkpoint.with_probe({"step": 1}), path)
    amp_checkpoint.probe_runs.clear()
    with pytest.raises(Exception) as refused:
        torch.load(path, weights_only=True)
    assert "weights_only" in str(refused.value).lower() or "unsupported global" in str(refused.value).lower()
    assert not amp_checkpoint.probe_runs
    torch.load(path, weights_only=False)
    assert amp_checkpoint.probe_runs
    amp_checkpoint.probe_runs.clear()


# ------------------------------------------------------------------ host syncs (CUDA)

@pytest.mark.gpu
def test_reference_adds_no_host_sync_per_batch():
    counts = amp_speed.expect_no_sync_per_batch("check_speed", reference(TOPIC)["train_amp"])
    assert amp_speed._extra_syncs(counts) <= 0, counts


@pytest.mark.gpu
def test_item_every_batch_is_counted():
    replacements, _ = GPU_MUTANTS["loss.item() every batch (a host sync per batch)"]
    result = run_check(amp.check_speed, with_replacements(TOPIC, replacements))
    assert not result.passed and "more wait(s) per batch" in result.message
    assert result.measurements["host_syncs"]["yours"][8] > result.measurements["host_syncs"]["yours"][4]


# ------------------------------------------------------------------ trusted grading: the timed run across processes

def test_remote_timing_runs_the_student_loop_beside_it_and_the_baseline_in_a_clean_worker(tmp_path):
    """The structure of check_speed's CUDA timing under trusted grading, exercised on the CPU with a narrow model
    (speed is not graded on the CPU, so a tiny threshold stands in): the student's run is built in their worker,
    the float32 baseline and the grader's float16 reference in a clean twin, every timed result is checked, and a
    loop that returns nothing fails."""
    from autograder.engine import trusted_runner
    from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
    from autograder.errors import CheckFailure
    from tests.proving import ROOT

    worker = NotebookWorker([("setup", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
                                       "from tests.proving import reference as _r; globals().update(_r('amp'))\n"
                                       "def returns_nothing(*args, **kwargs):\n    return None\n")],
                            plain_launcher, str(tmp_path))
    try:
        names = RemoteNamespace(worker)
        calibrated = {"amp": {"cpu": 1e-3, "of_reference": {"cpu": 1e-3}}}   # the grader's float16 loop beside it
        with settings_module.override({"speed": {"thresholds": calibrated, "repeats": 3}}):
            result = amp_speed.expect_faster_than_float32("check_speed", names["train_amp"], "cpu", width=32)
            assert result.passed and result.ratios and "TF32 off" in result.note
            assert result.reference == "speed.amp_float16" and len(result.reference_ratios) == len(result.ratios)
            clean = trusted_runner._CLEAN.get(plain_launcher)      # the grading process's clean worker timed it
            assert clean is not None and clean is not worker.session and not clean.lost
            with pytest.raises(CheckFailure, match="while being timed, train_amp with float16 did not return 8 finite"):
                amp_speed.expect_faster_than_float32("check_speed", names["returns_nothing"], "cpu", width=32)
    finally:
        worker.close()
