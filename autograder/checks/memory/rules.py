"""Source rules of the ``memory`` topic: what an answer must call, read from the submitted source.

``autograder.source_evidence.source_rules`` has rules for what an answer must *not* contain; checkpointing and ``no_grad`` are
things an answer must *use*, which no data the grader gets back can show (the same gradients come out of a plain
forward; a result that needs no gradient comes out of ``.detach()`` too). The grader reads them from the cells
(or, in process, the objects' own files), so the student's process has no say in them.
"""

import ast
from dataclasses import dataclass

from autograder.source_evidence.source_rules import Finding, SourceRule
from autograder.source_evidence.submitted_source import resolve_dotted


@dataclass(frozen=True)
class CallsWith(SourceRule):
    """``target`` (or a definition it reaches) calls ``name`` with each keyword of ``keywords`` set to its constant
    (``checkpoint(block, h, use_reentrant=False)``)."""

    name: str = ""
    keywords: tuple = ()      # ((keyword, constant), ...)
    kind = "calls"

    @property
    def hint(self):
        short = self.name.rsplit(".", 1)[-1]
        given = "".join(f", {k}={v!r}" for k, v in self.keywords)
        return f"Call `{short}(...{given})` from `{self.name.rsplit('.', 1)[0]}` in `{self.target}`."

    def describe(self):
        given = "".join(f", {k}={v!r}" for k, v in self.keywords)
        return f"`{self.target}` calls `{self.name}(...{given})`"

    def findings(self, answer):
        aliases = answer.aliases()
        for _, node in answer.nodes():
            if isinstance(node, ast.Call) and resolve_dotted(node.func, aliases) == self.name:
                given = {k.arg: k.value for k in node.keywords}
                if all(isinstance(given.get(k), ast.Constant) and given[k].value is v for k, v in self.keywords):
                    return []
        given = "".join(f", {k}={v!r}" for k, v in self.keywords)
        return [Finding(f"`{self.target}` never calls `{self.name}(...{given})`",
                        answer.definition.part.where(answer.definition.node))]



def calls_with(target, name, **keywords):
    return CallsWith(target, name, tuple(keywords.items()))



GRAD_OFF = ("torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad", "torch.inference_mode",
            "torch.autograd.inference_mode", "torch.autograd.grad_mode.inference_mode")
GRAD_ON = ("torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad")
GRAD_SET = ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled")
NOT_RUNNING = ("isinstance", "type", "print", "repr", "str", "id", "hasattr")   # calls that do not run a model


@dataclass(frozen=True)
class RunsWithoutGrad(SourceRule):
    """``target(model, ...)`` runs its first parameter only where autograd is off, as the grader reads its source:
    every use of ``model`` but a method other than ``forward`` (``model.eval()``) sits inside ``with
    torch.no_grad():`` / ``torch.inference_mode()`` / ``torch.set_grad_enabled(False)``, or ``target`` is decorated
    with one of them, and nothing in it or what it calls switches grad mode by a statement
    (``torch.set_grad_enabled(...)`` called alone). The nearest enclosing grad-mode ``with`` decides
    (``torch.enable_grad()`` inside ``no_grad`` turns it back on)."""

    kind = "runs without grad"
    hint = ("Run the model inside `with torch.no_grad():` (or `torch.inference_mode()`) and return its output from "
            "there; `.detach()` after the forward pass, a `no_grad` block that does not hold the call, or "
            "`torch.set_grad_enabled(False)` as a statement do not keep autograd from recording the forward pass.")

    def describe(self):
        return (f"`{self.target}` calls its model only inside `torch.no_grad()`, `torch.inference_mode()` or "
                "`torch.set_grad_enabled(False)` (a `with` or a decorator)")

    def findings(self, answer):
        aliases = answer.aliases()
        part, node = answer.definition.part, answer.definition.node
        found = [Finding(f"`{self.target}` switches grad mode with a statement (`{resolve_dotted(n.func, aliases)}"
                         "(...)` outside a `with`)", where.where(n))
                 for where, n in _statement_switches(answer, aliases)]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.args.args:
            return found + [Finding(f"the grader cannot read where `{self.target}` runs its model: write it as "
                                    f"`def {self.target}(model, x):`", part.where(node))]
        model = node.args.args[0].arg
        off = any(_grad_mode(d, aliases) is False for d in node.decorator_list)
        uses = list(_model_uses(node.body, model, off, aliases))
        found += [Finding(f"`{self.target}` uses `{model}` where autograd records (outside `no_grad`)", part.where(n))
                  for n, grad_off in uses if not grad_off]
        if not uses:
            found.append(Finding(f"`{self.target}` never runs `{model}`", part.where(node)))
        return found


def runs_without_grad(target):
    return RunsWithoutGrad(target)


def _grad_mode(expr, aliases):
    """False for a context manager or decorator that turns autograd off, True for one that turns it on, None for
    anything else (not a grad-mode manager)."""
    call = expr if isinstance(expr, ast.Call) else None
    name = resolve_dotted(call.func if call else expr, aliases)
    args = [*call.args, *(k.value for k in call.keywords)] if call else []
    if name in GRAD_ON:
        return True
    if name in GRAD_OFF:
        return "inference_mode" in name and bool(args) and _constant(args[0]) is not True
    if name in GRAD_SET and call is not None:
        return False if len(args) == 1 and _constant(args[0]) is False else True
    return None


_UNKNOWN = object()


def _constant(node):
    return node.value if isinstance(node, ast.Constant) else _UNKNOWN


def _model_uses(body, model, off, aliases):
    """``(node, off)`` for every use of the name ``model`` in ``body`` that may run it, and whether autograd is off
    there (lexically). A nested ``def`` or ``lambda`` counts as where autograd records: when it runs is not read."""
    for statement in body:
        yield from _uses_in(statement, model, off, aliases)


def _uses_in(node, model, off, aliases):
    if isinstance(node, (ast.With, ast.AsyncWith)):
        inner = off
        for item in node.items:
            yield from _uses_in(item.context_expr, model, off, aliases)
            mode = _grad_mode(item.context_expr, aliases)
            if mode is not None:
                inner = not mode
        for statement in node.body:
            yield from _uses_in(statement, model, inner, aliases)
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        off = False
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == model:
        if node.attr in ("forward", "__call__"):
            yield node, off
        return
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NOT_RUNNING
            and node.func.id not in aliases):
        return
    if isinstance(node, ast.Name) and node.id == model and isinstance(node.ctx, ast.Load):
        yield node, off
        return
    for child in ast.iter_child_nodes(node):
        yield from _uses_in(child, model, off, aliases)


def _statement_switches(answer, aliases):
    """``(part, call)`` for every call of ``set_grad_enabled`` / ``enable_grad`` in what the answer reaches that is
    not the context manager of a ``with`` nor a decorator (a statement that switches grad mode for the process)."""
    managed = set()
    for _, node in answer.nodes():
        if isinstance(node, (ast.With, ast.AsyncWith)):
            managed.update(id(item.context_expr) for item in node.items)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            managed.update(id(d) for d in node.decorator_list)
    for part, node in answer.nodes():
        if (isinstance(node, ast.Call) and id(node) not in managed
                and resolve_dotted(node.func, aliases) in (*GRAD_SET, *GRAD_ON)):
            yield part, node
