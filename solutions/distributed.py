"""Reference solutions for the `distributed` assignment.

Generated from source/distributed/distributed.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell run_ranks ---
import datetime
import multiprocessing as mp
import pickle
import socket
import time
from multiprocessing.connection import wait

import torch
import torch.distributed as dist


def run_ranks(fn, world_size, *args):
    """fn(rank, world_size, *args) in world_size gloo ranks; their results in rank order, or the failed rank's error."""
    port = _free_port()         # rank 0 hosts the store there
    ctx = mp.get_context("fork")
    procs, conns = [], []
    for rank in range(world_size):
        mine, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_rank_main, args=(fn, rank, world_size, port, args, theirs))
        proc.start()
        theirs.close()
        procs.append(proc)
        conns.append(mine)
    results = {}
    try:
        while len(results) < world_size:
            for conn in wait([c for r, c in enumerate(conns) if r not in results], timeout=60):
                rank = conns.index(conn)
                try:
                    ok, value = pickle.loads(conn.recv_bytes())
                except EOFError:
                    ok, value = False, "its process died without an answer"
                if not ok:
                    raise RuntimeError(f"rank {rank} failed: {value}")
                results[rank] = value
        return [results[rank] for rank in range(world_size)]
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
            proc.join()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(fn, rank, world_size, port, args, conn):
    torch.set_num_threads(1)
    try:
        store = dist.TCPStore("127.0.0.1", port, world_size, rank == 0)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size,
                                timeout=datetime.timedelta(seconds=10))
        dist.barrier()          # every rank connected before any can leave
        result = fn(rank, world_size, *args)
    except Exception as error:
        conn.send_bytes(pickle.dumps((False, f"{type(error).__name__}: {error}")))
        time.sleep(60)          # wait to be stopped: exiting would make the others fail too, maybe first
        return
    conn.send_bytes(pickle.dumps((True, result)))
    dist.barrier()              # leave together: a rank that leaves closes its connections to the others
    dist.destroy_process_group()


# --- cell train_ddp ---
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
