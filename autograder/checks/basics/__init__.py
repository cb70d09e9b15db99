"""Checks for the ``basics`` assignment: ``grad_of``, ``to_numpy`` and ``fit_quadratic``.

Every check draws its inputs from a seeded generator (the hidden tests pass other
seeds). Gradients are compared with ``torch.autograd`` on a float64 copy of the
input; arrays with values rebuilt from ``tolist()``; fitted coefficients with the
quadratic that generated the data.
"""

import numpy as np
import torch

from autograder.checks.basics import probes
from autograder.checks.basics.contract import REQUIRES_GRAD_LABELS, VIEW_LABELS
from autograder.checks.basics.rules import leaves_argument_flag
from autograder.contracts import exercised, exercised_as, tensor_labels
from autograder.errors import CheckFailure
from autograder.measuring.compare import context, dtype_kind, expect_close, expect_finite, expect_meta, expect_tensor
from autograder.measuring.expected_outputs import oracle
from autograder.seam.remote import Callback
from autograder.seam.student import describe
from autograder.spec import graded

# float32 gradients go through float32 arithmetic (sums of up to ~60 terms); the reference is float64.
GRAD_TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-9, 1e-12)}

NUMPY_DTYPES = {
    torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64,
    torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
    torch.uint8: np.uint8, torch.bool: np.bool_,
}

# fit_quadratic is graded on y = a x^2 + b x + c with a, b, c uniform in [-5, 5] and x uniform in [-3, 3]
# (100 fresh points per step), 800 Adam steps at lr 0.1. Calibrated on 2026-11-22 (2-core CPU, torch 2.13) over
# 1,350 quadratics and torch.randn initialisations: the reference's largest errors were 1.1e-3 (x^2), 3.8e-5 (x)
# and 5.2e-3 (1), 99.9th percentile 1.6e-3 for the constant; the second solution (nn.Linear init) stayed below
# 3e-4 over 300. FIT_ATOL is about 10x the worst error seen. SGD at lr 0.1 diverges on this data (NaN), and 150
# steps leave errors above 0.05. See docs/basics.md.
FIT_SPAN = 3.0
FIT_COEFFICIENT_RANGE = 5.0
FIT_POINTS = 100
FIT_STEPS = 800
FIT_LR = 0.1
FIT_ATOL = 0.05


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _pick(gen, options):
    return options[int(torch.randint(0, len(options), (1,), generator=gen))]


# ------------------------------------------------------------------------ grad_of

def _scalar_functions(gen, numel):
    """Scalar-valued functions of a tensor of ``numel`` elements; each works in any dtype and on any device (and
    crosses to the student's worker as a ``functools.partial`` of a module-level function: ``probes.FORMULAS``)."""
    weights = torch.randn(numel, generator=gen, dtype=torch.float64)
    matrix = torch.randn(numel, numel, generator=gen, dtype=torch.float64) / max(numel, 1) ** 0.5
    return [probes.Function(index, weights, matrix) for index in range(len(probes.FORMULAS))]


def _grad_input(gen, dtype, device):
    """A random input of rank 0 to 3, sometimes a non-contiguous (transposed) view."""
    rank = int(torch.randint(0, 4, (1,), generator=gen))
    shape = [int(s) for s in torch.randint(1, 6, (rank,), generator=gen)]
    x = torch.randn(shape, generator=gen, dtype=torch.float64) + 0.1
    if rank >= 2 and bool(torch.rand(1, generator=gen) < 0.5):
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    return x.to(dtype=dtype, device=device)


@graded(5, hidden=[{"cases": 60, "leave_cases": 12}], source=[leaves_argument_flag("grad_of")],
        facts_only_cost=True, worker_facts="x's requires_grad, .grad and values after the call, and its leaf's .grad")
def check_grad_of_values(check, grad_of, *, seed=0, cases=30, leave_cases=6):
    """The gradient of functions the student has not seen: same shape, dtype and device as ``x``, detached
    (no ``requires_grad``, no ``grad_fn``), equal to autograd's float64 gradient, for inputs of rank 0 to 3,
    float32 and float64, contiguous or not; then on an ``x`` that requires grad, holds an earlier ``.grad`` or is
    computed from a leaf, the right gradient with ``x`` (and its leaf) left as they were.

    The points rest on the gradients that come back (data) and on the source: ``grad_of`` sets ``requires_grad`` on
    no object that may be the caller's ``x`` (``rules.py``; a change the reading cannot place goes to the
    instructor's review). Whether ``x``'s flag and ``.grad`` were left alone is known only to the worker that holds
    ``x``: that report can only cost (docs/security.md), so it is a precondition of these points rather than an item
    of its own."""
    __tracebackhide__ = True
    _grad_values(check, grad_of, seed, cases)
    _grad_leaves_x_alone(check, grad_of, seed, leave_cases)


def _grad_values(check, grad_of, seed, cases):
    __tracebackhide__ = True
    gen = check.generator()
    dtypes = (torch.float32, torch.float64)
    for i in range(cases):
        device = _devices()[i % len(_devices())]
        x = _grad_input(gen, dtypes[i % 2], device)
        f = _pick(gen, _scalar_functions(gen, x.numel()))
        inputs = {"f": f, "x": x}
        exercised_as(tensor_labels, x)
        facts = grad_of.via(probes.grad_of_result, f.partial, x, shown=(f, x))
        grad = facts["grad"]
        expect_meta(check, grad, what="grad_of's result", shape=x.shape, dtype=x.dtype, device=device,
                    inputs=inputs, hint="The gradient of f at x has x's shape: return the gradient with "
                                        "respect to x itself (`torch.autograd.grad(f(x), x)[0]`), not of the "
                                        "output or of a reshaped copy.")
        if grad.requires_grad or grad.grad_fn is not None:
            raise CheckFailure(check, f"grad_of's result is still attached to an autograd graph "
                                      f"(requires_grad={grad.requires_grad}, grad_fn={facts['grad_fn']})."
                                      + context(inputs),
                               hint="Return the gradient detached: `torch.autograd.grad(...)[0]` without "
                                    "`create_graph=True`, or `.detach()` it.")
        expect_finite(check, grad, what="grad_of's result", inputs=inputs,
                      hint="Compute the gradient with torch.autograd, not with finite differences.")
        expected = oracle("basics.grad", f, x)
        try:
            expect_close(check, grad, expected, what="grad_of's result", inputs=inputs, table=GRAD_TOLERANCES,
                         hint=GRAD_HINT)
        except CheckFailure as failure:
            _expect_not_an_estimate(check, failure, grad, expected, inputs)
            raise


GRAD_HINT = ("Use torch.autograd.grad(f(x_), x_) on a copy x_ that requires grad; finite differences are not "
             "accurate enough.")
# How far a numerical estimate of the gradient lies from it, relative to its size (at least 1e-3): on these test
# functions (seeds 0, 1, 7), central and forward differences with steps 1e-3 and the square root of the dtype's eps
# were off by up to 1e-3 in float64 and by 1e-7 to 1 in float32 (most below 0.1; 1 at a tie of x.max()), where
# autograd's gradient is within GRAD_TOLERANCES. A result further off is another mistake, told by no name.
ESTIMATE_RTOL = {torch.float32: 0.25, torch.float64: 1e-2}
LOWER_PRECISION = {torch.float32: (torch.float16, torch.bfloat16), torch.float64: (torch.float32,)}


def _expect_not_an_estimate(check, failure, grad, expected, inputs):
    """Tell a gradient that is close but not exact as an estimate (finite differences): finite, within
    :data:`ESTIMATE_RTOL` of the gradient everywhere, and not a gradient computed in a lower precision and cast
    back (every value representable in float32 for a float64 x: that is another mistake, told by no name)."""
    __tracebackhide__ = True
    if failure.kind != "wrong value" or grad.dtype not in ESTIMATE_RTOL:
        return
    g, e = grad.detach().cpu().double(), expected.detach().cpu().double()
    error = (g - e).abs()
    scale = e.abs().clamp_min(1e-3)
    if not bool(torch.isfinite(g).all()) or bool((error > ESTIMATE_RTOL[grad.dtype] * scale).any()):
        return
    if any(torch.equal(grad.detach().cpu(), grad.detach().cpu().to(lower).to(grad.dtype))
           for lower in LOWER_PRECISION[grad.dtype]):
        return
    raise CheckFailure(check, f"grad_of's result is close to the gradient but not exact, as an estimate by finite "
                              f"differences is: its largest error is {float((error / scale).max()):.2g} of the "
                              f"gradient's size, where autograd's gradient is exact to rounding."
                       + "\n" + failure.detail.split("\n", 1)[-1], hint=GRAD_HINT) from None


def _expect_unchanged(check, name, before, after, f):
    """``after`` (``probes.grad_state`` of the tensor after the call, reported from where grad_of ran) is
    ``before`` (the same, of the grader's own copy). A ``.grad`` that appeared is told first: ``.backward()`` on
    ``x`` is the cause, and it usually sets the flag on the way."""
    __tracebackhide__ = True
    where = f"after grad_of(f = {f!r}, x), {name}"
    grad = after["grad"]
    if before["grad"] is None and grad is not None:
        raise CheckFailure(check, f"{where} has a .grad ({describe(grad)}); it had none before the call.",
                           hint="`.backward()` accumulates into the leaves' .grad. Use "
                                "`torch.autograd.grad(output, inputs)`, which returns the gradient instead, "
                                "on a detached copy of x.")
    if before["grad"] is not None and (grad is None or not torch.equal(grad, before["grad"])):
        raise CheckFailure(check, f"{where} has .grad {describe(grad)}; it was {describe(before['grad'])} "
                                  "before the call.",
                           hint="Do not call `.backward()` or touch `.grad` of the caller's tensors.")
    if after["requires_grad"] != before["requires_grad"]:
        raise CheckFailure(check, f"{where} has requires_grad={after['requires_grad']}; it was "
                                  f"{before['requires_grad']} before the call.",
                           hint="Leave the caller's tensor alone: work on `x.detach().requires_grad_(True)`, a "
                                "new leaf, instead of setting the flag on `x` itself.")
    if not torch.equal(after["values"], before["values"]):
        raise CheckFailure(check, f"{where} changed its values.", hint="Do not modify x in place.")


def _grad_leaves_x_alone(check, grad_of, seed, cases):
    """``x`` is left as it was: its ``requires_grad`` flag, its ``.grad`` (none, or an earlier one) and its
    values; and when ``x`` is computed from a leaf that requires grad, that leaf's ``.grad`` too."""
    __tracebackhide__ = True
    gen = check.generator("x left alone")
    for i in range(cases):
        device = _devices()[i % len(_devices())]
        base = _grad_input(gen, torch.float32, device)
        f = _pick(gen, _scalar_functions(gen, base.numel()))
        kind = probes.GRAD_KINDS[i % 4]
        exercised(kind)
        # x is built where grad_of runs (a tensor's flag, .grad and graph do not cross to a worker); here, the
        # same x for the expected values and the message.
        x, owner = probes.grad_input(kind, base)
        before = probes.grad_state(x)
        owner_before = probes.grad_state(owner) if owner is not None else None
        facts = grad_of.via(probes.grad_of_leaving, f.partial, kind, base, shown=(f, x), here=(x, owner))
        grad = facts["grad"]
        expect_tensor(check, grad, what="grad_of's result")
        described = f"x ({kind.replace('_', ' ')}: {describe(x)})"
        _expect_unchanged(check, described, before, facts["x"], f)
        if owner is not None:
            _expect_unchanged(check, "the leaf w that x = 1.5 * w was computed from", owner_before, facts["owner"], f)
        expect_close(check, grad, oracle("basics.grad", f, x), what="grad_of's result", table=GRAD_TOLERANCES,
                     inputs={"f": f, "x": x})


# ----------------------------------------------------------------------- to_numpy

def _random_tensor(gen, dtype, shape):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.5
    if dtype.is_floating_point:
        values = torch.randn(shape, generator=gen, dtype=torch.float64) * 10
        return values.to(dtype)
    info = torch.iinfo(dtype)
    low, high = max(info.min, -(2 ** 62)), min(info.max, 2 ** 62)
    return torch.randint(low, high, shape, generator=gen, dtype=torch.int64).to(dtype)


def _expect_array(check, result, t, *, kind):
    """``result`` is an ndarray with ``t``'s shape, NumPy dtype and exact values (NaN equal to NaN)."""
    __tracebackhide__ = True
    shown = f"to_numpy({kind} {describe(t)})"
    if not isinstance(result, np.ndarray):
        raise CheckFailure(check, f"{shown} returned a {type(result).__name__}, not a numpy.ndarray: "
                                  f"{describe(result)}.",
                           hint="Return `t....numpy()` itself; no `.tolist()`, `.item()` or tensor.")
    expected_dtype = np.dtype(NUMPY_DTYPES[t.dtype])
    if result.dtype != expected_dtype:
        raise CheckFailure(check, f"{shown} has dtype {result.dtype}, expected {expected_dtype}.",
                           hint="Keep the tensor's dtype: `.numpy()` maps it exactly; `np.array(t.tolist())` "
                                "and `.astype(...)` do not.", kind=dtype_kind(result.dtype, expected_dtype))
    if tuple(result.shape) != tuple(t.shape):
        raise CheckFailure(check, f"{shown} has shape {result.shape}, expected {tuple(t.shape)}.",
                           hint="Do not flatten or squeeze the result.")
    expected = np.array(t.detach().cpu().tolist(), dtype=expected_dtype).reshape(tuple(t.shape))
    floating = np.issubdtype(expected_dtype, np.floating)
    if not np.array_equal(result, expected, equal_nan=floating):
        same = (result == expected) | (np.isnan(result) & np.isnan(expected)) if floating else result == expected
        bad = np.argwhere(~np.asarray(same))
        where = tuple(int(i) for i in bad[0]) if len(bad) else ()
        raise CheckFailure(check, f"{shown} has values that differ from the tensor's: {len(bad)} of {t.numel()} "
                                  f"elements, first at index {where}: expected {expected[where]!r}, "
                                  f"got {result[where]!r}.",
                           hint="Convert the tensor as it is; do not round or change its type on the way.")


@graded(2, hidden=[{"cases": 54}])
def check_to_numpy_values(check, to_numpy, *, seed=0, cases=27):
    """An ``np.ndarray`` with the tensor's exact values, shape and NumPy dtype, for every real dtype NumPy has
    (float16/32/64, int8/16/32/64, uint8, bool), ranks 0 to 3, empty tensors, inf and NaN; on CUDA too when
    a GPU is present."""
    __tracebackhide__ = True
    gen = check.generator()
    dtypes = list(NUMPY_DTYPES)
    for i in range(cases):
        dtype = dtypes[i % len(dtypes)]
        rank = int(torch.randint(0, 4, (1,), generator=gen))
        shape = [int(s) for s in torch.randint(0 if i % 7 == 6 else 1, 5, (rank,), generator=gen)]
        t = _random_tensor(gen, dtype, shape)
        if dtype.is_floating_point and t.numel() >= 3 and i % 3 == 0:
            t.view(-1)[:3] = torch.tensor([float("inf"), float("-inf"), float("nan")], dtype=dtype)
        device = _devices()[i % len(_devices())]
        t = t.to(device)
        exercised_as(tensor_labels, t)
        result = to_numpy(t)
        _expect_array(check, result, t, kind=f"a {'CUDA' if device == 'cuda' else 'CPU'} tensor,")


@graded(1, hidden=[{"cases": 12}], source=[leaves_argument_flag("to_numpy", position=0)], facts_only_cost=True,
        worker_facts="the argument's requires_grad after the call")
def check_to_numpy_requires_grad(check, to_numpy, *, seed=0, cases=6):
    """Tensors that require grad (a leaf, an ``nn.Parameter``, the result of a computation) convert without
    error to their values; the tensor keeps its ``requires_grad`` flag: read from the source (``to_numpy`` changes
    the flag of no object that may be its argument, ``rules.py``), and as the worker reports it (only costs)."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        dtype = (torch.float32, torch.float64)[i % 2]
        device = _devices()[i % len(_devices())]
        shape = [int(s) for s in torch.randint(1, 5, (int(torch.randint(0, 3, (1,), generator=gen)),),
                                               generator=gen)]
        base = _random_tensor(gen, dtype, shape).to(device)
        kind = probes.REQUIRES_GRAD_KINDS[i % 3]
        exercised(REQUIRES_GRAD_LABELS[i % 3], f"on_{device}")
        # t is made where to_numpy runs (a Parameter, a non-leaf and a flag the student may clear do not cross to a
        # worker); here, the same t for the expected values and the message.
        t = probes.requiring_grad(i % 3, base)
        facts = to_numpy.via(probes.to_numpy_requiring_grad, i % 3, base, shown=(t,), here=t)
        _expect_array(check, facts["array"], t, kind=kind)
        if not facts["requires_grad"]:
            raise CheckFailure(check, f"to_numpy switched off requires_grad of its argument ({kind[:-1]}).",
                               hint="Use `t.detach()`, which returns a new tensor, instead of changing t.")


def _views(gen, device):
    """``[(kind, base, view)]``: each of ``probes.VIEWS`` and the tensor it is a view of."""
    base = _random_tensor(gen, torch.float32, [4, 6]).to(device)
    cube = _random_tensor(gen, torch.int64, [2, 3, 4]).to(device)
    row = _random_tensor(gen, torch.float64, [1, 5]).to(device)
    leaf = _random_tensor(gen, torch.float32, [3, 2]).to(device)
    return [(kind, b, probes.view_of(kind, b)) for kind, b in enumerate((base, base, cube, row, base, base, leaf))]


@graded(1, hidden=[{"rounds": 4}])
def check_to_numpy_views(check, to_numpy, *, seed=0, rounds=2):
    """Non-contiguous views (transposed, strided, permuted, expanded with stride 0, diagonal) convert to arrays
    with the view's shape and values."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(rounds):
        device = _devices()[i % len(_devices())]
        for kind, base, view in _views(gen, device):
            # The view is made where to_numpy runs: a tensor crosses to a worker by value, contiguous.
            exercised(VIEW_LABELS[kind], f"on_{device}")
            result = to_numpy.via(probes.to_numpy_of_view, kind, base, shown=(view,), here=view)
            _expect_array(check, result, view, kind=probes.VIEWS[kind] + ",")


# ------------------------------------------------------------------ fit_quadratic

class _CountingData:
    """``generate_data()`` for y = a x^2 + b x + c: fresh x uniform in [-span, span] at every call."""

    def __init__(self, gen, coefficients, span=FIT_SPAN, points=FIT_POINTS):
        self.gen, self.coefficients, self.span, self.points = gen, coefficients, span, points
        self.calls = 0

    def __call__(self):
        self.calls += 1
        x = (torch.rand(self.points, generator=self.gen) * 2 - 1) * self.span
        a, b, c = (float(v) for v in self.coefficients)
        return x, a * x * x + b * x + c

    def take(self, n):
        """``n`` samples at once: what ``n`` calls return."""
        return [self() for _ in range(int(n))]

    def __repr__(self):
        a, b, c = (float(v) for v in self.coefficients)
        return f"generate_data for y = {a:.3g}x^2 {b:+.3g}x {c:+.3g}, x in [-{self.span:g}, {self.span:g}]"


def _random_coefficients(gen):
    return (torch.rand(3, generator=gen, dtype=torch.float64) * 2 - 1) * FIT_COEFFICIENT_RANGE


FIT_CHUNK = 100     # samples sent at a time when the call count is not graded


def _fit(check, fit_quadratic, data, steps, lr, seed, counted=True):
    """``fit_quadratic(data, steps=, lr=)`` with torch's generator seeded where it runs. ``counted``: ``data`` is called
    back here from a worker (``Callback``) at every call, so its call count stays the grader's; else the worker gets
    its samples ``FIT_CHUNK`` at a time (``probes.Prefetched``: a fit of 800 steps in 8 round trips, not 800)."""
    __tracebackhide__ = True
    exercised("own_generate_data", f"steps_{steps}", *(["calls_counted"] if counted else []))
    if counted:
        return fit_quadratic.via(probes.seeded_call, seed, Callback(data), shown=(data,), steps=steps, lr=lr)
    return fit_quadratic.via(probes.seeded_call_prefetched, seed, Callback(data.take), FIT_CHUNK, shown=(data,),
                             steps=steps, lr=lr)


@graded(3, hidden=[{"cases": 4}])
def check_fit_quadratic(check, fit_quadratic, *, seed=0, cases=2, steps=FIT_STEPS, lr=FIT_LR):
    """On quadratics the student has not seen (coefficients uniform in [-5, 5], x in [-3, 3]), the result is a
    float tensor of shape [3] holding the coefficients of x^2, x and 1, each within ``FIT_ATOL`` = 0.05."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        coefficients = _random_coefficients(gen)
        # its own generator: the quadratics drawn do not depend on how many samples a fit took (prefetched in chunks)
        data = _CountingData(torch.Generator().manual_seed(int(torch.randint(2 ** 62, (1,), generator=gen))),
                             coefficients)
        inputs = {"generate_data": data, "steps": steps, "lr": lr}
        exercised("unseen_quadratic")
        fit_seed = check.seed_for(f"fit {i}")
        w = _fit(check, fit_quadratic, data, steps, lr, fit_seed, counted=False)
        expect_meta(check, w, what="fit_quadratic's result", shape=[3], inputs=inputs)
        if not w.is_floating_point():
            raise CheckFailure(check, f"fit_quadratic's result has dtype {w.dtype}, expected a float dtype.")
        expect_finite(check, w, what="fit_quadratic's result", inputs=inputs,
                      hint="The fit diverged. Use torch.optim.Adam with the given lr: plain SGD at lr 0.1 "
                           "diverges on x^2 features as large as 9.")
        try:
            expect_close(check, w, coefficients, what="fit_quadratic's result [x^2, x, 1]", inputs=inputs,
                         rtol=0.0, atol=FIT_ATOL, known=REVERSED,
                         hint="Return the coefficients in the order x^2, x, 1; take a fresh sample from "
                              "generate_data() and one Adam step with lr at each of the `steps` steps.")
        except CheckFailure as failure:
            _expect_lr_used(check, fit_quadratic, coefficients, fit_seed)
            raise failure from None


def _expect_lr_used(check, fit_quadratic, coefficients, seed, steps=3, lrs=(0.1, 0.025)):
    """A fit that failed, run again for a few steps at two learning rates on the same samples with the same seed:
    the same coefficients at both say that the fit ignores ``lr`` (a mistake of its own, told by name), which no
    difference from the true coefficients says."""
    __tracebackhide__ = True
    fits = []
    for lr in lrs:
        data = _CountingData(torch.Generator().manual_seed(seed), coefficients)
        fits.append(_fit(check, fit_quadratic, data, steps, lr, seed, counted=False))
    if all(isinstance(w, torch.Tensor) for w in fits) and fits[0].shape == fits[1].shape \
            and torch.equal(fits[0].detach().cpu(), fits[1].detach().cpu()):
        raise CheckFailure(check, f"fit_quadratic ignores lr: {steps} steps with lr={lrs[0]} and with lr={lrs[1]}, "
                                  f"on the same samples, give the same coefficients, {fits[0].tolist()}.",
                           hint="Hand the lr you are given to the optimizer, `torch.optim.Adam([w], lr=lr)`, not a "
                                "fixed number or Adam's default.")


# The known mistake a fitted quadratic shows by its values (expect_close's known): the coefficients in reverse.
REVERSED = (("the coefficients in the order 1, x, x^2", lambda expected: expected.flip(-1),
             "Order the features (and so the coefficients) as x^2, x, 1: `torch.stack([x**2, x, ones], dim=-1)`."),)


@graded(1, hidden=[{"step_counts": (2, 9, 40)}])
def check_fit_quadratic_fresh_samples(check, fit_quadratic, *, seed=0, step_counts=(1, 4, 25)):
    """``generate_data()`` is called once per step: ``steps`` times (one extra call allowed), for small
    ``steps`` the student has not seen, so a fixed sample or a fixed number of steps both show."""
    __tracebackhide__ = True
    gen = check.generator()
    for steps in step_counts:
        data = _CountingData(gen, _random_coefficients(gen))
        w = _fit(check, fit_quadratic, data, steps, FIT_LR, check.seed_for(f"fit of {steps} steps"))
        expect_meta(check, w, what="fit_quadratic's result", shape=[3],
                    inputs={"generate_data": data, "steps": steps})
        if not steps <= data.calls <= steps + 1:
            raise CheckFailure(check, f"fit_quadratic(generate_data, steps={steps}) called generate_data() "
                                      f"{data.calls} times; expected one call per step ({steps}).",
                               hint="Call generate_data() inside the loop, once per step, and loop exactly "
                                    "`steps` times: a fresh sample at every step is what makes this stochastic "
                                    "gradient descent.",
                               measurements={"steps": steps, "calls": data.calls})
