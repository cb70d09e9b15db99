"""Reference solutions for the `distributed` assignment.

Generated from source/distributed/distributed.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell train_ddp ---
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler


def train_ddp(rank, world_size, model, dataset, *, batch_size, epochs, lr, seed):
    """Data-parallel SGD on the mean squared error: DDP, a DistributedSampler, set_epoch every epoch."""
    ddp = DistributedDataParallel(model)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(ddp(x), y).backward()
            optimizer.step()
    return model


# --- cell train_accumulate ---
def train_accumulate(rank, world_size, model, dataset, *, batch_size, accumulation, epochs, lr, seed):
    """train_ddp with `accumulation` micro-batches per step, all-reducing only on the last one."""
    ddp = DistributedDataParallel(model)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        optimizer.zero_grad()
        for i, (x, y) in enumerate(loader):
            if (i + 1) % accumulation:
                with ddp.no_sync():
                    (torch.nn.functional.mse_loss(ddp(x), y) / accumulation).backward()
            else:
                (torch.nn.functional.mse_loss(ddp(x), y) / accumulation).backward()
                optimizer.step()
                optimizer.zero_grad()
    return model


# --- cell average_gradients ---
def average_gradients(model):
    """All-reduce every parameter's gradient and divide it by the world size, on every rank."""
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= world_size
