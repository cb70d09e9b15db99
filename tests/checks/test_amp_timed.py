"""The AMP speed item judges what every timed call returned: real runs of the timed problem on the CPU (a narrower
model, the same code as on CUDA), each from the model's start on batches drawn from the call's seed, against the
grader's float32 loop on the same batches. Correct loops (the reference, a second correct one) agree; fast wrong ones
(made-up losses, no step, forward only, an earlier call's answer replayed) are rejected, also through the trusted
grader."""

import pytest
import torch

from autograder import settings as settings_module
from autograder.checks.amp import speed as amp_speed
from autograder.checks.amp.problems import one_thread
from autograder.checks.amp.timed_judge import STEP_RTOL, judge_timed_runs, timed_run_problem
from autograder.errors import CheckFailure
from tests.proving import reference

WIDTH = 64                 # the tests' timed model: 4 x Linear(64), batch 64 (float16's error shrinks as it grows)
LAYERS = amp_speed.TIMED_LAYERS


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield


def second_correct_loop(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16, **_):
    """Another correct train_amp: its own scaler kept on the optimizer, losses gathered into one tensor."""
    scaler = optimizer.__dict__.setdefault("scaler", torch.amp.GradScaler(device_type))
    losses = torch.empty(len(batches), device=batches[0][0].device)
    for k, (inputs, targets) in enumerate(batches):
        optimizer.zero_grad()
        with torch.autocast(device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        losses[k] = loss.detach()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return losses.tolist()


def made_up_losses(model, batches, optimizer, loss_fn, **_):
    return [1.0] * len(batches)


def forward_only(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16, **_):
    """The right losses, a third of the work: no backward, no step."""
    with torch.no_grad(), torch.autocast(device_type, dtype=dtype):
        return [float(loss_fn(model(x), y)) for x, y in batches]


def no_step(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16, **_):
    """Forward and backward, the optimizer's step skipped."""
    losses = []
    for inputs, targets in batches:
        with torch.autocast(device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        loss.backward()
        losses.append(float(loss.detach()))
        optimizer.zero_grad()
    return losses


def replaying():
    """Trains once, then answers every later call with the first call's record (whatever its batches)."""
    answers = []

    def train_amp(model, batches, optimizer, loss_fn, **kwargs):
        if not answers:
            answers.append(reference("amp")["train_amp"](model, batches, optimizer, loss_fn, **kwargs))
        return answers[0]
    return train_amp


def records(train_amp, call_seeds, width=WIDTH):
    """``[(the student's record, the grader's float32 loop's)]`` of timed calls with these seeds, as both sides make
    them."""
    run = amp_speed.TimedRun(train_amp, "cpu", 0, width)
    out = []
    for call_seed in call_seeds:
        got = run(call_seed, 0, width, LAYERS, width)
        expected = amp_speed.float32_timed_baseline(call_seed, 0, width, LAYERS, width, "cpu")
        out.append((got, expected))
    return out


@pytest.mark.quick
@pytest.mark.parametrize("train_amp", [lambda: reference("amp")["train_amp"], lambda: second_correct_loop],
                         ids=["reference", "second_correct_loop"])
def test_correct_loops_agree_with_the_grader_on_every_call(train_amp):
    pairs = records(train_amp(), [11, 12, 13])
    for got, expected in pairs:
        assert timed_run_problem(got, expected) is None, timed_run_problem(got, expected)
    judge_timed_runs("check_speed", [(k, g, e) for k, (g, e) in enumerate(pairs)], "train_amp with float16")
    # each call starts from the model's start, on its own batches: different calls, different records
    assert not torch.equal(pairs[0][1], pairs[1][1])


@pytest.mark.quick
@pytest.mark.parametrize("width", [64, 256])
def test_float16_stays_well_inside_the_tolerance(width):
    """The margins the tolerances were chosen with: float16 autocast against float32, at two widths."""
    for got, expected in records(reference("amp")["train_amp"], [5, 6], width):
        count = (got.numel() - amp_speed.TIMED_BATCHES) // 2
        losses = ((got[:8] - expected[:8]).abs() / expected[:8].abs()).max()
        step, size = got[8:8 + count], expected[8:8 + count]
        scale = expected[8 + count:]
        assert losses < 1e-4
        assert ((step - size).abs() / (size.abs() + scale)).max() < STEP_RTOL / 2
        assert (scale > 0).all()      # every parameter's step is far above float32's resolution of its weights


@pytest.mark.quick
@pytest.mark.parametrize("forged, words", [
    (lambda: made_up_losses, "returned 1 as the loss of batch 1, where the grader's float32 loop got"),
    (lambda: forward_only, "as the loss of batch "),      # the first is right: the model is still at its start
    (lambda: no_step, "as the loss of batch "),
    (replaying, "as the loss of batch 1"),
], ids=["made_up_losses", "forward_only", "no_step", "replaying"])
def test_fast_wrong_answers_lose_the_item(forged, words):
    pairs = records(forged(), [21, 22])
    with pytest.raises(CheckFailure, match="while being timed, train_amp with float16 ") as failure:
        judge_timed_runs("check_speed", [(k, g, e) for k, (g, e) in enumerate(pairs)], "train_amp with float16")
    assert words in failure.value.detail, failure.value.detail
    assert failure.value.kind == "wrong value"


@pytest.mark.quick
def test_the_right_losses_without_the_steps_lose_the_item():
    """Losses copied right (as a loop could, where steps barely move them), the parameters left at their start."""
    (got, expected), = records(reference("amp")["train_amp"], [31])
    forged = expected.clone()
    forged[amp_speed.TIMED_BATCHES:] = 0
    problem = timed_run_problem(forged, expected)
    assert problem.startswith("left the model's parameters where training on those batches does not take them: the "
                              "step of layer 1's weight, measured along its starting values, was 0 (spread 0)"), problem
    assert timed_run_problem(got, expected) is None


@pytest.mark.quick
def test_a_malformed_answer_is_named():
    run = amp_speed.TimedRun(lambda *a, **k: None, "cpu", 0, WIDTH)
    got = run(3, 0, WIDTH, LAYERS, WIDTH)
    expected = amp_speed.float32_timed_baseline(3, 0, WIDTH, LAYERS, WIDTH, "cpu")
    assert timed_run_problem(got, expected) == "did not return 8 finite losses, one per batch"
    assert timed_run_problem(torch.zeros(3), expected) == "did not return a record of the run"


def test_through_the_trusted_grader_every_timed_call_is_judged(tmp_path):
    """check_speed's timing as trusted grading runs it, on the CPU (a tiny threshold stands in: speed is graded on
    CUDA only): the reference passes, a loop that makes up its losses fails on what it returned."""
    from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
    from tests.proving import ROOT

    worker = NotebookWorker([("setup", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
                                       "from tests.proving import reference as _r; globals().update(_r('amp'))\n"
                                       "def made_up(model, batches, *args, **kwargs):\n"
                                       "    return [1.0] * len(batches)\n")],
                            plain_launcher, str(tmp_path))
    try:
        names = RemoteNamespace(worker)
        calibrated = {"amp": {"cpu": 1e-3, "of_reference": {"cpu": 1e-3}}}
        with settings_module.override({"speed": {"thresholds": calibrated, "repeats": 3}}):
            result = amp_speed.expect_faster_than_float32("check_speed", names["train_amp"], "cpu", width=WIDTH)
            assert result.passed, result
            with pytest.raises(CheckFailure, match="returned 1 as the loss of batch 1"):
                amp_speed.expect_faster_than_float32("check_speed", names["made_up"], "cpu", width=WIDTH)
    finally:
        worker.close()


@pytest.mark.gpu
def test_on_cuda_at_the_timed_size_the_reference_agrees_and_a_forged_answer_does_not():
    """The tolerances at the size graded on a GPU (4 x Linear(4096), batch 4096), float16 autocast on tensor cores
    against the float32 loop with TF32 off."""
    width, batch = amp_speed.TIMED_WIDTH, amp_speed.TIMED_BATCH
    for train_amp in (reference("amp")["train_amp"], second_correct_loop, made_up_losses, no_step):
        run = amp_speed.TimedRun(train_amp, "cuda", 0, width)
        got = run(41, 0, width, LAYERS, batch)
        with amp_speed.full_float32_precision():
            expected = amp_speed.float32_timed_baseline(41, 0, width, LAYERS, batch, "cuda")
        problem = timed_run_problem(got, expected)
        if train_amp in (made_up_losses, no_step):
            assert problem is not None, train_amp.__name__
        else:
            assert problem is None, problem
