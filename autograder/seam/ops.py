"""The op recorder: which torch operations a piece of student code calls.

Two levels are recorded while the code runs:

* ``calls``: every torch function and tensor method the code itself calls
  (``torch.overrides.TorchFunctionMode`` sees the outermost call only, so the
  count is what the student wrote, not what torch does inside);
* ``kernels``: every ATen operator that actually runs (``TorchDispatchMode``),
  which catches any spelling of an operation, ``torch.ops.aten`` included.

A name is normalised so that aliases meet: ``torch.special.log_softmax``,
``Tensor.log_softmax``, ``F.log_softmax`` and ``aten._log_softmax`` all become
``log_softmax``.
"""

import contextlib
import re
from dataclasses import dataclass, field

from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

_ALIASES = {
    "cross_entropy_loss": "cross_entropy",
    "nll_loss2d": "nll_loss",
    "nll_loss_nd": "nll_loss",
    "nll_loss_forward": "nll_loss",
    "nll_loss2d_forward": "nll_loss",
    "softmax_cross_entropy_with_logits": "cross_entropy",
}


def normalise(name):
    """``special_log_softmax`` / ``_log_softmax`` / ``log_softmax.int`` -> ``log_softmax``."""
    name = name.split(".")[0].lower()
    name = re.sub(r"^(special_|_+)", "", name)
    name = re.sub(r"^(special_|_+)", "", name)
    if name.endswith("_") and not name.startswith("__"):
        name = name.rstrip("_")
    return _ALIASES.get(name, name)


def _display(func):
    module = getattr(func, "__module__", None) or "torch.Tensor"
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    qualname = qualname.replace("_VariableFunctionsClass.", "").replace("TensorBase.", "Tensor.")
    if module in ("torch._C._special",):
        module = "torch.special"
    if module.startswith("torch._ops"):
        return f"torch.ops.{getattr(func, '__name__', qualname)}"
    return f"{module}.{qualname}" if not qualname.startswith("Tensor.") else qualname


@dataclass
class OpRecord:
    calls: list = field(default_factory=list)     # (normalised name, display name), in call order
    kernels: list = field(default_factory=list)   # normalised ATen operator names

    @property
    def call_count(self):
        return len(self.calls)

    def names(self):
        return [name for name, _ in self.calls]

    def find(self, forbidden):
        """The forbidden operations used, as display names (calls) or ``aten.<op>`` (kernels)."""
        forbidden = {normalise(f) for f in forbidden}
        hits = [shown for name, shown in self.calls if name in forbidden]
        hits += [f"aten.{name}" for name in self.kernels if name in forbidden]
        return list(dict.fromkeys(hits))


class _CallMode(TorchFunctionMode):
    def __init__(self, record):
        super().__init__()
        self.record = record

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name not in ("__get__", "__set__", "__repr__", "__format__"):
            self.record.calls.append((normalise(name), _display(func)))
        return func(*args, **(kwargs or {}))


class _KernelMode(TorchDispatchMode):
    def __init__(self, record):
        super().__init__()
        self.record = record

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.record.kernels.append(normalise(func.__name__))
        return func(*args, **(kwargs or {}))


_OPEN = []      # the records being filled, innermost last


@contextlib.contextmanager
def record_ops(kernels=True):
    """Record the torch calls (and ATen kernels) made inside the block.

    Calls made by student code in a grading worker are recorded there and added to the
    innermost open record (see ``autograder.seam.remote``).
    """
    record = OpRecord()
    with contextlib.ExitStack() as stack:
        stack.enter_context(_CallMode(record))
        if kernels:
            stack.enter_context(_KernelMode(record))
        _OPEN.append(record)
        try:
            yield record
        finally:
            _OPEN.remove(record)


def open_record():
    """The innermost record being filled, or ``None``."""
    return _OPEN[-1] if _OPEN else None
