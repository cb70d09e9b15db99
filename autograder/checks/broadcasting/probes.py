"""What the broadcasting checks read where the student's module lives (see ``autograder.seam.remote.beside``).

Under trusted grading a ``Merge`` instance stays in the student's worker: its parameters
reach the grader as copies, so neither their identity nor the ``.grad`` that a backward
pass accumulates on them can be seen from here. These functions report both as plain
data; in-process (no worker) they run locally. What they report is reported by the
student's process, so a hostile student can forge it (docs/security.md); the checks
compute every expected value themselves, from copies of the parameters' values.
"""

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from autograder.seam.ops import normalise
from autograder.seam.probes import probe

# linear1's and linear2's weight and bias: the slots of a Merge layer the reference layer reads.
SLOTS = tuple(f"linear{k}.{p}" for k in (1, 2) for p in ("weight", "bias"))


@probe
def parameter_facts(module):
    """``{"grads": {name: .grad or None} in ``named_parameters()`` order, "slots": {slot: the name under which
    ``named_parameters()`` lists that tensor (it may be shared), or None}}``."""
    named = list(module.named_parameters())
    slots = {}
    for slot in SLOTS:
        layer, _, attribute = slot.partition(".")
        tensor = getattr(getattr(module, layer, None), attribute, None)
        slots[slot] = next((name for name, p in named if p is tensor), None) if tensor is not None else None
    return {"grads": {name: p.grad for name, p in named}, "slots": slots}


class MaterialisedOutputs(TorchDispatchMode):
    """Records ``(ATen op, shape)`` of every tensor a kernel returns that owns room for all its elements."""

    def __init__(self):
        super().__init__()
        self.outputs = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for out in tree_leaves(result):
            if isinstance(out, torch.Tensor) and owns_its_elements(out):
                self.outputs.append((normalise(func.__name__), list(out.shape)))
        return result


def owns_its_elements(tensor):
    try:
        return tensor.numel() > 0 and tensor.untyped_storage().nbytes() >= tensor.numel() * tensor.element_size()
    except (RuntimeError, NotImplementedError):   # tensors without storage (meta, some subclasses)
        return False


@probe
def materialised_call(fn, a, b):
    """``(fn(a, b), [(ATen op, shape)] of every tensor a kernel returned that owns room for all its elements)``,
    run where ``fn`` lives (``beside``)."""
    outputs = MaterialisedOutputs()
    with outputs:
        result = fn(a, b)
    return result, outputs.outputs
