"""Reference solutions for the `memory` assignment.

Generated from source/memory/memory.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell saved_bytes ---
import torch


def saved_bytes(model, x):
    """Run model(x), counting the bytes of every tensor autograd saves for backward; return (output, bytes)."""
    total = 0

    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    def unpack(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = model(x)
    return out, total


# --- cell checkpointed_forward ---
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    """Apply the blocks in order, each one under activation checkpointing."""
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h


# --- cell most_expensive_op ---
from torch.profiler import ProfilerActivity, profile


def most_expensive_op(step):
    """The name of the operator with the largest self CPU time in a profile of one call of `step`."""
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return max(prof.key_averages(), key=lambda event: event.self_cpu_time_total).key


# --- cell residual_relu ---
def residual_relu(x, w):
    """relu(x @ w) + x, with backward intact."""
    h = x @ w
    h.relu_()           # in place on the product: matmul saved x and w, not h
    return h + x


# --- cell predict ---
def predict(model, x):
    """model(x) without building a graph."""
    with torch.no_grad():
        return model(x)
