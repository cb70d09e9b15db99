"""A second, blind set of mistakes for measuring the named-mistake hint (docs/feedback.md, "How often the hint is
right").

``MISTAKES = {topic: {what it is: (replacement objects, truth)}}``, 24 mistakes in seven topics (vectorization 5,
memory 4, modules 4, operators 3, stability 3, broadcasting 3, basics 2), in the format of the first set
(``tests/named_mistakes/<topic>.py``, see ``__init__``): ``truth`` is the id of the mutant
(``tests/mutants/<topic>.py``) that is the same mistake, or ``None`` when no mutant is.

How it was made (2026-11-25): each mistake was written from the notebook's own text
(``source/<topic>/<topic>.ipynb``: its markdown, its contracts and exercise stubs) as a student reading it might write
it, with the signatures of ``tests/alternatives/<topic>.py``, in code that is no mutant's body: 16 are a mutant's
mistake written another way (another spelling, another route), 8 are mistakes that no mutant makes (truth ``None``),
several of them taken from details the notebooks stress (the two biases that "play the role of the one bias",
parameters that "cost no new memory", a ``keepdim`` too many, a log-sum-exp whose max is not added back). Every truth
was written down, from the mutants' ``DESCRIPTIONS`` only, before anything was graded; the grader's signature files
(``autograder/checks/*/mistakes.py``) were not read. The author did not grade the set: each function was only run on
small inputs of the author's own, to check that it runs and differs from a correct answer (``per_sample_grads``
through ``jacrev`` has the right values: only the contract's "vmap over grad" tells it apart, so it may lose no
point). Nobody had graded it when it was committed.
"""

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint

# ------------------------------------------------------------------------------------------------ vectorization


def batch_gather_bound_off_by_one(tensor, indices):
    batch, rows = tensor.shape[0], tensor.shape[1]
    if indices.shape[0] != batch:
        raise ValueError(f"indices has batch size {indices.shape[0]} but tensor has batch size {batch}")
    if indices.numel() and (indices.min() < 0 or indices.max() > rows):      # > instead of >=: N gets through
        raise IndexError(f"indices must be between 0 and {rows}")
    start = (torch.arange(batch, device=tensor.device) * rows).view(batch, *([1] * (indices.dim() - 1)))
    return tensor.flatten(0, 1)[indices + start]


def masked_batch_mean_count_not_unsqueezed(x, lengths):
    valid = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]         # [B, T]
    summed = torch.where(valid.unsqueeze(-1), x, torch.zeros_like(x)).sum(dim=1)          # [B, F]
    return summed / lengths.clamp(min=1).to(x.dtype)                                      # [B, F] / [B]


def per_sample_grads_jacrev(model, params, x, y):
    def losses(weights):                       # the B per-sample losses at once: their Jacobian is [B, *shape]
        return F.cross_entropy(functional_call(model, weights, (x,)), y, reduction="none")
    return torch.func.jacrev(losses)(params)


def per_sample_grads_state_dict(model, params, x, y):
    weights = model.state_dict()               # the model's own values, not the params it was given

    def loss_of(w, xi, yi):
        return F.cross_entropy(functional_call(model, w, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(loss_of), in_dims=(None, 0, 0))(weights, x, y)


def masked_batch_mean_count_from_mask(x, lengths):
    keep = torch.arange(x.shape[1], device=x.device).expand(x.shape[0], -1) < lengths.unsqueeze(1)
    total = x.masked_fill(~keep.unsqueeze(2), 0.0).sum(1)
    count = keep.sum(1, keepdim=True).to(x.dtype)                  # 0 for an empty row
    return total / count


# ------------------------------------------------------------------------------------------------------- memory


def saved_bytes_without_parameters(model, x):
    weights = {p.data_ptr() for p in model.parameters()}
    total = 0

    def pack(t):
        nonlocal total
        if t.data_ptr() not in weights:        # "saving them costs no new memory": parameters left out
            total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total


def checkpointed_forward_default_flag(blocks, x):
    h = x
    for i in range(len(blocks)):
        h = checkpoint(blocks[i], h)           # use_reentrant left to its default (True, with a warning)
    return h


def most_expensive_op_per_call(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    events = sorted(prof.key_averages(), key=lambda e: e.cpu_time, reverse=True)    # per call, children included
    return events[0].key


def residual_relu_clamp_of_sum(x, w):
    return torch.clamp(torch.addmm(x, x, w), min=0)          # relu(x + x @ w): the residual added before relu


# ------------------------------------------------------------------------------------------------------ modules


class AffineParameterListRegistered(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.coefficients = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(1)),
                                                    torch.nn.Parameter(torch.randn(1))])   # a, then b

    def forward(self, x):
        a, b = self.coefficients
        return a * x + b


def make_mlp_checking_empty_only(sizes, activation=torch.nn.ReLU):
    if not sizes:
        raise ValueError("make_mlp needs sizes")
    layers = []
    for i in range(len(sizes) - 1):
        if layers:
            layers.append(activation())
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
    return torch.nn.Sequential(*layers)


def fit_adam(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)     # the optimizer of the basics lesson
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return float(loss)


class NormalizerStdPlusEps(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / (self.running_var.sqrt() + self.eps)
        mean = x.mean(dim=0)
        std = x.std(dim=0, correction=0)
        with torch.no_grad():
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(x.var(dim=0), self.momentum)
        return (x - mean) / (std + self.eps)


# ---------------------------------------------------------------------------------------------------- operators


def masked_mean_not_outside(x, low, high):
    outside = (x < low) | (x > high)
    inside = ~outside
    total = torch.where(inside, x, torch.zeros_like(x)).sum(0)
    return total / inside.sum(0).clamp(min=1)


def masked_mean_keepdim(x, low, high):
    inside = (x >= low) & (x <= high)
    total = torch.where(inside, x, torch.zeros_like(x)).sum(dim=0, keepdim=True)
    count = inside.sum(dim=0, keepdim=True).clamp(min=1)
    return total / count


def row_sum_columns_of_a_matrix(x):
    return torch.flatten(x, start_dim=1).sum(dim=0)            # every column of the [N, rest] matrix


# ---------------------------------------------------------------------------------------------------- stability


def ce_max_not_added_back(labels, logits, dim=-1):
    peak = logits.amax(dim=dim, keepdim=True)
    log_sum = torch.log(torch.exp(logits - peak).sum(dim=dim, keepdim=True))     # log-sum-exp without + peak
    return -(labels * (logits - log_sum)).sum(dim=dim)


def ce_float32_not_cast_back(labels, logits, dim=-1):
    z = logits.to(torch.float32)
    z = z - z.max(dim=dim, keepdim=True).values
    log_probs = z - z.exp().sum(dim=dim, keepdim=True).log()
    return -(labels * log_probs).sum(dim=dim)


class SoftplusOutputOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.result = result
        return result

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * torch.sigmoid(ctx.result)


# ------------------------------------------------------------------------------------------------- broadcasting


class MergeReluByDefault(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation or F.relu

    def forward(self, a, b):
        return self.activation(self.linear1(a) + self.linear2(b))


class MergeOneBias(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features, bias=False)   # only b1 + b2 matters: one bias
        self.activation = activation

    def forward(self, a, b):
        h = torch.add(self.linear1(a), self.linear2(b))
        return h if self.activation is None else self.activation(h)


def strict_mse_leading_dim(prediction, target):
    if prediction.shape[:1] != target.shape[:1]:
        raise ValueError(f"prediction has shape {list(prediction.shape)} but target has shape "
                         f"{list(target.shape)}")
    return torch.square(prediction - target).mean()


# ------------------------------------------------------------------------------------------------------- basics


def to_numpy_detach_in_place(t):
    return t.detach_().cpu().numpy()          # detach_ detaches the caller's tensor itself


def fit_quadratic_vander(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        x, y = generate_data()
        features = torch.vander(x, N=3, increasing=True)         # columns 1, x, x^2
        loss = ((features @ w - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


MISTAKES = {
    "vectorization": {
        # The check lets indices == N through: it "does not raise for an index out of range", as the mutant.
        "batch_gather checking the bounds with > N": ({"batch_gather": batch_gather_bound_off_by_one},
                                                      "batch_gather without a bounds check"),
        # A broadcasting slip ([B, F] / [B]): no mutant divides by a count of the wrong shape.
        "masked_batch_mean dividing by lengths without [:, None]": (
            {"masked_batch_mean": masked_batch_mean_count_not_unsqueezed}, None),
        # Right values, no loop, but no vmap over grad: no mutant (the loop mutants loop in Python).
        "per_sample_grads through torch.func.jacrev": ({"per_sample_grads": per_sample_grads_jacrev}, None),
        # The model's own values instead of params: the mutant's mistake, through state_dict().
        "per_sample_grads of model.state_dict()": (
            {"per_sample_grads": per_sample_grads_state_dict},
            "per_sample_grads of model.named_parameters() (not params, not detached)"),
        # The count taken from the mask with no clamp: 0 / 0 for an empty row, as the mutant.
        "masked_batch_mean dividing by the mask's count": ({"masked_batch_mean": masked_batch_mean_count_from_mask},
                                                           "masked_batch_mean dividing 0 by 0 for empty rows"),
    },
    "memory": {
        # The contract counts parameters; no mutant leaves them out.
        "saved_bytes leaving the parameters out": ({"saved_bytes": saved_bytes_without_parameters}, None),
        # checkpoint without use_reentrant runs the reentrant variant: the mutant's mistake by omission.
        "checkpointed_forward without use_reentrant": ({"checkpointed_forward": checkpointed_forward_default_flag},
                                                       "checkpointed_forward uses the reentrant checkpoint"),
        # cpu_time is total time (children included) per call: ranking by total time, not self time.
        "most_expensive_op ranking by cpu_time": ({"most_expensive_op": most_expensive_op_per_call},
                                                  "most_expensive_op sorts by total CPU time"),
        # relu(x @ w + x) through addmm and clamp: relu applied after the residual.
        "residual_relu as clamp(addmm(x, x, w))": ({"residual_relu": residual_relu_clamp_of_sum},
                                                   "residual_relu applies relu after the residual"),
    },
    "modules": {
        # Registered, but as coefficients.0/.1, not a and b; the list mutant's list is not registered at all.
        "Affine with an nn.ParameterList": ({"Affine": AffineParameterListRegistered}, None),
        # `if not sizes` lets a single size through: accepts fewer than two sizes.
        "make_mlp checking for empty sizes only": ({"make_mlp": make_mlp_checking_empty_only},
                                                   "make_mlp accepting fewer than two sizes"),
        # Another optimizer than SGD; the nearest mutant is SGD with momentum, which is not Adam.
        "fit with Adam": ({"fit": fit_adam}, None),
        # std(correction=0) + eps: eps outside the square root, in train and in eval.
        "Normalizer dividing by std + eps": ({"Normalizer": NormalizerStdPlusEps},
                                             "Normalizer adding eps outside the square root"),
    },
    "operators": {
        # ~((x < low) | (x > high)) is "not below and not above": true for NaN, as the mutant.
        "masked_mean as the complement of outside": ({"masked_mean": masked_mean_not_outside},
                                                     "masked_mean counting NaN"),
        # keepdim on masked_mean's sums: no mutant (the keepdim mutant is row_sum's).
        "masked_mean keeping dim 0": ({"masked_mean": masked_mean_keepdim}, None),
        # flatten(start_dim=1) then sum(0): right for matrices only (and raises for vectors).
        "row_sum through flatten(start_dim=1)": ({"row_sum": row_sum_columns_of_a_matrix},
                                                 "row_sum for matrices only"),
    },
    "stability": {
        # log_probs = logits - log(sum(exp(logits - max))): the max never added back; no mutant.
        "cross-entropy subtracting a log-sum-exp without its max": (
            {"softmax_cross_entropy": ce_max_not_added_back}, None),
        # Computes in float32 and never casts back: float32 for float16 input, float32 precision for float64.
        "cross-entropy in float32, not cast back": ({"softmax_cross_entropy": ce_float32_not_cast_back},
                                                    "cross-entropy of the wrong dtype"),
        # The output kept on ctx and sigmoid taken of it: the saved output used as the input.
        "Softplus backward taking sigmoid of the output kept on ctx": (
            {"Softplus": SoftplusOutputOnCtx, "softplus": SoftplusOutputOnCtx.apply},
            "softplus backward using the saved output as the input"),
    },
    "broadcasting": {
        # `activation or F.relu`: a ReLU when activation is None.
        "Merge with `activation or relu`": ({"Merge": MergeReluByDefault}, "Merge with ReLU when activation is None"),
        # linear2 built without a bias (the lesson: the two biases play the role of one); no mutant.
        "Merge with one bias (linear2 bias=False)": ({"Merge": MergeOneBias}, None),
        # Compares the leading dimension only; the four shape-check mutants share this description.
        "strict_mse_loss comparing the leading dim only": ({"strict_mse_loss": strict_mse_leading_dim},
                                                           "loss without a shape check"),
    },
    "basics": {
        # detach_() switches requires_grad off on the caller's tensor (and raises for a view): the mutant's mistake.
        "to_numpy with detach_()": ({"to_numpy": to_numpy_detach_in_place},
                                    "to_numpy clearing requires_grad of its argument"),
        # vander(increasing=True) gives the columns 1, x, x^2: the coefficients come back reversed.
        "fit_quadratic with torch.vander(increasing=True)": ({"fit_quadratic": fit_quadratic_vander},
                                                             "fit_quadratic with features in the order 1, x, x^2"),
    },
}
