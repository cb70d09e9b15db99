"""Checks for the ``stability`` assignment: stable softmax, softmax cross-entropy, and a softplus with a
hand-written, stable gradient (a custom ``torch.autograd.Function``).

Every check draws many inputs from a seeded generator (the hidden tests pass other
seeds), compares against float64 references computed with PyTorch's own
operations, and reports the first input that fails.
"""

import contextlib

import torch

from autograder.checks.stability import probes
from autograder.checks.stability import softplus_cases as sp
from autograder.checks.stability.contract import logits_labels
from autograder.checks.stability.per_row import with_diagnosis
from autograder.checks.stability.softmax_cases import (CE_EXTREME, CE_GRADIENT_CASES, CE_TOLERANCES, EXTREME,
                                                       FLOAT_DTYPES, ce_atol, devices, expected_ce_shape, random_case,
                                                       random_labels, random_logits, ref_cross_entropy, ref_softmax)
from autograder.contracts import exercised, exercised_as, tensor_labels
from autograder.errors import CheckFailure
from autograder.measuring.compare import context, expect_close, expect_finite, expect_meta, expect_tensor, known_kind
from autograder.measuring.gradients import expect_grad_close, expect_gradcheck
from autograder.measuring.oprecorder import expect_no_forbidden_ops
from autograder.seam.ops import OpRecord, record_ops
from autograder.source_evidence.source_rules import autograd_function, no_call
from autograder.spec import graded

FORBIDDEN = ("softmax", "log_softmax", "logsumexp", "cross_entropy", "nll_loss")
FORBIDDEN_SPELLINGS = (*FORBIDDEN, "CrossEntropyLoss", "NLLLoss")   # in the source: nn.Softmax and nn.LogSoftmax too

SHIFT_HINT = "Subtract the maximum along `dim` (with keepdim=True) before `exp`: exp(x - max) never overflows."


# ---------------------------------------------------------------- stable_softmax

@graded(3, hidden=[{"cases": 80}])
def check_softmax_forward(check, stable_softmax, *, seed=0, cases=40):
    """Same shape, dtype and device as the input; equal to a float64 softmax; rows sum to 1.

    Random shapes of rank 1 to 4, every ``dim``, every float dtype, moderate logits.
    """
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        shape, dim, scale = random_case(gen)
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        device = devices()[i % len(devices())]
        x = random_logits(gen, shape, scale, dtype, device)
        inputs = {"logits": x, "dim": dim}
        exercised_as(logits_labels, x, dim)
        out = stable_softmax(x, dim=dim)
        expect_meta(check, out, what="stable_softmax's result", shape=x.shape, dtype=dtype, device=device,
                    inputs=inputs)
        try:
            expect_finite(check, out, what="stable_softmax's result", inputs=inputs, hint=SHIFT_HINT)
            _expect_normalised_along(check, out, dim, inputs)
            expect_close(check, out, ref_softmax(x, dim), what="stable_softmax's result", inputs=inputs,
                         hint="Normalise along `dim` only: exp(x - max) / sum(exp(x - max)) with keepdim=True.")
        except CheckFailure as failure:
            raise with_diagnosis(failure, check, stable_softmax) from None


def _sums_to_one(out, dim):
    sums = out.detach().double().sum(dim=dim)
    tol = max(1e-9, 4 * torch.finfo(out.dtype).eps * out.shape[dim])
    return bool(((sums - 1).abs() <= tol).all())


def _expect_normalised_along(check, out, dim, inputs):
    """A result that sums to 1 along another dimension than ``dim``, and not along ``dim``, was normalised over the
    wrong dimension, by whatever route: told as that, not as values to compare."""
    __tracebackhide__ = True
    if out.dim() < 2 or out.numel() == 0 or _sums_to_one(out, dim):
        return
    other = next((d for d in range(out.dim()) if d != dim % out.dim() and _sums_to_one(out, d)), None)
    if other is not None:
        raise CheckFailure(check, f"stable_softmax's result sums to 1 along dimension {other}, not along dim={dim}: "
                                  "it was normalised over the wrong dimension." + context(inputs),
                           hint="Sum along `dim`, the argument: `e.sum(dim=dim, keepdim=True)`, not a fixed dimension.")


@graded(3, hidden=[{"cases": 16}])
def check_softmax_extremes(check, stable_softmax, *, seed=0, cases=8):
    """Finite, correct results for logits near each dtype's largest value, and for one batch whose
    rows differ in scale by 1e4 (where a max over the whole tensor instead of per row fails)."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        n = int(torch.randint(2, 9, (1,), generator=gen))
        big = EXTREME[dtype]
        # Row 0: huge positive and negative logits; row 1: ordinary logits; row 2: a scale 1e4 larger.
        rows = torch.stack([
            torch.rand(n, generator=gen, dtype=torch.float64) * 2 * big - big,
            torch.randn(n, generator=gen, dtype=torch.float64),
            torch.randn(n, generator=gen, dtype=torch.float64) * 1e4 if dtype != torch.float16 else
            torch.randn(n, generator=gen, dtype=torch.float64) * 1e3 + 5e4,
        ])
        exercised("near_dtype_max", "rows_differ_in_scale")
        for dim, x in ((-1, rows.to(dtype)), (0, rows.t().contiguous().to(dtype))):
            inputs = {"logits": x, "dim": dim}
            out = stable_softmax(x, dim=dim)
            expect_meta(check, out, what="stable_softmax's result", shape=x.shape, dtype=dtype, inputs=inputs)
            try:
                expect_finite(check, out, what="stable_softmax's result at extreme logits", inputs=inputs,
                              hint=SHIFT_HINT + " Take the max per row, along `dim`, not over the whole tensor.")
                expect_close(check, out, ref_softmax(x, dim), what="stable_softmax's result at extreme logits",
                             inputs=inputs, hint="Take the max per row, along `dim`, not over the whole tensor.")
            except CheckFailure as failure:
                raise with_diagnosis(failure, check, stable_softmax) from None


@graded(2, hidden=[{"cases": 10}])
def check_softmax_gradient(check, stable_softmax, *, seed=0, cases=6):
    """The gradient equals the analytic one, s * (g - sum(g * s)), and passes ``gradcheck`` in float64;
    it stays finite at extreme logits."""
    __tracebackhide__ = True
    gen = check.generator()
    for _ in range(cases):
        shape, dim, scale = random_case(gen, max_rank=3)
        x = random_logits(gen, shape, scale, torch.float64)

        def vjp(g, x=x, dim=dim):
            s = ref_softmax(x, dim)
            return s * (g - (g * s).sum(dim=dim, keepdim=True))

        expect_grad_close(check, stable_softmax, [x], vjp, kwargs={"dim": dim}, names=["logits"],
                          what="stable_softmax", rtol=1e-7, atol=1e-9, shape=x.shape)
        exercised("gradcheck_float64")
        expect_gradcheck(check, stable_softmax, [x], kwargs={"dim": dim}, names=["logits"], what="stable_softmax")
    x = torch.tensor([[1e4, -1e4, 0.0], [3.0, 2.0, 1.0]], dtype=torch.float32, requires_grad=True)
    exercised("backward_at_1e4")
    out = stable_softmax(x, dim=-1)
    try:
        out.backward(torch.ones_like(out))
    except Exception as error:  # noqa: BLE001
        raise CheckFailure(check, f"backward through stable_softmax failed: {error}") from None
    try:
        expect_finite(check, x.grad, what="the gradient at logits [[1e4, -1e4, 0], [3, 2, 1]]", hint=SHIFT_HINT)
    except CheckFailure as failure:
        raise with_diagnosis(failure, check, stable_softmax) from None


@graded(1, source=[no_call("stable_softmax", *FORBIDDEN_SPELLINGS)], worker_facts="the ATen ops recorded",
        facts_only_cost=True)
def check_softmax_no_builtin(check, stable_softmax, *, seed=0):
    """Built from elementary operations: no softmax, log_softmax, logsumexp, cross_entropy or nll_loss."""
    __tracebackhide__ = True
    gen = check.generator()
    for dtype in (torch.float32, torch.float16):
        x = random_logits(gen, [3, 5], 1.0, dtype)
        exercised_as(tensor_labels, x)
        out, _ = expect_no_forbidden_ops(check, stable_softmax, x, dim=-1, forbidden=FORBIDDEN,
                                         what="stable_softmax")
        expect_close(check, out, ref_softmax(x, -1), what="stable_softmax's result", inputs={"logits": x})


# ---------------------------------------------------------- softmax_cross_entropy

@graded(3, hidden=[{"cases": 80}])
def check_cross_entropy_forward(check, softmax_cross_entropy, *, seed=0, cases=40):
    """Per-example losses -sum(labels * log_softmax(logits), dim): the shape of logits without ``dim``,
    the logits' dtype and device, equal to a float64 reference, for soft, one-hot and broadcast labels."""
    __tracebackhide__ = True
    gen = check.generator()
    kinds = ("soft", "onehot", "broadcast")
    for i in range(cases):
        shape, dim, scale = random_case(gen)
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        device = devices()[i % len(devices())]
        x = random_logits(gen, shape, scale, dtype, device)
        labels = random_labels(gen, x, dim, kinds[i % len(kinds)])
        inputs = {"labels": labels, "logits": x, "dim": dim}
        exercised(kinds[i % len(kinds)])
        exercised_as(logits_labels, x, dim)
        out = softmax_cross_entropy(labels, x, dim=dim)
        expect_meta(check, out, what="the loss", shape=expected_ce_shape(x, dim), dtype=dtype, device=device,
                    inputs=inputs)
        expect_finite(check, out, what="the loss", inputs=inputs, hint=SHIFT_HINT)
        expect_close(check, out, ref_cross_entropy(labels, x, dim), what="the loss", inputs=inputs,
                     table=CE_TOLERANCES, atol=ce_atol(x),
                     hint="Return one loss per example (sum over `dim`, no mean), computed as "
                          "sum(labels * (logsumexp - logits)) with the max-shift.")


@graded(3, hidden=[{"cases": 16}])
def check_cross_entropy_extremes(check, softmax_cross_entropy, *, seed=0, cases=8):
    """Finite and correct for logits of any magnitude (1e4 and -1e4 in float32, rows of different
    scales, labels on the smallest logit), forward and backward."""
    __tracebackhide__ = True
    gen = check.generator()
    fixed = torch.tensor([[1e4, -1e4, 0.0], [-1e4, 1e4, 1.0], [0.5, 0.25, 0.0]])
    cases_list = [(fixed, torch.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [1.0, 0.0, 0.0]]))]
    exercised("plus_minus_1e4")
    for i in range(cases):
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        n = int(torch.randint(2, 9, (1,), generator=gen))
        big = CE_EXTREME[dtype]
        x = torch.stack([torch.rand(n, generator=gen, dtype=torch.float64) * 2 * big - big,
                         torch.randn(n, generator=gen, dtype=torch.float64),
                         torch.randn(n, generator=gen, dtype=torch.float64) * min(1e4, big)]).to(dtype)
        labels = random_labels(gen, x, -1, ("soft", "onehot")[i % 2])
        cases_list.append((x, labels))
        exercised("near_dtype_max")
    for x, labels in cases_list:
        inputs = {"labels": labels, "logits": x, "dim": -1}
        leaf = x.detach().clone().requires_grad_(True)
        out = softmax_cross_entropy(labels, leaf, dim=-1)
        expect_meta(check, out, what="the loss", shape=[x.shape[0]], dtype=x.dtype, inputs=inputs)
        expect_finite(check, out, what="the loss at extreme logits", inputs=inputs,
                      hint="log(softmax(x)) underflows to log(0) = -inf: use log-sum-exp with the max-shift, "
                           "log_softmax = (x - max) - log(sum(exp(x - max))), with the max taken per row.")
        expect_close(check, out, ref_cross_entropy(labels, x, -1), what="the loss at extreme logits",
                     inputs=inputs, table=CE_TOLERANCES, atol=ce_atol(x))
        exercised("backward_at_extremes")
        try:
            out.sum().backward()
        except Exception as error:  # noqa: BLE001
            raise CheckFailure(check, f"backward through softmax_cross_entropy failed: {error}") from None
        if leaf.grad is None:
            raise CheckFailure(check, "the loss does not depend on the logits through autograd.",
                               hint="Use differentiable torch operations; no `.detach()` or `.item()`.")
        expect_finite(check, leaf.grad, what="the gradient at extreme logits", inputs=inputs, hint=SHIFT_HINT)


@graded(2, hidden=[{"cases": 10}])
def check_cross_entropy_gradient(check, softmax_cross_entropy, *, seed=0, cases=6):
    """The gradient with respect to the logits is softmax(logits) * labels.sum(dim) - labels (times the
    upstream gradient), and passes ``gradcheck`` in float64."""
    __tracebackhide__ = True
    gen = check.generator()
    random_cases = []
    for i in range(cases):
        shape, dim, scale = random_case(gen, max_rank=3)
        x = random_logits(gen, shape, scale, torch.float64)
        random_cases.append((random_labels(gen, x, dim, ("soft", "onehot", "broadcast")[i % 3]), x, dim))
        exercised(("soft", "onehot", "broadcast")[i % 3])
    for labels, x, dim in CE_GRADIENT_CASES + random_cases:

        def vjp(g, x=x, dim=dim, labels=labels):
            s = ref_softmax(x, dim)
            return g.unsqueeze(dim % x.dim()) * (s * labels.sum(dim=dim, keepdim=True) - labels)

        expect_grad_close(check, softmax_cross_entropy, [labels, x], vjp, wrt=1, kwargs={"dim": dim},
                          names=["labels", "logits"], what="softmax_cross_entropy", rtol=1e-7, atol=1e-9,
                          shape=expected_ce_shape(x, dim),
                          hint="The gradient of -sum(labels * log_softmax(x)) is softmax(x) * sum(labels) - labels.")
        exercised("gradcheck_float64")
        expect_gradcheck(check, softmax_cross_entropy, [labels, x], wrt=1, kwargs={"dim": dim},
                         names=["labels", "logits"], what="softmax_cross_entropy")


@graded(1, source=[no_call("softmax_cross_entropy", *FORBIDDEN_SPELLINGS)], worker_facts="the ATen ops recorded",
        facts_only_cost=True)
def check_cross_entropy_no_builtin(check, softmax_cross_entropy, *, seed=0):
    """Built from elementary operations: no softmax, log_softmax, logsumexp, cross_entropy or nll_loss."""
    __tracebackhide__ = True
    gen = check.generator()
    x = random_logits(gen, [4, 6], 2.0, torch.float32)
    labels = random_labels(gen, x, -1, "soft")
    exercised("soft")
    out, _ = expect_no_forbidden_ops(check, softmax_cross_entropy, labels, x, dim=-1, forbidden=FORBIDDEN,
                                     what="softmax_cross_entropy")
    expect_close(check, out, ref_cross_entropy(labels, x, -1), what="the loss", inputs={"logits": x})


# ------------------------------------------------------------------ Softplus

SOFTPLUS_HINT = ("log(1 + exp(x)) overflows once exp(x) does (x > 88.7 in float32, > 11.09 in float16). Write it as "
                 "max(x, 0) + log1p(exp(-|x|)): the exponent is never positive.")
SIGMOID_HINT = ("The derivative of softplus is sigmoid(x) = 1 / (1 + exp(-x)). Computed as exp(x) / (1 + exp(x)) it "
                "is inf / inf = NaN for large x; `torch.sigmoid(x)` is stable. Multiply it by the upstream gradient.")
FUNCTION_HINT = ("Subclass `torch.autograd.Function` with `@staticmethod def forward(ctx, x)` (save what backward "
                 "needs with `ctx.save_for_backward(x)`) and `@staticmethod def backward(ctx, grad_output)`, and "
                 "define `softplus(x)` as `return Softplus.apply(x)`.")


def _expect_softplus(check, softplus, x, *, what, hint):
    """``softplus(x)`` has x's shape, dtype and device, is finite, and matches the float64 reference."""
    __tracebackhide__ = True
    inputs = {"x": x}
    exercised_as(tensor_labels, x)
    out = softplus(x)
    expect_meta(check, out, what=what, shape=x.shape, dtype=x.dtype, device=x.device.type, inputs=inputs,
                hint="softplus is elementwise: return one value per element of x.")
    expected = sp.reference(x)
    try:
        expect_finite(check, out, what=what, inputs=inputs, hint=hint)
        expect_close(check, out, expected, what=what, inputs=inputs, hint=hint, known=_known_forward_mistakes(x))
    except CheckFailure as failure:
        raise sp.pointed_failure(failure, x, out, expected, "softplus({x})") from None


def _known_forward_mistakes(x):
    """The slip of a softplus forward that its values show (``expect_close``'s ``known``): ``log(1 + exp(x))`` in x's
    dtype, where 1 + exp(x) rounds to 1 for negative x (the result 0, or off, where softplus is small)."""
    def plain_log(_):
        with torch.no_grad():
            return torch.log(1 + torch.exp(x)).double().cpu()

    return (("log(1 + exp(x)) in x's dtype, which rounds 1 + exp(x) to 1 where exp(x) is small",
             plain_log, "Use `torch.log1p(exp(...))`, exact for small arguments, on a shifted x: "
                        "softplus(x) = max(x, 0) + log1p(exp(-|x|))."),)


@graded(2, hidden=[{"cases": 48}])
def check_softplus_forward(check, softplus, *, seed=0, cases=24):
    """softplus(x) = log(1 + exp(x)) elementwise, equal to a float64 reference on moderate inputs (|x| <= 10)
    of rank 0 to 3, every float dtype, contiguous or not: the shape, dtype and device of x."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        dtype = sp.FLOAT_DTYPES[i % len(sp.FLOAT_DTYPES)]
        x = sp.random_moderate(gen, dtype, devices()[i % len(devices())])
        _expect_softplus(check, softplus, x, what="softplus's result",
                         hint="softplus(x) = log(1 + exp(x)), elementwise, in x's dtype.")


@graded(3, hidden=[{"cases": 8}])
def check_softplus_extremes(check, softplus, *, seed=0, cases=4):
    """Finite and right for every finite input of every float dtype: 0, the smallest normal and subnormal
    values, just below and past exp's overflow, +-1e4, the largest finite value, and random magnitudes up to it."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        dtype = sp.FLOAT_DTYPES[i % len(sp.FLOAT_DTYPES)]
        device = devices()[i % len(devices())]
        x = torch.cat([sp.extreme_points(dtype), sp.random_extremes(gen, dtype, 12)]).to(device)
        exercised("extreme_points")
        _expect_softplus(check, softplus, x, what="softplus's result at extreme inputs", hint=SOFTPLUS_HINT)


def _softplus_backward(check, softplus, x, *, record=None):
    """``(result, gradient)`` of ``softplus`` at ``x`` for an upstream gradient of ones; with ``record`` (an
    :class:`OpRecord`), the torch calls and ATen kernels of forward and backward are recorded into it."""
    __tracebackhide__ = True
    leaf = x.detach().clone().requires_grad_(True)
    upstream, grad = torch.ones_like(leaf), None
    with record_ops() if record is not None else contextlib.nullcontext() as recorded:
        out = softplus(leaf)
        if isinstance(out, torch.Tensor) and out.grad_fn is not None and out.shape == leaf.shape:
            try:
                (grad,) = torch.autograd.grad(out, leaf, upstream, allow_unused=True)
            except Exception as error:  # noqa: BLE001 - a student's backward can raise anything
                grad = error
    if record is not None:
        record.calls.extend(recorded.calls)
        record.kernels.extend(recorded.kernels)
    expect_tensor(check, out, what="softplus's result")
    if out.grad_fn is None:
        raise CheckFailure(check, "softplus's result is not connected to the autograd graph of x "
                                  f"(x with requires_grad=True, {x.dtype}).", hint=FUNCTION_HINT)
    expect_meta(check, out, what="softplus's result", shape=x.shape, inputs={"x": x},
                hint="softplus is elementwise: return one value per element of x.")
    if isinstance(grad, Exception):
        raise CheckFailure(check, f"backward through softplus failed on {x.dtype} input: "
                                  f"{type(grad).__name__}: {grad}", hint=FUNCTION_HINT) from None
    if grad is None:
        raise CheckFailure(check, "backward through softplus gave no gradient for x.",
                           hint="Return one gradient per input of forward from backward.")
    return out, grad


@graded(3, hidden=[{"cases": 12}])
def check_softplus_gradient(check, softplus, *, seed=0, cases=6):
    """The gradient is the upstream gradient times sigmoid(x): analytically and with ``gradcheck`` in float64 on
    random inputs; in x's dtype for every float dtype; finite and right at 0, +-1e4 and each dtype's extremes
    (where exp(x) / (1 + exp(x)) is inf / inf = NaN)."""
    __tracebackhide__ = True
    gen = check.generator()
    for _ in range(cases):
        rank = int(torch.randint(0, 3, (1,), generator=gen))
        shape = [int(s) for s in torch.randint(1, 6, (rank,), generator=gen)]
        x = torch.randn(shape, generator=gen, dtype=torch.float64) * 8

        def vjp(g, x=x):
            return g * torch.sigmoid(x)

        expect_grad_close(check, softplus, [x], vjp, names=["x"], what="softplus", rtol=1e-7, atol=1e-9,
                          shape=x.shape, hint=SIGMOID_HINT, known=_known_backward_mistakes(x))
        exercised("gradcheck_float64")
        expect_gradcheck(check, softplus, [x], names=["x"], what="softplus")
    for i, dtype in enumerate(sp.FLOAT_DTYPES):
        device = devices()[i % len(devices())]
        x = torch.cat([sp.extreme_points(dtype), sp.random_extremes(gen, dtype, 8),
                       sp.random_moderate(gen, dtype).reshape(-1)]).to(device)
        inputs = {"x": x}
        exercised("extreme_points")
        exercised_as(tensor_labels, x)
        _, grad = _softplus_backward(check, softplus, x)
        expect_meta(check, grad, what="the gradient", shape=x.shape, dtype=dtype, device=device, inputs=inputs)
        expected = sp.reference_grad(x)
        try:
            expect_finite(check, grad, what="the gradient at extreme inputs", inputs=inputs, hint=SIGMOID_HINT)
            expect_close(check, grad, expected, what="the gradient (upstream gradient 1)", inputs=inputs,
                         hint=SIGMOID_HINT + " At x = 0 it is exactly 0.5, while autograd's derivative of "
                              "max(x, 0) + log1p(exp(-|x|)) there is 0 or 1 (relu, clamp and abs at 0): the "
                              "backward should return sigmoid(x) itself.")
        except CheckFailure as failure:
            raise sp.pointed_failure(failure, x, grad, expected,
                                     "x = {x}; softplus(x).sum().backward(); print(x.grad)", grad=True) from None


def _known_backward_mistakes(x):
    """Two slips of a hand-written softplus backward that the gradient's values show (``expect_grad_close``'s
    ``known``): the saved output used as if it were the input, and the sign of x flipped."""
    return (("computed from the saved output as if it were x: sigmoid(softplus(x)), not sigmoid(x)",
             lambda g: g * torch.sigmoid(torch.nn.functional.softplus(x)),
             "Save the input x in forward (`ctx.save_for_backward(x)`) and return `grad_output * torch.sigmoid(x)`: "
             "the derivative is taken at x, not at softplus(x)."),
            ("the derivative with the sign of x flipped: sigmoid(-x) = 1 / (1 + exp(x)), not sigmoid(x)",
             lambda g: g * torch.sigmoid(-x),
             "sigmoid(x) = 1 / (1 + exp(-x)): it tends to 1 for large x, where softplus(x) grows like x."))


@graded(2, source=[autograd_function("Softplus", "softplus")], worker_facts="the type of the result's grad_fn",
        facts_only_cost=True)
def check_softplus_custom_backward(check, Softplus, softplus, *, seed=0):
    """``Softplus`` is a ``torch.autograd.Function`` with its own forward and backward, and ``softplus(x)``'s
    result comes straight from it (its ``grad_fn`` is Softplus's backward node), with the values of
    ``Softplus.apply(x)``: autograd runs the hand-written backward, not the derivative of the formula."""
    __tracebackhide__ = True
    gen = check.generator()
    x = (torch.randn(6, generator=gen, dtype=torch.float64) * 4).float().requires_grad_(True)
    exercised("requires_grad_float32")
    facts = Softplus.beside(probes.custom_backward_facts, softplus, x)   # the graph lives where the student's code runs
    if facts.get("problem"):
        raise CheckFailure(check, facts["problem"], hint=FUNCTION_HINT)
    out = softplus(x)
    expect_tensor(check, out, what="softplus's result")
    if not facts.get("is_node"):
        made_by = "no grad_fn" if facts.get("made_by") is None else f"grad_fn {facts['made_by']}"
        depth = facts.get("depth")
        if depth is None:
            detail = (f"softplus(x) (x: 6 float32 values with requires_grad=True) returned a tensor with {made_by}, "
                      "not one made by Softplus: autograd would differentiate the operations you wrote instead of "
                      "calling your backward.")
        else:
            detail = (f"softplus(x) returned a tensor with {made_by}: Softplus's result passes through {depth} more "
                      "operation(s) before it is returned, and autograd differentiates those too.")
        raise CheckFailure(check, detail, hint=FUNCTION_HINT + " Do not call `Softplus.forward` yourself.",
                           kind=known_kind(f"a result with {made_by}" + ("" if depth is None else " and more")))
    y = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    exercised("apply_float64")
    direct = Softplus.apply(y)
    expect_close(check, softplus(y), direct,
                 what="softplus(x) compared with Softplus.apply(x)", inputs={"x": y}, rtol=0, atol=0,
                 hint="softplus(x) should be exactly `Softplus.apply(x)`.")


@graded(1, source=[no_call("softplus", *sp.FORBIDDEN, "LogSigmoid")],
        worker_facts="the ATen ops recorded, forward and backward", facts_only_cost=True)
def check_softplus_no_builtin(check, softplus, *, seed=0):
    """Forward and backward built from elementary operations: no softplus (``F.softplus``, ``nn.Softplus``),
    ``logaddexp`` or ``logsigmoid``, in any spelling (the recorder sees every ATen operator that runs)."""
    __tracebackhide__ = True
    gen = check.generator()
    for dtype in (torch.float32, torch.float64):
        x = (torch.randn(3, 5, generator=gen, dtype=torch.float64) * 4).clamp(-sp.MODERATE, sp.MODERATE).to(dtype)
        record = OpRecord()
        exercised_as(tensor_labels, x)
        exercised("backward")
        out, _ = _softplus_backward(check, softplus, x, record=record)
        used = record.find(sp.FORBIDDEN)
        if used:
            raise CheckFailure(check, f"softplus (forward or backward) uses {', '.join(used)}, which this exercise "
                                      f"forbids (forbidden: {', '.join(sorted(set(sp.FORBIDDEN)))}).",
                               hint="Build it from relu / clamp, abs, exp, log1p; the backward from sigmoid.",
                               kind=f"forbidden op: {', '.join(used)}")
        # Loosely: this check is about the operations; precision is graded by the others.
        expect_close(check, out, sp.reference(x), what="softplus's result", inputs={"x": x}, rtol=1e-3, atol=1e-4)
