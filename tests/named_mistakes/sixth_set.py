"""A sixth, blind set of mistakes for measuring the named-mistake hint (docs/feedback.md, "How often the hint is
right").

``MISTAKES = {topic: {what it is: (replacement objects, truth)}}``, 30 mistakes in seven topics (vectorization 5,
memory 5, modules 5, operators 4, stability 4, broadcasting 4, basics 3), in the format of ``second_set.py``:
``truth`` is the id of the mutant (``tests/mutants/<topic>.py``) that is the same mistake, or ``None`` when no mutant
is (then the right hint names nothing).

How it was made (2026-11-25): each mistake was written from the notebook's own text
(``source/<topic>/<topic>.ipynb``: its markdown, its contracts and exercise stubs) as a student reading it might
write it, with the signatures of ``tests/alternatives/<topic>.py``, in code that is no mutant's body, and none of
the five earlier sets' mistakes again (or only by a clearly different route). 20 are a mutant's mistake written
another way, one mutant each, most of them mutants no earlier set had aimed at, 12 of them by a markedly
different route (indices taken modulo N "as Python counts from the end", the params loaded into the model with
``load_state_dict`` and the model called directly, ``saved_tensors_hooks`` built but never entered,
``checkpoint_sequential`` with one segment, ``torch.addcmul`` with its arguments in the wrong order, a sign test
``(x - low) * (high - x) > 0``, ``x - log(sigmoid(x))``, a masked assignment over a branch that overflows,
``cdist`` in float64 squared, a prediction ``view``-ed to the target's shape, a third bias made from ``b1 + b2``,
forward differences over the basis vectors); 10 are mistakes that no mutant makes (truth ``None``): the offsets
``b * B`` instead of ``b * N``, prefix sums read at ``lengths - 1`` clamped at 0, the profile sorted without
``reverse=True``, ``x @ w.T``, ``make_mlp`` leaving short sizes to an ``IndexError``, ``running_var`` started at
zeros, ``x >= low & x <= high`` without parentheses, a cross-entropy without its minus sign, an ``activation()``
called as if it were a class, inputs rescaled and the coefficients of the rescaled problem returned. Every truth
was written down, from the mutants' ``DESCRIPTIONS`` only, before anything was graded; the grader's signature files
(``autograder/checks/*/mistakes.py``), its matching internals, its ``known=`` tables and any earlier measurement
were not read. The author did not grade the set: each function was only run on small inputs of the author's own,
to check that it runs and differs from a correct answer (a few may lose no point on the grader's inputs: the right
hint then names nothing). Nobody had graded it when it was committed.
"""

import torch
import torch.nn.functional as F
from torch.func import grad, vmap
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

# ------------------------------------------------------------------------------------------------ vectorization


def batch_gather_indices_modulo(tensor, indices):
    batch, rows = tensor.shape[0], tensor.shape[1]
    if indices.shape[0] != batch:
        raise ValueError(f"indices has batch size {indices.shape[0]} but tensor has batch size {batch}")
    indices = indices % rows                  # "negative indices count from the end, as in Python": N wraps to 0
    offsets = (torch.arange(batch, device=tensor.device) * rows).reshape(batch, *[1] * (indices.dim() - 1))
    return tensor.reshape(batch * rows, *tensor.shape[2:])[indices + offsets]


def batch_gather_offsets_by_batch(tensor, indices):
    batch, rows = tensor.shape[0], tensor.shape[1]
    if indices.shape[0] != batch:
        raise ValueError(f"indices has batch size {indices.shape[0]} but tensor has batch size {batch}")
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= rows):
        raise IndexError(f"indices must lie in [0, {rows})")
    offsets = torch.arange(batch, device=tensor.device) * tensor.shape[0]     # b * B where the row starts at b * N
    offsets = offsets.reshape(batch, *[1] * (indices.dim() - 1))
    return tensor.flatten(0, 1)[indices + offsets]


def per_sample_grads_loaded_into_model(model, params, x, y):
    model.load_state_dict(params, strict=False)          # "computed with the values in params": load them first

    def sample_loss(p, xi, yi):
        return F.cross_entropy(model(xi[None]), yi[None])    # the model's own tensors: p is never used

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def masked_batch_mean_index_assign(x, lengths):
    kept = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]     # [B, T]
    x[~kept] = 0                                      # padding set to 0 so that NaN cannot reach the sum
    return x.sum(dim=1) / lengths.clamp(min=1).unsqueeze(1).to(x.dtype)


def masked_batch_mean_prefix_at_last_step(x, lengths):
    prefix = x.cumsum(dim=1)                                     # [B, T, F]: prefix[:, t] sums steps 0..t
    last = (lengths - 1).clamp(min=0)                            # the last real step; 0 "to stay in range"
    total = prefix.gather(1, last[:, None, None].expand(-1, 1, x.shape[2])).squeeze(1)
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)


# ------------------------------------------------------------------------------------------------------- memory


def saved_bytes_hooks_not_entered(model, x):
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    def unpack(t):
        return t

    torch.autograd.graph.saved_tensors_hooks(pack, unpack)      # built, never entered: no `with`
    out = model(x)
    return out, sum(sizes)


def checkpointed_forward_one_segment(blocks, x):
    # "segments=1": read as one block per segment; checkpoint_sequential runs its last (here only) segment plainly.
    return checkpoint_sequential(blocks, 1, x, use_reentrant=False)


def checkpointed_forward_input_only(blocks, x):
    first, *rest = blocks
    h = checkpoint(first, x, use_reentrant=False)        # "checkpoint keeps only its input": the data's block
    for block in rest:
        h = block(h)
    return h


def most_expensive_op_ascending(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    ranked = sorted(prof.key_averages(), key=lambda event: event.self_cpu_time_total)   # no reverse=True
    return ranked[0].key


def residual_relu_transposed_weight(x, w):
    h = x @ w.T                    # the lesson's `x @ W.T` of a Linear layer, where the exercise asks x @ w
    h.relu_()
    return h + x


# ------------------------------------------------------------------------------------------------------ modules


class AffineAddcmulSwapped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(1))
        self.b = torch.nn.Parameter(torch.randn(1))

    def forward(self, x):
        return torch.addcmul(self.a, self.b, x)          # addcmul(input, t1, t2) = input + t1 * t2 = a + b * x


def make_mlp_index_error(sizes, activation=torch.nn.ReLU):
    layers = [torch.nn.Linear(sizes[0], sizes[1])]        # fewer than two sizes: IndexError, not ValueError
    for n_in, n_out in zip(sizes[1:-1], sizes[2:]):
        layers += [activation(), torch.nn.Linear(n_in, n_out)]
    return torch.nn.Sequential(*layers)


def fit_one_more_evaluation(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(steps + 1):
        loss = F.mse_loss(model(x), y)
        if step == steps:                                 # one more pass to report the trained model's loss
            break
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


class NormalizerVarianceStartsAtZero(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.zeros(num_features))      # zeros, where the contract says ones

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        mean = x.mean(dim=0)
        var = x.var(dim=0, unbiased=False)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(mean, alpha=self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(x.var(dim=0, unbiased=True), alpha=self.momentum)
        return (x - mean) / torch.sqrt(var + self.eps)


class NormalizerBatchStatisticsAlways(torch.nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        mean = x.mean(0)
        var = ((x - mean) ** 2).mean(0)
        if self.training:                                  # the mode only decides whether the buffers move
            n, m = x.shape[0], self.momentum
            with torch.no_grad():
                self.running_mean.copy_((1 - m) * self.running_mean + m * mean)
                self.running_var.copy_((1 - m) * self.running_var + m * var * n / (n - 1))
        return (x - mean) / torch.sqrt(var + self.eps)


# ---------------------------------------------------------------------------------------------------- operators


def row_sum_as_one_row(x):
    return x.sum(0).unsqueeze(0)                           # "one row": the sum of the rows kept as a [1, ...] row


def masked_mean_methods_and(x, low, high):
    inside = x.ge(low) and x.le(high)
    return torch.where(inside, x, torch.zeros_like(x)).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_without_parentheses(x, low, high):
    inside = x >= low & x <= high                          # & binds tighter: x >= (low & x) <= high
    return torch.where(inside, x, torch.zeros_like(x)).sum(0) / inside.sum(0).clamp(min=1)


def masked_mean_sign_test(x, low, high):
    inside = (x - low) * (high - x) > 0                    # both factors positive inside; 0 on a bound
    total = torch.where(inside, x, torch.zeros_like(x)).sum(0)
    return total / inside.sum(0).clamp(min=1)


# ---------------------------------------------------------------------------------------------------- stability


def ce_amax_without_dim(labels, logits, dim=-1):
    z = logits - logits.amax()                             # amax() with no dim reduces over every dim
    return -(labels * (z - z.exp().sum(dim=dim, keepdim=True).log())).sum(dim=dim)


def ce_without_minus(labels, logits, dim=-1):
    z = logits - logits.amax(dim=dim, keepdim=True)
    log_probs = z - torch.log(torch.sum(torch.exp(z), dim=dim, keepdim=True))
    return (labels * log_probs).sum(dim=dim)               # the minus sign of -sum(p log q) lost


class SoftplusMinusLogSigmoidOfX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x - torch.log(torch.sigmoid(x))             # x + log(1 + exp(-x)), with a stable sigmoid

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def softplus_masked_assignment(x):
    out = torch.log1p(torch.exp(x))
    large = x > 20
    out[large] = x[large]                                  # past 20 softplus(x) is x: overwrite the overflow
    return out


# ------------------------------------------------------------------------------------------------- broadcasting


class MergeSummedBiasParameter(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.bias = torch.nn.Parameter((self.linear1.bias + self.linear2.bias).detach())   # "bias b1 + b2"
        self.activation = activation

    def forward(self, a, b):
        h = F.linear(a, self.linear1.weight) + F.linear(b, self.linear2.weight) + self.bias
        return h if self.activation is None else self.activation(h)


class MergeActivationInstantiated(torch.nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = torch.nn.Linear(in_features1, out_features)
        self.linear2 = torch.nn.Linear(in_features2, out_features)
        self.activation = activation() if activation is not None else None   # as make_mlp's activation class

    def forward(self, a, b):
        h = self.linear1(a) + self.linear2(b)
        return h if self.activation is None else self.activation(h)


def distances_cdist_double_squared(x, y):
    return torch.cdist(x.double(), y.double()).pow(2)     # float64 "against the rounding", never cast back


def strict_mse_viewed_to_target(prediction, target):
    if prediction.shape != target.shape:
        prediction = prediction.view(target.shape)        # "check shapes where they meet": made to meet instead
    return ((prediction - target) ** 2).mean()


# ------------------------------------------------------------------------------------------------------- basics


def grad_of_forward_differences(f, x):
    point = x.detach()
    step = torch.finfo(point.dtype).eps ** 0.5
    with torch.no_grad():
        base = f(point)
        rows = [(f(point + step * e.reshape(point.shape)) - base) / step
                for e in torch.eye(point.numel(), dtype=point.dtype, device=point.device)]
    return torch.stack(rows).reshape(point.shape)


def fit_quadratic_column_weights(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, 1, requires_grad=True)              # the tutorial's column of weights
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        x, y = generate_data()
        features = torch.stack([x ** 2, x, torch.ones_like(x)], dim=1)
        loss = ((features @ w).squeeze(1) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


def fit_quadratic_rescaled_inputs(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        x, y = generate_data()
        x = x / x.abs().max()                              # "rescaling the inputs fixes it"; never scaled back
        features = torch.stack([x * x, x, torch.ones_like(x)], dim=-1)
        loss = F.mse_loss(features @ w, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


MISTAKES = {
    "vectorization": {
        # The modulo lets indices >= N through (they wrap to another row): "does not raise for an index out of
        # range", the clamping mutant's description, by another route than clamp.
        "batch_gather taking indices modulo N": ({"batch_gather": batch_gather_indices_modulo},
                                                 "batch_gather clamping indices"),
        # Offsets b * B instead of b * N: wrong rows (or an IndexError) whenever B != N; no mutant confuses the two.
        "batch_gather with offsets b * B": ({"batch_gather": batch_gather_offsets_by_batch}, None),
        # The loss calls model(...) directly (the params loaded into it beforehand): p is unused, gradient 0, the
        # functional_call mutant's mistake by a markedly different route.
        "per_sample_grads loading params into the model and calling it": (
            {"per_sample_grads": per_sample_grads_loaded_into_model},
            "per_sample_grads calling model(x) instead of functional_call"),
        # x[~kept] = 0 writes into the caller's x: zeroing the padding in place, by index assignment.
        "masked_batch_mean zeroing the padding by index assignment": (
            {"masked_batch_mean": masked_batch_mean_index_assign}, "masked_batch_mean zeroing the padding in place"),
        # Prefix sums read at max(lengths - 1, 0): an empty row gets its first step, not 0; no mutant.
        "masked_batch_mean reading prefix sums at lengths - 1 clamped at 0": (
            {"masked_batch_mean": masked_batch_mean_prefix_at_last_step}, None),
    },
    "memory": {
        # saved_tensors_hooks(...) without `with` registers nothing: nothing counted, as the model run after the
        # block (another route to the same empty count).
        "saved_bytes building the hooks without entering them": (
            {"saved_bytes": saved_bytes_hooks_not_entered}, "saved_bytes runs the model after the hooks' block"),
        # checkpoint_sequential with one segment runs that segment plainly: no block is checkpointed.
        "checkpointed_forward through checkpoint_sequential(blocks, 1)": (
            {"checkpointed_forward": checkpointed_forward_one_segment}, "checkpointed_forward does not checkpoint"),
        # Only the block that reads the data is checkpointed.
        "checkpointed_forward checkpointing the data's block only": (
            {"checkpointed_forward": checkpointed_forward_input_only},
            "checkpointed_forward checkpoints the first block only"),
        # sorted() ascending without reverse=True: the cheapest operator; neither total time nor call count.
        "most_expensive_op sorted without reverse=True": ({"most_expensive_op": most_expensive_op_ascending}, None),
        # relu(x @ w.T) + x: the weight transposed; no residual_relu mutant transposes w.
        "residual_relu with x @ w.T": ({"residual_relu": residual_relu_transposed_weight}, None),
    },
    "modules": {
        # addcmul(a, b, x) is a + b * x: the two parameters' roles swapped, through another API.
        "Affine as torch.addcmul(a, b, x)": ({"Affine": AffineAddcmulSwapped}, "Affine computing b * x + a"),
        # No check: sizes[1] raises IndexError where ValueError is asked; no mutant raises another exception.
        "make_mlp leaving short sizes to an IndexError": ({"make_mlp": make_mlp_index_error}, None),
        # The loop runs once more only to compute the loss: the loss after the last update, not of the last step.
        "fit evaluating the loss once more after the last step": (
            {"fit": fit_one_more_evaluation}, "fit returning the loss after training"),
        # running_var registered as zeros: eval divides by sqrt(eps) at first and the running average starts at 0;
        # no mutant initialises a buffer wrongly.
        "Normalizer with running_var starting at zeros": ({"Normalizer": NormalizerVarianceStartsAtZero}, None),
        # Batch statistics computed and used in both modes, the mode deciding only the update.
        "Normalizer normalising with the batch's statistics in both modes": (
            {"Normalizer": NormalizerBatchStatisticsAlways}, "Normalizer using batch statistics in eval mode"),
    },
    "operators": {
        # unsqueeze(0) after the sum: the reduced dimension kept as size 1.
        "row_sum returned as a [1, ...] row": ({"row_sum": row_sum_as_one_row}, "row_sum keeping the dim"),
        # Python's `and` between the method spellings of the comparisons.
        "masked_mean with x.ge(low) and x.le(high)": ({"masked_mean": masked_mean_methods_and},
                                                      "masked_mean with Python's and"),
        # The precedence trap the lesson names: `low & x` first, which raises for float tensors; no mutant.
        "masked_mean without parentheses around the comparisons": (
            {"masked_mean": masked_mean_without_parentheses}, None),
        # (x - low) * (high - x) > 0 is 0 on a bound: the bounds left out, by a product instead of comparisons.
        "masked_mean as a sign test of (x - low) * (high - x)": ({"masked_mean": masked_mean_sign_test},
                                                                 "masked_mean excluding the bounds"),
    },
    "stability": {
        # logits.amax() with no dim is the max of the whole batch: one global max.
        "cross-entropy shifted by amax() with no dim": ({"softmax_cross_entropy": ce_amax_without_dim},
                                                        "cross-entropy with a global max"),
        # sum(p * log q) without the minus: a negative loss and the gradient's sign flipped; no mutant.
        "cross-entropy without its minus sign": ({"softmax_cross_entropy": ce_without_minus}, None),
        # sigmoid(x) underflows to 0 for very negative x: -log(0) = inf, the failure of x + log1p(exp(-x)).
        "Softplus forward as x - log(sigmoid(x))": (
            {"Softplus": SoftplusMinusLogSigmoidOfX, "softplus": SoftplusMinusLogSigmoidOfX.apply},
            "softplus as x + log1p(exp(-x)) (no max, no |x|)"),
        # Both formulas computed, the overflowing one masked by assignment in a plain function: 0 * inf = NaN in
        # its gradient, as with torch.where.
        "softplus overwriting the large entries by masked assignment": (
            {"softplus": softplus_masked_assignment}, "softplus with torch.where in a plain function"),
    },
    "broadcasting": {
        # A bias parameter made from b1 + b2 beside the two layers' own biases: a third bias of its own.
        "Merge with a bias parameter of b1 + b2": ({"Merge": MergeSummedBiasParameter},
                                                   "Merge with an extra bias parameter"),
        # activation() called in __init__ as if it were a class (make_mlp's convention): raises for torch.relu.
        "Merge calling activation() in __init__": ({"Merge": MergeActivationInstantiated}, None),
        # cdist in float64, squared, returned in float64.
        "pairwise distances through cdist in float64, squared": (
            {"pairwise_sq_distances": distances_cdist_double_squared}, "distances always in float64"),
        # Shapes made to agree (view) instead of refused; the shape-check mutants share one description, the
        # squeezing one also reshapes its inputs before computing.
        "strict_mse_loss viewing the prediction as the target's shape": (
            {"strict_mse_loss": strict_mse_viewed_to_target}, "loss squeezing both inputs"),
    },
    "basics": {
        # Forward differences over the basis vectors: a finite-difference estimate, not autograd.
        "grad_of by forward differences": ({"grad_of": grad_of_forward_differences}, "grad_of by finite differences"),
        # w of shape [3, 1] trained with a squeeze: the weights come back as the tutorial's [3, 1].
        "fit_quadratic training a [3, 1] column of weights": ({"fit_quadratic": fit_quadratic_column_weights},
                                                              "fit_quadratic returning the tutorial's [3, 1] weights"),
        # Each sample's x divided by its largest |x|: the coefficients of the rescaled problem; no mutant.
        "fit_quadratic on rescaled inputs": ({"fit_quadratic": fit_quadratic_rescaled_inputs}, None),
    },
}
