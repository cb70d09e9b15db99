"""What the stability checks run where the student's code lives: the inspection of a custom ``Softplus``.

A probe reports what the student's process says about itself: it may explain a failure or cost points, never earn
them (docs/security.md).
"""

import torch

from autograder.seam.probes import probe


def function_problem(Softplus):
    """Why ``Softplus`` is not a custom autograd Function with its own forward and backward; ``None`` if it is."""
    if not isinstance(Softplus, type):
        return f"`Softplus` should be a class, got {type(Softplus).__name__}."
    if not issubclass(Softplus, torch.autograd.Function):
        return "`Softplus` should subclass `torch.autograd.Function`."
    own = {name for cls in Softplus.__mro__ if cls.__module__.split(".")[0] != "torch" for name in vars(cls)}
    missing = [name for name in ("forward", "backward") if name not in own
               and not (name == "backward" and "vjp" in own)]
    if missing:
        return f"`Softplus` does not define its own {' and '.join(missing)} (it inherits torch's, which raise)."
    return None


@probe
def custom_backward_facts(Softplus, softplus, x):
    """What ``softplus(x)``'s autograd graph says about ``Softplus``, as plain data (run where the student's code
    lives: see ``autograder.seam.remote.beside``): ``{"problem": why Softplus is not a custom Function or None,
    "made_by": the output's grad_fn type name or None, "is_node": whether that is Softplus's node, "depth": how
    far below it Softplus's node lies or None, "raised": "Type: message" when softplus raised}``."""
    problem = function_problem(Softplus)
    if problem:
        return {"problem": problem}
    try:
        out = softplus(x)
    except Exception as error:  # noqa: BLE001 - the trusted side calls it again for the student-facing message
        return {"problem": None, "raised": f"{type(error).__name__}: {error}"}
    if not isinstance(out, torch.Tensor):
        return {"problem": None, "made_by": None, "is_node": False, "depth": None, "not_tensor": type(out).__name__}
    node_type = getattr(Softplus, "_backward_cls", None)
    grad_fn = out.grad_fn
    is_node = grad_fn is not None and node_type is not None and isinstance(grad_fn, node_type)
    depth = backward_nodes(out, node_type) if node_type is not None and grad_fn is not None else None
    return {"problem": None, "made_by": None if grad_fn is None else type(grad_fn).__name__, "is_node": is_node,
            "depth": depth}


def backward_nodes(out, node_type, limit=200):
    """How far (in graph steps) the nearest node of ``node_type`` lies below ``out.grad_fn``; ``None`` if absent."""
    seen, frontier, depth = set(), [out.grad_fn], 0
    while frontier and len(seen) < limit:
        nxt = []
        for node in frontier:
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, node_type):
                return depth
            nxt.extend(n for n, _ in node.next_functions)
        frontier, depth = nxt, depth + 1
    return None
