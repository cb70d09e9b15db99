"""Checks for the ``stability`` assignment: stable softmax and softmax cross-entropy.

Every check draws many inputs from a seeded generator (the hidden tests pass other
seeds), compares against float64 references computed with PyTorch's own
operations, and reports the first input that fails.
"""

import torch

from ...compare import expect_close, expect_finite, expect_meta
from ...errors import CheckFailure
from ...gradients import expect_grad_close, expect_gradcheck
from ...oprecorder import expect_no_forbidden_ops
from ...student import call_student
from ...spec import current_check, graded

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
FORBIDDEN = ("softmax", "log_softmax", "logsumexp", "cross_entropy", "nll_loss")
# Largest finite magnitude we feed each dtype in the extreme cases (well inside its range).
EXTREME = {torch.float16: 6e4, torch.bfloat16: 1e38, torch.float32: 1e30, torch.float64: 1e300}
# Cross-entropy can be as large as twice the logits' magnitude: keep it representable.
CE_EXTREME = {torch.float16: 1e4, torch.bfloat16: 1e37, torch.float32: 1e30, torch.float64: 1e300}
# log(sum(exp(x - max))) is log of a number >= 1: in a low-precision dtype it carries an absolute
# error of about one ulp of 1, which the loss inherits.
CE_TOLERANCES = {torch.float16: (5e-3, 2e-3), torch.bfloat16: (3e-2, 1.6e-2),
                 torch.float32: (1e-5, 1e-6), torch.float64: (1e-9, 1e-12)}


def _ce_atol(logits):
    """Rounding (x - max) or (logsumexp - x) in the logits' dtype costs a few ulps of the largest logit."""
    scale = float(logits.detach().abs().max()) if logits.numel() else 0.0
    return max(CE_TOLERANCES[logits.dtype][1], 4 * torch.finfo(logits.dtype).eps * scale)


SHIFT_HINT = "Subtract the maximum along `dim` (with keepdim=True) before `exp`: exp(x - max) never overflows."


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _random_case(gen, max_rank=4):
    """A random shape, a random ``dim`` (positive or negative) and a scale for the logits."""
    rank = int(torch.randint(1, max_rank + 1, (1,), generator=gen))
    shape = [int(s) for s in torch.randint(1, 7, (rank,), generator=gen)]
    dim = int(torch.randint(-rank, rank, (1,), generator=gen))
    scale = float([0.1, 1.0, 5.0, 10.0][int(torch.randint(0, 4, (1,), generator=gen))])
    return shape, dim, scale


def _logits(gen, shape, scale, dtype, device="cpu"):
    return (torch.randn(shape, generator=gen, dtype=torch.float64) * scale).to(dtype).to(device)


def _labels(gen, logits, dim, kind):
    """Soft labels (a distribution along ``dim``), one-hot labels, or labels broadcast along the batch."""
    shape = list(logits.shape)
    if kind == "broadcast":   # one distribution shared by every example: size 1 on all other dims
        shape = [s if i == dim % logits.dim() else 1 for i, s in enumerate(shape)]
    raw = torch.rand(shape, generator=gen, dtype=torch.float64)
    if kind == "onehot":
        raw = (raw == raw.amax(dim=dim, keepdim=True)).double()
        raw = raw / raw.sum(dim=dim, keepdim=True)
    else:
        raw = raw / raw.sum(dim=dim, keepdim=True)
    return raw.to(logits.dtype).to(logits.device)


def _ref_softmax(logits, dim):
    return torch.softmax(logits.double(), dim=dim)


def _ref_cross_entropy(labels, logits, dim):
    return -(labels.double() * torch.log_softmax(logits.double(), dim=dim)).sum(dim=dim)


def _expected_ce_shape(logits, dim):
    shape = list(logits.shape)
    del shape[dim % logits.dim()]
    return shape


# ---------------------------------------------------------------- stable_softmax

@graded(3, hidden=[{"cases": 80}])
def check_softmax_forward(stable_softmax, *, seed=0, cases=40):
    """Same shape, dtype and device as the input; equal to a float64 softmax; rows sum to 1.

    Random shapes of rank 1 to 4, every ``dim``, every float dtype, moderate logits.
    """
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(1000 + seed)
    for i in range(cases):
        shape, dim, scale = _random_case(gen)
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        device = _devices()[i % len(_devices())]
        x = _logits(gen, shape, scale, dtype, device)
        inputs = {"logits": x, "dim": dim}
        out = call_student(check, stable_softmax, x, dim=dim, what="stable_softmax")
        expect_meta(check, out, what="stable_softmax's result", shape=x.shape, dtype=dtype, device=device,
                    inputs=inputs)
        expect_finite(check, out, what="stable_softmax's result", inputs=inputs, hint=SHIFT_HINT)
        expect_close(check, out, _ref_softmax(x, dim), what="stable_softmax's result", inputs=inputs,
                     hint="Normalise along `dim` only: exp(x - max) / sum(exp(x - max)) with keepdim=True.")


@graded(3, hidden=[{"cases": 16}])
def check_softmax_extremes(stable_softmax, *, seed=0, cases=8):
    """Finite, correct results for logits near each dtype's largest value, and for one batch whose
    rows differ in scale by 1e4 (where a max over the whole tensor instead of per row fails)."""
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(2000 + seed)
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
        for dim, x in ((-1, rows.to(dtype)), (0, rows.t().contiguous().to(dtype))):
            inputs = {"logits": x, "dim": dim}
            out = call_student(check, stable_softmax, x, dim=dim, what="stable_softmax")
            expect_meta(check, out, what="stable_softmax's result", shape=x.shape, dtype=dtype, inputs=inputs)
            expect_finite(check, out, what="stable_softmax's result at extreme logits", inputs=inputs,
                          hint=SHIFT_HINT + " Take the max per row, along `dim`, not over the whole tensor.")
            expect_close(check, out, _ref_softmax(x, dim), what="stable_softmax's result at extreme logits",
                         inputs=inputs, hint="Take the max per row, along `dim`, not over the whole tensor.")


@graded(2, hidden=[{"cases": 10}])
def check_softmax_gradient(stable_softmax, *, seed=0, cases=6):
    """The gradient equals the analytic one, s * (g - sum(g * s)), and passes ``gradcheck`` in float64;
    it stays finite at extreme logits."""
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(3000 + seed)
    for _ in range(cases):
        shape, dim, scale = _random_case(gen, max_rank=3)
        x = _logits(gen, shape, scale, torch.float64)

        def vjp(g, x=x, dim=dim):
            s = _ref_softmax(x, dim)
            return s * (g - (g * s).sum(dim=dim, keepdim=True))

        expect_grad_close(check, lambda t, dim=dim: stable_softmax(t, dim=dim), [x], vjp,
                          what="stable_softmax", rtol=1e-7, atol=1e-9)
        expect_gradcheck(check, lambda t, dim=dim: stable_softmax(t, dim=dim), [x], what="stable_softmax")
    x = torch.tensor([[1e4, -1e4, 0.0], [3.0, 2.0, 1.0]], dtype=torch.float32, requires_grad=True)
    out = call_student(check, stable_softmax, x, dim=-1, what="stable_softmax")
    try:
        out.backward(torch.ones_like(out))
    except Exception as error:  # noqa: BLE001
        raise CheckFailure(check, f"backward through stable_softmax failed: {error}") from None
    expect_finite(check, x.grad, what="the gradient at logits [[1e4, -1e4, 0], [3, 2, 1]]", hint=SHIFT_HINT)


@graded(1)
def check_softmax_no_builtin(stable_softmax, *, seed=0):
    """Built from elementary operations: no softmax, log_softmax, logsumexp, cross_entropy or nll_loss."""
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(4000 + seed)
    for dtype in (torch.float32, torch.float16):
        x = _logits(gen, [3, 5], 1.0, dtype)
        out, _ = expect_no_forbidden_ops(check, stable_softmax, x, dim=-1, forbidden=FORBIDDEN,
                                         what="stable_softmax")
        expect_close(check, out, _ref_softmax(x, -1), what="stable_softmax's result", inputs={"logits": x})


# ---------------------------------------------------------- softmax_cross_entropy

def _ce_call(check, fn, labels, logits, dim):
    return call_student(check, fn, labels, logits, dim=dim, what="softmax_cross_entropy")


@graded(3, hidden=[{"cases": 80}])
def check_cross_entropy_forward(softmax_cross_entropy, *, seed=0, cases=40):
    """Per-example losses -sum(labels * log_softmax(logits), dim): the shape of logits without ``dim``,
    the logits' dtype and device, equal to a float64 reference, for soft, one-hot and broadcast labels."""
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(5000 + seed)
    kinds = ("soft", "onehot", "broadcast")
    for i in range(cases):
        shape, dim, scale = _random_case(gen)
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        device = _devices()[i % len(_devices())]
        x = _logits(gen, shape, scale, dtype, device)
        labels = _labels(gen, x, dim, kinds[i % len(kinds)])
        inputs = {"labels": labels, "logits": x, "dim": dim}
        out = _ce_call(check, softmax_cross_entropy, labels, x, dim)
        expect_meta(check, out, what="the loss", shape=_expected_ce_shape(x, dim), dtype=dtype, device=device,
                    inputs=inputs)
        expect_finite(check, out, what="the loss", inputs=inputs, hint=SHIFT_HINT)
        expect_close(check, out, _ref_cross_entropy(labels, x, dim), what="the loss", inputs=inputs,
                     table=CE_TOLERANCES, atol=_ce_atol(x), hint="Return one loss per example (sum over `dim`, no mean), computed as "
                          "sum(labels * (logsumexp - logits)) with the max-shift.")


@graded(3, hidden=[{"cases": 16}])
def check_cross_entropy_extremes(softmax_cross_entropy, *, seed=0, cases=8):
    """Finite and correct for logits of any magnitude (1e4 and -1e4 in float32, rows of different
    scales, labels on the smallest logit), forward and backward."""
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(6000 + seed)
    fixed = torch.tensor([[1e4, -1e4, 0.0], [-1e4, 1e4, 1.0], [0.5, 0.25, 0.0]])
    cases_list = [(fixed, torch.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [1.0, 0.0, 0.0]]))]
    for i in range(cases):
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        n = int(torch.randint(2, 9, (1,), generator=gen))
        big = CE_EXTREME[dtype]
        x = torch.stack([torch.rand(n, generator=gen, dtype=torch.float64) * 2 * big - big,
                         torch.randn(n, generator=gen, dtype=torch.float64),
                         torch.randn(n, generator=gen, dtype=torch.float64) * min(1e4, big)]).to(dtype)
        labels = _labels(gen, x, -1, ("soft", "onehot")[i % 2])
        cases_list.append((x, labels))
    for x, labels in cases_list:
        inputs = {"labels": labels, "logits": x, "dim": -1}
        leaf = x.detach().clone().requires_grad_(True)
        out = _ce_call(check, softmax_cross_entropy, labels, leaf, -1)
        expect_meta(check, out, what="the loss", shape=[x.shape[0]], dtype=x.dtype, inputs=inputs)
        expect_finite(check, out, what="the loss at extreme logits", inputs=inputs,
                      hint="log(softmax(x)) underflows to log(0) = -inf: use log-sum-exp with the max-shift, "
                           "log_softmax = (x - max) - log(sum(exp(x - max))), with the max taken per row.")
        expect_close(check, out, _ref_cross_entropy(labels, x, -1), what="the loss at extreme logits",
                     inputs=inputs, table=CE_TOLERANCES, atol=_ce_atol(x))
        try:
            out.sum().backward()
        except Exception as error:  # noqa: BLE001
            raise CheckFailure(check, f"backward through softmax_cross_entropy failed: {error}") from None
        if leaf.grad is None:
            raise CheckFailure(check, "the loss does not depend on the logits through autograd.",
                               hint="Use differentiable torch operations; no `.detach()` or `.item()`.")
        expect_finite(check, leaf.grad, what="the gradient at extreme logits", inputs=inputs, hint=SHIFT_HINT)


@graded(2, hidden=[{"cases": 10}])
def check_cross_entropy_gradient(softmax_cross_entropy, *, seed=0, cases=6):
    """The gradient with respect to the logits is softmax(logits) * labels.sum(dim) - labels (times the
    upstream gradient), and passes ``gradcheck`` in float64."""
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(7000 + seed)
    for i in range(cases):
        shape, dim, scale = _random_case(gen, max_rank=3)
        x = _logits(gen, shape, scale, torch.float64)
        labels = _labels(gen, x, dim, ("soft", "onehot", "broadcast")[i % 3])

        def vjp(g, x=x, dim=dim, labels=labels):
            s = _ref_softmax(x, dim)
            return g.unsqueeze(dim % x.dim()) * (s * labels.sum(dim=dim, keepdim=True) - labels)

        def loss(t, dim=dim, labels=labels):
            return softmax_cross_entropy(labels, t, dim=dim)

        expect_grad_close(check, loss, [x], vjp, what="softmax_cross_entropy", rtol=1e-7, atol=1e-9,
                          hint="The gradient of -sum(labels * log_softmax(x)) is softmax(x) * sum(labels) - labels.")
        expect_gradcheck(check, loss, [x], what="softmax_cross_entropy")


@graded(1)
def check_cross_entropy_no_builtin(softmax_cross_entropy, *, seed=0):
    """Built from elementary operations: no softmax, log_softmax, logsumexp, cross_entropy or nll_loss."""
    __tracebackhide__ = True
    check = current_check()
    gen = torch.Generator().manual_seed(8000 + seed)
    x = _logits(gen, [4, 6], 2.0, torch.float32)
    labels = _labels(gen, x, -1, "soft")
    out, _ = expect_no_forbidden_ops(check, softmax_cross_entropy, labels, x, dim=-1, forbidden=FORBIDDEN,
                                     what="softmax_cross_entropy")
    expect_close(check, out, _ref_cross_entropy(labels, x, -1), what="the loss", inputs={"logits": x})
