"""Realistic mistakes in the vectorization exercises, each with the checks that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution. ``GPU_MUTANTS`` can only be
caught where CUDA is present.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


def _check(tensor, indices):
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError("batch sizes differ")
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= tensor.shape[1]):
        raise IndexError("index out of range")


def gather_python_loop(tensor, indices):
    _check(tensor, indices)
    return torch.stack([tensor[b][indices[b]] for b in range(tensor.shape[0])])


def gather_unbind_loop(tensor, indices):
    _check(tensor, indices)
    return torch.stack([rows[picked] for rows, picked in zip(tensor.unbind(0), indices.unbind(0))])


def _flat(tensor, indices, offsets):
    batch, rows = tensor.shape[:2]
    offsets = offsets.reshape(batch, *[1] * (indices.dim() - 1)) * rows
    return tensor.reshape(batch * rows, *tensor.shape[2:])[indices + offsets]


def gather_tutorial_cuda(tensor, indices):
    _check(tensor, indices)
    return _flat(tensor, indices, torch.arange(tensor.shape[0]).cuda())


def gather_hard_coded_cpu(tensor, indices):
    _check(tensor, indices)
    return _flat(tensor, indices, torch.arange(tensor.shape[0]))       # offsets always on the CPU


def gather_no_bounds_check(tensor, indices):
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError("batch sizes differ")
    return _flat(tensor, indices, torch.arange(tensor.shape[0], device=tensor.device))


def gather_clamped(tensor, indices):
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError("batch sizes differ")
    return _flat(tensor, indices.clamp(0, tensor.shape[1] - 1), torch.arange(tensor.shape[0], device=tensor.device))


def gather_no_batch_check(tensor, indices):
    features = tensor.shape[2:]
    flat = indices.reshape(indices.shape[0], -1, *([1] * len(features))).long()
    picked = torch.gather(tensor, 1, flat.expand(-1, -1, *features))    # a smaller batch passes silently
    return picked.reshape(*indices.shape, *features)


def _ok(tensor, indices):
    _check(tensor, indices)
    return _flat(tensor, indices, torch.arange(tensor.shape[0], device=tensor.device))


def gather_batch_error_without_saying_so(tensor, indices):
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError("bad shapes")
    return _ok(tensor, indices)


def gather_1d_indices_only(tensor, indices):
    _check(tensor, indices)
    return tensor[torch.arange(tensor.shape[0], device=tensor.device), indices]


def gather_detached(tensor, indices):
    return _ok(tensor.detach(), indices)


def gather_via_numpy(tensor, indices):
    _check(tensor, indices)
    array, index = tensor.detach().cpu().numpy(), indices.cpu().numpy()
    picked = array[np.arange(array.shape[0]).reshape(-1, *[1] * (index.ndim - 1)), index]
    return torch.from_numpy(picked).to(tensor.device)


def gather_no_trailing_dims(tensor, indices):
    _check(tensor, indices)
    flat = indices.reshape(indices.shape[0], -1).long()
    return torch.gather(tensor, 1, flat).reshape(indices.shape)           # right when F is empty only


def gather_returns_float32(tensor, indices):
    return _ok(tensor, indices).float()


# ------------------------------------------------------------------ per_sample_grads

def _sample_loss(model):
    def loss(params, xi, yi):
        return F.cross_entropy(functional_call(model, params, (xi[None],)), yi[None])
    return loss


def grads_python_loop(model, params, x, y):
    leaves = {name: p.detach().requires_grad_(True) for name, p in params.items()}
    rows = []
    for xi, yi in zip(x, y):                        # one torch.autograd.grad per sample: right, and slow
        loss = F.cross_entropy(functional_call(model, leaves, (xi[None],)), yi[None])
        rows.append(torch.autograd.grad(loss, list(leaves.values())))
    return {name: torch.stack(column) for name, column in zip(leaves, zip(*rows))}


def grads_vmap_one_sample_at_a_time(model, params, x, y):
    one = vmap(grad(_sample_loss(model)), in_dims=(None, 0, 0))
    parts = [one(params, x[i:i + 1], y[i:i + 1]) for i in range(x.shape[0])]     # vmap, inside a loop
    return {name: torch.cat([part[name] for part in parts]) for name in params}


def grads_of_the_batch(model, params, x, y):
    def batch_loss(params, x, y):                   # the batch's summed loss: one gradient, not one per sample
        return F.cross_entropy(functional_call(model, params, (x,)), y, reduction="sum")
    return grad(batch_loss)(params, x, y)


def grads_divided_by_batch(model, params, x, y):
    def loss(params, xi, yi):                       # each sample's share of the batch's mean
        return F.cross_entropy(functional_call(model, params, (xi[None],)), yi[None]) / x.shape[0]
    return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)


def grads_targets_not_mapped(model, params, x, y):
    return vmap(grad(_sample_loss(model)), in_dims=(None, 0, None))(params, x, y)    # every y in each sample


def grads_of_the_models_own_parameters(model, params, x, y):
    own = dict(model.named_parameters())            # not params, and not detached
    return vmap(grad(_sample_loss(model)), in_dims=(None, 0, 0))(own, x, y)


def grads_calling_the_model_directly(model, params, x, y):
    def loss(params, xi, yi):                       # params unused: their gradient is 0
        return F.cross_entropy(model(xi[None]), yi[None])
    return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)


def grads_detached_inside(model, params, x, y):
    def loss(params, xi, yi):                       # detached where grad must see them: gradient 0
        plain = {name: p.detach() for name, p in params.items()}
        return F.cross_entropy(functional_call(model, plain, (xi[None],)), yi[None])
    return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)


# ------------------------------------------------------------------ masked_batch_mean

def _kept(x, lengths):
    return torch.arange(x.shape[1], device=x.device) < lengths[:, None]


def _mean(x, lengths):
    total = torch.where(_kept(x, lengths)[:, :, None], x, 0).sum(1)
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)


def mean_loop_over_steps(x, lengths):
    total = torch.zeros(x.shape[0], x.shape[2], dtype=x.dtype, device=x.device)
    for t in range(x.shape[1]):                     # unrolled by dynamo: one graph per T
        total = total + torch.where((t < lengths)[:, None], x[:, t], 0)
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)


def mean_loop_over_batch(x, lengths):
    rows = [torch.where(_kept(x[b:b + 1], lengths[b:b + 1])[0, :, None], x[b], 0).sum(0)
            for b in range(x.shape[0])]             # one graph per B
    total = torch.stack(rows) if rows else x.new_zeros(0, x.shape[2])
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)


def mean_item_of_longest(x, lengths):
    longest = int(lengths.max().item()) if lengths.numel() else 0      # trims the padding: a graph break
    kept = torch.arange(longest, device=x.device) < lengths[:, None]
    total = torch.where(kept[:, :, None], x[:, :longest], 0).sum(1)
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)


def mean_divided_by_zero(x, lengths):
    return torch.where(_kept(x, lengths)[:, :, None], x, 0).sum(1) / lengths[:, None].to(x.dtype)   # 0 / 0


def mean_over_all_steps(x, lengths):
    return x.mean(1)


def mean_off_by_one(x, lengths):
    kept = torch.arange(x.shape[1], device=x.device) <= lengths[:, None]
    total = torch.where(kept[:, :, None], x, 0).sum(1)
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)


def mean_in_float64(x, lengths):
    return _mean(x.double(), lengths)


def mean_float32_count(x, lengths):
    total = torch.where(_kept(x, lengths)[:, :, None], x, 0).sum(1)
    return total / lengths.clamp(min=1)[:, None].float()      # float16 / float32 promotes to float32


def mean_value_guard(x, lengths):
    if lengths.numel() and lengths.min() == x.shape[1]:    # every row full: skip the mask (a branch on values)
        return x.sum(1) / max(x.shape[1], 1)
    return _mean(x, lengths)


def mean_multiplied_by_mask(x, lengths):
    mask = _kept(x, lengths).to(x.dtype)[:, :, None]
    return (x * mask).sum(1) / lengths.clamp(min=1)[:, None].to(x.dtype)    # 0 * nan = nan


def mean_zeroing_padding_in_place(x, lengths):
    x.masked_fill_(~_kept(x, lengths)[:, :, None], 0)   # writes into the caller's tensor
    return x.sum(1) / lengths.clamp(min=1)[:, None].to(x.dtype)


def mean_through_numpy(x, lengths):
    array, n = x.detach().cpu().numpy(), lengths.cpu().numpy()
    kept = np.arange(array.shape[1])[None, :] < n[:, None]
    total = np.where(kept[:, :, None], array, 0).sum(1)
    return torch.from_numpy(total / np.maximum(n, 1)[:, None]).to(x.dtype).to(x.device)


SPEED = {"check_batch_gather_vectorized", "check_batch_gather_speed"}
LOOPED = {"check_masked_mean_vectorized", "check_masked_mean_no_recompiles"}
VMAPPED = "check_per_sample_grads_vmapped"
PER_SAMPLE = {"check_per_sample_grads_values", VMAPPED}

MUTANTS = {
    "batch_gather as a Python loop": ({"batch_gather": gather_python_loop}, SPEED),
    "batch_gather as a loop over unbind": ({"batch_gather": gather_unbind_loop}, SPEED),
    "batch_gather for 1-D indices only": ({"batch_gather": gather_1d_indices_only}, {"check_batch_gather_values"}),
    "batch_gather hard-coding .cuda()": ({"batch_gather": gather_tutorial_cuda},
                                         {"check_batch_gather_values"}),
    "batch_gather with detached input": ({"batch_gather": gather_detached}, {"check_batch_gather_gradient"}),
    "batch_gather through NumPy": ({"batch_gather": gather_via_numpy}, {"check_batch_gather_gradient"}),
    "batch_gather ignoring trailing dims": ({"batch_gather": gather_no_trailing_dims}, {"check_batch_gather_values"}),
    "batch_gather without a bounds check": ({"batch_gather": gather_no_bounds_check}, {"check_batch_gather_errors"}),
    "batch_gather clamping indices": ({"batch_gather": gather_clamped}, {"check_batch_gather_errors"}),
    "batch_gather without a batch check": ({"batch_gather": gather_no_batch_check}, {"check_batch_gather_errors"}),
    "batch_gather with a silent ValueError": ({"batch_gather": gather_batch_error_without_saying_so},
                                              {"check_batch_gather_errors"}),
    "batch_gather changing the dtype": ({"batch_gather": gather_returns_float32}, {"check_batch_gather_values"}),
    "per_sample_grads as a Python loop over samples": ({"per_sample_grads": grads_python_loop}, {VMAPPED}),
    "per_sample_grads calling vmap one sample at a time": ({"per_sample_grads": grads_vmap_one_sample_at_a_time},
                                                           {VMAPPED}),
    "per_sample_grads of the batch's summed loss": ({"per_sample_grads": grads_of_the_batch}, PER_SAMPLE),
    "per_sample_grads divided by the batch size": ({"per_sample_grads": grads_divided_by_batch}, PER_SAMPLE),
    "per_sample_grads with in_dims (None, 0, None)": ({"per_sample_grads": grads_targets_not_mapped}, PER_SAMPLE),
    "per_sample_grads of model.named_parameters() (not params, not detached)": (
        {"per_sample_grads": grads_of_the_models_own_parameters}, PER_SAMPLE),
    "per_sample_grads calling model(x) instead of functional_call": (
        {"per_sample_grads": grads_calling_the_model_directly}, PER_SAMPLE),
    "per_sample_grads detaching params inside the loss": ({"per_sample_grads": grads_detached_inside}, PER_SAMPLE),
    "masked_batch_mean as a Python loop over T": ({"masked_batch_mean": mean_loop_over_steps}, LOOPED),
    "masked_batch_mean as a Python loop over B": ({"masked_batch_mean": mean_loop_over_batch}, LOOPED),
    "masked_batch_mean calling .item() on lengths": ({"masked_batch_mean": mean_item_of_longest},
                                                     {"check_masked_mean_one_graph"}),
    "masked_batch_mean dividing 0 by 0 for empty rows": ({"masked_batch_mean": mean_divided_by_zero},
                                                         {"check_masked_mean_values", "check_masked_mean_gradient"}),
    "masked_batch_mean averaging over all of T": ({"masked_batch_mean": mean_over_all_steps},
                                                  {"check_masked_mean_values", "check_masked_mean_gradient"}),
    "masked_batch_mean off by one (<=)": ({"masked_batch_mean": mean_off_by_one},
                                          {"check_masked_mean_values", "check_masked_mean_gradient"}),
    "masked_batch_mean returning float64": ({"masked_batch_mean": mean_in_float64}, {"check_masked_mean_values"}),
    "masked_batch_mean dividing by a float32 count": ({"masked_batch_mean": mean_float32_count},
                                                      {"check_masked_mean_values"}),
    "masked_batch_mean branching on lengths' values": ({"masked_batch_mean": mean_value_guard},
                                                       {"check_masked_mean_one_graph"}),
    "masked_batch_mean multiplying by the mask": ({"masked_batch_mean": mean_multiplied_by_mask},
                                                  {"check_masked_mean_values"}),
    "masked_batch_mean zeroing the padding in place": ({"masked_batch_mean": mean_zeroing_padding_in_place},
                                                       {"check_masked_mean_values", "check_masked_mean_gradient"}),
    "masked_batch_mean through NumPy": ({"masked_batch_mean": mean_through_numpy},      # NumPy has no bfloat16
                                        {"check_masked_mean_values", "check_masked_mean_gradient"}),
}

# Only a CUDA machine can tell this one from the reference.
GPU_MUTANTS = {
    "batch_gather hard-coding the CPU": ({"batch_gather": gather_hard_coded_cpu}, {"check_batch_gather_values"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/vectorization/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "batch_gather as a Python loop": "batch_gather loops over the batch in Python.",
    "batch_gather as a loop over unbind": "batch_gather loops over the batch in Python.",
    "batch_gather for 1-D indices only": "batch_gather handles one index per batch row only, not several.",
    "batch_gather hard-coding .cuda()": "batch_gather hard-codes a device instead of using the input's.",
    "batch_gather with detached input": "batch_gather detaches its input, so no gradient flows back.",
    "batch_gather through NumPy": "batch_gather goes through NumPy, so no gradient flows back.",
    "batch_gather ignoring trailing dims": "batch_gather ignores the input's trailing dimensions.",
    "batch_gather without a bounds check": "batch_gather does not raise for an index out of range.",
    "batch_gather clamping indices": "batch_gather does not raise for an index out of range.",
    "batch_gather without a batch check": "batch_gather does not refuse inputs whose batch sizes differ.",
    "batch_gather with a silent ValueError": "batch_gather raises ValueError with a message that does not say what "
                                             "is wrong.",
    "batch_gather changing the dtype": "batch_gather returns another dtype than its input's.",
    "per_sample_grads as a Python loop over samples": "per_sample_grads handles one sample at a time in a Python "
                                                      "loop.",
    "per_sample_grads calling vmap one sample at a time": "per_sample_grads handles one sample at a time in a Python "
                                                          "loop.",
    "per_sample_grads of the batch's summed loss": "per_sample_grads differentiates the loss of the whole batch "
                                                   "instead of each sample's.",
    "per_sample_grads divided by the batch size": "per_sample_grads divides each sample's gradient by the batch "
                                                  "size.",
    "per_sample_grads with in_dims (None, 0, None)": "per_sample_grads maps over the wrong arguments (`in_dims`).",
    "per_sample_grads of model.named_parameters() (not params, not detached)": "per_sample_grads differentiates "
        "with respect to the model's own parameters instead of the `params` it is given.",
    "per_sample_grads calling model(x) instead of functional_call": "per_sample_grads calls the model directly "
        "instead of through `functional_call` with the given `params`.",
    "per_sample_grads detaching params inside the loss": "per_sample_grads detaches the parameters inside the loss, "
                                                         "so the gradients are zero.",
    "masked_batch_mean as a Python loop over T": "masked_batch_mean loops in Python over the batch or the time "
                                                 "steps.",
    "masked_batch_mean as a Python loop over B": "masked_batch_mean loops in Python over the batch or the time "
                                                 "steps.",
    "masked_batch_mean calling .item() on lengths": "masked_batch_mean calls `.item()` on the lengths, which "
                                                    "breaks the compiled graph.",
    "masked_batch_mean dividing 0 by 0 for empty rows": "masked_batch_mean divides by a length that can be 0, "
                                                        "giving NaN for an empty row.",
    "masked_batch_mean averaging over all of T": "masked_batch_mean averages over every time step instead of the "
                                                 "valid ones.",
    "masked_batch_mean off by one (<=)": "masked_batch_mean's mask is off by one (it counts the step at the "
                                         "length too).",
    "masked_batch_mean returning float64": "masked_batch_mean returns float64 whatever the input's dtype.",
    "masked_batch_mean dividing by a float32 count": "masked_batch_mean divides by a float32 count, which turns a "
                                                     "float16 or bfloat16 result into float32.",
    "masked_batch_mean branching on lengths' values": "masked_batch_mean branches in Python on the values of "
                                                      "`lengths`, which recompiles for new values.",
    "masked_batch_mean multiplying by the mask": "masked_batch_mean multiplies by the mask, so a NaN or an infinity "
                                                 "in the padding still reaches the sum.",
    "masked_batch_mean zeroing the padding in place": "masked_batch_mean zeroes the padding in place in its input.",
    "masked_batch_mean through NumPy": "masked_batch_mean goes through NumPy, so no gradient flows back.",
}
