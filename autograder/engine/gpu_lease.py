"""One CUDA user per GPU while anything is timed on it, across every grading process of the machine.

A speed item timed on CUDA compares the student's code with a baseline on the same GPU; anything else running on that
GPU at the same moment (another notebook's timing, or its untimed CUDA cases, or its cells) slows one side by an
amount neither controls. So every CUDA user of a GPU holds its lease: a readers-writer lock on a file named after the
GPU (its UUID where PyTorch gives one, else its index among the visible devices), made of ``flock`` locks:

- untimed CUDA work (a notebook's cells, an item that sends CUDA cases) holds the lease **shared**: any number of
  notebooks use the GPU together, as before;
- a timed item holds it **exclusive**: it starts once every shared holder has finished, and no other CUDA work starts
  on that GPU until it ends: the GPU is otherwise idle while it is timed.

A turnstile (a second lock file, held exclusively only while a lease is being taken) keeps a stream of shared users
from starving a timed item: a timed item waiting for the GPU holds the turnstile, so the users that come after it wait
behind it. The graders of a local Dask cluster, several ``grade`` runs and nbgrader's autograde on one machine all take
their turn, while the rest of their work (workers starting, the CPU-only items) goes on. The kernel drops a lock when
its process ends, however it ends. The time spent waiting is the machine's, not the notebook's: ``trusted_runner``
gives it back to the notebook's budget.
"""

import contextlib
import fcntl
import os
import re
import tempfile
import time

DIRECTORY = os.path.join(tempfile.gettempdir(), "epl-gpu-leases")


def gpu_name():
    """A name for the GPU this process uses (``cuda`` = the current device; the first visible one where this process
    cannot start CUDA)."""
    import torch

    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    if not torch.cuda.is_available():
        return re.sub(r"[^A-Za-z0-9_.-]", "_", f"index-{visible[0].strip() or 0}")
    index = torch.cuda.current_device()
    uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", "") or "")
    physical = visible[index].strip() if index < len(visible) and visible[index].strip() else str(index)
    return re.sub(r"[^A-Za-z0-9_.-]", "_", uuid or f"index-{physical}")


def _open(directory, name):
    return os.open(os.path.join(directory, name), os.O_RDWR | os.O_CREAT, 0o666)


@contextlib.contextmanager
def gpu_lease(name, directory=DIRECTORY, *, exclusive=True):
    """Hold the machine-wide lease of GPU ``name`` for the block, exclusive (timed work: nothing else on that GPU)
    or shared (untimed CUDA work: beside other shared holders, never beside an exclusive one); yields the seconds
    spent waiting for it."""
    os.makedirs(directory, mode=0o1777, exist_ok=True)
    lease, turnstile = _open(directory, f"{name}.lock"), _open(directory, f"{name}.turnstile")
    try:
        started = time.monotonic()
        fcntl.flock(turnstile, fcntl.LOCK_EX)       # in the order of arrival: none overtakes a waiting timed item
        try:
            fcntl.flock(lease, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield time.monotonic() - started
        finally:
            fcntl.flock(lease, fcntl.LOCK_UN)
    finally:
        os.close(turnstile)
        os.close(lease)
