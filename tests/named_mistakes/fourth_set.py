"""A fourth, blind set of mistakes for measuring the named-mistake hint (docs/feedback.md, "How often the hint is
right").

``MISTAKES = {topic: {what it is: (replacement objects, truth)}}``, 30 mistakes in seven topics (vectorization 5,
memory 5, modules 5, operators 4, stability 4, broadcasting 4, basics 3), in the format of ``second_set.py`` and
``third_set.py``: ``truth`` is the id of the mutant (``tests/mutants/<topic>.py``) that is the same mistake, or
``None`` when no mutant is (then the right hint names nothing).

How it was made (2026-11-25): each mistake was written from the notebook's own text (``source/<topic>/<topic>.ipynb``:
its markdown, its contracts and exercise stubs) as a student reading it might write it, with the signatures of
``tests/alternatives/<topic>.py``, in code that is no mutant's body, and none of the three earlier sets' mistakes
again (or only by a clearly different route). 20 are a mutant's mistake written another way, one mutant each, seven
of them by a markedly different route (a one-hot matrix product that works in float32, Affine's parameters from
NumPy, a memoised Linear factory, SGD's default lr, a median shift, a backward through exp of the saved output,
row norms through einsum); 10 are mistakes that no mutant makes (truth ``None``), several from details the notebooks
stress (``checkpoint_sequential`` leaves its last segment plain, ``key_averages()`` is not sorted, the activation
goes after the sum, ``log1p`` rather than ``log``, eps in eval mode too, Adam's state kept across steps). Every truth
was written down, from the mutants' ``DESCRIPTIONS`` only, before anything was graded; the grader's signature files
(``autograder/checks/*/mistakes.py``), its matching internals and any earlier measurement were not read. The author
did not grade the set: each function was only run on small inputs of the author's own, to check that it runs and
differs from a correct answer (a few may lose no point on the grader's inputs: the right hint then names nothing).
Nobody had graded it when it was committed.
"""

import functools

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint_sequential

# ------------------------------------------------------------------------------------------------ vectorization


def _check_gather(tensor, indices):
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError(f"indices has batch size {indices.shape[0]} but tensor has batch size {tensor.shape[0]}")
    if indices.numel() and (indices.min() < 0 or indices.max() >= tensor.shape[1]):
        raise IndexError(f"indices must lie in [0, {tensor.shape[1]})")


def batch_gather_row_ids(tensor, indices):
    _check_gather(tensor, indices)
    rows = torch.arange(tensor.shape[0], device=tensor.device)[:, None]     # [B, 1]: pairs with indices [B, K]
    return tensor[rows, indices]


def batch_gather_one_hot(tensor, indices):
    _check_gather(tensor, indices)
    batch, rows = tensor.shape[0], tensor.shape[1]
    pick = F.one_hot(indices.long(), rows).float().reshape(batch, -1, rows)        # [B, K, N] of 0 and 1
    values = tensor.float().reshape(batch, rows, -1)                                # [B, N, F]
    return torch.bmm(pick, values).reshape(*indices.shape, *tensor.shape[2:])


def per_sample_grads_default_in_dims(model, params, x, y):
    def sample_loss(p, xi, yi):
        return F.cross_entropy(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(sample_loss))(params, x, y)          # in_dims left at 0: params are mapped over too


def per_sample_grads_argnums_1(model, params, x, y):
    def sample_loss(p, xi, yi):
        return F.cross_entropy(functional_call(model, p, (xi[None],)), yi[None])

    return vmap(grad(sample_loss, argnums=1), in_dims=(None, 0, 0))(params, x, y)


def masked_batch_mean_float_count(x, lengths):
    steps = torch.arange(x.shape[1], device=x.device)
    valid = steps[None, :] < lengths[:, None]                                       # [B, T]
    total = torch.where(valid.unsqueeze(-1), x, torch.zeros((), dtype=x.dtype, device=x.device)).sum(dim=1)
    count = valid.sum(dim=1, keepdim=True).float().clamp(min=1.0)                   # [B, 1]
    return total / count


# ------------------------------------------------------------------------------------------------ memory


def saved_bytes_default_element_size(model, x):
    per_element = torch.empty(0).element_size()           # the size of one element of a float tensor
    total = 0

    def pack(tensor):
        nonlocal total
        total += tensor.numel() * per_element
        return tensor

    def unpack(tensor):
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        output = model(x)
    return output, total


def saved_bytes_by_address(model, x):
    sizes = {}                                            # one entry per tensor in memory

    def pack(tensor):
        sizes[tensor.data_ptr()] = tensor.numel() * tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = model(x)
    return output, sum(sizes.values())


def checkpointed_forward_sequential(blocks, x):
    return checkpoint_sequential(blocks, len(blocks), x, use_reentrant=False)     # one segment per block


def most_expensive_op_first_row(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return prof.key_averages()[0].key                     # the first row, as if sorted like the table


def predict_frozen(model, x):
    for parameter in model.parameters():
        parameter.requires_grad_(False)                   # "freeze" the model for inference
    return model(x)


# ------------------------------------------------------------------------------------------------ modules


class AffineFromNumpy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.from_numpy(np.random.randn(1)))
        self.b = torch.nn.Parameter(torch.from_numpy(np.random.randn(1)))

    def forward(self, x):
        return self.a * x + self.b


def make_mlp_memoised_linear(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError(f"make_mlp needs at least two sizes, got {list(sizes)}")

    @functools.lru_cache(maxsize=None)
    def linear(n_in, n_out):
        return torch.nn.Linear(n_in, n_out)

    layers = [linear(sizes[0], sizes[1])]
    for n_in, n_out in zip(sizes[1:-1], sizes[2:]):
        layers += [activation(), linear(n_in, n_out)]
    return torch.nn.Sequential(*layers)


def fit_sgd_default_lr(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters())
    criterion = torch.nn.MSELoss()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


class NormalizerStd(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        mean, std = x.mean(0), x.std(0)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * std ** 2)
        return (x - mean) / torch.sqrt(std ** 2 + self.eps)


class NormalizerEvalWithoutEps(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / self.running_var.sqrt()
        var, mean = torch.var_mean(x, dim=0, correction=0)
        n = x.shape[0]
        with torch.no_grad():
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(var * n / (n - 1), self.momentum)
        return (x - mean) / torch.sqrt(var + self.eps)


# ------------------------------------------------------------------------------------------------ operators


def row_sum_reduce(x):
    return functools.reduce(torch.add, x)                 # adds the rows of x one after another


def row_sum_nan_as_zero(x):
    return torch.where(torch.isnan(x), torch.zeros_like(x), x).sum(dim=0)


def masked_mean_double_accumulator(x, low, high):
    inside = (x >= low) & (x <= high)
    total = torch.where(inside, x, 0).sum(dim=0, dtype=torch.float64)       # accumulate in double, for accuracy
    return total / inside.sum(dim=0).clamp(min=1)


def masked_mean_last_dim(x, low, high):
    inside = (low <= x) & (x <= high)
    return x.where(inside, 0).sum(-1) / inside.sum(-1).clamp(min=1)


# ------------------------------------------------------------------------------------------------ stability


def softmax_median_shift(logits, dim=-1):
    centre = logits.median(dim=dim, keepdim=True).values
    e = torch.exp(logits - centre)
    return e / e.sum(dim=dim, keepdim=True)


def ce_through_data(labels, logits, dim=-1):
    z = logits.data - logits.data.amax(dim=dim, keepdim=True)
    log_probs = z - torch.log(torch.exp(z).sum(dim=dim, keepdim=True))
    return -(labels * log_probs).sum(dim=dim)


class SoftplusExpOfOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * torch.exp(x) / torch.exp(y)  # sigmoid(x) = exp(x) / (1 + exp(x)) = exp(x) / exp(y)


class SoftplusLogNotLog1p(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.clamp(x, min=0) + torch.log(1 + torch.exp(-torch.abs(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


# ------------------------------------------------------------------------------------------------ broadcasting


class MergeSecondUnderNoGrad(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation

    def forward(self, a, b):
        first = self.linear1(a)
        with torch.no_grad():
            second = self.linear2(b)
        out = first + second
        return out if self.activation is None else self.activation(out)


class MergeActivationPerBranch(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation if activation is not None else (lambda t: t)

    def forward(self, a, b):
        return self.activation(self.linear1(a)) + self.activation(self.linear2(b))


def distances_einsum_norms(x, y):
    xx = torch.einsum("nd,nd->n", x, x)
    yy = torch.einsum("md,md->m", y, y)
    return (xx - 2 * torch.einsum("nd,md->nm", x, y) + yy).clamp(min=0)


def strict_mse_size_method(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"prediction has shape {prediction.size} but target has shape {target.size}")
    return F.mse_loss(prediction, target)


# ------------------------------------------------------------------------------------------------ basics


def grad_of_flag_attribute(f, x):
    x.requires_grad = True
    (gradient,) = torch.autograd.grad(outputs=f(x), inputs=x)
    return gradient


def fit_quadratic_sample_pool(generate_data, steps=1000, lr=0.1):
    pool = [generate_data() for _ in range(10)]           # a few samples drawn up front, used in turn
    w = torch.zeros(3, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for step in range(steps):
        x, y = pool[step % len(pool)]
        features = torch.stack((x ** 2, x, torch.ones_like(x)), 1)
        loss = ((features @ w - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


def fit_quadratic_adam_every_step(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    for _ in range(steps):
        x, y = generate_data()
        optimizer = torch.optim.Adam([w], lr=lr)          # a new Adam each step: its running averages restart
        features = torch.stack([x * x, x, torch.ones_like(x)], dim=-1)
        loss = F.mse_loss(features @ w, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


MISTAKES = {
    "vectorization": {
        # Right for indices [B, K] only: [B] broadcasts to [B, B], [B, K1, K2] fails; no mutant handles 2-D only.
        "batch_gather indexing with arange(B)[:, None]": ({"batch_gather": batch_gather_row_ids}, None),
        # A one-hot [B, K, N] times the rows, in float32: another dtype than the input's (another route).
        "batch_gather as a one-hot matrix product in float32": ({"batch_gather": batch_gather_one_hot},
                                                                "batch_gather changing the dtype"),
        # vmap's default in_dims=0 maps over params too: the wrong in_dims, by omission.
        "per_sample_grads with vmap's default in_dims": ({"per_sample_grads": per_sample_grads_default_in_dims},
                                                         "per_sample_grads with in_dims (None, 0, None)"),
        # grad(argnums=1) differentiates with respect to the sample, not params; no mutant does.
        "per_sample_grads with grad(argnums=1)": ({"per_sample_grads": per_sample_grads_argnums_1}, None),
        # The count from the mask, cast with .float(): float16 / float32 promotes, as the mutant's count.
        "masked_batch_mean dividing by the mask's count in float32": (
            {"masked_batch_mean": masked_batch_mean_float_count}, "masked_batch_mean dividing by a float32 count"),
    },
    "memory": {
        # element_size() of the default dtype's tensor is 4 whatever the saved tensor's dtype.
        "saved_bytes with the default dtype's element_size": ({"saved_bytes": saved_bytes_default_element_size},
                                                              "saved_bytes assumes 4 bytes per element"),
        # One entry per data_ptr: a tensor saved twice counts once (another route than the mutant's).
        "saved_bytes keyed by data_ptr": ({"saved_bytes": saved_bytes_by_address},
                                          "saved_bytes counts a tensor saved twice once"),
        # checkpoint_sequential runs its last segment plainly: the last block is not checkpointed; no mutant.
        "checkpointed_forward through checkpoint_sequential": (
            {"checkpointed_forward": checkpointed_forward_sequential}, None),
        # key_averages() is in order of first appearance, not sorted: the first operator run; no mutant.
        "most_expensive_op taking key_averages()[0]": ({"most_expensive_op": most_expensive_op_first_row}, None),
        # Freezes the caller's model instead of no_grad (and x's graph is still built); neither mutant's mistake.
        "predict freezing the parameters": ({"predict": predict_frozen}, None),
    },
    "modules": {
        # NumPy's randn is float64: float64 parameters, through from_numpy.
        "Affine with parameters from NumPy": ({"Affine": AffineFromNumpy}, "Affine with float64 parameters"),
        # lru_cache hands back the same Linear for the same sizes: one Linear reused (memoised, not a dict).
        "make_mlp with a memoised Linear factory": ({"make_mlp": make_mlp_memoised_linear},
                                                    "make_mlp reusing one Linear for layers of equal size"),
        # SGD(model.parameters()) without lr= runs at SGD's default 0.001: the lr given is ignored.
        "fit with SGD's default lr": ({"fit": fit_sgd_default_lr}, "fit ignoring lr"),
        # x.std(0) is unbiased by default: normalises with the unbiased variance (running_var is right).
        "Normalizer normalising by x.std(0)": ({"Normalizer": NormalizerStd},
                                               "Normalizer normalising with the unbiased variance"),
        # eps left out in eval only; the eps mutant puts it outside the root, no mutant drops it.
        "Normalizer without eps in eval mode": ({"Normalizer": NormalizerEvalWithoutEps}, None),
    },
    "operators": {
        # reduce(torch.add, x) iterates over the rows as built-in sum does: a Python loop over the rows.
        "row_sum through functools.reduce": ({"row_sum": row_sum_reduce}, "row_sum with Python's sum"),
        # NaN replaced by 0 before summing: nansum by another route.
        "row_sum with NaN set to 0 by where": ({"row_sum": row_sum_nan_as_zero}, "row_sum skipping NaN"),
        # sum(dtype=float64) for the total: a float64 result whatever x's dtype.
        "masked_mean accumulating in float64": ({"masked_mean": masked_mean_double_accumulator},
                                                "masked_mean in float64"),
        # Reduces over the last dim instead of dim 0; no masked_mean mutant reduces another dim.
        "masked_mean over the last dim": ({"masked_mean": masked_mean_last_dim}, None),
    },
    "stability": {
        # Shifting by the median, not the max: still overflows (the mutant shifts by the mean).
        "softmax shifted by the median": ({"stable_softmax": softmax_median_shift},
                                          "softmax with NaN for float16 input"),
        # logits.data cuts the graph: detached logits by another spelling.
        "cross-entropy through logits.data": ({"softmax_cross_entropy": ce_through_data},
                                              "cross-entropy with detached logits"),
        # exp(x) / exp(softplus(x)) is inf / inf = NaN for large x, as exp(x) / (1 + exp(x)).
        "Softplus backward as exp(x) / exp(output)": (
            {"Softplus": SoftplusExpOfOutput, "softplus": SoftplusExpOfOutput.apply},
            "softplus backward as exp(x) / (1 + exp(x))"),
        # The stable form with log(1 + ...) instead of log1p: 0 for very negative x (inaccurate, never inf).
        "Softplus forward with log instead of log1p": (
            {"Softplus": SoftplusLogNotLog1p, "softplus": SoftplusLogNotLog1p.apply}, None),
    },
    "broadcasting": {
        # linear2 under no_grad: that layer gets no gradient, as a detached output.
        "Merge running linear2 under no_grad": ({"Merge": MergeSecondUnderNoGrad}, "Merge detaching linear2's output"),
        # activation(l1(a)) + activation(l2(b)): the activation on each branch; no mutant.
        "Merge activating each branch": ({"Merge": MergeActivationPerBranch}, None),
        # einsum gives row norms of shape [N] and [M]: the missing keepdim by another route.
        "pairwise distances with einsum row norms": ({"pairwise_sq_distances": distances_einsum_norms},
                                                     "distances with row norms missing keepdim"),
        # .size not called: the message shows a bound method, not the shapes.
        "strict_mse_loss's message with .size uncalled": ({"strict_mse_loss": strict_mse_size_method},
                                                          "loss with a message that names no shape"),
    },
    "basics": {
        # requires_grad set as an attribute on the caller's x and left on.
        "grad_of setting x.requires_grad = True": ({"grad_of": grad_of_flag_attribute},
                                                   "grad_of leaving requires_grad set on x"),
        # Ten samples drawn up front and cycled: no fresh sample per step, as the mutant's single sample.
        "fit_quadratic cycling a pool of samples": ({"fit_quadratic": fit_quadratic_sample_pool},
                                                    "fit_quadratic on one sample"),
        # A new Adam every step restarts its running averages: sign-like steps of size lr; no mutant.
        "fit_quadratic creating Adam inside the loop": ({"fit_quadratic": fit_quadratic_adam_every_step}, None),
    },
}
