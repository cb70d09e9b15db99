"""A second correct solution, written differently from the reference: a counter object whose hooks keep a list of
sizes (``nelement() * itemsize``), checkpointing through the module alias with an index loop, the profile's events
sorted with ``operator.attrgetter`` after two warm-up calls, the residual block out of place with ``clamp``, and
``predict`` decorated with ``torch.inference_mode()``."""

import operator

import torch
import torch.utils.checkpoint as cp
from torch import profiler


class _SavedSizes:
    def __init__(self):
        self.sizes = []

    def pack(self, tensor):
        self.sizes.append(tensor.nelement() * tensor.itemsize)
        return tensor

    @staticmethod
    def unpack(tensor):
        return tensor


def saved_bytes(model, x):
    sizes = _SavedSizes()
    with torch.autograd.graph.saved_tensors_hooks(sizes.pack, sizes.unpack):
        output = model(x)
    return output, int(sum(sizes.sizes))


def checkpointed_forward(blocks, x):
    out, i = x, 0
    while i < len(blocks):
        out = cp.checkpoint(blocks[i], out, use_reentrant=False)
        i += 1
    return out


def most_expensive_op(step):
    for _ in range(2):
        step()
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU]) as prof:
        step()
    ranked = sorted(prof.key_averages(), key=operator.attrgetter("self_cpu_time_total"), reverse=True)
    return ranked[0].key


def residual_relu(x, w):
    return torch.clamp(x.matmul(w), min=0).add(x)


@torch.inference_mode()
def predict(model, x):
    return model(x)
