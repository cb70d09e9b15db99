"""One CUDA-timed item per GPU at a time, across every grading process of the machine.

A speed item timed on CUDA compares the student's code with a baseline on the same GPU; another notebook timing its
own on that GPU at the same moment slows both, by an amount neither controls. ``gpu_lease()`` holds an exclusive
``flock`` on a file named after the GPU (its UUID where PyTorch gives one, else its index among the visible
devices) for the length of the item: the graders of a local Dask cluster, several ``grade`` runs and nbgrader's
autograde on one machine all take their turn, while the rest of their work (workers starting, cells, the other
items) goes on. The kernel drops the lock when its process ends, however it ends. The time spent waiting is the
machine's, not the notebook's: ``trusted_runner`` gives it back to the notebook's budget.
"""

import contextlib
import fcntl
import os
import re
import tempfile
import time

DIRECTORY = os.path.join(tempfile.gettempdir(), "epl-gpu-leases")


def gpu_name():
    """A name for the GPU this process times on (``cuda`` = the current device)."""
    import torch

    index = torch.cuda.current_device()
    uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", "") or "")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    physical = visible[index].strip() if index < len(visible) and visible[index].strip() else str(index)
    return re.sub(r"[^A-Za-z0-9_.-]", "_", uuid or f"index-{physical}")


@contextlib.contextmanager
def gpu_lease(name, directory=DIRECTORY):
    """Hold the machine-wide lease of GPU ``name`` for the block; yields the seconds spent waiting for it."""
    os.makedirs(directory, mode=0o1777, exist_ok=True)
    path = os.path.join(directory, f"{name}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        started = time.monotonic()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - started
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
