"""What the operators checks run in the student's process: the speed item's baseline, timed where the student's
code runs."""

import torch

from autograder.seam.probes import probe


@probe
def slicing_loop_sum(x):
    """The baseline: one slice and one addition per row."""
    total = torch.zeros_like(x[0])
    for i in range(x.shape[0]):
        total += x[i]
    return total
