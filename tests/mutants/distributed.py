"""Realistic mistakes in the distributed exercises, each with the checks that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution.
"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler


def _training(*, set_epoch=True, sampler=True, call_wrapped=True, wrap=True, reduction="mean"):
    def train_ddp(rank, world_size, model, dataset, *, batch_size, epochs, lr, seed):
        ddp = DistributedDataParallel(model) if wrap else model
        split = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
        loader = DataLoader(dataset, batch_size=batch_size, sampler=split if sampler else None)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
        for epoch in range(epochs):
            if set_epoch:
                split.set_epoch(epoch)
            for x, y in loader:
                optimizer.zero_grad()
                out = ddp(x) if call_wrapped else model(x)
                torch.nn.functional.mse_loss(out, y, reduction=reduction).backward()
                optimizer.step()
    return train_ddp


def _accumulating(*, no_sync="forward", divide=True):
    def train_accumulate(rank, world_size, model, dataset, *, batch_size, accumulation, epochs, lr, seed):
        ddp = DistributedDataParallel(model)
        sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
        scale = accumulation if divide else 1
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for i, (x, y) in enumerate(loader):
                last = (i + 1) % accumulation == 0
                if no_sync == "forward" and not last:
                    with ddp.no_sync():
                        (torch.nn.functional.mse_loss(ddp(x), y) / scale).backward()
                elif no_sync == "backward" and not last:
                    loss = torch.nn.functional.mse_loss(ddp(x), y) / scale
                    with ddp.no_sync():             # too late: the forward already armed the all-reduce
                        loss.backward()
                else:
                    (torch.nn.functional.mse_loss(ddp(x), y) / scale).backward()
                if last:
                    optimizer.step()
                    optimizer.zero_grad()
    return train_accumulate


def average_summed(model):
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)                 # the sum: world_size times the average


def average_on_rank_zero(model):
    if dist.get_rank() == 0:                        # rank 1 never joins: rank 0 waits in all_reduce
        for p in model.parameters():
            if p.grad is None:
                continue
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()


def average_params_too(model):
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is None:
            continue
        dist.all_reduce(p.grad)
        p.grad /= world_size
        dist.all_reduce(p.data)                     # "keep the weights in sync too": equal already
        p.data /= world_size


def average_every_grad(model):
    for p in model.parameters():                    # a frozen parameter's .grad is None: all_reduce(None) raises
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()


def average_trainable(model):
    for p in model.parameters():
        if p.requires_grad:                         # a trainable parameter the forward did not use has no .grad
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()


def average_data_not_grad(model):
    for p in model.parameters():
        dist.all_reduce(p.data)
        p.data /= dist.get_world_size()


MUTANTS = {
    "train_ddp never calls set_epoch (every epoch the same order)": (
        {"train_ddp": _training(set_epoch=False)}, {"check_ddp_data_split", "check_ddp_matches_single"}),
    "train_ddp gives every rank the whole dataset (no DistributedSampler)": (
        {"train_ddp": _training(sampler=False)},
        {"check_ddp_data_split", "check_ddp_replicas_agree", "check_ddp_matches_single"}),
    "train_ddp wraps the model but calls model(x), not ddp(x)": (
        {"train_ddp": _training(call_wrapped=False)}, {"check_ddp_replicas_agree", "check_ddp_matches_single"}),
    "train_ddp trains each rank on its own (no DDP)": (
        {"train_ddp": _training(wrap=False)}, {"check_ddp_replicas_agree", "check_ddp_matches_single"}),
    "train_ddp sums the loss instead of its mean": (
        {"train_ddp": _training(reduction="sum")}, {"check_ddp_matches_single"}),
    "train_accumulate puts only the backward inside no_sync": (
        {"train_accumulate": _accumulating(no_sync="backward")}, {"check_accumulate_no_sync"}),
    "train_accumulate never uses no_sync": (
        {"train_accumulate": _accumulating(no_sync=None)}, {"check_accumulate_no_sync"}),
    "train_accumulate does not divide the loss by accumulation": (
        {"train_accumulate": _accumulating(divide=False)},
        {"check_accumulate_matches_single", "check_accumulate_no_sync"}),
    "average_gradients sums the gradients without dividing": (
        {"average_gradients": average_summed}, {"check_average_matches_single", "check_average_calls"}),
    "average_gradients all-reduces on rank 0 only (rank 0 hangs)": (
        {"average_gradients": average_on_rank_zero}, {"check_average_matches_single", "check_average_calls"}),
    "average_gradients all-reduces the parameters too": (
        {"average_gradients": average_params_too}, {"check_average_calls"}),
    "average_gradients does not skip a parameter without a gradient": (
        {"average_gradients": average_every_grad}, {"check_average_matches_single", "check_average_calls"}),
    "average_gradients filters on requires_grad, not on a gradient": (
        {"average_gradients": average_trainable}, {"check_average_calls"}),
    "average_gradients averages the parameters, not the gradients": (
        {"average_gradients": average_data_not_grad}, {"check_average_matches_single", "check_average_calls"}),
}

DESCRIPTIONS = {
    "train_ddp never calls set_epoch (every epoch the same order)":
        "train_ddp never calls the sampler's `set_epoch`, so every epoch shuffles the samples in the same order.",
    "train_ddp gives every rank the whole dataset (no DistributedSampler)":
        "train_ddp gives every rank the whole dataset instead of its share (no `DistributedSampler`).",
    "train_ddp wraps the model but calls model(x), not ddp(x)":
        "train_ddp wraps the model in DDP but calls the unwrapped model, so no gradient is all-reduced.",
    "train_ddp trains each rank on its own (no DDP)":
        "train_ddp trains each rank's model on its own, without `DistributedDataParallel`.",
    "train_ddp sums the loss instead of its mean":
        "train_ddp sums the loss over the batch instead of taking its mean.",
    "train_accumulate puts only the backward inside no_sync":
        "train_accumulate puts only the backward inside `no_sync()`, so the all-reduce also runs on every "
        "accumulation step.",
    "train_accumulate never uses no_sync":
        "train_accumulate never uses `no_sync()`, so every micro-batch's backward all-reduces the gradients.",
    "train_accumulate does not divide the loss by accumulation":
        "train_accumulate does not divide each micro-batch's loss by the number of accumulation steps.",
    "average_gradients sums the gradients without dividing":
        "average_gradients all-reduces the gradients but does not divide the sum by the world size.",
    "average_gradients all-reduces on rank 0 only (rank 0 hangs)":
        "average_gradients calls `all_reduce` on one rank only, so that rank waits for the others forever.",
    "average_gradients all-reduces the parameters too":
        "average_gradients all-reduces the parameters as well as their gradients.",
    "average_gradients does not skip a parameter without a gradient":
        "average_gradients all-reduces every parameter's `.grad`, also one that is None (a frozen parameter).",
    "average_gradients filters on requires_grad, not on a gradient":
        "average_gradients skips frozen parameters but not a trainable one without a gradient (`p.grad is None`: "
        "the forward did not use it).",
    "average_gradients averages the parameters, not the gradients":
        "average_gradients averages the parameters instead of their gradients.",
}
