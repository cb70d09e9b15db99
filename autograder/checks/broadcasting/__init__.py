"""Checks for the ``broadcasting`` assignment: ``Merge``, ``pairwise_sq_distances``, ``strict_mse_loss``.

Every check draws its inputs from a seeded generator (the hidden tests pass other
seeds) and compares against float64 references written here with explicit tiling,
so the reference never relies on the broadcasting it grades.
"""

import re

import torch

from autograder.checks.broadcasting.contract import batch_labels, distance_labels, merge_labels, shape_pair_labels
from autograder.checks.broadcasting.probes import parameter_facts
from autograder.checks.broadcasting.tiling import expect_no_tiling
from autograder.contracts import exercised, exercised_as, tensor_labels
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_finite, expect_meta, tolerance
from autograder.measuring.expected_outputs import oracle
from autograder.measuring.oprecorder import expect_constant_op_count
from autograder.seam.student import describe
from autograder.source_evidence.source_rules import no_loop
from autograder.spec import graded

ACTIVATIONS = (None, torch.relu, torch.tanh, torch.nn.Sigmoid())
# float32 sums of a dozen products lose a few ulps of the largest term: 1e-6 absolute is too tight.
MERGE_TOLERANCES = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-9, 1e-12)}
# Fixed broadcastable batch shapes (features are appended): the tutorial's pair first.
MERGE_BATCHES = [([5, 3], [5, 1]), ([], []), ([4, 3], [4, 3]), ([3], [4, 1]), ([1, 3], [4, 1]),
                 ([2, 1, 3], [5, 1]), ([7], []), ([], [2, 3])]


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _int(gen, low, high):
    return int(torch.randint(low, high, (1,), generator=gen))


def _broadcastable_batches(gen):
    """Two batch shapes that broadcast: each drops leading dims of a common shape and sets some sizes to 1."""
    common = [_int(gen, 2, 5) for _ in range(_int(gen, 0, 4))]
    pair = []
    for _ in range(2):
        rank = _int(gen, 0, len(common) + 1)
        pair.append([1 if _int(gen, 0, 3) == 0 else s for s in common[len(common) - rank:]])
    return pair


# -------------------------------------------------------------------------------- Merge

def _build_merge(check, Merge, in1, in2, out, activation, *, pass_activation=True, dtype=torch.float32,
                 device="cpu"):
    """``Merge(in1, in2, out[, activation])``, checked to be a module, moved to ``dtype`` and ``device``."""
    __tracebackhide__ = True
    kwargs = {"activation": activation} if pass_activation else {}
    exercised_as(merge_labels, in1, in2, activation, pass_activation)
    module = Merge(in1, in2, out, **kwargs)
    if not isinstance(module, torch.nn.Module):
        raise CheckFailure(check, f"Merge(...) built a {type(module).__name__}, not a torch.nn.Module.",
                           hint="Subclass torch.nn.Module and call super().__init__() first.")
    for name, features in (("linear1", in1), ("linear2", in2)):
        layer = getattr(module, name, None)
        if not isinstance(layer, torch.nn.Linear):
            raise CheckFailure(check, f"Merge({in1}, {in2}, {out}).{name} is {describe(layer)}, expected a "
                                      f"torch.nn.Linear.", hint=f"Create self.{name} = torch.nn.Linear(...) in __init__.")
        if (layer.in_features, layer.out_features) != (features, out):
            raise CheckFailure(check, f"Merge({in1}, {in2}, {out}).{name} maps {layer.in_features} to "
                                      f"{layer.out_features} features, expected {features} to {out}.",
                               hint="linear1 reads `a` (in_features1), linear2 reads `b` (in_features2).")
    return module.to(device=device, dtype=dtype)


def _concat_layer(a, b, weights, biases, activation):
    """activation(cat([tiled a, tiled b], -1) @ [W1 W2]^T + b1 + b2), with the tiling done explicitly."""
    batch = torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    tiled = torch.cat([a.expand(*batch, a.shape[-1]), b.expand(*batch, b.shape[-1])], -1)
    out = tiled @ torch.cat(weights, 1).t()
    for bias in biases:
        out = out if bias is None else out + bias
    return out if activation is None else activation(out)


def _layer_parameters(module, convert):
    """linear1's and linear2's weights and biases (``None`` for a missing bias), each through
    ``convert(slot, tensor)``, the slot being its name in ``probes.SLOTS`` (``"linear1.weight"``)."""
    layers = (module.linear1, module.linear2)
    return ([convert(f"linear{k}.weight", layer.weight) for k, layer in enumerate(layers, 1)],
            [None if layer.bias is None else convert(f"linear{k}.bias", layer.bias) for k, layer in enumerate(layers, 1)])


@graded(1, hidden=[{"cases": 12}])
def check_merge_structure(check, Merge, *, seed=0, cases=6):
    """``Merge(in1, in2, out)`` is a module whose parameters are exactly those of ``linear1`` (an
    ``nn.Linear(in1, out)``) and ``linear2`` (an ``nn.Linear(in2, out)``), stored as submodules."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        in1, in2, out = _int(gen, 1, 9), _int(gen, 1, 9), _int(gen, 1, 9)
        activation = ACTIVATIONS[i % len(ACTIVATIONS)]
        module = _build_merge(check, Merge, in1, in2, out, activation, pass_activation=i % 2 == 1)
        names = {name for name, _ in module.named_parameters()}
        expected = {f"linear{k}.{p}" for k in (1, 2) for p in ("weight", "bias")
                    if getattr(getattr(module, f"linear{k}"), p) is not None}
        if names != expected:
            raise CheckFailure(check, f"Merge({in1}, {in2}, {out}) registers the parameters {sorted(names)}, "
                                      f"expected exactly {sorted(expected)}.",
                               hint="Keep only the two linear layers as parameters; create them in __init__, "
                                    "not in forward, and store no extra weights.")


# The known mistake a Merge built without an activation shows by its values (expect_close's known): a ReLU anyway.
RELU_WHEN_NONE = (("the ReLU of the layer's output, for a Merge built with no activation",
                   torch.relu, "`activation=None` means no activation at all: return linear1(a) + linear2(b) as "
                               "it is (test `if self.activation is not None`, not `self.activation or ...`)."),)


@graded(3, hidden=[{"cases": 48}])
def check_merge_forward(check, Merge, *, seed=0, cases=24):
    """``forward(a, b)`` equals the concatenate-then-linear layer with weights ``[W1 W2]`` and bias
    ``b1 + b2`` on explicitly tiled inputs, for many pairs of broadcastable shapes (the tutorial's
    ``[5, 3, 5]`` and ``[5, 1, 6]`` first), with and without an activation, in float32 and float64;
    the gradients with respect to the inputs and every parameter match the reference's."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(len(MERGE_BATCHES) + cases):
        batch_a, batch_b = MERGE_BATCHES[i] if i < len(MERGE_BATCHES) else _broadcastable_batches(gen)
        in1, in2, out = (5, 6, 10) if i == 0 else (_int(gen, 1, 8), _int(gen, 1, 8), _int(gen, 1, 8))
        # Every third module is built without the activation argument: its default must mean none.
        activation = ACTIVATIONS[i % len(ACTIVATIONS)] if i % 3 else None
        dtype = (torch.float32, torch.float64)[i % 2]
        device = _devices()[i % len(_devices())]
        module = _build_merge(check, Merge, in1, in2, out, activation, pass_activation=i % 3 > 0, dtype=dtype,
                              device=device)
        a = torch.randn(*batch_a, in1, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)
        b = torch.randn(*batch_b, in2, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)
        a.requires_grad_(dtype == torch.float64)
        b.requires_grad_(dtype == torch.float64)
        exercised_as(batch_labels, batch_a, batch_b)
        exercised_as(tensor_labels, a)
        inputs = {"a": a, "b": b, "activation": activation if activation is None else
                  getattr(activation, "__name__", type(activation).__name__)}
        shape = list(torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])) + [out]
        result = check.student(module, f"Merge({in1}, {in2}, {out}).forward")(a, b)
        expect_meta(check, result, what="Merge's output", shape=shape, dtype=dtype, device=device, inputs=inputs)
        weights, biases = _layer_parameters(module, lambda _, t: t.detach().double())
        expected = _concat_layer(a.detach().double(), b.detach().double(), weights, biases, activation)
        expect_close(check, result, expected, what="Merge's output", inputs=inputs, table=MERGE_TOLERANCES,
                     known=RELU_WHEN_NONE if activation is None else (),
                     hint="forward(a, b) is activation(linear1(a) + linear2(b)); let the addition broadcast, "
                          "and apply no activation when it is None.")
        if dtype == torch.float64:
            _expect_merge_gradients(check, module, a, b, result, activation, inputs)


def _expect_merge_gradients(check, module, a, b, result, activation, inputs):
    """The gradients of <upstream, Merge(a, b)> match the reference layer's, for the inputs and every parameter."""
    __tracebackhide__ = True
    if not result.requires_grad:
        raise CheckFailure(check, "Merge's output is not connected to the autograd graph.",
                           hint="Use the layers' outputs directly; no `.detach()`, `.data` or `torch.no_grad()`.")
    exercised("gradients")
    leaves = {"a": a, "b": b, **dict(module.named_parameters())}   # the parameters: copies, from a worker
    upstream = torch.randn(result.shape, generator=check.generator("upstream"), dtype=torch.float64)
    # backward, not autograd.grad: the parameters' gradients accumulate where the module lives (a worker's .grad is
    # read back with its parameter_facts), the inputs' here. The module is fresh: its parameters had no .grad.
    torch.autograd.backward(result, upstream.to(result))
    facts = check.student(module).beside(parameter_facts)
    got = [a.grad, b.grad, *(facts["grads"].get(name) for name in list(leaves)[2:])]
    copies = {name: t.detach().double().requires_grad_(True) for name, t in leaves.items()}
    # Each slot reads the copy of the parameter registered under the name the module lists it by (shared or not).
    weights, biases = _layer_parameters(module, lambda slot, t: copies[facts["slots"][slot]])
    expected = _concat_layer(copies["a"], copies["b"], weights, biases, activation)
    wanted = torch.autograd.grad(expected, list(copies.values()), upstream.to(expected.device), allow_unused=True)
    for name, g, w in zip(leaves, got, wanted):
        g = torch.zeros_like(leaves[name]) if g is None else g
        w = torch.zeros_like(copies[name]) if w is None else w
        expect_close(check, g, w, what=f"the gradient with respect to {name}", inputs=inputs,
                     table=MERGE_TOLERANCES, hint="Every parameter of linear1 and linear2 should be used once.",
                     known=NO_GRADIENT)


# The known mistake a gradient shows by its values (expect_close's known): nothing flowed back to that tensor.
NO_GRADIENT = (("all zeros: no gradient flows back to it, so the output was cut from it on the way",
                torch.zeros_like,
                "Keep the path from the input and the layers to the output in the graph: no `.detach()`, `.data`, "
                "`torch.no_grad()` or `.item()` on a layer's output."),)


@graded(2, hidden=[{"cases": 12}])
def check_merge_no_tiling(check, Merge, *, seed=0, cases=6):
    """``forward`` never materialises a tiled input: no ``repeat``, ``tile`` or ``repeat_interleave``, no
    ``expand`` (or ``expand_as``, ``broadcast_to``, ``broadcast_tensors``) followed by a concatenation, and
    no tensor anywhere with the tiled shape of ``a``, ``b`` or their concatenation."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        batch_a, batch_b = ([5, 3], [5, 1]) if i == 0 else ([1, 4], [3, 1]) if i == 1 else ([4], [_int(gen, 2, 5), 1])
        in1, in2, out = (5, 6, 10) if i == 0 else (_int(gen, 2, 5), _int(gen, 6, 9), _int(gen, 16, 20))
        module = _build_merge(check, Merge, in1, in2, out, ACTIVATIONS[i % len(ACTIVATIONS)])
        a = torch.randn(*batch_a, in1, generator=gen)
        b = torch.randn(*batch_b, in2, generator=gen)
        exercised_as(batch_labels, batch_a, batch_b)
        expect_no_tiling(check, module, a, b, what=f"Merge({in1}, {in2}, {out}).forward")


# ---------------------------------------------------------------- pairwise_sq_distances

def _distance_atol(x, y):
    """|x|^2 - 2 x.y + |y|^2 rounds each term: a few ulps of the largest squared norm, absolute."""
    scale = float((x.double() ** 2).sum(-1).max() + (y.double() ** 2).sum(-1).max()) if x.numel() and y.numel() else 0
    return max(tolerance(x.dtype)[1], 16 * torch.finfo(x.dtype).eps * scale)


def _expect_distances(check, pairwise_sq_distances, x, y, *, what, hint):
    __tracebackhide__ = True
    inputs = {"x": x, "y": y}
    exercised_as(distance_labels, x, y)
    result = pairwise_sq_distances(x, y)
    expect_meta(check, result, what=what, shape=[x.shape[0], y.shape[0]], dtype=x.dtype, device=x.device,
                inputs=inputs)
    expect_finite(check, result, what=what, inputs=inputs, hint=hint)
    return result, inputs


# The one mistake a result shows by its values alone: the plain distances (a square root too many, as torch.cdist).
NOT_SQUARED = (("the plain distances (the square root of the squared ones)", torch.sqrt,
                "The exercise asks for *squared* distances: drop the square root (`torch.cdist` gives plain "
                "distances)."),)


@graded(2, hidden=[{"cases": 60}])
def check_pairwise_values(check, pairwise_sq_distances, *, seed=0, cases=30):
    """An ``[N, M]`` tensor of the dtype and device of ``x``, equal to a float64 reference, for ``N != M``,
    ``N == M``, single rows and single features, at several scales."""
    __tracebackhide__ = True
    gen = check.generator()
    fixed = [(3, 4, 2), (4, 4, 3), (1, 5, 3), (5, 1, 1), (6, 2, 7)]
    for i in range(cases):
        n, m, d = fixed[i] if i < len(fixed) else (_int(gen, 1, 12), _int(gen, 1, 12), _int(gen, 1, 9))
        dtype = (torch.float32, torch.float64)[i % 2]
        device = _devices()[i % len(_devices())]
        scale = (0.1, 1.0, 10.0)[i % 3]
        x = (torch.randn(n, d, generator=gen, dtype=torch.float64) * scale).to(device=device, dtype=dtype)
        y = (torch.randn(m, d, generator=gen, dtype=torch.float64) * scale).to(device=device, dtype=dtype)
        result, inputs = _expect_distances(check, pairwise_sq_distances, x, y, what="the distance matrix",
                                           hint="Compare every row of x with every row of y.")
        expect_close(check, result, oracle("broadcasting.sq_distances", x, y), what="the distance matrix",
                     inputs=inputs, atol=_distance_atol(x, y),
                     # L1 distances: a wrong answer, not the answer (no oracle needed), computed only on a failure
                     known=(*NOT_SQUARED, ("the sums of absolute differences (L1 distances), not of squared ones",
                                           lambda _: torch.cdist(x.double(), y.double(), p=1),
                                           "Square the differences, not their absolute values.")),
                     hint="result[n, m] = sum over d of (x[n, d] - y[m, d])**2: give x a new axis 1 and y a new "
                          "axis 0 (or keep the row norms as [N, 1] and [1, M]), and reduce over the last axis.")


@graded(2, hidden=[{"cases": 16}])
def check_pairwise_nonnegative(check, pairwise_sq_distances, *, seed=0, cases=8):
    """Never negative, and still close to the float64 reference, for nearly identical rows far from the
    origin (x offset by 1e3 in float32, 1e7 in float64), where |x|^2 - 2 x.y + |y|^2 cancels and
    rounding makes it negative unless it is clamped."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        dtype = (torch.float32, torch.float64)[i % 2]
        offset = 1e3 if dtype == torch.float32 else 1e7
        n, m, d = _int(gen, 3, 9), _int(gen, 3, 9), _int(gen, 4, 33)
        x = offset + torch.randn(n, d, generator=gen, dtype=torch.float64)
        y = x[torch.randint(0, n, (m,), generator=gen)] + 1e-4 * torch.randn(m, d, generator=gen, dtype=torch.float64)
        y[0] = x[0]    # one exact copy: its distance is 0
        exercised("identical_rows")
        x, y = x.to(dtype), y.to(dtype)
        result, inputs = _expect_distances(check, pairwise_sq_distances, x, y, what="the distance matrix",
                                           hint="Clamp the result at 0.")
        negative = result < 0
        if negative.any():
            where = tuple(negative.nonzero()[0].tolist())
            raise CheckFailure(check, f"{int(negative.sum())} of {result.numel()} squared distances are negative "
                                      f"(the smallest is {float(result.min()):.4g}, first at {where}), for nearly "
                                      f"identical rows offset by {offset:g} in {dtype}."
                                      f"\nInput: x = {describe(x)}; y = {describe(y)}",
                               hint="|x|^2 - 2 x.y + |y|^2 subtracts nearly equal large numbers, and rounding can "
                                    "push the result below 0: clamp it with `.clamp(min=0)` (or use (x - y)**2).")
        expected = oracle("broadcasting.sq_distances", x, y)
        expect_close(check, result, expected, what="the distance matrix of nearly identical rows", inputs=inputs,
                     atol=_distance_atol(x, y), known=NOT_SQUARED)


@graded(2, hidden=[{}], source=[no_loop("pairwise_sq_distances")], worker_facts="op counts at 4 and 64 points",
        facts_only_cost=True)
def check_pairwise_vectorized(check, pairwise_sq_distances, *, seed=0):
    """No Python loop: the number of torch operations is the same for every N, M and D (counted, not timed)."""
    __tracebackhide__ = True
    gen = check.generator()

    def rows_and_features(size):
        return (torch.randn(size, size + 1, generator=gen), torch.randn(2 * size + 1, size + 1, generator=gen))

    exercised("sizes_2_5_13")
    expect_constant_op_count(check, pairwise_sq_distances, rows_and_features, (2, 5, 13),
                             what="pairwise_sq_distances",
                             hint="Let broadcasting pair the rows: x[:, None, :] - y[None, :, :] has shape [N, M, D]; "
                                  "or use x @ y.T for the cross terms.")


# --------------------------------------------------------------------- strict_mse_loss

# A shape as a message may write it: sizes joined by commas, "x", "×", "*" or "by", in any brackets or none
# ("[4, 1]", "(4, 1)", "torch.Size([4, 1])", "4x1", "4 x 1", "(4,)").
_SHAPE_TOKEN = re.compile(r"\d+(?:\s*(?:,|x|×|\*|\bby\b)\s*\d+)*")
_EMPTY_SHAPE = re.compile(r"\[\s*\]|\(\s*\)|\bscalar\b|\b0-?d\b|\b0-dim|zero-dim")


def shapes_named(message):
    """Every shape ``message`` writes, as tuples. The lesson's ``[4, 1]`` is one example of naming a shape, not the
    required format: ``(4, 1)``, ``torch.Size([4, 1])`` and ``4x1`` name it too, and ``[]``, ``()``, "scalar" or
    "0-d" the empty shape."""
    shapes = {tuple(int(n) for n in re.findall(r"\d+", token)) for token in _SHAPE_TOKEN.findall(message)}
    if _EMPTY_SHAPE.search(message.lower()):
        shapes.add(())
    return shapes


@graded(1, hidden=[{"cases": 40}])
def check_strict_mse_value(check, strict_mse_loss, *, seed=0, cases=20):
    """For equal shapes: a 0-dim tensor of the prediction's dtype, the mean of the squared differences
    (float64 reference), with the gradient 2 (prediction - target) / numel."""
    __tracebackhide__ = True
    gen = check.generator()
    fixed = [[2, 1], [5], [], [3, 4], [1]]
    for i in range(cases):
        shape = fixed[i] if i < len(fixed) else [_int(gen, 1, 6) for _ in range(_int(gen, 1, 4))]
        dtype = (torch.float32, torch.float64)[i % 2]
        device = _devices()[i % len(_devices())]
        prediction = torch.randn(shape, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)
        target = torch.randn(shape, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)
        inputs = {"prediction": prediction, "target": target}
        exercised_as(tensor_labels, prediction)
        leaf = prediction.clone().requires_grad_(True)
        loss = strict_mse_loss(leaf, target)
        expect_meta(check, loss, what="the loss", shape=[], dtype=dtype, device=device, inputs=inputs)
        expected = ((prediction.double() - target.double()) ** 2).mean()
        expect_close(check, loss, expected, what="the loss", inputs=inputs,
                     hint="Return the mean (not the sum) of the squared differences.",
                     known=(("the sum of the squared differences, not their mean", lambda e: e * prediction.numel(),
                             "Average, do not sum: `.mean()` of the squared differences."),))
        if not loss.requires_grad:
            raise CheckFailure(check, "the loss is not connected to the autograd graph of the prediction.",
                               hint="Use torch operations on the prediction; no `.item()` or `.detach()`.")
        (grad,) = torch.autograd.grad(loss, leaf)
        exercised("gradients")
        expect_close(check, grad, 2 * (prediction.double() - target.double()) / prediction.numel(),
                     what="the gradient with respect to the prediction", inputs=inputs)


# Pairs of different shapes; all but the last broadcast silently.
REFUSED_SHAPES = [([4, 1], [4]), ([4], [4, 1]), ([1, 3], [3, 1]), ([3, 1], [1, 3]), ([2, 3], [3]), ([3], [1]),
                  ([3], []), ([2, 3, 1], [3, 4]), ([2, 2], [1, 2, 2]), ([3], [4])]


@graded(2, hidden=[{}])
def check_strict_mse_refuses_broadcast(check, strict_mse_loss, *, seed=0):
    """Any two different shapes raise ``ValueError`` whose message names both shapes (in any usual notation:
    :func:`shapes_named`): ``[N, 1]`` against
    ``[N]`` (the ``[[1.], [2.]] + [1., 2.]`` trap), ``[1, N]`` against ``[N, 1]``, a ``[C]`` target for a
    ``[B, C]`` prediction, a scalar target, and shapes that do not broadcast at all."""
    __tracebackhide__ = True
    gen = check.generator()
    order = torch.randperm(len(REFUSED_SHAPES), generator=gen).tolist()
    for k in order:
        shape_p, shape_t = REFUSED_SHAPES[k]
        prediction = torch.randn(shape_p, generator=gen)
        target = torch.randn(shape_t, generator=gen)
        exercised_as(shape_pair_labels, shape_p, shape_t)
        error = strict_mse_loss.raises(prediction, target, expected=ValueError)
        named = shapes_named(str(error))
        if not all(tuple(s) in named for s in (shape_p, shape_t)):
            raise CheckFailure(check, f"strict_mse_loss raised ValueError({str(error)!r}) for a prediction of shape "
                                      f"{shape_p} and a target of shape {shape_t}; the message should name both "
                                      f"shapes.",
                               hint="For example: raise ValueError(f'prediction has shape {list(prediction.shape)} "
                                    "but target has shape {list(target.shape)}').")
