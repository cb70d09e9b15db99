"""Source rule of the ``basics`` topic: ``grad_of`` and ``to_numpy`` leave the flag of the caller's tensor alone.

After ``grad_of(f, x)`` (and ``to_numpy(t)``) the caller's tensor must have the ``requires_grad`` it had. That flag
lives in the student's process: the gradient (the array) that comes back is right either way, and the flag reported
after the call is the worker's word. What the grader can read is whether the code sets the flag on the object it was given: ``requires_grad_``,
``detach_``, ``.requires_grad =``, ``setattr(..., "requires_grad", ...)`` on an expression that may be that object.

Each such change is classified by what its receiver can be, with Python's scoping of the function it sits in:

* *new*: a tensor the code made (``x.detach()``, ``x.clone()``, ``torch.tensor(...)``, arithmetic, ``x.data``), or a
  name every binding of which is one (a parameter rebound so before the change, in the function's own statements).
  ``x.detach().requires_grad_(True)`` is the lesson's answer.
* *the argument*: the parameter ``x`` itself, never rebound, or a name bound only to it.
* *undecided*: anything else (``x.to(dtype)`` and ``x.float()``, which return ``x`` itself when nothing changes; a
  helper's parameter; an element of a container; a global; a flag saved and set back).

One change of the argument's flag to a constant, and no other change that could touch it, is the mistake: the item
fails on the source. Any other change of what may be the argument is undecided: the item goes to the instructor's
review (``undecided``), never to points. Code that changes no flag but on new tensors earns the item on its data.
Not read: ``.grad`` of the argument (a ``.backward()`` through it changes its leaf's ``.grad``), which the worker
reports and which can only cost (docs/security.md).
"""

import ast
from dataclasses import dataclass

from autograder.source_evidence.source_rules import Finding, SourceRule
from autograder.source_evidence.submitted_source import resolve_dotted

FLAG_METHODS = ("requires_grad_", "detach_")
NEW_METHODS = ("detach", "clone", "new_tensor", "new_zeros", "new_ones", "new_empty", "new_full")
# methods that may return their receiver itself (``x.to(x.dtype) is x``): as new as their receiver
SAME_METHODS = ("to", "float", "double", "half", "bfloat16", "contiguous", "cpu", "cuda", "type", "type_as",
                "requires_grad_", "detach_", "view", "view_as", "reshape", "reshape_as", "flatten", "squeeze",
                "unsqueeze", "expand", "expand_as", "t", "transpose", "permute", "retain_grad")
NEW_FUNCTIONS = ("torch.tensor", "torch.clone", "torch.detach", "torch.zeros_like", "torch.ones_like",
                 "torch.empty_like", "torch.full_like", "torch.rand_like", "torch.randn_like", "torch.zeros",
                 "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn", "torch.arange",
                 "torch.linspace", "torch.stack", "torch.cat", "copy.deepcopy", "copy.copy")
TENSOR_FLAG_FUNCTIONS = ("torch.Tensor.requires_grad_", "torch.Tensor.detach_")
NEW, ARGUMENT, UNDECIDED = "new", "the argument", "undecided"
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class LeavesArgumentFlag(SourceRule):
    """``target(..., x)`` sets ``requires_grad`` on no object that may be its argument ``x`` (the parameter at
    ``position``), in its own code or in anything it reaches."""

    position: int = 1
    kind = "leaves the argument's flag"

    @property
    def hint(self):
        return (f"Leave the caller's tensor alone in `{self.target}`: change `requires_grad` only on a tensor you made "
                "(`x.detach().requires_grad_(True)` is a new leaf), never on the argument itself.")

    def describe(self):
        return f"`{self.target}` changes `requires_grad` of no object that may be its argument"

    def findings(self, answer):
        changes = _changes(answer, self.position)
        touching = [c for c in changes if c[2] != NEW]
        if len(touching) == 1 and touching[0][2] == ARGUMENT and touching[0][3]:
            part, node, _, _, argument = touching[0]
            return [Finding(f"`{self.target}` changes `requires_grad` of its argument `{argument}` and never sets "
                            "it back", part.where(node))]
        return []

    def undecided(self, answer):
        """``[Finding]``: each change of a flag whose receiver may be the argument, where :meth:`findings` found no
        mistake: the instructor reviews it."""
        if self.findings(answer):
            return []
        return [Finding(f"`{self.target}` changes `requires_grad` of "
                        + (f"its argument `{argument}`" if kind == ARGUMENT else
                           f"`{ast.unparse(receiver)[:60]}`, which may be the caller's `{argument}`")
                        + ": the grader cannot tell from the source whether it is left as it was", part.where(node))
                for part, node, kind, _, argument, receiver in _changes(answer, self.position, receivers=True)
                if kind != NEW]


def leaves_argument_flag(target, position=1):
    return LeavesArgumentFlag(target, position)


def _changes(answer, position, receivers=False):
    """``(part, node, kind, constant, argument name)`` (and the receiver, with ``receivers``) for every change of a
    ``requires_grad`` flag in what the answer reaches; ``constant``: it sets the flag to a constant."""
    arguments = {}
    for start in answer.starts:
        node = start.node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = [*node.args.posonlyargs, *node.args.args]
            if len(params) > position:
                arguments[id(node)] = params[position].arg
    found = []
    for definition in answer.reached:
        parents = {}
        for parent in ast.walk(definition.node):
            for child in ast.iter_child_nodes(parent):
                parents[id(child)] = parent
        for node in ast.walk(definition.node):
            change = _change(node, answer)
            if change is None:
                continue
            receiver, constant = change
            scope = _scope_of(node, parents)
            argument = arguments.get(id(scope), "x")
            kind = _kind(receiver, scope, parents, arguments, set()) if scope is not None else UNDECIDED
            found.append((definition.part, node, kind, constant, argument) + ((receiver,) if receivers else ()))
    return found


def _change(node, answer):
    """``(receiver, sets a constant)`` when ``node`` changes a tensor's ``requires_grad``."""
    if isinstance(node, ast.Call):
        func = node.func
        args = [*node.args, *(k.value for k in node.keywords)]
        if node.args and resolve_dotted(func, answer.aliases()) in TENSOR_FLAG_FUNCTIONS:
            return node.args[0], len(args) < 2 or isinstance(args[1], ast.Constant)
        if isinstance(func, ast.Attribute) and func.attr in FLAG_METHODS:
            constant = func.attr == "detach_" or not args or isinstance(args[0], ast.Constant)
            return func.value, constant
        if isinstance(func, ast.Name) and func.id == "setattr" and len(node.args) >= 2:
            name = node.args[1]
            if not isinstance(name, ast.Constant) or name.value == "requires_grad":
                return node.args[0], len(node.args) > 2 and isinstance(node.args[2], ast.Constant)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
                return target.value, isinstance(node.value, ast.Constant)
    return None


def _scope_of(node, parents):
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, SCOPES):
            return node
    return None


def _kind(expr, scope, parents, arguments, seen):
    """What ``expr``, evaluated in the function ``scope``, can be: :data:`NEW`, :data:`ARGUMENT` or
    :data:`UNDECIDED`."""
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in NEW_METHODS:
            return NEW
        if isinstance(func, ast.Attribute) and func.attr in SAME_METHODS:     # the receiver, or a new tensor
            return NEW if _kind(func.value, scope, parents, arguments, seen) == NEW else UNDECIDED
        if isinstance(func, (ast.Name, ast.Attribute)) and _dotted(func) in NEW_FUNCTIONS:
            return NEW
        return UNDECIDED
    if isinstance(expr, ast.Attribute):
        if expr.attr == "data":
            return NEW
        if expr.attr in ("T", "mT", "H", "mH"):
            return NEW if _kind(expr.value, scope, parents, arguments, seen) == NEW else UNDECIDED
        return UNDECIDED
    if isinstance(expr, ast.BinOp) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub)):
        return NEW
    if isinstance(expr, ast.NamedExpr):
        return _kind(expr.value, scope, parents, arguments, seen)
    if isinstance(expr, ast.IfExp):
        kinds = {_kind(expr.body, scope, parents, arguments, seen),
                 _kind(expr.orelse, scope, parents, arguments, seen)}
        return kinds.pop() if len(kinds) == 1 else UNDECIDED
    if isinstance(expr, ast.Name):
        return _name_kind(expr, scope, parents, arguments, seen)
    return UNDECIDED


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    dotted = ".".join(reversed(parts))
    return {"copy.deepcopy": "copy.deepcopy", "deepcopy": "copy.deepcopy"}.get(dotted, dotted)


def _name_kind(name, scope, parents, arguments, seen):
    key = (id(scope), name.id)
    if key in seen:
        return UNDECIDED
    seen = seen | {key}
    if isinstance(scope, ast.Lambda):
        return UNDECIDED
    params = {a.arg for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs,
                              *(a for a in (scope.args.vararg, scope.args.kwarg) if a))}
    declared = any(isinstance(n, (ast.Global, ast.Nonlocal)) and name.id in n.names for n in _own_nodes(scope))
    bindings = list(_bindings(scope, name.id))
    if declared or (name.id not in params and not bindings):
        return UNDECIDED          # a global or a closure's name: what it holds is not read
    if name.id in params:
        if not bindings:
            return ARGUMENT if arguments.get(id(scope)) == name.id else UNDECIDED
        first_index, _ = bindings[0]
        use_index = _statement_index(name, scope, parents)
        if use_index is None:
            return UNDECIDED
        if all(index is not None and use_index < index for index, _ in bindings):    # not rebound yet
            return ARGUMENT if arguments.get(id(scope)) == name.id else UNDECIDED
        fresh = all(value is not None and _kind(value, scope, parents, arguments, seen) == NEW
                    for _, value in bindings)
        return NEW if fresh and first_index is not None and first_index < use_index else UNDECIDED
    kinds = {_kind(value, scope, parents, arguments, seen) if value is not None else UNDECIDED
             for _, value in bindings}
    return kinds.pop() if len(kinds) == 1 else UNDECIDED


def _own_nodes(scope):
    """The nodes of ``scope``'s body, not those of the functions, lambdas and classes defined in it."""
    todo = list(scope.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (*SCOPES, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _bindings(scope, name):
    """``(index of the statement of scope.body it is, or None when nested; the value bound, or None when not
    read)`` for every binding of ``name`` in ``scope``'s own code, in source order."""
    found = []
    for index, statement in enumerate(scope.body):
        for node in [statement] if isinstance(statement, (*SCOPES, ast.ClassDef)) else _walk_own(statement):
            top = index if node is statement else None
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id == name:
                        found.append((top, node.value))
                    elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)) and any(
                            isinstance(t, ast.Name) and t.id == name for t in ast.walk(target)):
                        found.append((None, None))      # unpacked: the value is not read
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) \
                    and node.target.id == name:
                found.append((top, node.value if isinstance(node, ast.AnnAssign) else None))
            elif isinstance(node, ast.NamedExpr) and node.target.id == name:
                found.append((None, node.value))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.ExceptHandler, ast.Import,
                                   ast.ImportFrom, ast.comprehension)):
                bound = _bound_names(node)
                if name in bound:
                    found.append((None, None))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found.append((top, None))
    return found


def _walk_own(statement):
    todo = [statement]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, (*SCOPES, ast.ClassDef)))


def _bound_names(node):
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return {n.id for item in node.items if item.optional_vars for n in ast.walk(item.optional_vars)
                if isinstance(n, ast.Name)}
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    return {(a.asname or a.name).split(".")[0] for a in node.names}


def _statement_index(node, scope, parents):
    """The index in ``scope.body`` of the statement that holds ``node``."""
    while id(node) in parents:
        parent = parents[id(node)]
        if parent is scope:
            return scope.body.index(node) if node in scope.body else None
        node = parent
    return None
