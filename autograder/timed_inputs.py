"""The inputs of timed calls, drawn at grading time: one per call, from a seed the grader draws.

A speed check's *template* (the visible or hidden variant's arguments) says only what an input looks like; each
timed call gets an input of its own drawn from a 62-bit seed (:func:`draw_input`): every floating tensor standard
normal values of the template's shape, dtype and device, every integer tensor uniform in the template's own range
(valid indices stay valid), every boolean tensor random bits, anything else as it is. The grader draws the seeds
from the run's hidden seed (``autograder.timing.draw_seeds``), sends them before its clock starts, and draws the
inputs it needs to check a result again here, bit for bit (the generator is torch's, on the CPU).

No table of answers can be filled before the seeds arrive: nothing the student's process saw before could tell
it the values.
"""

import torch

SEED_BITS = 62


def draw_input(template, seed):
    """The timed call's arguments for ``seed``: ``template`` with each tensor replaced by a fresh draw."""
    gen = torch.Generator().manual_seed(int(seed))
    drawn = []
    for a in template:
        if not isinstance(a, torch.Tensor) or a.numel() == 0:
            drawn.append(a)
        elif a.dtype == torch.bool:
            drawn.append(torch.randint(0, 2, tuple(a.shape), generator=gen).bool().to(a.device))
        elif a.is_floating_point():
            drawn.append(torch.randn(tuple(a.shape), generator=gen, dtype=torch.float32).to(a.dtype).to(a.device))
        elif not a.is_complex():
            low, high = int(a.min()), int(a.max())
            drawn.append(torch.randint(low, high + 1, tuple(a.shape), generator=gen, dtype=a.dtype).to(a.device))
        else:
            drawn.append(a)
    return tuple(drawn)


def nbytes(template):
    """The bytes of one drawn input (what a staged call holds in memory)."""
    return sum(a.numel() * a.element_size() for a in template if isinstance(a, torch.Tensor))


def flush_l2(device, size):
    """On CUDA, write a buffer of ``size`` bytes (larger than the L2 cache) so that the next sample starts cold."""
    if size and torch.device(device).type == "cuda":
        buffer = torch.empty(int(size) // 4, dtype=torch.int32, device=device)
        buffer.zero_()
        torch.cuda.synchronize(device)
