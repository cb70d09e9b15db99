"""Every exercise whose answer is a function or module of tensors, as a search space and a way to call it.

Each space is what the exercise's notebook text allows (the contract's bullets, quoted beside it); a drawn case is a
dict of arguments. ``call(namespace, case)`` runs the answer found in ``namespace`` and returns
``(result, leaves)`` (see ``outcomes``). Where the text fixes a property the reference's value does not capture
(never negative, detached, a message that names the shapes), ``properties`` or ``message`` says it.
"""

import dataclasses
import re
from collections.abc import Callable

import torch
from hypothesis import assume
from hypothesis import strategies as st

from autograder.checks.stability.softmax_cases import CE_TOLERANCES, ce_atol
from autograder.measuring.compare import tolerance

from .spaces import FLOATS, GRID, INF, SPECIAL, drawn_state, dtype_max, maybe_strided, shapes, tensors, values


@dataclasses.dataclass(frozen=True)
class Exercise:
    topic: str
    name: str
    objects: tuple          # the student objects the exercise asks for (the keys a mutant replaces)
    space: object           # a Hypothesis strategy of cases
    call: Callable
    properties: Callable | None = None     # (case, result) -> a broken clause, or None
    message: Callable | None = None        # (case, exception) -> what the error message misses, or None
    tolerance: Callable | None = None      # (case, dtype) -> (rtol, atol): the check's own, where not the table's

    @property
    def id(self):
        return f"{self.topic}.{self.name}"


def _grad_leaf(t):
    return t.requires_grad_(True) if t.dtype.is_floating_point else t


# ------------------------------------------------------------------------------------------------ operators
# row_sum: "a tensor of any rank, any number of rows (N = 0 gives zeros), any dtype ... the shape, dtype and device
# of torch.sum(x, dim=0) (integers and booleans sum to int64)".

@st.composite
def _row_sum_cases(draw):
    dtype = draw(st.sampled_from(FLOATS + (torch.int64, torch.int32, torch.bool)))
    shape = draw(shapes(1, 3, 0, 4))
    if dtype == torch.bool:
        x = draw(tensors(torch.int64, shape, st.integers(0, 1))).bool()
    elif dtype.is_floating_point:
        x = draw(tensors(dtype, shape, values(special=SPECIAL)))
    else:
        x = draw(tensors(dtype, shape, st.integers(-5, 5)))
    return {"x": x}


def _row_sum(ns, case):
    return ns["row_sum"](case["x"]), {}


# masked_mean: "x float [N, *D]; low, high Python numbers or tensors that broadcast against x[0]; bounds included;
# NaN in no range; inf and -inf outside finite bounds; no entry (or N = 0) gives 0; shape of x[0], dtype of x".

@st.composite
def _masked_mean_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    inner = draw(shapes(0, 2, 1, 3))
    n = draw(st.integers(0, 4))
    x = draw(tensors(dtype, (n, *inner), st.sampled_from(GRID + SPECIAL)))
    bound_values = st.sampled_from((-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, INF, -INF))

    def bound():
        if inner and draw(st.booleans()):
            return draw(tensors(dtype, inner[-1:] if draw(st.booleans()) else inner, bound_values))
        return draw(bound_values)
    return {"x": x, "low": bound(), "high": bound()}


def _masked_mean(ns, case):
    return ns["masked_mean"](case["x"], case["low"], case["high"]), {}


# -------------------------------------------------------------------------------------------- broadcasting
# Merge: "a [..., in1], b [..., in2], batch dims broadcast; activation a function or None; linear1, linear2 its only
# parameters".

@st.composite
def _merge_cases(draw):
    in1, in2, out = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    batch = draw(shapes(0, 2, 1, 3))
    a_batch = tuple(s if draw(st.booleans()) else 1 for s in batch)
    b_batch = tuple(s if draw(st.booleans()) else 1 for s in batch)[draw(st.integers(0, len(batch))):]
    dtype = draw(st.sampled_from((torch.float32, torch.float64)))
    probe = torch.nn.ModuleDict({"linear1": torch.nn.Linear(in1, out), "linear2": torch.nn.Linear(in2, out)})
    return {"sizes": (in1, in2, out), "activation": draw(st.sampled_from((None, "relu", "tanh"))),
            "state": drawn_state(probe, draw, dtype),
            "a": draw(tensors(dtype, (*a_batch, in1), values())), "b": draw(tensors(dtype, (*b_batch, in2), values()))}


def _merge(ns, case):
    activation = {None: None, "relu": torch.relu, "tanh": torch.tanh}[case["activation"]]
    module = ns["Merge"](*case["sizes"], activation=activation).to(case["a"].dtype)
    module.load_state_dict(case["state"])
    a, b = _grad_leaf(case["a"]), _grad_leaf(case["b"])
    leaves = {"a": a, "b": b, **{f"param {k}": p for k, p in module.named_parameters()}}
    return module(a, b), leaves


# pairwise_sq_distances: "x [N, D], y [M, D]; the dtype of x; close to a float64 reference; never negative, even for
# nearly identical rows far from the origin; accurate to a few ulps of |x|^2 (the grader allows that much)".

@st.composite
def _pairwise_cases(draw):
    dtype = draw(st.sampled_from((torch.float32, torch.float64)))
    n, m, d = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    offset = draw(st.sampled_from((0.0, 100.0, 1e4)))
    x = draw(tensors(torch.float64, (n, d), values()))
    y = draw(tensors(torch.float64, (m, d), values()))
    if draw(st.booleans()):
        y[0] = x[0] + 1e-3 * y[0]           # a nearly identical pair
    return {"x": (x + offset).to(dtype), "y": (y + offset).to(dtype)}


def _pairwise(ns, case):
    return ns["pairwise_sq_distances"](case["x"], case["y"]), {"x": _grad_leaf(case["x"])}


def _pairwise_nonnegative(case, result):
    if isinstance(result, torch.Tensor) and result.is_floating_point() and bool((result < 0).any()):
        return f"negative distances ({result.min().item():.3g}): the contract says never negative"
    return None


def _pairwise_tolerance(case, dtype):
    """"a few ulps of |x|^2 (the grader allows that much)": the table's rtol, as an absolute error of 4 |x|^2."""
    rtol, atol = tolerance(dtype)
    scale = max(case["x"].double().pow(2).sum(1).max().item(), case["y"].double().pow(2).sum(1).max().item())
    return rtol, max(atol, 4 * rtol * scale)


def _cross_entropy_tolerance(case, dtype):
    """The check's: CE_TOLERANCES, and an absolute error of 4 eps times the largest logit (ce_atol)."""
    return CE_TOLERANCES[dtype][0], ce_atol(case["logits"])


# strict_mse_loss: "mean squared error of two tensors of exactly the same shape; ValueError otherwise, whose message
# names both shapes".

_MISMATCHED = (((3,), (3, 1)), ((3, 1), (3,)), ((2, 3), (3, 2)), ((3, 1), (1, 3)), ((2, 3), (3,)), ((1, 3), (3,)),
               ((4,), (1,)), ((2, 1, 3), (2, 3)))


@st.composite
def _mse_cases(draw):
    dtype = draw(st.sampled_from((torch.float32, torch.float64)))
    if draw(st.booleans()):
        p_shape = t_shape = draw(shapes(0, 3, 1, 4))
    else:
        p_shape, t_shape = draw(st.sampled_from(_MISMATCHED))
    return {"prediction": draw(tensors(dtype, p_shape, values())), "target": draw(tensors(dtype, t_shape, values()))}


def _mse(ns, case):
    p = _grad_leaf(case["prediction"])
    return ns["strict_mse_loss"](p, case["target"]), {"prediction": p}


def _names_both_shapes(case, exc):
    """The message must name both shapes, in any format: their sizes appear in it, in order."""
    numbers = [int(n) for n in re.findall(r"\d+", str(exc))]

    def appears(shape):
        sizes = list(shape)
        return any(numbers[i:i + len(sizes)] == sizes for i in range(len(numbers) - len(sizes) + 1))
    if appears(case["prediction"].shape) and appears(case["target"].shape):
        return None
    return f"the ValueError does not name both shapes: {str(exc)[:100]!r}"


# ----------------------------------------------------------------------------------------------- stability
# stable_softmax: "same shape, dtype and device; sums to 1 along dim; no NaN or inf for any finite input in float16,
# bfloat16, float32 or float64; differentiable".

def _extremes(dtype):
    return (1e4, -1e4, dtype_max(dtype), -dtype_max(dtype), 0.0)


@st.composite
def _softmax_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    shape = draw(shapes(1, 3, 1, 4))
    logits = draw(tensors(dtype, shape, values(extremes=(1e4, -1e4, 60.0, -60.0, 20.0))))
    return {"logits": draw(maybe_strided(logits)), "dim": draw(st.integers(-len(shape), len(shape) - 1))}


def _softmax(ns, case):
    logits = _grad_leaf(case["logits"])
    return ns["stable_softmax"](logits, dim=case["dim"]), {"logits": logits}


def _finite_for_finite(name):
    def check(case, result):
        if isinstance(result, torch.Tensor) and bool(case[name].isfinite().all()) and result.is_floating_point() \
                and not bool(result.isfinite().all()):
            return "not finite for a finite input"
        return None
    return check


# softmax_cross_entropy: "per-example loss; shape logits.shape without dim; dtype of logits; labels a distribution
# along dim (soft or one-hot) that may broadcast against logits; finite for finite logits of any magnitude, forward
# and backward".

@st.composite
def _cross_entropy_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    shape = draw(shapes(1, 3, 1, 4))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    logits = draw(tensors(dtype, shape, values(extremes=(1e4, -1e4, 60.0, -60.0))))
    label_shape = list(shape)
    if draw(st.booleans()):                                    # a label shared along the other dims
        label_shape = [s if i == dim % len(shape) else 1 for i, s in enumerate(shape)]
        label_shape = label_shape[draw(st.integers(0, dim % len(shape))):]
    raw = draw(tensors(torch.float64, tuple(label_shape), st.sampled_from((0.0, 0.0, 1.0, 2.0, 0.5))))
    label_dim = dim % len(shape) - (len(shape) - len(label_shape))
    raw = raw + (raw.sum(label_dim, keepdim=True) == 0)        # no all-zero distribution
    labels = (raw / raw.sum(label_dim, keepdim=True)).to(dtype)
    return {"labels": labels, "logits": logits, "dim": dim}


def _cross_entropy(ns, case):
    logits = _grad_leaf(case["logits"])
    return ns["softmax_cross_entropy"](case["labels"], logits, dim=case["dim"]), {"logits": logits}


# Softplus: "log(1 + exp(x)) elementwise, shape, dtype and device of x, finite and accurate for every finite x of
# every float dtype (1e4, -1e4, finfo.max); backward grad_output * sigmoid(x), finite for every finite x".

@st.composite
def _softplus_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    x = draw(tensors(dtype, draw(shapes(0, 2, 1, 4)), values(extremes=_extremes(dtype) + (40.0, -40.0, 90.0))))
    return {"x": x}


def _softplus(ns, case):
    x = _grad_leaf(case["x"])
    return ns["softplus"](x), {"x": x}


# -------------------------------------------------------------------------------------------------- basics
# to_numpy: "values, shape and dtype of any tensor NumPy can represent: one that requires grad, a non-contiguous
# view, a 0-d tensor; do not change t; float16/32/64, int8/16/32/64, uint8, bool; exact values including inf and NaN".

_NUMPY_DTYPES = (torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64,
                 torch.uint8, torch.bool)


@st.composite
def _to_numpy_cases(draw):
    dtype = draw(st.sampled_from(_NUMPY_DTYPES))
    shape = draw(shapes(0, 3, 1, 3))
    if dtype.is_floating_point:
        t = draw(tensors(dtype, shape, values(special=SPECIAL)))
        if draw(st.booleans()):
            t.requires_grad_(True)
    else:
        low = 0 if dtype in (torch.uint8, torch.bool) else -5
        t = draw(tensors(torch.int64, shape, st.integers(low, 1 if dtype == torch.bool else 5))).to(dtype)
    return {"t": draw(maybe_strided(t)) if not t.requires_grad else t}


def _to_numpy(ns, case):
    return ns["to_numpy"](case["t"]), {}


# grad_of: "scalar-valued f; same shape, dtype and device as x, detached; x left exactly as it was (no requires_grad
# set or cleared, no .grad on x or on any tensor x was computed from); functions not seen (sums of powers,
# logsumexp, norms, quadratic forms, max); rank 0 to 3, float32 and float64, some non-contiguous".

_FUNCTIONS = {
    "sum of cubes": lambda x: (x ** 3).sum(),
    "logsumexp": lambda x: torch.logsumexp(x.reshape(-1), 0),
    "norm": lambda x: torch.linalg.vector_norm(x.reshape(-1) + 0.25),
    "quadratic form": lambda x: (x.reshape(-1) * torch.arange(x.numel(), dtype=x.dtype)).pow(2).sum() / 2,
    "max": lambda x: x.max() * 3,
}


@st.composite
def _grad_of_cases(draw):
    dtype = draw(st.sampled_from((torch.float32, torch.float64)))
    x = draw(maybe_strided(draw(tensors(dtype, draw(shapes(0, 3, 1, 3)), values(uniform=2.0)))))
    how = draw(st.sampled_from(("plain", "requires grad", "computed")))
    if how == "requires grad":
        x.requires_grad_(True)
    return {"f": draw(st.sampled_from(sorted(_FUNCTIONS))), "x": x, "how": how}


def _grad_of(ns, case):
    x, source = case["x"], None
    if case["how"] == "computed":          # x computed from a leaf: no .grad may reach the leaf
        source = case["x"].detach().clone().requires_grad_(True)
        x = source * 1.0
    out = ns["grad_of"](_FUNCTIONS[case["f"]], x)
    if source is not None and source.grad is not None:
        raise AssertionError("a .grad was added to the tensor x was computed from")
    return out, {}


def _detached(case, result):
    if isinstance(result, torch.Tensor) and (result.requires_grad or result.grad_fn is not None):
        return "the gradient is not detached"
    return None


# ------------------------------------------------------------------------------------------- vectorization
# batch_gather: "tensor [B, N, *F]; indices int64 or int32 [B, *K] with values in [0, N); result [B, *K, *F] in
# tensor's dtype; differentiable w.r.t. tensor, repeated indices accumulating; an index outside [0, N) raises (negative
# may raise or count from the end); a batch size that differs raises a ValueError that says so".

@st.composite
def _batch_gather_cases(draw):
    b, n = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    features = draw(shapes(0, 2, 1, 3))
    dtype = draw(st.sampled_from((torch.float32, torch.float64, torch.int64)))
    tensor = draw(tensors(dtype, (b, n, *features), values() if dtype.is_floating_point else st.integers(-9, 9)))
    k = draw(shapes(0, 2, 0, 3))
    kind = draw(st.sampled_from(("ok", "ok", "too large", "batch")))
    ib = b + draw(st.integers(1, 2)) if kind == "batch" else b
    indices = draw(tensors(torch.int64, (ib, *k), st.integers(0, n - 1)))
    if kind == "too large" and indices.numel():      # index N of batch element b reads row 0 of b + 1 if unchecked
        indices.view(-1)[draw(st.integers(0, indices.numel() - 1))] = n + draw(st.sampled_from((0, 0, 1)))
    return {"tensor": tensor, "indices": indices.to(draw(st.sampled_from((torch.int64, torch.int32)))),
            "kind": kind}


def _batch_gather(ns, case):
    tensor = _grad_leaf(case["tensor"])
    return ns["batch_gather"](tensor, case["indices"]), {"tensor": tensor}


def _says_batch_sizes_differ(case, exc):
    """"a ValueError that says so", in any words: it names the batch, or gives both batch sizes."""
    text = str(exc)
    numbers = set(re.findall(r"\d+", text))
    if "batch" in text.lower() or {str(case["indices"].shape[0]), str(case["tensor"].shape[0])} <= numbers:
        return None
    return f"the ValueError does not say that the batch sizes differ: {text[:100]!r}"


# masked_batch_mean: "x float [B, T, F]; lengths int64 [B], 0 <= lengths[b] <= T; result [B, F] in x's dtype,
# x[b, :lengths[b]].mean(0), 0 for length 0; padding holds anything, NaN and inf included; differentiable".

@st.composite
def _masked_batch_mean_cases(draw):
    dtype = draw(st.sampled_from(FLOATS))
    b, t, f = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    lengths = draw(tensors(torch.int64, (b,), st.integers(0, t)))
    x = draw(tensors(dtype, (b, t, f), values()))
    padding = draw(tensors(torch.float64, (b, t, f), st.sampled_from(GRID + SPECIAL)))
    pad = torch.arange(t)[None, :, None] >= lengths[:, None, None]
    return {"x": torch.where(pad, padding.to(dtype), x), "lengths": lengths}


def _masked_batch_mean(ns, case):
    x = _grad_leaf(case["x"])
    return ns["masked_batch_mean"](x, case["lengths"]), {"x": x}


# per_sample_grads: "model an MLP (Linear, Tanh, Linear, ...) of any sizes; params {name: tensor} plain, with the
# model's names; x [B, F] in params' dtype; y [B] int64; out[name][i] the gradient of the i-th sample's cross-entropy
# w.r.t. params[name], computed with the values in params".

@st.composite
def _per_sample_cases(draw):
    sizes = draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
    sizes[-1] = max(sizes[-1], 2)
    dtype = draw(st.sampled_from((torch.float32, torch.float64)))
    b = draw(st.integers(1, 4))
    model = _tanh_mlp(sizes)
    return {"sizes": tuple(sizes), "params": drawn_state(model, draw, dtype),
            "decoy": drawn_state(model, draw, dtype), "x": draw(tensors(dtype, (b, sizes[0]), values())),
            "y": draw(tensors(torch.int64, (b,), st.integers(0, sizes[-1] - 1)))}


def _tanh_mlp(sizes):
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers += [torch.nn.Tanh()] if i else []
        layers.append(torch.nn.Linear(a, b))
    return torch.nn.Sequential(*layers)


def _per_sample(ns, case):
    model = _tanh_mlp(case["sizes"]).to(case["x"].dtype)
    model.load_state_dict(case["decoy"])             # the model's own parameters hold other values
    return ns["per_sample_grads"](model, case["params"], case["x"], case["y"]), {}


# ------------------------------------------------------------------------------------------------- modules
# Affine: "a * x + b with learnable parameters a and b of shape [1]".

@st.composite
def _affine_cases(draw):
    return {"state": {"a": draw(tensors(torch.float32, (1,), values())), "b": draw(tensors(torch.float32, (1,),
                                                                                             values()))},
            "x": draw(tensors(torch.float32, draw(shapes(0, 3, 1, 3)), values()))}


def _affine(ns, case):
    module = ns["Affine"]()
    module.load_state_dict(case["state"])
    x = _grad_leaf(case["x"])
    parameters = {k: (tuple(p.shape), p.dtype) for k, p in module.named_parameters()}
    return {"forward": module(x), "parameters": parameters}, {"x": x, **dict(module.named_parameters())}


# make_mlp: "Linear layers between consecutive sizes, with activation() between them and none after the last;
# fewer than two sizes: ValueError; every layer its own module".

@st.composite
def _make_mlp_cases(draw):
    sizes = draw(st.lists(st.sampled_from((1, 2, 3)), min_size=0, max_size=4))
    activation = draw(st.sampled_from(("ReLU", "Tanh", "Sigmoid")))
    weights = [(draw(tensors(torch.float32, (b, a), values())), draw(tensors(torch.float32, (b,), values())))
               for a, b in zip(sizes[:-1], sizes[1:])]
    x = draw(tensors(torch.float32, (2, sizes[0]), values())) if sizes else torch.zeros(0)
    return {"sizes": sizes, "activation": activation, "weights": weights, "x": x}


def _make_mlp(ns, case):
    """The layers' names are the student's (the text fixes only their order): the drawn weights go to the
    Linear layers met in order; a layer met twice (reused) keeps the last, as does a tied weight."""
    model = ns["make_mlp"](list(case["sizes"]), getattr(torch.nn, case["activation"]))
    linears = [m for m in model.children() if isinstance(m, torch.nn.Linear)]
    if len(linears) != len(case["weights"]):
        raise AssertionError(f"{len(linears)} Linear layers for {len(case['sizes'])} sizes")
    with torch.no_grad():
        for layer, (weight, bias) in zip(linears, case["weights"]):
            layer.weight.copy_(weight)
            if layer.bias is None:
                raise AssertionError("a Linear layer without a bias")
            layer.bias.copy_(bias)
    x = _grad_leaf(case["x"])
    layout = [type(m).__name__ for m in model.children()]
    return {"layout": layout, "forward": model(x)}, {"x": x}


# Normalizer: "BatchNorm1d(affine=False) statistics for x [N, num_features]: buffers running_mean (zeros) and
# running_var (ones); train(): batch mean and biased variance, running update with momentum and the unbiased
# variance, no autograd history in the running statistics; eval(): running statistics, update nothing".

@st.composite
def _normalizer_cases(draw):
    features = draw(st.integers(1, 3))
    batches = draw(st.lists(st.integers(2, 4), min_size=1, max_size=3))
    dtype = draw(st.sampled_from((torch.float32, torch.float64)))
    return {"features": features, "momentum": draw(st.sampled_from((0.1, 0.5, 0.25))),
            "eps": draw(st.sampled_from((1e-5, 0.5, 1e-3))),
            "train": [draw(tensors(dtype, (n, features), values())) for n in batches],
            "eval": draw(tensors(dtype, (draw(st.integers(1, 3)), features), values()))}


def _normalizer_tolerance(case, dtype):
    """The table's, and an absolute error of 4 ulps of the largest |x| divided by sqrt(eps): (x - mean) / sqrt(var +
    eps) magnifies the rounding of the mean that much when a feature is constant (var = 0); the builtin's Welford
    mean of [3, 3] in float32 is off by one ulp, and shows 3e-5 where the two-pass mean shows 0."""
    rtol, atol = tolerance(dtype)
    largest = max(float(x.detach().abs().max()) for x in case["train"] + [case["eval"]])
    return rtol, max(atol, 4 * torch.finfo(dtype).eps * largest / case["eps"] ** 0.5)


def _normalizer(ns, case):
    module = ns["Normalizer"](case["features"], momentum=case["momentum"], eps=case["eps"])
    module = module.to(case["eval"].dtype)
    module.train()
    leaves, outs = {}, []
    for i, x in enumerate(case["train"]):
        leaves[f"train batch {i}"] = x.requires_grad_(True)
        outs.append(module(x))
    module.eval()
    outs.append(module(case["eval"]))
    state = {k: v for k, v in module.state_dict().items()}
    return {"outputs": outs, "state_dict": state, "parameters": sorted(k for k, _ in module.named_parameters()),
            "buffers": sorted(k for k, _ in module.named_buffers())}, leaves


# -------------------------------------------------------------------------------------------------- memory
# residual_relu: "relu(x @ w) + x for x [B, D], w [D, D]; backward works and gives the right gradients for x and w;
# do not modify x or w". predict: "model(x) computed under no_grad: its result needs no gradient".

@st.composite
def _residual_cases(draw):
    dtype = draw(st.sampled_from((torch.float32, torch.float64)))
    b, d = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    case = {"x": draw(tensors(dtype, (b, d), values())), "w": draw(tensors(dtype, (d, d), values()))}
    # relu's gradient at exactly 0 is a convention the text leaves open (relu_ gives 0, clamp(min=0) gives 1).
    assume(bool((case["x"] @ case["w"] != 0).all()))
    return case


def _residual(ns, case):
    x, w = _grad_leaf(case["x"]), _grad_leaf(case["w"])
    return ns["residual_relu"](x, w), {"x": x, "w": w}


@st.composite
def _predict_cases(draw):
    sizes = draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
    model = _tanh_mlp(sizes)
    return {"sizes": tuple(sizes), "state": drawn_state(model, draw),
            "x": draw(tensors(torch.float32, (draw(st.integers(1, 3)), sizes[0]), values()))}


def _predict(ns, case):
    model = _tanh_mlp(case["sizes"])
    model.load_state_dict(case["state"])
    return ns["predict"](model, case["x"]), {}


# saved_bytes: "run model(x), counting the bytes of every tensor autograd saves for backward; return (output, bytes)";
# backward through the output still works. Models: a Linear, x * x (one tensor saved twice), a view of x into a
# Linear (a view saved), in float32, float64 and float16.

_SAVERS = {
    "linear": lambda d: torch.nn.Linear(d, 2),
    "square": lambda d: _Lambda(lambda x: x * x),
    "view": lambda d: torch.nn.Sequential(_Lambda(lambda x: x[:, : max(1, d - 1)]), torch.nn.Linear(max(1, d - 1), 2)),
    "tanh": lambda d: torch.nn.Tanh(),
}


class _Lambda(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@st.composite
def _saved_bytes_cases(draw):
    kind = draw(st.sampled_from(sorted(_SAVERS)))
    dtype = draw(st.sampled_from((torch.float32, torch.float64, torch.float16)))
    b, d = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    model = _SAVERS[kind](d)
    return {"kind": kind, "state": drawn_state(model, draw, dtype),
            "x": draw(tensors(dtype, (b, d), values()))}


def _saved_bytes(ns, case):
    model = _SAVERS[case["kind"]](case["x"].shape[1]).to(case["x"].dtype)
    model.load_state_dict(case["state"])
    x = _grad_leaf(case["x"])
    return ns["saved_bytes"](model, x), {"x": x, **dict(model.named_parameters())}


# checkpointed_forward: "blocks an nn.ModuleList of nn.Sequential (linear layers, activations, sometimes dropout);
# apply them in order, each under checkpoint; the output and the gradients of x and of every parameter equal those
# of the plain forward (with and without an input that requires grad, with dropout)".

@st.composite
def _checkpointed_cases(draw):
    width = draw(st.integers(1, 3))
    kinds = draw(st.lists(st.sampled_from(("tanh", "dropout", "relu")), min_size=1, max_size=3))
    blocks = _blocks(width, kinds)
    return {"width": width, "kinds": kinds, "state": drawn_state(blocks, draw),
            "x": draw(tensors(torch.float32, (draw(st.integers(1, 3)), width), values())),
            "x requires grad": draw(st.booleans())}


def _blocks(width, kinds):
    layer = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "dropout": lambda: torch.nn.Dropout(0.5)}
    return torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(width, width), layer[k]()) for k in kinds)


def _checkpointed(ns, case):
    blocks = _blocks(case["width"], case["kinds"])
    blocks.load_state_dict(case["state"])
    x = case["x"].requires_grad_(case["x requires grad"])
    leaves = {"x": x, **{f"param {k}": p for k, p in blocks.named_parameters()}}
    return ns["checkpointed_forward"](blocks, x), leaves


EXERCISES = (
    Exercise("operators", "row_sum", ("row_sum",), _row_sum_cases(), _row_sum),
    Exercise("operators", "masked_mean", ("masked_mean",), _masked_mean_cases(), _masked_mean),
    Exercise("broadcasting", "Merge", ("Merge",), _merge_cases(), _merge),
    Exercise("broadcasting", "pairwise_sq_distances", ("pairwise_sq_distances",), _pairwise_cases(), _pairwise,
             properties=_pairwise_nonnegative, tolerance=_pairwise_tolerance),
    Exercise("broadcasting", "strict_mse_loss", ("strict_mse_loss",), _mse_cases(), _mse, message=_names_both_shapes),
    Exercise("stability", "stable_softmax", ("stable_softmax",), _softmax_cases(), _softmax,
             properties=_finite_for_finite("logits")),
    Exercise("stability", "softmax_cross_entropy", ("softmax_cross_entropy",), _cross_entropy_cases(),
             _cross_entropy, properties=_finite_for_finite("logits"), tolerance=_cross_entropy_tolerance),
    Exercise("stability", "softplus", ("Softplus", "softplus"), _softplus_cases(), _softplus,
             properties=_finite_for_finite("x")),
    Exercise("basics", "to_numpy", ("to_numpy",), _to_numpy_cases(), _to_numpy),
    Exercise("basics", "grad_of", ("grad_of",), _grad_of_cases(), _grad_of, properties=_detached),
    Exercise("vectorization", "batch_gather", ("batch_gather",), _batch_gather_cases(), _batch_gather,
             message=_says_batch_sizes_differ),
    Exercise("vectorization", "masked_batch_mean", ("masked_batch_mean",), _masked_batch_mean_cases(),
             _masked_batch_mean),
    Exercise("vectorization", "per_sample_grads", ("per_sample_grads",), _per_sample_cases(), _per_sample),
    Exercise("modules", "Affine", ("Affine",), _affine_cases(), _affine),
    Exercise("modules", "make_mlp", ("make_mlp",), _make_mlp_cases(), _make_mlp),
    Exercise("modules", "Normalizer", ("Normalizer",), _normalizer_cases(), _normalizer,
             tolerance=_normalizer_tolerance),
    Exercise("memory", "residual_relu", ("residual_relu",), _residual_cases(), _residual),
    Exercise("memory", "predict", ("predict",), _predict_cases(), _predict),
    Exercise("memory", "checkpointed_forward", ("checkpointed_forward",), _checkpointed_cases(), _checkpointed),
    Exercise("memory", "saved_bytes", ("saved_bytes",), _saved_bytes_cases(), _saved_bytes),
)


def exercise_for(topic, objects):
    """The searched exercise of ``topic`` whose objects include every name in ``objects``, or ``None``."""
    return next((e for e in EXERCISES if e.topic == topic and set(objects) <= set(e.objects)), None)
