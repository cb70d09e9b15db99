"""Source rules of the ``vectorization`` topic's compile items: what breaks ``torch.compile``'s one graph, read from
the submitted source.

That ``masked_batch_mean`` compiles into one graph is what the compile session and ``torch._dynamo.explain`` report,
and they run in the student's process: their word can only cost (docs/security.md). What earns the points is the
data (the compiled result, judged here) and the source: no loop (``no_loop``), no ``.item()`` / ``.tolist()`` /
``nonzero`` (``no_call``), and, here, no decision on a tensor's *values*: an ``if``, ``while``, conditional
expression or ``and`` / ``or`` on a value computed from the tensors (``if lengths.min() == T:``), ``int(t)``,
``float(t)``, ``bool(t)``, ``print`` and ``.numpy()``. Sizes, dtypes and devices are not values
(``x.shape[1]``, ``x.dim()``, ``lengths.numel()``): dynamo traces decisions on them.

What is a tensor is read by a plain pass over the names: every parameter of the answer and of the functions it
reaches, and every name assigned from an expression that uses one (other than through a size, a dtype or a device).
"""

import ast
from dataclasses import dataclass

from autograder.source_evidence.source_rules import Finding, SourceRule

METADATA_ATTRIBUTES = {"shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad", "is_leaf", "names",
                       "is_sparse", "is_quantized", "is_meta"}
METADATA_METHODS = {"dim", "size", "numel", "nelement", "is_floating_point", "is_complex", "element_size",
                    "ndimension", "is_contiguous", "stride", "storage_offset", "get_device", "type", "is_signed",
                    "is_tensor"}
PLAIN_CALLS = {"len", "isinstance", "type", "hasattr", "callable", "id", "range", "getattr"}
TO_VALUE = {"int", "float", "bool", "complex"}
BREAKING = {"print"}


@dataclass(frozen=True)
class NoValueBranch(SourceRule):
    """``target`` (and what it reaches) decides nothing on a tensor's values (see the module's docstring)."""

    kind = "no value branch"
    hint = ("Decide with tensor operations instead of Python: `torch.where(cond, a, b)` or a mask, not `if` on a "
            "tensor's values; sizes (`x.shape[1]`) are fine.")

    def describe(self):
        return f"no `if`, `while`, `int()`, `bool()`, `print` or `.numpy()` on tensor values in `{self.target}`"

    def findings(self, answer):
        found = []
        for definition in answer.reached:
            node, part = definition.node, definition.part
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            tensors = _tensor_names(node)
            for inner in ast.walk(node):
                what = _value_decision(inner, tensors)
                if what:
                    found.append(Finding(f"`{self.target}` {what}", part.where(inner)))
        return found


def no_value_branch(target):
    return NoValueBranch(target)


def _tensor_names(function):
    """The names of ``function`` that may hold a tensor: its parameters, then every name assigned from them."""
    args = function.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
    changed = True
    while changed:
        changed = False
        for node in ast.walk(function):
            targets, value = _assignment(node)
            if value is not None and _uses_values(value, names):
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and name.id not in names:
                            names.add(name.id)
                            changed = True
    return names


def _assignment(node):
    if isinstance(node, ast.Assign):
        return node.targets, node.value
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
        return [node.target], node.value
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.target], node.iter
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars], node.context_expr
    return [], None


def _uses_values(expr, tensors):
    """Whether ``expr`` computes with a tensor's values (not only its size, dtype or device)."""
    if isinstance(expr, ast.Name):
        return expr.id in tensors
    if isinstance(expr, ast.Attribute):
        return expr.attr not in METADATA_ATTRIBUTES and _uses_values(expr.value, tensors)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in METADATA_METHODS:
            return False
        if isinstance(func, ast.Name) and func.id in PLAIN_CALLS:
            return False
        parts = [*expr.args, *(k.value for k in expr.keywords)]
        if isinstance(func, ast.Attribute):
            parts.append(func.value)
        return any(_uses_values(p, tensors) for p in parts)
    if isinstance(expr, (ast.Lambda, ast.FunctionDef)):
        return False
    return any(_uses_values(child, tensors) for child in ast.iter_child_nodes(expr))


def _value_decision(node, tensors):
    """Words for ``node`` when it decides on a tensor's values (or hands them to Python), else ``None``."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp)) and _uses_values(node.test, tensors):
        kind = {ast.If: "an `if`", ast.While: "a `while`", ast.IfExp: "a conditional expression"}[type(node)]
        return f"decides with {kind} on a tensor's values (a graph break)"
    if isinstance(node, ast.BoolOp) and any(_uses_values(v, tensors) for v in node.values[:-1]):
        return "uses `and` / `or` on a tensor's values (a graph break)"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in TO_VALUE and any(_uses_values(a, tensors) for a in node.args):
            return f"turns a tensor into a Python number with `{node.func.id}()` (a graph break)"
        if node.func.id in BREAKING:
            return f"calls `{node.func.id}` (a graph break)"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy":
        return "calls `.numpy()` (a graph break)"
    return None
