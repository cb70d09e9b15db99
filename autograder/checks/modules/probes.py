"""What the modules checks need from the student's own objects that no copy shows, run where those objects live.

Under trusted grading the checks hold proxies (``autograder.seam.remote.Remote``): an attribute read gives a
copy of a tensor, so writing into it, reading its ``.grad`` or comparing identities says nothing about the
student's module. The functions here are run with ``beside(fn, student_object, ...)``: in the student's worker
when they hold proxies, here otherwise (so in-process grading does exactly what it did). Each returns plain data.

Two kinds:

* **Actions** (``set_values``, ``clear_grads``, ``call_without_grad``, ``fit_model``): they set the stage. A
  worker that ignores them only fails the check, because every verdict that follows is judged here on outputs
  and values read back as data.
* **Facts** (``grads``, ``missing_grads``, ``same_module_positions``, ``distinct_parameters``, ``buffer_problem``,
  ``history``): the student's process's word about its own objects (a gradient accumulated in place, which layers
  are one object, which parameters share storage, what is registered as a buffer, autograd history). A student
  who rewrites the worker can forge them; docs/modules.md lists which check relies on which.
"""

import torch

from autograder.seam.handle import handle
from autograder.seam.probes import probe


def type_name(obj):
    """The class name of ``obj``, whether it lives here or in the student's worker."""
    return handle(obj).type_name


def state_of(module):
    """``module.state_dict()`` as a dict here (a proxy's state dict comes back entry by entry, as copies)."""
    state = module.state_dict()
    return state if isinstance(state, dict) else dict(state.items())


# ------------------------------------------------------------------ actions

@probe
def set_values(module, values):
    """Copy ``values`` (name -> number or tensor) into ``module``'s tensors of those names, in place, without
    autograd; a number becomes a tensor of shape [1] in the target's dtype."""
    with torch.no_grad():
        for name, value in values.items():
            target = getattr(module, name)
            target.copy_(value if isinstance(value, torch.Tensor) else torch.tensor([value], dtype=target.dtype))


@probe
def clear_grads(module, names):
    """``module.<name>.grad = None`` for each name."""
    for name in names:
        getattr(module, name).grad = None


@probe
def call_without_grad(module, *args):
    """``module(*args)`` under ``torch.no_grad()`` (a call over the pipe runs with the worker's own grad mode)."""
    with torch.no_grad():
        return module(*args)


def fit_architecture(kind):
    """The models ``fit`` is graded on: ``"line"``, ``Linear(1, 1)``; ``"mlp"``, ``Linear(3, 4)``, ``Tanh``,
    ``Linear(4, 2)``."""
    if kind == "line":
        return torch.nn.Linear(1, 1)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))


@probe
def fit_model(anchor, kind, state):
    """A fresh ``fit_architecture(kind)`` holding ``state`` (name -> tensor, in the dtype the model takes), built
    where ``anchor`` (the student's ``fit``, otherwise unused) lives, so that ``fit`` trains it in place there."""
    del anchor
    dtype = next(iter(state.values())).dtype
    model = fit_architecture(kind).to(dtype)
    model.load_state_dict(state)
    return model


# ------------------------------------------------------------------ facts

@probe
def grads(module, names):
    """``{name: module.<name>.grad}`` (a tensor or ``None``)."""
    return {name: getattr(module, name).grad for name in names}


@probe
def missing_grads(model):
    """The names of ``model``'s parameters whose ``.grad`` is ``None``."""
    return [name for name, p in model.named_parameters() if p.grad is None]


@probe
def same_module_positions(model):
    """For each position of ``model`` (a Sequential), the first position that holds the very same module object."""
    layers = list(model)
    return [next(j for j in range(i + 1) if layers[j] is layers[i]) for i in range(len(layers))]


@probe
def distinct_parameters(model):
    """``(number of distinct parameter elements, names that share a tensor)``: parameters counted once per
    underlying memory (``data_ptr``), so a weight assigned to two layers or a view of another counts once."""
    by_memory = {}
    for name, parameter in model.named_parameters(remove_duplicate=False):
        by_memory.setdefault((str(parameter.device), parameter.data_ptr()), []).append((name, parameter.numel()))
    count = sum(max(numel for _, numel in names) for names in by_memory.values())
    shared = [" = ".join(name for name, _ in names) for names in by_memory.values() if len(names) > 1]
    return count, shared


@probe
def buffer_problem(module, name, call):
    """``[kind, why]``: why ``module.<name>`` is not a proper buffer (``call`` names the module in the message), and
    the kind of that failure; or ``None``."""
    buffers = dict(module.named_buffers())
    value = getattr(module, name, None)
    if isinstance(value, torch.nn.Parameter) or name in dict(module.named_parameters()):
        return ["failed: a buffer made a parameter", f"{call}.{name} is an nn.Parameter: parameters() hands it to the "
                "optimizer, which would train it (weight decay, momentum and gradient steps) although it is a "
                "statistic, not a weight"]
    if name not in buffers:
        nested = [n for n in buffers if n.endswith("." + name)]
        if isinstance(value, torch.Tensor) and not nested:
            return ["failed: a plain tensor attribute, not a buffer", f"{call}.{name} is a plain tensor attribute, "
                    "not a registered buffer: state_dict() does not save it and .to() / .double() / .cuda() leave "
                    "it behind"]
        where = f" (found {', '.join(nested)}, inside a submodule)" if nested else ""
        return ["failed: no buffer of that name", f"{call} has no buffer named {name}{where}; named_buffers() gives "
                f"{sorted(buffers)}"]
    if any(p is buffers[name] for p in module.parameters()):
        return ["failed: a buffer also listed by parameters()", f"{call}.{name} is also listed by parameters()"]
    return None


@probe
def history(module, name):
    """``(requires_grad, the type name of grad_fn or None)`` of ``module.<name>``."""
    value = getattr(module, name)
    return bool(value.requires_grad), None if value.grad_fn is None else type(value.grad_fn).__name__
