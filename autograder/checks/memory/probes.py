"""What runs beside the student's functions, where they live (``handle(fn).beside(probe, ...)``).

Each probe builds its problem from a plan (``problems.py``), calls the student's function on it through
``call_student`` (so a failure becomes that call's message), and returns plain data: what the function returned,
the gradients a backward through it gave, and the grader's own measurements of the call. Those measurements
(:class:`ActivationMemory`'s bytes, the layers' forward calls) are taken in the student's process: they are the
student's process's word, which explains and may cost points but never earns one (docs/security.md).
"""

import torch

from autograder.checks.memory import problems
from autograder.errors import CheckFailure
from autograder.seam.probes import probe
from autograder.seam.student import call_student


class ActivationMemory:
    """A context manager that measures what autograd keeps for backward inside its block: the bytes of the distinct
    storages of the tensors it packs, the storages of ``excluded`` tensors (a model's parameters: saving them costs
    nothing new) left out. Nested hooks (``torch.utils.checkpoint``'s own) take precedence inside them, so what a
    checkpointed region keeps for itself is its inputs, which it saves through this block's hooks."""

    def __init__(self, excluded=()):
        self._excluded = {t.untyped_storage().data_ptr() for t in excluded}
        self._storages = {}
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _unpack)

    def _pack(self, t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in self._excluded:
            self._storages[storage.data_ptr()] = storage.nbytes()
        return t

    @property
    def bytes(self):
        return sum(self._storages.values())

    def __enter__(self):
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        return self._hooks.__exit__(*exc)


def _unpack(t):
    return t


def _failure(failure):
    return {"failure": [failure.detail, failure.hint, failure.kind]}


def _grads(model):
    return [(name, None if p.grad is None else p.grad.detach().clone()) for name, p in model.named_parameters()]


@probe
@problems.single_threaded
def saved_bytes_run(saved_bytes, check, plan):
    """Build ``plan``'s model, call ``saved_bytes(model, x)``, then backward through the output it returned with the
    plan's upstream gradient. Returns ``{"out", "count", "x_grad", "grads"}`` or ``{"failure": [detail, hint]}``
    (``{"backward": "Type: message"}`` when the backward raised)."""
    model, x, upstream = problems.build_model(plan)
    try:
        answer = call_student(check, saved_bytes, model, x, what="saved_bytes")
    except CheckFailure as failure:
        return _failure(failure)
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return {"returned": type(answer).__name__}
    out, count = answer
    if isinstance(count, torch.Tensor) and count.numel() == 1 and not count.is_floating_point():
        count = int(count.item())
    result = {"out": out.detach().clone() if isinstance(out, torch.Tensor) else None, "count": count}
    if not isinstance(out, torch.Tensor) or out.shape != upstream.shape or out.grad_fn is None:
        return result
    try:
        out.backward(upstream)
    except Exception as error:  # noqa: BLE001 - the student's unpack hook runs here
        result["backward"] = f"{type(error).__name__}: {str(error)[:400]}"
        return result
    result["x_grad"] = None if x.grad is None else x.grad.detach().clone()
    result["grads"] = _grads(model)
    return result


@probe
@problems.single_threaded
def checkpoint_run(checkpointed_forward, check, plan):
    """Build ``plan``'s blocks; call ``checkpointed_forward(blocks, x)`` with the global generator seeded from the
    plan (dropout draws from it), measuring the activation memory kept for backward (:class:`ActivationMemory`,
    parameters left out) and counting the forward calls of every Linear layer through backward. Returns
    ``{"out", "x_grad", "grads", "kept_bytes", "forward_calls"}`` or ``{"failure": [detail, hint]}``."""
    blocks, x, upstream = problems.build_blocks(plan)
    calls = []
    linears = [m for m in blocks.modules() if isinstance(m, torch.nn.Linear)]
    for index, layer in enumerate(linears):
        layer.register_forward_hook(lambda module, args, out, index=index: calls.append(index))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(plan["seed"])
        try:
            with ActivationMemory(blocks.parameters()) as memory:
                out = call_student(check, checkpointed_forward, blocks, x, what="checkpointed_forward")
        except CheckFailure as failure:
            return _failure(failure)
        if not isinstance(out, torch.Tensor) or out.shape != upstream.shape or out.grad_fn is None:
            return {"returned": f"{type(out).__name__}" + (f" of shape {list(out.shape)}, grad_fn "
                                                           f"{type(out.grad_fn).__name__ if out.grad_fn else None}"
                                                           if isinstance(out, torch.Tensor) else "")}
        try:
            out.backward(upstream)
        except Exception as error:  # noqa: BLE001 - recomputation runs the student's code again
            return {"out": out.detach().clone(), "backward": f"{type(error).__name__}: {str(error)[:400]}"}
    return {"out": out.detach().clone(), "x_grad": None if x.grad is None else x.grad.detach().clone(),
            "grads": _grads(blocks), "kept_bytes": memory.bytes,
            "forward_calls": [calls.count(i) for i in range(len(linears))]}


@probe
@problems.single_threaded
def recompute_run(checkpointed_forward, check, plan, source):
    """Build ``plan``'s blocks with a shift after each block's first layer, handed out by ``source`` (the grader's
    function: under trusted grading each call goes to the grader, which draws a new shift every time); call
    ``checkpointed_forward(blocks, x)`` and backward through its output. Returns ``{"out", "x_grad", "grads"}`` or
    ``{"failure": [detail, hint]}``. No measurement: what the grader judges is the gradients, against its own run
    with the shifts it handed out (a block recomputed in backward was handed a second one)."""
    blocks, x, upstream = problems.shifted_blocks(plan, source)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(plan["seed"])
        try:
            out = call_student(check, checkpointed_forward, blocks, x, what="checkpointed_forward")
        except CheckFailure as failure:
            return _failure(failure)
        if not isinstance(out, torch.Tensor) or out.shape != upstream.shape or out.grad_fn is None:
            return {"returned": _returned(out)}
        try:
            out.backward(upstream)
        except Exception as error:  # noqa: BLE001 - recomputation runs the student's code again
            return {"out": out.detach().clone(), "backward": f"{type(error).__name__}: {str(error)[:400]}"}
    return {"out": out.detach().clone(), "x_grad": None if x.grad is None else x.grad.detach().clone(),
            "grads": _grads(blocks)}


def _returned(out):
    """What ``checkpointed_forward`` returned, in words, when it is not a tensor of the output's shape on the graph."""
    if not isinstance(out, torch.Tensor):
        return type(out).__name__
    return (f"{type(out).__name__} of shape {list(out.shape)}, grad_fn "
            f"{type(out.grad_fn).__name__ if out.grad_fn else None}")


@probe
@problems.single_threaded
def top_op_answer(most_expensive_op, check, plan):
    """``most_expensive_op(step)``'s answer for ``plan``'s step and, for each call of the step, whether a profiler
    was recording (``{"answer", "profiled"}``), or ``{"failure": [detail, hint]}``."""
    step = problems.Step(plan)
    try:
        answer = call_student(check, most_expensive_op, step, what="most_expensive_op")
    except CheckFailure as failure:
        return _failure(failure)
    return {"answer": answer, "profiled": list(step.profiled)}


@probe
@problems.single_threaded
def predict_run(predict, check, plan):
    """Build ``plan``'s model; call ``predict(model, x)``, measuring what autograd keeps meanwhile. Returns
    ``{"out", "requires_grad", "kept_bytes", "param_grads", "training"}`` (``training``: the model's mode after
    the call, which only explains a failure) or ``{"failure": [detail, hint]}``."""
    model, x, _ = problems.build_model(plan)
    try:
        with ActivationMemory() as memory:
            out = call_student(check, predict, model, x, what="predict")
    except CheckFailure as failure:
        return _failure(failure)
    if not isinstance(out, torch.Tensor):
        return {"returned": type(out).__name__}
    return {"out": out.detach().clone(), "requires_grad": bool(out.requires_grad), "kept_bytes": memory.bytes,
            "param_grads": sum(p.grad is not None for p in model.parameters()), "training": bool(model.training)}
