"""A fifth, blind set of mistakes for measuring the named-mistake hint (docs/feedback.md, "How often the hint is
right").

``MISTAKES = {topic: {what it is: (replacement objects, truth)}}``, 30 mistakes in seven topics (vectorization 5,
memory 5, modules 5, operators 4, stability 4, broadcasting 4, basics 3), in the format of ``second_set.py``:
``truth`` is the id of the mutant (``tests/mutants/<topic>.py``) that is the same mistake, or ``None`` when no mutant
is (then the right hint names nothing).

How it was made (2026-11-25): each mistake was written from the notebook's own text
(``source/<topic>/<topic>.ipynb``: its markdown, its contracts and exercise stubs) as a student reading it might
write it, with the signatures of ``tests/alternatives/<topic>.py``, in code that is no mutant's body, and none of
the four earlier sets' mistakes again (or only by a clearly different route). 20 are a mutant's mistake written
another way, one mutant each, several of them by a markedly different route (a ``checkpoint_sequential`` inside each
block, ``no_grad`` around a clone of the output only, one weight split between the two inputs, ``nan_to_num`` on the
bounds, Python's ``all``, ``exp(log_softmax)``, ``-log(sigmoid(-x))``, a hand-written gradient step, a round trip
through ``tolist``); 10 are mistakes that no mutant makes (truth ``None``): ``nll_loss`` on raw logits, the real
steps read from the end of each row, one checkpoint around every block, the self time per call, ``zero_grad``
between backward and step, the activation before the first layer, ``sum(dtype=x.dtype)``, a shift by the largest
magnitude, a root mean squared error, ``grad_of`` under ``no_grad``. Every truth was written down, from the mutants'
``DESCRIPTIONS`` only, before anything was graded; the grader's signature files
(``autograder/checks/*/mistakes.py``), its matching internals and any earlier measurement were not read. The author
did not grade the set: each function was only run on small inputs of the author's own, to check that it runs and
differs from a correct answer (a few may lose no point on the grader's inputs: the right hint then names nothing).
Nobody had graded it when it was committed.
"""

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

# ------------------------------------------------------------------------------------------------ vectorization


def batch_gather_torch_gather(tensor, indices):
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError(f"batch size of indices ({indices.shape[0]}) != batch size of tensor ({tensor.shape[0]})")
    if indices.numel() and (indices.min() < 0 or indices.max() >= tensor.shape[1]):
        raise IndexError(f"an index is outside [0, {tensor.shape[1]})")
    return torch.gather(tensor, 1, indices.long())        # as in the docs' 2-D example: no *F


def batch_gather_bare_value_error(tensor, indices):
    if len(indices) != len(tensor):
        raise ValueError
    if indices.numel() and not bool(((indices >= 0) & (indices < tensor.shape[1])).all()):
        raise IndexError(f"index out of range [0, {tensor.shape[1]})")
    starts = torch.arange(tensor.shape[0], device=tensor.device) * tensor.shape[1]
    starts = starts.view(-1, *[1] * (indices.dim() - 1))
    return tensor.flatten(0, 1)[indices + starts]


def per_sample_grads_averaged(model, params, x, y):
    def loss_of_one(p, sample, target):
        return F.cross_entropy(functional_call(model, p, (sample.unsqueeze(0),)), target.unsqueeze(0))

    grads = vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
    return dict(zip(grads, map(lambda g: g / len(x), grads.values())))      # "averaged over the batch"


def per_sample_grads_nll_on_logits(model, params, x, y):
    def loss_of_one(p, sample, target):
        logits = functional_call(model, p, (sample[None],))
        return F.nll_loss(logits, target[None])           # no log_softmax before it

    return vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)


def masked_batch_mean_left_padded(x, lengths):
    steps = torch.arange(x.shape[1], device=x.device)
    real = steps[None, :] >= x.shape[1] - lengths[:, None]           # the last lengths[b] steps, as if left-padded
    total = torch.where(real[..., None], x, torch.zeros((), dtype=x.dtype, device=x.device)).sum(1)
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)


# ------------------------------------------------------------------------------------------------ memory


def saved_bytes_unpack_no_return(model, x):
    counted = [0]

    def pack(tensor):
        counted[0] += tensor.numel() * tensor.element_size()
        return tensor

    def unpack(tensor):
        tensor                                            # forgot the return

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = model(x)
    return out, counted[0]


def checkpointed_forward_sequential_inside(blocks, x):
    h = x
    for block in blocks:                                  # each block split into one segment per layer
        h = checkpoint_sequential(block, len(block), h, use_reentrant=False)
    return h


def checkpointed_forward_one_checkpoint(blocks, x):
    def run_all(h):
        for block in blocks:
            h = block(h)
        return h

    return checkpoint(run_all, x, use_reentrant=False)    # the whole stack under one checkpoint


def most_expensive_op_per_call(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return max(prof.key_averages(), key=lambda e: e.self_cpu_time_total / max(e.count, 1)).key


def predict_no_grad_clone(model, x):
    output = model(x)
    with torch.no_grad():
        return output.clone()                             # the copy has no graph


# ------------------------------------------------------------------------------------------------ modules


class AffineFloatOfParameters(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(1))
        self.b = torch.nn.Parameter(torch.randn(1))

    def forward(self, x):
        return float(self.a) * x + float(self.b)


def make_mlp_activation_first(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError(f"need at least two sizes, got {sizes}")
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [activation(), torch.nn.Linear(n_in, n_out)]     # an activation before each Linear
    return torch.nn.Sequential(*layers)


def fit_returning_detached_loss(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return loss.detach()


def fit_zero_grad_before_step(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss = None
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
    return loss.item()


class NormalizerOneVariance(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        mu = x.sum(0) / x.shape[0]
        sigma2 = ((x - mu) ** 2).sum(0) / x.shape[0]
        with torch.no_grad():
            m = self.momentum
            self.running_mean.copy_((1 - m) * self.running_mean + m * mu)
            self.running_var.copy_((1 - m) * self.running_var + m * sigma2)
        return (x - mu) / torch.sqrt(sigma2 + self.eps)


# ------------------------------------------------------------------------------------------------ operators


def row_sum_through_tolist(x):
    return torch.tensor(x.tolist()).sum(dim=0)


def row_sum_keeping_dtype(x):
    return x.sum(dim=0, dtype=x.dtype)


def masked_mean_nan_to_num_bounds(x, low, high):
    low = torch.nan_to_num(torch.as_tensor(low, dtype=x.dtype, device=x.device))
    high = torch.nan_to_num(torch.as_tensor(high, dtype=x.dtype, device=x.device))
    inside = (x >= low) & (x <= high)
    count = inside.sum(0)
    return torch.where(inside, x, 0).sum(0) / count.clamp(min=1)


def masked_mean_builtin_all(x, low, high):
    inside = all((x >= low, x <= high))
    total = torch.where(inside, x, torch.zeros_like(x)).sum(0)
    return total / torch.as_tensor(inside).sum(0).clamp(min=1)


# ------------------------------------------------------------------------------------------------ stability


def softmax_exp_of_log_softmax(logits, dim=-1):
    return torch.log_softmax(logits, dim=dim).exp()


def softmax_shift_by_largest_magnitude(logits, dim=-1):
    shifted = logits - logits.abs().amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)


def ce_logsumexp_method(labels, logits, dim=-1):
    return -(labels * (logits - logits.logsumexp(dim=dim, keepdim=True))).sum(dim=dim)


class SoftplusMinusLogSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return -torch.log(torch.sigmoid(-x))              # softplus(x) = -log(sigmoid(-x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


# ------------------------------------------------------------------------------------------------ broadcasting


class MergeSplitWeight(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.split = in_features1
        self.linear = torch.nn.Linear(in_features1 + in_features2, out_features)
        self.activation = activation

    def forward(self, a, b):
        weight = self.linear.weight
        out = F.linear(a, weight[:, :self.split], self.linear.bias) + F.linear(b, weight[:, self.split:])
        return out if self.activation is None else self.activation(out)


def distances_cdist_p1(x, y):
    return torch.cdist(x, y, p=1)


def strict_mse_through_float(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"prediction has shape {tuple(prediction.shape)} but target has shape {tuple(target.shape)}")
    value = float(((prediction - target) ** 2).mean())
    return torch.tensor(value, dtype=prediction.dtype, device=prediction.device)


def strict_mse_root(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"prediction has shape {tuple(prediction.shape)} but target has shape {tuple(target.shape)}")
    return torch.sqrt(((prediction - target) ** 2).mean())


# ------------------------------------------------------------------------------------------------ basics


def to_numpy_default_dtype(t):
    return t.detach().cpu().to(torch.get_default_dtype()).numpy()


def fit_quadratic_hand_step(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    for _ in range(steps):
        x, y = generate_data()
        features = torch.stack([x ** 2, x, torch.ones_like(x)], dim=1)
        loss = ((features @ w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            w.grad.zero_()
    return w.detach()


def grad_of_under_no_grad(f, x):
    with torch.no_grad():                                 # "so that x is not touched"
        leaf = x.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(f(leaf), leaf)
    return g


MISTAKES = {
    "vectorization": {
        # torch.gather with indices of the shape [B, K] only: the trailing *F dims are not handled (gather needs them).
        "batch_gather through torch.gather without the trailing dims": (
            {"batch_gather": batch_gather_torch_gather}, "batch_gather ignoring trailing dims"),
        # A bare `raise ValueError` says nothing of what is wrong, as the mutant's silent ValueError.
        "batch_gather raising a bare ValueError": ({"batch_gather": batch_gather_bare_value_error},
                                                   "batch_gather with a silent ValueError"),
        # Each sample's gradient divided by B afterwards "to average" (the mutant divides the loss instead).
        "per_sample_grads dividing the gradients by B": ({"per_sample_grads": per_sample_grads_averaged},
                                                     "per_sample_grads divided by the batch size"),
        # nll_loss on raw logits (no log_softmax): the gradient of -logit[y]; no mutant changes the loss function.
        "per_sample_grads with nll_loss on the logits": ({"per_sample_grads": per_sample_grads_nll_on_logits}, None),
        # The real steps taken at the end of each row (left padding), not the first lengths[b]; no mutant.
        "masked_batch_mean reading the last lengths[b] steps": ({"masked_batch_mean": masked_batch_mean_left_padded},
                                                                None),
    },
    "memory": {
        # unpack without a return gives None back to autograd: backward fails.
        "saved_bytes with an unpack that forgets to return": ({"saved_bytes": saved_bytes_unpack_no_return},
                                                              "saved_bytes's unpack returns None"),
        # checkpoint_sequential(block, len(block)) makes one segment per layer (another route than a loop of layers).
        "checkpointed_forward checkpointing each block's layers with checkpoint_sequential": (
            {"checkpointed_forward": checkpointed_forward_sequential_inside},
            "checkpointed_forward checkpoints every layer on its own"),
        # One checkpoint around the whole stack, not one per block; no mutant does that.
        "checkpointed_forward with one checkpoint around every block": (
            {"checkpointed_forward": checkpointed_forward_one_checkpoint}, None),
        # Self time per call (total / count) ranks a rare, slow call first; neither total time nor call count.
        "most_expensive_op by self time per call": ({"most_expensive_op": most_expensive_op_per_call}, None),
        # The graph is built during model(x); only the copy is made under no_grad: a detached result, another route.
        "predict cloning the output under no_grad": ({"predict": predict_no_grad_clone},
                                                     "predict detaches the result instead of no_grad"),
    },
    "modules": {
        # float(parameter) is .item() by another spelling: it cuts the graph.
        "Affine with float() of its parameters": ({"Affine": AffineFloatOfParameters},
                                                  "Affine calling .item() in forward"),
        # An activation before every Linear (the first included), none after the last; no mutant.
        "make_mlp with the activation before each layer": ({"make_mlp": make_mlp_activation_first}, None),
        # loss.detach() is still a tensor, not a Python float.
        "fit returning loss.detach()": ({"fit": fit_returning_detached_loss}, "fit returning a tensor"),
        # zero_grad between backward and step: the step sees zero gradients, nothing trains; no mutant.
        "fit zeroing the gradients between backward and step": ({"fit": fit_zero_grad_before_step}, None),
        # One variance by hand (divided by N) used for the running update too: biased running_var.
        "Normalizer with one hand-written variance for both": ({"Normalizer": NormalizerOneVariance},
                                                              "Normalizer updating running_var with the biased "
                                                              "variance"),
    },
    "operators": {
        # A round trip through Python lists: leaves torch as NumPy does (dtype rules, device, graph lost).
        "row_sum through tolist": ({"row_sum": row_sum_through_tolist}, "row_sum through NumPy"),
        # sum(dtype=x.dtype) keeps int8 / bool instead of promoting to int64; no mutant.
        "row_sum keeping the input's dtype": ({"row_sum": row_sum_keeping_dtype}, None),
        # nan_to_num turns an infinite bound into the dtype's largest finite value: clipped infinite bounds.
        "masked_mean with nan_to_num on the bounds": ({"masked_mean": masked_mean_nan_to_num_bounds},
                                                      "masked_mean clipping infinite bounds"),
        # Python's all() calls bool() on each comparison, as `and` does.
        "masked_mean combining the comparisons with all()": ({"masked_mean": masked_mean_builtin_all},
                                                             "masked_mean with Python's and"),
    },
    "stability": {
        # exp(log_softmax): a built-in softmax by another spelling.
        "softmax as exp of log_softmax": ({"stable_softmax": softmax_exp_of_log_softmax},
                                          "softmax calling F.softmax"),
        # Shift by the largest |logit|: a row of large negatives underflows to 0 / 0; no mutant.
        "softmax shifted by the largest magnitude": ({"stable_softmax": softmax_shift_by_largest_magnitude}, None),
        # Tensor.logsumexp is the built-in log-sum-exp as a method.
        "cross-entropy with the logsumexp method": ({"softmax_cross_entropy": ce_logsumexp_method},
                                                    "cross-entropy calling torch.logsumexp"),
        # -log(sigmoid(-x)) is inf for large x (sigmoid underflows): overflows for large x as log1p(exp(x)) does.
        "Softplus forward as -log(sigmoid(-x))": ({"Softplus": SoftplusMinusLogSigmoid,
                                                   "softplus": SoftplusMinusLogSigmoid.apply},
                                                  "softplus as log1p(exp(x))"),
    },
    "broadcasting": {
        # One Linear on in1 + in2 features, its weight split between a and b: one layer, not linear1 and linear2.
        "Merge with one Linear whose weight is split": ({"Merge": MergeSplitWeight},
                                                        "Merge as one linear layer on the concatenation"),
        # cdist with p=1 sums absolute differences.
        "pairwise distances with cdist(p=1)": ({"pairwise_sq_distances": distances_cdist_p1},
                                               "distances as L1 sums"),
        # float() of the mean and a new tensor: .item() by another spelling, the graph cut.
        "strict_mse_loss through float()": ({"strict_mse_loss": strict_mse_through_float}, "loss through .item()"),
        # The root of the mean squared error; no mutant.
        "strict_mse_loss as a root mean squared error": ({"strict_mse_loss": strict_mse_root}, None),
    },
    "basics": {
        # The default dtype (float32) for every tensor: float32 whatever the dtype.
        "to_numpy through the default dtype": ({"to_numpy": to_numpy_default_dtype}, "to_numpy always float32"),
        # A hand-written gradient step instead of Adam: plain gradient descent, as SGD.
        "fit_quadratic with a hand-written gradient step": ({"fit_quadratic": fit_quadratic_hand_step},
                                                            "fit_quadratic with SGD"),
        # autograd.grad under no_grad: f(leaf) has no graph, so it raises; no mutant.
        "grad_of under no_grad": ({"grad_of": grad_of_under_no_grad}, None),
    },
}
