"""A second correct solution, written differently from the reference: DDP imported through the module alias with
batches built by hand from the sampler's indices; accumulation choosing its context (``no_sync()`` or
``nullcontext()``) per micro-batch; and the gradients averaged in one flat buffer (one ``all_reduce`` per step)."""

import contextlib

import torch
import torch.distributed as dist
import torch.nn.parallel as parallel
from torch.utils.data import DistributedSampler


def _batches(dataset, indices, size):
    for start in range(0, len(indices), size):
        pairs = [dataset[i] for i in indices[start:start + size]]
        yield torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def train_ddp(rank, world_size, model, dataset, *, batch_size, epochs, lr, seed):
    wrapped = parallel.DistributedDataParallel(model)
    sampler = DistributedSampler(dataset, world_size, rank, shuffle=True, seed=seed)
    sgd = torch.optim.SGD(wrapped.parameters(), lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in _batches(dataset, list(sampler), batch_size):
            sgd.zero_grad(set_to_none=True)
            loss = ((wrapped(inputs) - targets) ** 2).mean()
            loss.backward()
            sgd.step()


def train_accumulate(rank, world_size, model, dataset, *, batch_size, accumulation, epochs, lr, seed):
    wrapped = parallel.DistributedDataParallel(model)
    sampler = DistributedSampler(dataset, world_size, rank, shuffle=True, seed=seed)
    sgd = torch.optim.SGD(wrapped.parameters(), lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for n, (inputs, targets) in enumerate(_batches(dataset, list(sampler), batch_size), start=1):
            last = n % accumulation == 0
            with contextlib.nullcontext() if last else wrapped.no_sync():
                loss = ((wrapped(inputs) - targets) ** 2).mean() * (1.0 / accumulation)
                loss.backward()
            if last:
                sgd.step()
                sgd.zero_grad(set_to_none=True)


def average_gradients(model):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat.div_(dist.get_world_size())
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()
