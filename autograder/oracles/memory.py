"""The ``memory`` answers the checks compare against (grader-only): the bytes autograd saves, the plain run that
checkpointing must reproduce, the most expensive operation of a profiled step, the residual block's values and
gradients, and a model's predictions."""

import copy

import torch
from torch.profiler import ProfilerActivity, profile


def saved_bytes(model, x, x_grad):
    """``{"bytes", "tensors", "mistaken"}``: the bytes of every tensor autograd packs for backward while
    ``model(x)`` runs (``numel * element_size``, each time it is packed, parameters and views included), and each
    packed tensor's ``(shape, dtype name)``; ``x`` requires grad when ``x_grad``. ``mistaken``: the counts three known
    mistakes give (the check tells them by name): the whole storage behind each tensor (``"storage"``), a tensor
    packed twice counted once, told by its data pointer or by the object (``"once"``: both counts), and the
    parameters (and views of them) left out (``"no parameters"``)."""
    model = copy.deepcopy(model)
    x = x.detach().clone().requires_grad_(x_grad)
    packed = []

    def pack(t):
        packed.append((t, list(t.shape), str(t.dtype).removeprefix("torch."), t.numel() * t.element_size()))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x)
    parameters = {p.data_ptr() for p in model.parameters()}

    def counted_once(key):
        return sum({key(t): n for t, _, _, n in packed}.values())

    return {"bytes": sum(n for *_, n in packed), "tensors": [(shape, dtype) for _, shape, dtype, _ in packed],
            "mistaken": {"storage": sum(t.untyped_storage().nbytes() for t, *_ in packed),
                         "once": sorted({counted_once(lambda t: t.data_ptr()), counted_once(id)}),
                         "no parameters": sum(n for t, *_, n in packed if t.data_ptr() not in parameters)}}


def plain_run(model, x, x_grad, upstream, seed):
    """``{"out", "x_grad", "grads"}`` of the plain forward and backward of ``model`` (training mode, the global
    generator seeded with ``seed`` just before, as the checks do before the student's call): the output, the
    input's gradient (None when ``x`` needs none) and ``[(name, grad)]`` of every parameter."""
    model = copy.deepcopy(model)
    x = x.detach().clone().requires_grad_(x_grad)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        out = model(x)
        out.backward(upstream)
    return {"out": out.detach(), "x_grad": None if x.grad is None else x.grad.detach(),
            "grads": [(name, p.grad.detach()) for name, p in model.named_parameters()]}


def recomputed_run(blocks, x, upstream, seed, shifts):
    """``{"out", "x_grad", "grads"}`` of ``blocks`` (with shift modules: any submodule with a ``source`` attribute,
    ``source(index)`` giving its shift) each under ``checkpoint(..., use_reentrant=False)``, the global generator
    seeded with ``seed``: ``shifts[k]`` are the shifts block ``k`` was handed, in order, the first in the forward pass
    and the second when backward recomputes the block. The output is the forward pass's; the gradients are those of
    the recomputed activations."""
    from torch.utils.checkpoint import checkpoint

    blocks = copy.deepcopy(blocks)
    handed = [list(values) for values in shifts]
    for module in blocks.modules():
        if hasattr(module, "source"):
            module.source = lambda index: handed[index].pop(0)
    x = x.detach().clone().requires_grad_(x.requires_grad)
    h = x
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for block in blocks:
            h = checkpoint(block, h, use_reentrant=False)
        h.backward(upstream)
    return {"out": h.detach(), "x_grad": None if x.grad is None else x.grad.detach(),
            "grads": [(name, p.grad.detach()) for name, p in blocks.named_parameters()]}


def top_op(step):
    """The operator first in a profile of one call of ``step`` (after one call to warm up), by three rankings:
    ``{"self": by self CPU time (the answer), "total": by total CPU time, "called": called most often}``; the
    last two are the known mistakes the check tells by name. Only names: the times differ from run to run, and
    the kit's recorded answer must give the same message as the grader's."""
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    events = prof.key_averages()
    return {"self": max(events, key=lambda e: e.self_cpu_time_total).key,
            "total": max(events, key=lambda e: e.cpu_time_total).key,
            "called": max(events, key=lambda e: (e.count, e.self_cpu_time_total)).key}


def residual_relu(x, w, upstream):
    """``relu(x @ w) + x`` in float64 and its gradients with respect to ``x`` and ``w`` for ``upstream``; and
    ``"relu last"``, the known mistake ``relu(x @ w + x)``."""
    x64 = x.detach().double().requires_grad_(True)
    w64 = w.detach().double().requires_grad_(True)
    out = torch.relu(x64 @ w64) + x64
    gx, gw = torch.autograd.grad(out, (x64, w64), upstream.double())
    return {"out": out.detach(), "x_grad": gx, "w_grad": gw, "relu last": torch.relu(x64 @ w64 + x64).detach()}


def predictions(model, x):
    """``model(x)`` computed without a graph."""
    with torch.no_grad():
        return copy.deepcopy(model)(x)
