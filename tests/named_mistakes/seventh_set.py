"""A seventh set of mistakes for measuring the named-mistake hint, on the two newest assignments (docs/feedback.md,
"How often the hint is right").

``MISTAKES = {topic: {what it is: (replacement objects, truth)}}``, 33 mistakes (memory 16, distributed 17), in the
format of ``second_set.py``: ``truth`` is the id of the mutant (``tests/mutants/<topic>.py``) that is the same
mistake, or ``None`` when no mutant is (then the right hint names nothing).

How it was made (2026-11-27): each mistake was written from the notebooks' own text (``source/<topic>/<topic>.ipynb``:
their markdown, contracts and exercise stubs) as a student might write it. Every truth was written down from the
mutants' ``DESCRIPTIONS`` before anything of this set was graded, and the file was committed before the hint was
changed. It is **not as blind as the sixth set**: its author is the helper who then refined the hint, had read the
issue that reported the wrong names on these two assignments (several of its examples are here again: the loss
divided by ``world_size``, ``zero_grad`` missing, ``batch_size // world_size``, a sampler without ``seed``, ``no_sync``
around every micro-batch, ``zero_grad`` on every micro-batch, the loss divided by ``accumulation * world_size``,
``set_grad_enabled(False)`` never restored, a ranking by self memory, ``checkpoint_sequential``), and had seen the
shipped signatures. Two truths name mutants added with this work for two contract clauses no check tested
(``most_expensive_op`` profiling the first call without warm-up; ``average_gradients`` filtering on
``requires_grad``).
"""

import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
from torch.utils.data import DataLoader, DistributedSampler

# ------------------------------------------------------------------------------------------------ memory


def _saved_bytes_with(size_of, *, runs=1, key=None):
    def saved_bytes(model, x):
        total, seen = 0, set()

        def pack(t):
            nonlocal total
            if key is None or key(t) not in seen:
                total += size_of(t)
            if key is not None:
                seen.add(key(t))
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            for _ in range(runs):
                out = model(x)
        return out, total
    return saved_bytes


saved_bytes_typed_storage = _saved_bytes_with(lambda t: t.untyped_storage().size())
saved_bytes_getsizeof = _saved_bytes_with(lambda t: sys.getsizeof(t))
saved_bytes_run_twice = _saved_bytes_with(lambda t: t.numel() * t.element_size(), runs=2)
saved_bytes_dedupe_by_id = _saved_bytes_with(lambda t: t.numel() * t.element_size(), key=id)


def checkpointed_sequential_segments(blocks, x):
    return checkpoint_sequential(list(blocks), len(blocks), x, use_reentrant=False)


def checkpointed_last_block_only(blocks, x):
    blocks = list(blocks)
    for block in blocks[:-1]:
        x = block(x)
    return checkpoint(blocks[-1], x, use_reentrant=False)


def most_expensive_op_no_warmup(step):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return max(prof.key_averages(), key=lambda e: e.self_cpu_time_total).key


def most_expensive_op_by_self_memory(step):
    step()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    return max(prof.key_averages(), key=lambda e: e.self_cpu_memory_usage).key


def most_expensive_op_by_time_per_call(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return max(prof.key_averages(), key=lambda e: e.cpu_time).key


def residual_relu_inplace_relu_then_add(x, w):
    out = x @ w
    out.relu_()
    out += x
    return out


def residual_relu_add_out(x, w):
    h = torch.relu(x @ w)
    return torch.add(h, x, out=h)


def residual_relu_into_x(x, w):
    return x.add_(torch.relu(x @ w))


def predict_grad_switched_off(model, x):
    torch.set_grad_enabled(False)
    return model(x)


def predict_enable_grad(model, x):
    with torch.enable_grad():
        return model(x)


def predict_input_detached(model, x):
    return model(x.detach())


def predict_parameters_frozen(model, x):
    model.requires_grad_(False)
    return model(x)


# ------------------------------------------------------------------------------------------------ distributed


def _ddp(*, divide=None, zero_grad=True, split_batch=False, seeded=True, set_epoch="each", shuffle=True,
         summed=False, call="ddp"):
    def train_ddp(rank, world_size, model, dataset, *, batch_size, epochs, lr, seed):
        ddp = DistributedDataParallel(model)
        sampler = (DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=shuffle,
                                      seed=seed) if seeded
                   else DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=shuffle))
        loader = DataLoader(dataset, batch_size=batch_size // world_size if split_batch else batch_size,
                            sampler=sampler)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
        if set_epoch == "once":
            sampler.set_epoch(0)
        for epoch in range(epochs):
            if set_epoch == "each":
                sampler.set_epoch(epoch)
            for x, y in loader:
                if zero_grad:
                    optimizer.zero_grad()
                out = ddp(x) if call == "ddp" else ddp.module(x)
                loss = ((out - y) ** 2).sum() if summed else F.mse_loss(out, y)
                (loss / world_size if divide == "world_size" else loss).backward()
                optimizer.step()
        return model
    return train_ddp


_with = _ddp      # the source the grader reads is the inner function's (DistributedDataParallel in it)


def _accumulating(*, sync="last", zero_every=False, divide="accumulation"):
    def train_accumulate(rank, world_size, model, dataset, *, batch_size, accumulation, epochs, lr, seed):
        ddp = DistributedDataParallel(model)
        sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
        scale = accumulation * world_size if divide == "both" else accumulation
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            optimizer.zero_grad()
            for i, (x, y) in enumerate(loader):
                last = (i + 1) % accumulation == 0
                if zero_every:
                    optimizer.zero_grad()
                if sync == "never":
                    with ddp.no_sync():
                        (F.mse_loss(ddp(x), y) / scale).backward()
                elif sync == "backward_only":
                    loss = F.mse_loss(ddp(x), y) / scale
                    if last:
                        loss.backward()
                    else:
                        with ddp.no_sync():
                            loss.backward()
                elif not last:
                    with ddp.no_sync():
                        (F.mse_loss(ddp(x), y) / scale).backward()
                else:
                    (F.mse_loss(ddp(x), y) / scale).backward()
                if last:
                    optimizer.step()
                    optimizer.zero_grad()
        return model
    return train_accumulate


def average_trainable_only(model):
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.requires_grad:
            dist.all_reduce(p.grad)
            p.grad /= world_size


def average_with_avg_op(model):
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)


def average_flat_copy_never_written_back(model):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.flatten() for g in grads])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()


def average_divided_by_parameter_count(model):
    params = list(model.parameters())
    for p in params:
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= len(params)


def average_sum_through_data(model):
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad.data)


MISTAKES = {
    "memory": {
        # untyped_storage().size() is the storage's bytes: a view's whole storage, another spelling.
        "saved_bytes counting untyped_storage().size()": ({"saved_bytes": saved_bytes_typed_storage},
                                                          "saved_bytes counts a view's whole storage"),
        # sys.getsizeof of a tensor is the Python object's size, not its data: no mutant.
        "saved_bytes counting sys.getsizeof": ({"saved_bytes": saved_bytes_getsizeof}, None),
        # The model run twice inside the hooks ("to warm up"): everything counted twice; no mutant.
        "saved_bytes running the model twice inside the hooks": ({"saved_bytes": saved_bytes_run_twice}, None),
        # A tensor saved twice is the same Python object: counted once, by id() instead of data_ptr().
        "saved_bytes skipping tensors already seen by id()": ({"saved_bytes": saved_bytes_dedupe_by_id},
                                                              "saved_bytes counts a tensor saved twice once"),
        # checkpoint_sequential leaves its last segment plain: every block but the last checkpointed; no mutant.
        "checkpointed_forward through checkpoint_sequential, one segment a block": (
            {"checkpointed_forward": checkpointed_sequential_segments}, None),
        # Only the last block checkpointed: no mutant (the first-block mutant is another block).
        "checkpointed_forward checkpointing the last block only": (
            {"checkpointed_forward": checkpointed_last_block_only}, None),
        # The first call profiled, no warm-up call: the new mutant for that clause.
        "most_expensive_op without a warm-up call": ({"most_expensive_op": most_expensive_op_no_warmup},
                                                     "most_expensive_op profiles the first call, without warm-up"),
        "most_expensive_op ranking by self memory": ({"most_expensive_op": most_expensive_op_by_self_memory}, None),
        # cpu_time is the total (children included) per call: total time, per call.
        "most_expensive_op ranking by cpu_time per call": ({"most_expensive_op": most_expensive_op_by_time_per_call},
                                                           "most_expensive_op sorts by total CPU time"),
        # relu_ on the matmul's output, then += x on relu's (saved) output.
        "residual_relu with relu_ then += x": ({"residual_relu": residual_relu_inplace_relu_then_add},
                                               "residual_relu adds x in place into relu's saved output"),
        "residual_relu adding with out= relu's output": ({"residual_relu": residual_relu_add_out},
                                                         "residual_relu adds x in place into relu's saved output"),
        # x modified in place: no mutant.
        "residual_relu adding into x": ({"residual_relu": residual_relu_into_x}, None),
        # Autograd switched off for the whole process: no mutant (the issue's global-state mistake).
        "predict calling torch.set_grad_enabled(False)": ({"predict": predict_grad_switched_off}, None),
        # Grad switched on explicitly: no mutant (neither a detach nor eval mode).
        "predict under torch.enable_grad()": ({"predict": predict_enable_grad}, None),
        "predict on a detached input": ({"predict": predict_input_detached}, None),
        "predict freezing the parameters": ({"predict": predict_parameters_frozen}, None),
    },
    "distributed": {
        "train_ddp dividing the loss by world_size": ({"train_ddp": _with(divide="world_size")}, None),
        "train_ddp without zero_grad": ({"train_ddp": _with(zero_grad=False)}, None),
        "train_ddp with batch_size // world_size": ({"train_ddp": _with(split_batch=True)}, None),
        "train_ddp with a sampler without seed": ({"train_ddp": _with(seeded=False)}, None),
        # set_epoch(0) once before the loop: every epoch the same order, as without set_epoch.
        "train_ddp calling set_epoch(0) once": ({"train_ddp": _with(set_epoch="once")},
                                                "train_ddp never calls set_epoch (every epoch the same order)"),
        "train_ddp with shuffle=False": ({"train_ddp": _with(shuffle=False)}, None),
        # The squared error summed by hand: the sum, not the mean.
        "train_ddp summing the squared error by hand": ({"train_ddp": _with(summed=True)},
                                                        "train_ddp sums the loss instead of its mean"),
        # ddp.module(x) is the unwrapped model.
        "train_ddp calling ddp.module(x)": ({"train_ddp": _with(call="module")},
                                            "train_ddp wraps the model but calls model(x), not ddp(x)"),
        "train_accumulate with no_sync around every micro-batch": (
            {"train_accumulate": _accumulating(sync="never")}, None),
        "train_accumulate zeroing the gradients every micro-batch": (
            {"train_accumulate": _accumulating(zero_every=True)}, None),
        "train_accumulate dividing by accumulation * world_size": (
            {"train_accumulate": _accumulating(divide="both")}, None),
        # The forward outside no_sync, only the backward inside.
        "train_accumulate entering no_sync after the forward": (
            {"train_accumulate": _accumulating(sync="backward_only")},
            "train_accumulate puts only the backward inside no_sync"),
        # requires_grad instead of p.grad is None: the new mutant for that clause.
        "average_gradients filtering on requires_grad": (
            {"average_gradients": average_trainable_only},
            "average_gradients filters on requires_grad, not on a gradient"),
        # gloo has no AVG: raises; no mutant.
        "average_gradients with ReduceOp.AVG": ({"average_gradients": average_with_avg_op}, None),
        "average_gradients reducing a flat copy never written back": (
            {"average_gradients": average_flat_copy_never_written_back}, None),
        "average_gradients dividing by the number of parameters": (
            {"average_gradients": average_divided_by_parameter_count}, None),
        # all_reduce on .data, never divided: the sum.
        "average_gradients summing through .data": ({"average_gradients": average_sum_through_data},
                                                    "average_gradients sums the gradients without dividing"),
    },
}
