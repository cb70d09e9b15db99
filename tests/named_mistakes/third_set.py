"""A third, blind set of mistakes for measuring the named-mistake hint (docs/feedback.md, "How often the hint is
right").

``MISTAKES = {topic: {what it is: (replacement objects, truth)}}``, 24 mistakes in seven topics (vectorization 5,
memory 4, modules 4, operators 3, stability 3, broadcasting 3, basics 2), in the format of ``second_set.py``:
``truth`` is the id of the mutant (``tests/mutants/<topic>.py``) that is the same mistake, or ``None`` when no mutant
is.

How it was made (2026-11-25): each mistake was written from the notebook's own text (``source/<topic>/<topic>.ipynb``:
its markdown, its contracts and exercise stubs) as a student reading it might write it, with the signatures of
``tests/alternatives/<topic>.py``, in code that is no mutant's body and no mistake of the first two sets
(``tests/named_mistakes/<topic>.py``, ``second_set.py``): 16 are a mutant's mistake reached another way (``map`` over
the rows, a closure over the whole batch, a slice by ``lengths.max()``, ``storage().size()``, ``collections.Counter``
of the events, ``train(False)``, ``lerp_`` with the weights swapped, ``copy_`` outside ``no_grad``,
``sum(dtype=...)``, a 0/1 weight tensor, ``unsqueeze(-1)`` after a reduction, ``expand`` with no ``cat``, ``addmm``
with no clamp, Adam's default lr ...), 8 are mistakes that no mutant makes (truth ``None``), several of them from
details the notebooks stress (a lambda handed to ``checkpoint``, run again in backward after the loop has moved on; "a
position with no entry in range gets 0, not NaN" made true with ``nan_to_num``; "give reductions an explicit dim" in a
loss that must be 0-d; ``1 / (1 + exp(-x))`` with its minus lost; a ``[T, B]`` mask reshaped instead of transposed).
Every truth was written down, from the mutants' ``DESCRIPTIONS`` only, before anything was graded; the grader's
signature files (``autograder/checks/*/mistakes.py``) were not read. The author did not grade the set: each function
was only run on small inputs of the author's own, to check that it runs and differs from a correct answer. Nobody had
graded it when it was committed.
"""

import collections

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint

# ------------------------------------------------------------------------------------------------ vectorization


def batch_gather_map_over_rows(tensor, indices):
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError(f"indices has batch size {indices.shape[0]} but tensor has batch size {tensor.shape[0]}")
    if indices.numel() and (indices.min() < 0 or indices.max() >= tensor.shape[1]):
        raise IndexError(f"indices must lie in [0, {tensor.shape[1]})")
    return torch.stack(list(map(lambda rows, picked: rows[picked], tensor, indices)))     # one row at a time


def batch_gather_asserts(tensor, indices):
    batch, rows = tensor.shape[:2]
    assert indices.shape[0] == batch, f"batch sizes differ: {indices.shape[0]} and {batch}"
    assert bool(((indices >= 0) & (indices < rows)).all()), f"indices must lie in [0, {rows})"
    offsets = (torch.arange(batch, device=tensor.device) * rows).view(-1, *([1] * (indices.dim() - 1)))
    return tensor.reshape(batch * rows, *tensor.shape[2:])[indices + offsets]


def per_sample_grads_closure_over_batch(model, params, x, y):
    def sample_loss(p, xi, yi):
        logits = functional_call(model, p, (x,))          # the batch from the enclosing scope, not xi
        return F.cross_entropy(logits, y)

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def masked_batch_mean_sliced_to_longest(x, lengths):
    x = x[:, :lengths.max()]                             # a 0-d tensor as a slice bound: a Python int under it
    kept = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
    total = torch.where(kept[..., None], x, torch.zeros_like(x)).sum(dim=1)
    return total / lengths.clamp(min=1).to(x.dtype).unsqueeze(1)


def masked_batch_mean_mask_reshaped(x, lengths):
    batch, steps = x.shape[0], x.shape[1]
    kept = torch.arange(steps, device=x.device)[:, None] < lengths[None, :]    # [T, B]
    kept = kept.reshape(batch, steps)                                           # reshape, not transpose
    total = torch.where(kept.unsqueeze(-1), x, torch.zeros_like(x)).sum(dim=1)
    return total / lengths.clamp(min=1).to(x.dtype).unsqueeze(1)


# ------------------------------------------------------------------------------------------------------- memory


def saved_bytes_typed_storage(model, x):
    sizes = []

    def pack(t):
        sizes.append(t.storage().size() * t.element_size())     # the storage's elements, not the tensor's
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, sum(sizes)


def most_expensive_op_most_frequent(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    calls = collections.Counter(event.name for event in prof.events())
    return calls.most_common(1)[0][0]


def predict_train_false(model, x):
    model.train(False)                 # the same as model.eval(): gradient tracking stays on
    return model(x)


def checkpointed_forward_late_lambda(blocks, x):
    h = x
    for block in blocks:
        h = checkpoint(lambda inp: block(inp), h, use_reentrant=False)   # `block` is looked up when called again
    return h


# ------------------------------------------------------------------------------------------------------ modules


def fit_flat_prediction(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x).view(-1), y)          # [N] against a [N, 1] target
        loss.backward()
        optimizer.step()
    return loss.item()


class NormalizerLerpSwapped(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        mean = x.mean(0)
        var = x.var(0, unbiased=False)
        with torch.no_grad():
            self.running_mean.lerp_(mean, 1 - self.momentum)               # weight of the new value: 1 - momentum
            self.running_var.lerp_(x.var(0, unbiased=True), 1 - self.momentum)
        return (x - mean) / torch.sqrt(var + self.eps)


class NormalizerCopyWithHistory(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        m = self.momentum
        mean, var = x.mean(0), x.var(0, correction=0)
        unbiased = x.var(0, correction=1)
        self.running_mean.copy_((1 - m) * self.running_mean + m * mean)      # in place, but outside no_grad
        self.running_var.copy_((1 - m) * self.running_var + m * unbiased)
        return (x - mean) / torch.sqrt(var + self.eps)


class AffineAsLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)              # an affine map is a Linear: parameters linear.weight/.bias

    def forward(self, x):
        return self.linear(x.unsqueeze(-1)).squeeze(-1)


# ---------------------------------------------------------------------------------------------------- operators


def row_sum_float32_accumulator(x):
    return torch.sum(x, dim=0, dtype=torch.float32)


def masked_mean_weighted(x, low, high):
    inside = (x >= low) & (x <= high)
    weights = torch.where(inside, torch.ones_like(x), torch.zeros_like(x))
    return (weights * x).sum(dim=0) / weights.sum(dim=0).clamp(min=1)     # 0 * inf and 0 * nan are NaN


def masked_mean_nan_to_num(x, low, high):
    inside = (x >= low) & (x <= high)
    mean = torch.where(inside, x, torch.zeros_like(x)).sum(dim=0) / inside.sum(dim=0)
    return torch.nan_to_num(mean)                        # 0 for 0 / 0, but also inf -> the largest float


# ---------------------------------------------------------------------------------------------------- stability


def softmax_sum_over_last(logits, dim=-1):
    shifted = logits - logits.amax(dim=dim, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(-1, keepdim=True)                    # the example's -1, not dim


def ce_log_sum_unsqueezed_last(labels, logits, dim=-1):
    z = logits - logits.amax(dim=dim, keepdim=True)
    log_norm = torch.log(torch.exp(z).sum(dim=dim)).unsqueeze(-1)        # the dim put back at the end
    return -(labels * (z - log_norm)).sum(dim=dim)


class SoftplusSignSlip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / (1 + torch.exp(x))          # 1 / (1 + exp(-x)) with its minus lost: sigmoid(-x)


# ------------------------------------------------------------------------------------------------- broadcasting


class MergeExpandedInputs(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation

    def forward(self, a, b):
        batch = torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])
        a = a.expand(*batch, a.shape[-1])                # the shapes made equal first "to be safe"
        b = b.expand(*batch, b.shape[-1])
        h = self.linear1(a) + self.linear2(b)
        return h if self.activation is None else self.activation(h)


def distances_addmm_unclamped(x, y):
    norms = (x ** 2).sum(1, keepdim=True) + (y ** 2).sum(1)             # [N, 1] + [M] -> [N, M]
    return torch.addmm(norms, x, y.T, alpha=-2)


def strict_mse_mean_over_dim0(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"prediction has shape {list(prediction.shape)} but target has shape "
                         f"{list(target.shape)}")
    return ((prediction - target) ** 2).mean(dim=0)       # "an explicit dim": a vector for 2-D inputs


# ------------------------------------------------------------------------------------------------------- basics


def fit_quadratic_default_lr(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    optimizer = torch.optim.Adam([w])                    # lr not passed: Adam's default 0.001
    for _ in range(steps):
        x, y = generate_data()
        features = torch.stack([x ** 2, x, torch.ones_like(x)], dim=1)
        loss = ((features @ w - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


def fit_quadratic_no_zero_grad(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        x, y = generate_data()
        prediction = w[0] * x ** 2 + w[1] * x + w[2]
        loss = F.mse_loss(prediction, y)
        loss.backward()                                  # w.grad never cleared: it adds up over the steps
        optimizer.step()
    return w.detach()


MISTAKES = {
    "vectorization": {
        # map() over the rows is a Python loop over the batch, whatever its spelling.
        "batch_gather mapping over the rows": ({"batch_gather": batch_gather_map_over_rows},
                                               "batch_gather as a Python loop"),
        # assert for both checks: AssertionError where the contract asks a ValueError; no batch_gather mutant asserts.
        "batch_gather checking with assert": ({"batch_gather": batch_gather_asserts}, None),
        # The loss reads the enclosing x and y: every sample gets the gradient of the batch's (mean) loss.
        "per_sample_grads with the batch's x and y in the loss": (
            {"per_sample_grads": per_sample_grads_closure_over_batch}, "per_sample_grads of the batch's summed loss"),
        # Slicing by a tensor calls __index__: a Python number from lengths, as .item() does, a graph break.
        "masked_batch_mean slicing x to lengths.max()": ({"masked_batch_mean": masked_batch_mean_sliced_to_longest},
                                                         "masked_batch_mean calling .item() on lengths"),
        # The [T, B] mask reshaped to [B, T] (not transposed): the wrong steps kept; no mutant scrambles the mask.
        "masked_batch_mean with a [T, B] mask reshaped": ({"masked_batch_mean": masked_batch_mean_mask_reshaped},
                                                          None),
    },
    "memory": {
        # storage().size() counts the storage's elements: a view's whole storage, as the mutant.
        "saved_bytes through storage().size()": ({"saved_bytes": saved_bytes_typed_storage},
                                                 "saved_bytes counts a view's whole storage"),
        # The most frequent event name: the most called operator, not the most expensive.
        "most_expensive_op as the most frequent event": ({"most_expensive_op": most_expensive_op_most_frequent},
                                                         "most_expensive_op returns the most called operator"),
        # train(False) is eval(): a mode, not no_grad.
        "predict with model.train(False)": ({"predict": predict_train_false},
                                            "predict switches to eval mode instead of no_grad"),
        # Every block checkpointed with use_reentrant=False, but backward recomputes the last block each time:
        # wrong gradients with no dropout at all; no mutant recomputes another block.
        "checkpointed_forward through a late-binding lambda": (
            {"checkpointed_forward": checkpointed_forward_late_lambda}, None),
    },
    "modules": {
        # view(-1) flattens the [N, 1] prediction: [N] against [N, 1] broadcasts to [N, N], as squeeze does.
        "fit with the prediction flattened by view(-1)": ({"fit": fit_flat_prediction},
                                                          "fit with a squeezed prediction"),
        # lerp_(new, 1 - momentum) keeps momentum of the old value: the momentum the other way round.
        "Normalizer with lerp_ weighted 1 - momentum": ({"Normalizer": NormalizerLerpSwapped},
                                                        "Normalizer applying momentum the other way round"),
        # copy_ outside no_grad from the batch statistics: the buffers take the graph's history.
        "Normalizer updating with copy_ outside no_grad": (
            {"Normalizer": NormalizerCopyWithHistory},
            "Normalizer updating running statistics with gradient history"),
        # Registered and trained, but as linear.weight [1, 1] and linear.bias, not a and b; no mutant wraps a Linear.
        "Affine as an nn.Linear(1, 1)": ({"Affine": AffineAsLinear}, None),
    },
    "operators": {
        # sum(dtype=float32) converts whatever the input's dtype (float64, integers, bool).
        "row_sum with sum(dtype=torch.float32)": ({"row_sum": row_sum_float32_accumulator},
                                                  "row_sum always in float32"),
        # A 0/1 weight tensor times x: multiplying by the mask, NaN and inf outside the range reach the sum.
        "masked_mean as a weighted mean with 0/1 weights": ({"masked_mean": masked_mean_weighted},
                                                            "masked_mean multiplying by the mask"),
        # nan_to_num fixes 0 / 0, but turns an infinite mean into the largest float (and inf - inf into 0);
        # no mutant changes an infinite mean.
        "masked_mean cleaned with nan_to_num": ({"masked_mean": masked_mean_nan_to_num}, None),
    },
    "stability": {
        # Max along dim, sum along -1: a sum over another dim than `dim`.
        "softmax normalising by a sum over -1": ({"stable_softmax": softmax_sum_over_last},
                                                 "softmax summing over the wrong dim"),
        # The log-sum reduced without keepdim and put back at the end: the wrong axis when dim is not the last.
        "cross-entropy with the log-sum unsqueezed at -1": (
            {"softmax_cross_entropy": ce_log_sum_unsqueezed_last}, "cross-entropy without keepdim in the log-sum"),
        # backward gives sigmoid(-x), stable and finite but the wrong derivative; no mutant flips the sign.
        "Softplus backward as 1 / (1 + exp(x))": ({"Softplus": SoftplusSignSlip, "softplus": SoftplusSignSlip.apply},
                                                  None),
    },
    "broadcasting": {
        # expand to the batch shape before the layers: tiled inputs (the tiling mutants share one description).
        "Merge expanding both inputs before its layers": ({"Merge": MergeExpandedInputs}, "Merge via expand and cat"),
        # The expanded square through addmm, never clamped: small negative distances.
        "pairwise distances through addmm, unclamped": ({"pairwise_sq_distances": distances_addmm_unclamped},
                                                        "distances from the expanded square without clamping"),
        # The shape check is right; mean(dim=0) is not 0-d for 2-D inputs; no mutant reduces one dim only.
        "strict_mse_loss averaging over dim 0": ({"strict_mse_loss": strict_mse_mean_over_dim0}, None),
    },
    "basics": {
        # Adam([w]) without lr= runs at 0.001 whatever lr is given.
        "fit_quadratic with Adam's default lr": ({"fit_quadratic": fit_quadratic_default_lr},
                                                 "fit_quadratic ignoring lr"),
        # No zero_grad: the gradients add up across steps; the zero_grad mutant is fit's (modules), not this one's.
        "fit_quadratic never zeroing w.grad": ({"fit_quadratic": fit_quadratic_no_zero_grad}, None),
    },
}
