"""A second correct solution, written differently from the reference: a launcher that rendezvous through a file
(``init_method="file://..."``) and collects answers from one Queue, polling the processes' exit codes; DDP imported
through the module alias with batches built by hand from the sampler's indices; accumulation choosing its context
(``no_sync()`` or ``nullcontext()``) per micro-batch; and the gradients averaged in one flat buffer (one
``all_reduce`` per step)."""

import contextlib
import datetime
import multiprocessing
import os
import queue
import tempfile
import threading

import torch
import torch.distributed as dist
import torch.nn.parallel as parallel
from torch.utils.data import DistributedSampler


def _worker(fn, rank, world_size, path, args, answers):
    torch.set_num_threads(1)
    dist.init_process_group(backend="gloo", init_method=f"file://{path}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=8))
    try:
        value = fn(rank, world_size, *args)
    except BaseException as error:
        answers.put((rank, repr(error), None))
        answers.close()
        answers.join_thread()           # the error is in the pipe before this rank does anything else
        threading.Event().wait()        # then stay, so no peer fails on a closed connection first: the launcher kills
    answers.put((rank, None, value))
    answers.close()
    answers.join_thread()
    dist.destroy_process_group()


def run_ranks(fn, world_size, *args):
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    folder = tempfile.mkdtemp()
    workers = [context.Process(target=_worker, args=(fn, r, world_size, os.path.join(folder, "rendezvous"), args,
                                                     answers)) for r in range(world_size)]
    for w in workers:
        w.start()
    out = [None] * world_size
    pending = set(range(world_size))
    try:
        while pending:
            try:
                rank, error, value = answers.get(timeout=0.2)
            except queue.Empty:
                dead = [r for r in pending if workers[r].exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(f"rank {dead[0]} died (exit code {workers[dead[0]].exitcode})") from None
                continue
            if error is not None:
                raise RuntimeError(f"rank {rank}: {error}")
            out[rank] = value
            pending.discard(rank)
        return out
    finally:
        for w in workers:
            w.kill()
            w.join()
        answers.close()


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
