"""Checks for the ``amp`` assignment: a mixed-precision training loop, ``train_amp``, and a checkpoint that
resumes it exactly, ``save_checkpoint`` / ``load_checkpoint``.

The checks read what the loop does through hooks (see ``recording.py``), never its
text: the autocast state and dtypes in the forward pass, the gradient that reaches
the loss in the backward pass (the loss scale), the gradients and parameters at
every optimizer step. The student's loop runs where the student's code lives, on a
problem built there from a plan of plain data (``runs.py``); the recording comes back
as plain data, and the references are the grader's own loops on its own copy of the
same seeded problem. Every correctness check runs on the CPU, with bfloat16 (no scaler)
and with float16 and a ``GradScaler("cpu")``, and on CUDA too where there is a GPU;
speed is graded on CUDA only. The checkpoint checks (``resuming.py``) run the grader's
own float16 loop around the student's save and load.
"""

import torch

from autograder.checks.amp import precision, problems, scaling, speed
from autograder.checks.amp.probes import runs
from autograder.checks.amp.scaling import GRAD_TOLERANCE, SCALER_HINT
from autograder.contracts import exercised
from autograder.errors import CheckFailure
from autograder.measuring.timing import expect_speedup
from autograder.seam.student import describe
from autograder.settings import settings
from autograder.spec import graded

DTYPES = (torch.bfloat16, torch.float16)
# Relative error between a mixed-precision update and the float32 one over the same batches: the reference and
# the second solution reach at most 0.021 (float16) and 0.026 (bfloat16) over 480 steps (20 seeds, k = 2, 3, 4).
UPDATE_TOLERANCE = {torch.float16: 8e-2, torch.bfloat16: 1.2e-1}
# The loss curve against the float32 run: |amp - fp32| <= rtol * |fp32| + atol * first fp32 loss.
# The reference and the second solution use at most 7.5% of this tolerance over 15 seeds.
CURVE_TOLERANCE = {torch.float16: (1.5e-2, 5e-3), torch.bfloat16: (3e-2, 1e-2)}



def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _name(dtype):
    return str(dtype).replace("torch.", "")


def _train(check, train_amp, plan, batches, *, dtype, **options):
    """Run the student's loop on ``plan``'s problem under the recorder, where the student's code lives
    (``runs.train``); return ``(returned value, recording, final state)``."""
    __tracebackhide__ = True
    (entry,), final = runs.train(check, train_amp, plan, [{"options": dict(dtype=dtype, **options)}])
    out, rec = runs.outcome(check, entry, _case(plan["device"], dtype, batches, **options))
    return out, rec, final


def _case(device, dtype, batches, **options):
    inputs, targets = batches[0]
    text = (f"train_amp(model, batches, optimizer, loss_fn, device_type={device!r}, dtype={dtype}"
            + "".join(f", {k}={'scaler' if k == 'scaler' else v}" for k, v in options.items())
            + f") on {len(batches)} batches of inputs {list(inputs.shape)} and targets {list(targets.shape)}, "
              f"float32 ({problems.describe_model()}, MSE loss)")
    return text


def _setup(seed, device, count, **options):
    """``(plan, model, batches, optimizer)``: the grader's own copy of the problem a run of the student's is given."""
    plan = runs.plan(seed, device, count, **options)
    return (plan, *runs.build(plan))


# ------------------------------------------------------------------ precision of each part

@graded(3, hidden=[{}])
@problems.single_threaded
def check_autocast_dtypes(check, train_amp, *, seed=0):
    """The linear layers' outputs have ``dtype``; the loss is computed under autocast and is float32;
    backward runs with autocast off; the parameters and the optimizer's state stay float32."""
    __tracebackhide__ = True
    for device in _devices():
        for i, dtype in enumerate(DTYPES):
            plan, _, batches, _ = _setup(check.seed_for(i), device, 4, optimizer="momentum")
            accumulate = 1 + i   # bfloat16 with accumulate=1, float16 with accumulate=2
            exercised(_name(dtype), f"on_{device}", "momentum_state")
            case = _case(device, dtype, batches, accumulate=accumulate)
            _, rec, final = _train(check, train_amp, plan, batches, dtype=dtype, accumulate=accumulate)
            precision.expect_forward_precision(check, rec, dtype, case)
            precision.expect_backward_outside_autocast(check, rec, case)
            precision.expect_float32_state(check, final, case)


# ------------------------------------------------------------------ loss scaling

@graded(3, hidden=[{}])
@problems.single_threaded
def check_loss_scaling(check, train_amp, *, seed=0):
    """With float16: the loss is multiplied by a scale (> 1) before backward; the gradients at
    ``optimizer.step()`` are the true, unscaled ones; a batch whose gradients overflow float16 is
    skipped (no step, parameters unchanged) and the scale goes down; training goes on afterwards."""
    __tracebackhide__ = True
    dtype = torch.float16
    for device in _devices():
        bad = 1 + seed % 2
        plan, model, batches, _ = _setup(check.seed_for(), device, 4, overflow=("insert", bad))
        case = _case(device, dtype, batches) + f"; batch {bad} has targets of 1e7, so its gradients overflow"
        exercised("no_scaler", "overflowing_batch")
        _, rec, _ = _train(check, train_amp, plan, batches, dtype=dtype)
        for b in range(len(batches)):
            if b == bad:
                scaling.expect_skipped_overflow(check, rec, bad, case)
            else:
                scaling.expect_scaled_loss(check, rec, b, case)
                scaling.expect_unscaled_step(check, rec, model, batches, b, dtype, case)


# ------------------------------------------------------------------ accumulation

@graded(3, hidden=[{"accumulations": (2, 4)}])
@problems.single_threaded
def check_accumulation(check, train_amp, *, seed=0, accumulations=(3,)):
    """With ``accumulate=k`` the optimizer steps once per k batches, the gradients are cleared (set to
    None, or zeroed) before each group, and the step equals one float32 step over the k batches
    concatenated (the loss divided by k)."""
    __tracebackhide__ = True
    for device in _devices():
        for i, dtype in enumerate(DTYPES):
            for k in accumulations:
                plan, model, batches, opt = _setup(check.seed_for(i), device, 2 * k)
                lr = opt.param_groups[0]["lr"]
                case = _case(device, dtype, batches, accumulate=k)
                exercised(f"accumulate_{k}")
                _, rec, _ = _train(check, train_amp, plan, batches, dtype=dtype, accumulate=k)
                seen = [s.batches_seen for s in rec.steps]
                if seen != [k * (j + 1) for j in range(len(batches) // k)]:
                    raise CheckFailure(check, f"the optimizer stepped after batches {[s - 1 for s in seen]}, "
                                              f"expected once per {k} batches: after "
                                              f"{[k * (j + 1) - 1 for j in range(len(batches) // k)]}.\n"
                                              f"Case: {case}",
                                       hint="Step (and update the scaler) only when (i + 1) % accumulate == 0.")
                for j, step in enumerate(rec.steps):
                    _expect_cleared(check, rec, j * k, case)
                    group = batches[j * k:(j + 1) * k]
                    _expect_group_step(check, model, step, group, rec.device_type, dtype, lr, j, case)


def _expect_cleared(check, rec, first, case):
    """Gradients are cleared when a group begins: ``None`` (``zero_grad()``, set_to_none=True by default) or all
    zeros (``zero_grad(set_to_none=False)``): both are correct; only gradients left over from the last group are not."""
    __tracebackhide__ = True
    forward = rec.forwards[first] if first < len(rec.forwards) else None
    if forward is not None and not (forward.grads_cleared or forward.grads_zero):
        raise CheckFailure(check, f"when batch {first} began an effective batch, the gradients still held the "
                                  f"previous effective batch's sum, so two steps' gradients were added together."
                                  f"\nCase: {case}",
                           hint="Clear them after each step with `optimizer.zero_grad()` (set_to_none=True, the "
                                "default, frees them; set_to_none=False fills them with zeros: both are correct).")


def _expect_group_step(check, model, step, group, device_type, dtype, lr, j, case):
    __tracebackhide__ = True
    if any(g is None for g in step.grads):
        raise CheckFailure(check, f"step {j}: some parameters had no gradient.\nCase: {case}")
    mismatch = problems.gradient_mismatch(step, model, group, device_type, dtype, GRAD_TOLERANCE[dtype])
    if mismatch:
        error, ratio = mismatch
        raise CheckFailure(check, f"step {j}: the gradients were {ratio:.3g} times the mean gradient over the "
                                  f"{len(group)} batches of the effective batch (relative error {error:.2g}).\n"
                                  f"Case: {case}",
                           hint="Divide each batch's loss by `accumulate` before backward, so that the "
                                "accumulated gradient is the mean; unscale once per step.")
    exact = problems.reference_grads(model, step.params_before, group, problems.mse, device_type)
    update = [a - b for a, b in zip(step.params_after, step.params_before)]
    error = problems.relative_error(update, [-lr * g for g in exact])
    if not error <= UPDATE_TOLERANCE[dtype]:
        raise CheckFailure(check, f"step {j}: the parameter update differs from one float32 SGD step over the "
                                  f"{len(group)} batches concatenated (relative error {error:.2g}).\n"
                                  f"Case: {case}", hint="Step the optimizer you were given, once per effective batch.")


# ------------------------------------------------------------------ clipping

@graded(2, hidden=[{"accumulate": 2}])
@problems.single_threaded
def check_clipping(check, train_amp, *, seed=0, accumulate=1):
    """With ``max_grad_norm``, the gradients at ``optimizer.step()`` are the unscaled ones clipped to
    that total norm: their norm is at most ``max_grad_norm`` and they equal the true gradient times
    min(1, max_grad_norm / its norm)."""
    __tracebackhide__ = True
    for device in _devices():
        for i, dtype in enumerate(DTYPES):
            plan, model, batches, _ = _setup(check.seed_for(i), device, 3 * accumulate)
            first = problems.reference_grads(model, list(model.parameters()), batches[:accumulate], problems.mse,
                                             device)
            max_norm = round(0.25 * float(problems.flat(first).norm()), 4)
            case = _case(device, dtype, batches, accumulate=accumulate, max_grad_norm=max_norm)
            exercised("max_grad_norm", _name(dtype))
            _, rec, _ = _train(check, train_amp, plan, batches, dtype=dtype, accumulate=accumulate,
                               max_grad_norm=max_norm)
            if len(rec.steps) != len(batches) // accumulate:
                raise CheckFailure(check, f"expected {len(batches) // accumulate} optimizer steps, got "
                                          f"{len(rec.steps)}.\nCase: {case}", hint=SCALER_HINT)
            for j, step in enumerate(rec.steps):
                if any(g is None for g in step.grads):
                    raise CheckFailure(check, f"step {j}: some parameters had no gradient.\nCase: {case}")
                group = batches[j * accumulate:(j + 1) * accumulate]
                true = problems.reference_grads(model, step.params_before, group, problems.mse, device, dtype)
                true_norm = float(problems.flat(true).norm())
                expected = [g * min(1.0, max_norm / (true_norm + 1e-6)) for g in true]
                norm = float(problems.flat(step.grads).norm())
                if norm > max_norm * (1 + 1e-3) + 1e-6:
                    raise CheckFailure(check, f"step {j}: the gradients' total norm at optimizer.step() was "
                                              f"{norm:.4g}, above max_grad_norm={max_norm:g}.\nCase: {case}",
                                       hint="Call `scaler.unscale_(optimizer)`, then "
                                            "`torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)`, "
                                            "then `scaler.step(optimizer)`.")
                error = problems.relative_error(step.grads, expected)
                if not error <= GRAD_TOLERANCE[dtype]:
                    raise CheckFailure(check, f"step {j}: the gradients at optimizer.step() have norm {norm:.4g}; "
                                              f"the true gradient (norm {true_norm:.4g}) clipped to "
                                              f"max_grad_norm={max_norm:g} has norm "
                                              f"{min(true_norm, max_norm):.4g} (relative error {error:.2g}).\n"
                                              f"Case: {case}",
                                       hint="Clip the unscaled gradients: `scaler.unscale_(optimizer)` before "
                                            "`clip_grad_norm_`; clipping the scaled ones clips to the wrong norm.")


# ------------------------------------------------------------------ convergence

@graded(2, hidden=[{}])
@problems.single_threaded
def check_convergence(check, train_amp, *, seed=0, batches_per_run=24):
    """``train_amp`` returns one Python float per batch, the unscaled loss of that batch, and the loss curve
    stays close to the grader's float32 run on the same model and data (with and without accumulation)."""
    __tracebackhide__ = True
    for device in _devices():
        for i, dtype in enumerate(DTYPES):
            for accumulate in (1, 2):
                plan, model, batches, _ = _setup(check.seed_for(2 * i + accumulate), device, batches_per_run,
                                                 optimizer="momentum")
                case = _case(device, dtype, batches, accumulate=accumulate)
                make = lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9)  # noqa: E731
                expected, _ = problems.float32_training(model, batches, make, problems.mse, accumulate)
                exercised(f"accumulate_{accumulate}", "loss_curve")
                out, _, _ = _train(check, train_amp, plan, batches, dtype=dtype, accumulate=accumulate)
                _expect_loss_curve(check, out, expected, dtype, case)


def _expect_loss_curve(check, out, expected, dtype, case):
    __tracebackhide__ = True
    if not isinstance(out, (list, tuple)) or len(out) != len(expected):
        raise CheckFailure(check, f"train_amp returned {describe(out)}; expected a list of {len(expected)} "
                                  f"floats, one loss per batch.\nCase: {case}",
                           hint="Keep each batch's `loss.detach()` and return `torch.stack(losses).tolist()`.")
    kinds = {type(v).__name__ for v in out if not isinstance(v, float)}
    if kinds:
        raise CheckFailure(check, f"train_amp returned a list holding {', '.join(sorted(kinds))}; expected "
                                  f"Python floats.\nCase: {case}",
                           hint="Convert the losses once at the end with `torch.stack(losses).tolist()`: a list of "
                                "tensors would keep their graphs (and, on GPU, their memory) alive.")
    rtol, atol = CURVE_TOLERANCE[dtype]
    for b, (got, want) in enumerate(zip(out, expected)):
        if not abs(got - want) <= rtol * abs(want) + atol * expected[0]:
            raise CheckFailure(check, f"batch {b}: the returned loss is {got:.5g}, but the float32 run's loss on "
                                      f"that batch is {want:.5g}.\nFirst losses returned: "
                                      f"{[round(v, 4) for v in out[:6]]}\nFloat32 run:           "
                                      f"{[round(v, 4) for v in expected[:6]]}\nCase: {case}",
                               hint="Return the loss before scaling and before dividing by `accumulate` "
                                    "(loss_fn's result, detached); if the curves drift apart, check the steps and "
                                    "the scaler.")


# ------------------------------------------------------------------ one scaler for the whole run

@graded(2, hidden=[{"accumulate": 2}])
@problems.single_threaded
def check_scaler_across_calls(check, train_amp, *, seed=0, accumulate=1):
    """``train_amp(..., scaler=scaler)`` uses the GradScaler it is given: over two calls with the same scaler
    (two epochs of one run) every loss is scaled by that scaler's current scale, which grows and backs off
    across the calls as in one uninterrupted run, and the scaler ends with that run's scale and growth tracker."""
    __tracebackhide__ = True
    dtype, groups = torch.float16, 6
    for device in _devices():
        bad = 3 + seed % 3                     # a step of the second call overflows (targets of 1e7)
        plan, _, batches, _ = _setup(check.seed_for(), device, groups * accumulate,
                                     overflow=("replace", bad * accumulate))
        init_scale = 2.0 ** (8 + seed % 4)
        made = (f"scaler = torch.amp.GradScaler({device!r}, init_scale={init_scale:g}, "
                f"growth_interval={scaling.GIVEN_GROWTH_INTERVAL})")
        used, _ = scaling.scale_schedule(init_scale, scaling.GIVEN_GROWTH_INTERVAL, [g == bad for g in range(groups)])
        half = groups // 2
        calls = [{"options": {"dtype": dtype, "accumulate": accumulate},
                  "batches": [(call - 1) * half * accumulate, call * half * accumulate]} for call in (1, 2)]
        exercised("given_scaler", "two_calls")
        entries, _ = runs.train(check, train_amp, plan, calls,
                                scaler={"init_scale": init_scale, "growth_interval": scaling.GIVEN_GROWTH_INTERVAL})
        for call, entry in zip((1, 2), entries):
            steps = range((call - 1) * half, call * half)
            part = batches[steps.start * accumulate:steps.stop * accumulate]
            _, after = scaling.scale_schedule(init_scale, scaling.GIVEN_GROWTH_INTERVAL,
                                              [g == bad for g in range(steps.stop)])
            note = f", batch {(bad - half) * accumulate} with targets of 1e7 (it overflows)" if call == 2 else ""
            case = (_case(device, dtype, part, accumulate=accumulate, scaler="scaler")
                    + f"; call {call} of 2 with the same {made}{note}")
            _, rec = runs.outcome(check, entry, case)
            scaling.expect_given_scaler_used(check, rec, entry["scaler"], [used[g] for g in steps], after,
                                             accumulate, call, case)


# ------------------------------------------------------------------ speed

@graded(2, hidden=[{}], needs="cuda", evidence=("data", "clock"))
def check_speed(check, train_amp, *, seed=0):
    """On CUDA: on the timed problem (four Linear(4096, 4096), batch 4096, MSE, SGD) ``train_amp`` with
    float16 trains faster than the grader's float32 loop (full IEEE float32, TF32 off) by the ``amp``
    threshold in the settings, calibrated in the same run against the grader's float16 + GradScaler loop
    timed beside it, and it makes the CPU wait for the GPU no more often per batch than
    the grader's own float16 loop (no ``.item()`` per batch; counted with ``torch.cuda.set_sync_debug_mode``).
    Without a GPU the loop must still train one small batch on the CPU, and the check reports that speed
    needs a GPU."""
    __tracebackhide__ = True
    with problems.one_thread():
        plan, _, batches, _ = _setup(check.seed_for(), "cpu", 1)
        exercised("one_batch")
        out, _, _ = _train(check, train_amp, plan, batches, dtype=torch.bfloat16)
    if not isinstance(out, (list, tuple)) or len(out) != 1:
        raise CheckFailure(check, f"train_amp returned {describe(out)} for one batch; expected a list of one float.",
                           hint="Return the list of per-batch losses.")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if settings.speed.thresholds["amp"].for_device(device) is None:   # not graded here: a note (or a failure)
        return expect_speedup(check, "amp", None, None, (), device=device, what="train_amp with float16")
    exercised(*(["host_syncs_cuda"] if device == "cuda" else []))
    syncs = speed.expect_no_sync_per_batch(check, train_amp, device, seed=check.seed_for("host syncs")) if device == "cuda" else None
    result = speed.expect_faster_than_float32(check, train_amp, device, seed=check.seed_for("timed"))
    if syncs is not None:
        result.note = (result.note + " " if result.note else "") + f"host syncs (4 and 8 batches): {syncs}."
    return result


# ------------------------------------------------------------------ checkpoint and resume (resuming.py)

from autograder.checks.amp.resuming import check_checkpoint_weights_only  # noqa: E402,F401
from autograder.checks.amp.resuming import check_checkpoint_resume_exact, check_checkpoint_roundtrip
