"""Inputs, the model and the judging of ``per_sample_grads(model, params, x, y)``: per-sample gradients with
``torch.func``.

The model is a small MLP (``Linear, Tanh, Linear, ...``) whose sizes the check draws. It must live where the
student's function runs, so ``worker_facts.model_for`` builds it there (``beside``: in the student's worker under
trusted grading, here otherwise) and only a handle comes back. Its own parameters hold *other* values than ``params``
(a decoy drawn by the grader): the exercise differentiates ``params``, through ``functional_call``, and an answer
that differentiates the model's own parameters gets other numbers. What comes back is judged here against the
grader's own loop over the samples in float64 (``autograder/oracles/vectorization.py``, reached through
``expected_outputs.oracle``), from the values the grader drew: data, whatever the worker says about itself.
"""

import torch

from autograder.checks.vectorization.probes.worker_facts import model_for
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_meta, known_kind
from autograder.measuring.expected_outputs import oracle

VMAP_NAMES = ("torch.func.vmap", "torch.vmap", "functorch.vmap")   # the spellings of vmap the source rule accepts
# (sizes, dtype, B) every seed sees first: one Linear and one sample, two and three Linears, float32 and float64.
FIXED_CASES = [([3, 4], torch.float64, 1), ([4, 6, 3], torch.float32, 5), ([2, 5, 7, 3], torch.float64, 4),
               ([5, 3, 2], torch.float32, 9)]
# Tolerance against the float64 loop: (rtol, atol), elementwise |got - expected| <= atol + rtol * |expected|.
# Calibrated on 2026-11-24, torch 2.13.0 (2-core x86_64 CPU), 2000 cases of draw_case: the reference's and the
# second solution's largest error was 0.064 of it in float32 and 0.00088 in float64 (gradients up to 13.4); the
# gradients with the decoy's values (an answer that differentiates the model's own parameters) were at least 198
# times it away.
TOLERANCE = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-10, 1e-12)}
HINT = ("Write the loss of ONE sample as a function of the parameters, `loss(params, xi, yi) = "
        "F.cross_entropy(functional_call(model, params, (xi[None],)), yi[None])`, take its gradient with "
        "`torch.func.grad(loss)` (with respect to its first argument, params), and map it over the samples with "
        "`torch.func.vmap(..., in_dims=(None, 0, 0))`: params shared, x and y split along dim 0. Differentiate "
        "`params`, not the model's own parameters (they hold other values here).")


def devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def draw_case(gen, i):
    """``(sizes, dtype, B, device)`` of case ``i``: the fixed cases first, then 1 to 3 Linears of 2 to 7 features,
    1 to 9 samples, float32 and float64 alternately."""
    device = devices()[i % len(devices())]
    if i < len(FIXED_CASES):
        sizes, dtype, b = FIXED_CASES[i]
        return list(sizes), dtype, b, device
    depth = int(torch.randint(1, 4, (1,), generator=gen))
    sizes = [int(s) for s in torch.randint(2, 8, (depth + 1,), generator=gen)]
    b = int(torch.randint(1, 10, (1,), generator=gen))
    return sizes, (torch.float32, torch.float64)[i % 2], b, device


def draw(gen, sizes, dtype, b, device="cpu"):
    """``(params, decoy, x, y)``: the parameters to differentiate, other values for the model's own, a batch."""
    names = [(f"{2 * k}.weight", (n_out, n_in)) for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:]))]
    shapes = {}
    for (weight, shape) in names:
        shapes[weight] = shape
        shapes[weight.replace("weight", "bias")] = shape[:1]

    def values():
        return {name: (torch.randn(shape, generator=gen, dtype=torch.float64) * 0.8).to(device, dtype)
                for name, shape in shapes.items()}

    params, decoy = values(), values()
    x = torch.randn(b, sizes[0], generator=gen, dtype=torch.float64).to(device, dtype)
    y = torch.randint(0, sizes[-1], (b,), generator=gen).to(device)
    return params, decoy, x, y


def call(check, per_sample_grads, sizes, params, decoy, x, y):
    """``per_sample_grads(model, params, x, y)`` with the model built where the student's code runs."""
    __tracebackhide__ = True
    model = per_sample_grads.beside(model_for, tuple(sizes), decoy)
    return per_sample_grads(model, params, x, y)


def expect_per_sample_grads(check, per_sample_grads, sizes, params, decoy, x, y):
    """The result is ``{name: [B, *shape]}`` for every name of ``params``, in their dtype and on their device,
    equal to the grader's float64 loop over the samples."""
    __tracebackhide__ = True
    out = call(check, per_sample_grads, sizes, params, decoy, x, y)
    inputs = {"model": _model_text(sizes), "x": x, "y": y}
    if not isinstance(out, dict) or set(out) != set(params):
        got = sorted(out) if isinstance(out, dict) else type(out).__name__
        raise CheckFailure(check, f"per_sample_grads(model, params, x, y) for {_model_text(sizes)} returned {got}; "
                                  f"expected a dict with the keys of params, {sorted(params)}.",
                           hint="Return what `torch.func.vmap(torch.func.grad(loss), ...)(params, x, y)` returns: a "
                                "dict like params, each value with one more dimension in front (the samples).")
    expected = oracle("vectorization.per_sample_grads", list(sizes), params, x, y)
    # at the model's own parameters too (a known mistake's values): asked on every call, so that the kit's table,
    # recorded on the reference's run, holds it as the grader computes it
    at_own_parameters = oracle("vectorization.per_sample_grads", list(sizes), decoy, x, y)
    b = x.shape[0]
    for name, value in params.items():
        got = out[name]
        what = f"per_sample_grads(...)[{name!r}]"
        shape = (b, *value.shape)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(value.shape):
            raise CheckFailure(check, f"{what} is {BATCH_GRADIENT}: it has shape {list(got.shape)}, the shape of "
                                      f"the parameter itself; expected {list(shape)}, one gradient per sample, for x "
                                      f"of shape {list(x.shape)}.", hint=HINT, kind=known_kind(BATCH_GRADIENT))
        expect_meta(check, got, what=what, shape=shape, dtype=value.dtype, device=value.device.type, inputs=inputs,
                    hint=HINT)
        rtol, atol = TOLERANCE[value.dtype]
        expect_close(check, got, expected[name], what=what, inputs=inputs, rtol=rtol, atol=atol, hint=HINT,
                     known=_known_mistakes(b, at_own_parameters[name]))


# What a result with one gradient for the whole batch is, in one set of words, whether it has the parameter's shape
# or one row per sample each holding the batch's gradient: one mistake, one kind (autograder.feedback), by any route.
BATCH_GRADIENT = "the gradient of the whole batch's loss, not one gradient per sample"


def _known_mistakes(b, at_own_parameters):
    """The mistakes the values show (``expect_close``'s ``known``): all zeros say that ``grad`` never saw params;
    the batch size's factor says that each sample's loss was divided by B (with B = 1 that is the reference, which
    a failed result never matches); the same row B times, the batch's summed or mean gradient, says that the loss
    was the batch's; the gradients at the model's own parameters (``at_own_parameters``, the grader's oracle at
    them) say that ``params`` were not the ones differentiated."""
    def every_row(reduce):
        return lambda expected: reduce(expected, 0, keepdim=True).expand_as(expected)

    batch_hint = "Differentiate one sample's loss and map it over the samples (`vmap(grad(loss), in_dims=...)`). "
    return (("all zeros: the loss you differentiate does not depend on the params `grad` hands it",
             torch.zeros_like,
             "Run the model with them, `functional_call(model, params, ...)` (not `model(...)`, which uses the "
             "model's own parameters), and do not detach them inside that function. " + HINT),
            ("the right gradients divided by the batch size B", lambda expected: expected / b,
             "Each sample's loss is its own, not a share of the batch's mean. " + HINT),
            (BATCH_GRADIENT + " (summed, in every row)", every_row(torch.sum), batch_hint + HINT, BATCH_GRADIENT),
            (BATCH_GRADIENT + " (averaged, in every row)", every_row(torch.mean), batch_hint + HINT, BATCH_GRADIENT),
            ("the gradients at the model's own parameters, not at the `params` given",
             lambda _: at_own_parameters.detach().cpu().double(),
             "Differentiate with respect to the `params` argument: `grad` hands them to your loss, which runs the "
             "model with them through `functional_call(model, params, ...)`. " + HINT))


def _model_text(sizes):
    parts = [f"Linear({a}, {b})" for a, b in zip(sizes[:-1], sizes[1:])]
    return "Sequential(" + ", Tanh(), ".join(parts) + ")"


def count_args(check, per_sample_grads):
    """``make_args(B)`` for the op counts: ``(model, params, x, y)`` for a [4, 6, 3] MLP and B samples, drawn from
    the check's stream for that B (the same inputs each time a size is asked for)."""
    def make(b):
        gen = check.generator(f"count inputs {b}")
        params, decoy, x, y = draw(gen, [4, 6, 3], torch.float32, b)
        return per_sample_grads.beside(model_for, (4, 6, 3), decoy), params, x, y
    return make

