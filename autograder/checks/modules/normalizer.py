"""The ``Normalizer`` exercise's checks: its buffers (``normalizer_state``), its train and eval modes and gradients
against ``torch.nn.BatchNorm1d(affine=False)`` in float64 (``batchnorm_oracle``), and no built-in batch norm."""

import torch

from autograder.checks.modules import batchnorm_oracle as oracle
from autograder.checks.modules import drawn_state
from autograder.checks.modules import normalizer_state as state
from autograder.checks.modules import probes
from autograder.contracts import exercised
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_meta, known_kind
from autograder.measuring.gradients import expect_grad_close, expect_gradcheck
from autograder.measuring.oprecorder import expect_no_forbidden_ops
from autograder.seam.student import describe
from autograder.source_evidence.source_rules import no_call
from autograder.spec import graded

ORACLE_HINT = ("Compare with the oracle yourself: `bn = torch.nn.BatchNorm1d(num_features, momentum=momentum, eps=eps, "
               "affine=False).double()` run on the same batches, then bn.running_mean and bn.running_var.")


def _expect_statistic(check, module, name, expected, config, step, x, previous, held_dtype):
    """``module.<name>`` after train step ``step`` equals BatchNorm1d's, within the tolerance of the dtype the
    module held its statistics in (``held_dtype``); a known mistake is named."""
    __tracebackhide__ = True
    got = state.statistic(check, module, name, config)
    tolerance = oracle.tolerance(held_dtype)
    try:
        expect_close(check, got, expected, what=f"{name} after train step {step} of {config.call}",
                     inputs={"x": x}, **tolerance)
    except CheckFailure as failure:
        what = f"{name} after train step {step} of {config.call}"
        mistake = oracle.which_mistake(got, oracle.running_mistakes(name, previous, x.double(), config.momentum),
                                       **tolerance)
        raise _told(check, failure, what, mistake,
                    f"In train() mode, {name} = (1 - momentum) * {name} + momentum * (the batch "
                    f"{'mean' if name == 'running_mean' else 'variance with N - 1'}). " + ORACLE_HINT) from None


def _expect_output(check, out, expected, x, what, mistakes, hint):
    __tracebackhide__ = True
    expect_meta(check, out, what=what, shape=x.shape, dtype=x.dtype, inputs={"x": x},
                hint="The output has the input's shape [N, num_features]: reduce over dim 0 with keepdim, or let "
                     "the [num_features] statistics broadcast.")
    try:
        expect_close(check, out, expected, what=what, inputs={"x": x}, **oracle.tolerance(out.dtype))
    except CheckFailure as failure:
        raise _told(check, failure, what, oracle.which_mistake(out, mistakes, **oracle.tolerance(out.dtype)),
                    hint) from None


def _told(check, failure, what, mistake, hint):
    """``failure`` told as the known ``mistake`` it looks like (or as it is, for ``None``), the mistake in the first
    line and as its kind, so that two mistakes are two kinds (``autograder.feedback``)."""
    return CheckFailure(check, f"{what}: {mistake}.\n{failure.detail}" if mistake else failure.detail, hint=hint,
                        kind=known_kind(mistake) if mistake else failure.kind)


@graded(2, hidden=[{}], evidence=("data", "drawn state"),
        worker_facts="which tensors are buffers and which parameters (a probe)", facts_only_cost=True)
def check_normalizer_buffers(check, Normalizer, *, seed=0):
    """``Normalizer(num_features, momentum, eps)`` has buffers ``running_mean`` (zeros) and ``running_var``
    (ones) of shape [num_features] in the default dtype: registered (``named_buffers``), not parameters, not
    requiring grad, persistent (in ``state_dict``, and a saved state loads into a fresh module), converted by
    ``.to(torch.float64)`` and ``.double()`` (and ``.to("cuda")`` where there is a GPU), and still buffers after a
    train step."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(3):
        config = oracle.draw_config(gen, defaults=i == 0)
        exercised("default_config" if i == 0 else "drawn_config")
        module = state.new_normalizer(check, Normalizer, config)
        for name, initial in oracle.BUFFERS.items():
            kind, problem = state.buffer_problem(module, name, config) or (None, None)
            if problem:
                raise CheckFailure(check, problem + ".", hint=state.BUFFER_HINT, kind=kind)
            value = state.statistic(check, module, name, config)
            if value.dtype != torch.get_default_dtype():
                raise CheckFailure(check, f"{config.call}.{name} has dtype {value.dtype}; expected the default "
                                          f"{torch.get_default_dtype()}.",
                                   hint="Do not fix the dtype in __init__: callers choose it with .to(dtype).")
            if value.requires_grad:
                raise CheckFailure(check, f"{config.call}.{name} requires grad; a running statistic is not trained.",
                                   hint=state.BUFFER_HINT)
            if not torch.equal(value, torch.full_like(value, initial)):
                raise CheckFailure(check, f"{config.call}.{name} starts as {describe(value)}; expected all "
                                          f"{initial:g} (as BatchNorm1d: mean 0, variance 1).",
                                   hint=f"torch.{'zeros' if initial == 0 else 'ones'}(num_features).")
        saved = probes.state_of(module)
        missing = [n for n in oracle.BUFFERS if n not in saved]
        if missing:
            raise CheckFailure(check, f"{config.call}.state_dict() has keys {sorted(saved)}, without "
                                      f"{', '.join(missing)}: a checkpoint would lose the statistics (a buffer "
                                      "registered with persistent=False is left out of state_dict).",
                               hint="register_buffer(name, tensor) with the default persistent=True.")
        exercised("state_dict_round_trip", "converted")
        state.expect_state_round_trip(check, Normalizer, module, config, gen)
        state.expect_conversions(check, Normalizer, config, gen)
        drawn_state.expect_normalizer_follows_drawn_statistics(
            check, state.new_normalizer(check, Normalizer, config), config, gen, hint=state.BUFFER_HINT)


@graded(3, hidden=[{"cases": 12}])
def check_normalizer_train(check, Normalizer, *, seed=0, cases=6):
    """In ``train()`` mode, over 2 to 5 steps, the output is ``(x - mean) / sqrt(var + eps)`` with the batch's mean
    and biased variance, and ``running_mean`` / ``running_var`` follow ``(1 - momentum) * running + momentum *
    batch_stat`` (unbiased variance), exactly as ``BatchNorm1d(affine=False)`` in float64 (random N >= 2,
    num_features, momentum, eps, the defaults once, constant features); a float32 module keeps float32."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        config = oracle.draw_config(gen, defaults=i == 0)
        dtype = torch.float32 if i == cases - 1 else torch.float64
        exercised("default_config" if i == 0 else "drawn_config", str(dtype).removeprefix("torch."))
        module = state.new_normalizer(check, Normalizer, config)
        if dtype == torch.float64:
            module = state.convert(check, module, config, method="double")
        state.set_mode(check, module, True, config)
        # statistics left in float32 by .double() (not buffers) are compared at float32's tolerance: that
        # mistake costs check_normalizer_buffers, not this check
        held = {name: state.statistic(check, module, name, config).dtype for name in oracle.BUFFERS}
        reference = config.batchnorm()
        for step in range(1, int(torch.randint(2, 6, (1,), generator=gen)) + 1):
            n = 2 if i == 1 and step == 1 else oracle.batch_size(gen)
            x = oracle.draw_batch(gen, n, config.features, dtype=dtype, wide=dtype == torch.float64)
            exercised(*(["batch_of_2"] if n == 2 else []), *(["several_steps"] if step > 1 else []))
            previous = {name: getattr(reference, name).clone() for name in oracle.BUFFERS}
            expected = oracle.run(reference, x)
            out = check.student(module, f"{config.call} in train mode")(x)
            _expect_output(check, out, expected, x, f"the train-mode output of {config.call} at step {step}",
                           oracle.train_output_mistakes(x.double(), config.eps),
                           hint="In train() mode normalise with the batch's own statistics over dim 0: "
                                "(x - x.mean(0)) / torch.sqrt(x.var(0, correction=0) + eps). " + ORACLE_HINT)
            for name in oracle.BUFFERS:
                _expect_statistic(check, module, name, getattr(reference, name), config, step, x, previous[name],
                                  held[name])


@graded(2, hidden=[{"cases": 8}])
def check_normalizer_eval(check, Normalizer, *, seed=0, cases=4):
    """After train steps, in ``eval()`` mode the output is ``(x - running_mean) / sqrt(running_var + eps)`` with the
    statistics the module holds (set to random values; BatchNorm1d in float64 as the oracle), for N from 1 up;
    eval calls change no buffer, and work under ``torch.no_grad()``."""
    __tracebackhide__ = True
    gen = check.generator()
    for _ in range(cases):
        config = oracle.draw_config(gen)
        module = state.convert(check, state.new_normalizer(check, Normalizer, config), config, method="double")
        state.set_mode(check, module, True, config)
        for _ in range(2):
            check.student(module, f"{config.call} in train mode")(
                oracle.draw_batch(gen, oracle.batch_size(gen), config.features))
        reference = config.batchnorm()
        held = {}
        running = oracle.draw_running(gen, config.features)
        state.set_statistics(check, module, config, dict(zip(oracle.BUFFERS, running)))
        with torch.no_grad():
            for name in oracle.BUFFERS:
                held[name] = state.statistic(check, module, name, config).detach().double().cpu().clone()
                getattr(reference, name).copy_(held[name])
        state.set_mode(check, module, False, config)
        exercised("after_train_steps")
        reference.eval()
        for n in (1, oracle.batch_size(gen)):
            x = oracle.draw_batch(gen, n, config.features)
            exercised(*(["batch_of_1"] if n == 1 else []))
            what = (f"the eval-mode output of {config.call} (running_mean = {describe(held['running_mean'])}, "
                    f"running_var = {describe(held['running_var'])})")
            mistakes = oracle.eval_output_mistakes(x, held["running_mean"], held["running_var"], config.eps)
            hint = ("In eval() mode normalise with the module's own statistics, (x - self.running_mean) / "
                    "torch.sqrt(self.running_var + eps), and update nothing.")
            out = check.student(module, f"{config.call} in eval mode")(x)
            expected = oracle.run(reference, x)
            _expect_output(check, out, expected, x, what, mistakes, hint)
            state.expect_unchanged(check, module, config, held, x)
            exercised("under_no_grad")
            with torch.no_grad():
                under_no_grad = check.student(module, f"{config.call} in eval mode under torch.no_grad()")
                again = under_no_grad.via(probes.call_without_grad, x, shown=(x,))
            _expect_output(check, again, expected, x, what + " under torch.no_grad()", mistakes, hint)
            state.expect_unchanged(check, module, config, held, x)


@graded(2, hidden=[{"cases": 6}])
def check_normalizer_gradients(check, Normalizer, *, seed=0, cases=3):
    """In ``train()`` mode the gradient with respect to ``x`` equals BatchNorm1d's (float64, through the batch
    mean and variance) and passes ``gradcheck``; the running statistics carry no autograd history afterwards."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        config = oracle.draw_config(gen, max_features=4)
        module = state.convert(check, state.new_normalizer(check, Normalizer, config), config, method="double")
        state.set_mode(check, module, True, config)
        x = oracle.draw_batch(gen, 2 if i == 0 else oracle.batch_size(gen, 2, 6), config.features, wide=False)
        exercised("gradcheck_float64", "x_requires_grad")

        def vjp(grad_output, x=x, config=config):
            leaf = x.detach().clone().requires_grad_(True)
            with oracle.one_thread():
                (grad,) = torch.autograd.grad(config.batchnorm()(leaf), leaf, grad_output)
            return grad

        try:
            expect_grad_close(check, module, [x], vjp, what=f"{config.call} in train mode", rtol=1e-7, atol=1e-9,
                              shape=x.shape, hint="A wrong output has a wrong gradient: make check_normalizer_train pass first. "
                                   "Then keep the batch mean and variance in the graph (no .detach() on them, no "
                                   ".item()): the gradient flows through them too. " + ORACLE_HINT)
            expect_gradcheck(check, module, [x], what=f"{config.call} in train mode")
        except CheckFailure as failure:
            raise CheckFailure(check, f"{config.call}.double() in train mode, on x = {describe(x)}: "
                                      f"{failure.detail}", hint=failure.hint) from None
        for name in oracle.BUFFERS:
            value = state.statistic(check, module, name, config)
            requires_grad, grad_fn = check.student(module).beside(probes.history, name)    # autograd history stays in its process
            if requires_grad or grad_fn is not None:
                raise CheckFailure(check, f"after train-mode calls on an x that requires grad, {config.call}.{name} "
                                          f"carries autograd history ({describe(value)}, grad_fn="
                                          f"{grad_fn}): every "
                                          "step's graph stays alive through it, memory grows with each step, and a "
                                          "later backward runs into old steps.", hint=state.NO_GRAD_HINT)


@graded(1, hidden=[{}], source=[no_call("Normalizer", "batch_norm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                                                "LazyBatchNorm1d", "SyncBatchNorm", "native_batch_norm")],
        worker_facts="the ATen ops recorded; the submodules' types", facts_only_cost=True)
def check_normalizer_no_builtin(check, Normalizer, *, seed=0):
    """Built from elementary operations: no ``F.batch_norm``, ``torch.batch_norm`` or any batch-norm kernel
    (the op recorder sees every spelling), in train and in eval mode, and no ``BatchNorm`` submodule."""
    __tracebackhide__ = True
    gen = check.generator()
    config = oracle.draw_config(gen)
    module = state.new_normalizer(check, Normalizer, config)
    builtin = [f"{name or '(the module itself)'}: {probes.type_name(m)}" for name, m in module.named_modules()
               if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]   # BatchNorm1d/2d/3d, Lazy*, SyncBatchNorm
    if builtin:
        raise CheckFailure(check, f"{config.call} contains a built-in batch norm ({'; '.join(builtin)}), which this "
                                  "exercise forbids.",
                           hint="Compute the statistics and the normalisation yourself from mean, var, sqrt.")
    hint = ("Compute it from elementary operations: x.mean(0), x.var(0, correction=...), torch.sqrt, and the "
            "running update by hand.")
    for train in (True, False):
        state.set_mode(check, module, train, config)
        x = oracle.draw_batch(gen, oracle.batch_size(gen), config.features, dtype=torch.float32, wide=False)
        exercised("train_mode" if train else "eval_mode")
        mode = "train" if train else "eval"
        expect_no_forbidden_ops(check, module, x, forbidden=oracle.FORBIDDEN, what=f"{config.call} in {mode} mode",
                                hint=hint)
