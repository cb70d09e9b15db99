"""Rules on how an answer is written, declared per graded item and read from the submitted source.

A rule is declared beside its check, in the spec: ``@graded(1, source=[no_loop("row_sum")])``. The grader reads the
answer from the cells it was given (:mod:`autograder.source_evidence.submitted_source`), so a student cannot forge this evidence:
what the worker says about itself is not consulted. A rule that is broken fails its item with a message naming the
construct, its cell and line, and a hint (:func:`expect_source`). Anchors: CS61A ``ok``'s AST constraints ("no
loops"), PrairieLearn's disallowed functions.

Rules:

* :func:`no_loop` ``(target)``: no ``for``/``while``, no comprehension or generator, no recursion, no
  ``sum``/``map``/``filter`` builtin, ``functools.reduce`` or ``itertools`` (found by the object a dotted name is in
  the grader: ``_functools.reduce`` is ``functools.reduce``) in the answer or anything it reaches. A loop over an
  argument's dimensions (``x.shape``, ``x.size()``, ``range(x.dim())``: at most its number of dimensions) or over a
  model argument's parameters (``model.named_parameters()``) is not a loop over the data.
* :func:`no_call` ``(target, *names)``: none of ``names`` (``"softmax"``, ``"logsumexp"``...) in any spelling the
  AST can see: ``torch.softmax``, ``F.softmax``, ``torch.nn.functional.softmax``, ``torch.special.softmax``,
  ``nn.Softmax``, ``from torch import softmax as s``, ``x.softmax(...)``, ``getattr(torch, "softmax")``, an alias.
  A method of the student's own class with that name is theirs, not the builtin.
* :func:`made_by` ``(target, name)``: the answer is the result of ``name`` (``scripted = torch.jit.script(loop)``,
  or a ``def`` decorated with it).
* :func:`uses` ``(target, *names)``: the answer, or something it reaches, names one of ``names`` (dotted:
  ``"torch.func.vmap"``) in a spelling the AST can see: ``torch.func.vmap(...)``, ``from torch.func import vmap``,
  ``import torch.func as tf; tf.vmap``, ``getattr(torch.func, "vmap")``, an alias. Where the exercise is to use a
  tool, with :func:`no_loop` beside it: a mention alone proves no use, but the data must be right without a loop.
* :func:`safe_load` ``(target)``: every ``torch.load`` passes ``weights_only=True`` or keeps its default (True
  since torch 2.6), and nothing of ``pickle``/``dill``/``marshal``/``joblib`` is called.
* :func:`autograd_function` ``(cls_target, fn_target)``: ``cls_target`` subclasses ``torch.autograd.Function`` with
  ``forward`` and ``backward`` staticmethods, and ``fn_target`` uses ``cls_target.apply``.
"""

import ast
from dataclasses import dataclass

from autograder.errors import CheckFailure
from autograder.source_evidence.submitted_source import BUILTINS, GLOBAL, Where, known_object, resolve_dotted

LOOP_NODES = {ast.For: "a `for` loop", ast.AsyncFor: "an `async for` loop", ast.While: "a `while` loop",
              ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension",
              ast.DictComp: "a dict comprehension", ast.GeneratorExp: "a generator expression"}
LOOPING_BUILTINS = ("sum", "map", "filter")
LOOPING_CALLS = ("functools.reduce", "itertools.")
METADATA = ("shape", "size", "stride", "dim", "ndim", "ndimension")     # an argument's dimensions, not its data
MODEL_PARTS = ("parameters", "named_parameters", "buffers", "named_buffers")


@dataclass(frozen=True)
class Finding:
    """A construct found in the source: what it is, and where (cell or file, line, the line's text)."""

    construct: str
    where: object
    code: str = ""        # under review: the digest of the code the item's answers run (what a decision is about)

    def text(self):
        snippet = f": `{self.where.snippet}`" if self.where.snippet else ""
        return f"{self.construct} ({self.where}{snippet})"

    def as_dict(self):
        found = {"construct": self.construct, "part": self.where.part, "line": self.where.line,
                 "snippet": self.where.snippet}
        return {**found, "code": self.code} if self.code else found


def normalized(name):
    return name.replace("_", "").lower()


@dataclass(frozen=True)
class SourceRule:
    target: str

    kind = "rule"
    hint = ""

    def describe(self):
        return f"{self.kind}({self.target})"

    def findings(self, answer):
        raise NotImplementedError


@dataclass(frozen=True)
class NoLoop(SourceRule):
    kind = "no loop"
    hint = "Replace the loop with one vectorized operation over the whole tensor."

    def describe(self):
        return f"no loop in `{self.target}`"

    def findings(self, answer):
        found = []
        names, submission = answer.aliases(), answer.submission
        for part, node in answer.nodes():
            for kind, what in LOOP_NODES.items():
                if isinstance(node, kind) and not _over_dimensions(node, submission):
                    found.append(Finding(f"`{self.target}` uses {what}", part.where(node)))
            if isinstance(node, ast.Call):
                if (isinstance(node.func, ast.Name) and node.func.id in LOOPING_BUILTINS
                        and submission.is_builtin(node.func) and not _over_dimensions(node, submission)):
                    found.append(Finding(f"`{self.target}` calls Python's `{node.func.id}`, a loop over the "
                                         "tensor's first dimension", part.where(node)))
                dotted = resolve_dotted(node.func, names) or ""
                if _looping_call(dotted):
                    found.append(Finding(f"`{self.target}` calls `{dotted}`, a loop", part.where(node)))
        for part, node in answer.recursion():
            found.append(Finding(f"`{self.target}` reaches `{node.name}`, which calls itself (recursion is a loop)",
                                 part.where(node)))
        return found


def _looping_call(dotted):
    if not dotted or "." not in dotted:
        return False
    if dotted.startswith(LOOPING_CALLS):
        return True
    import functools
    import itertools
    obj = known_object(dotted)
    return obj is not None and (obj is functools.reduce or getattr(obj, "__module__", None) == "itertools"
                                or obj in (sum, map, filter) or type(obj).__module__ == "itertools")


def _over_dimensions(node, submission):
    """A comprehension (or ``sum(...)``) whose only iterable is an argument's dimensions or a model argument's
    parameters: ``x.shape``, ``x.size()``, ``range(x.dim())``, ``range(len(x.shape))``, ``model.named_parameters()``
    where ``x``/``model`` is a parameter of the function it is in."""
    if isinstance(node, ast.Call):
        iterables = node.args[:1]
        if iterables and isinstance(iterables[0], (ast.GeneratorExp, ast.ListComp)):
            return _over_dimensions(iterables[0], submission)
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        if len(node.generators) != 1:
            return False
        iterables = [node.generators[0].iter]
    else:
        return False
    return bool(iterables) and all(_dimensions_of_argument(i, submission) for i in iterables)


def _dimensions_of_argument(node, submission):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("range", "len", "enumerate"):
        return (submission.is_builtin(node.func) and len(node.args) == 1
                and _dimensions_of_argument(node.args[0], submission))
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func
        if isinstance(node, ast.Attribute) and node.attr in MODEL_PARTS:
            return _argument(node.value, submission)
    return isinstance(node, ast.Attribute) and node.attr in METADATA and _argument(node.value, submission)


def _argument(node, submission):
    """``node`` is a name the function received as a parameter (the grader's data), and never rebinds."""
    if not isinstance(node, ast.Name) or submission.kind(node) == GLOBAL:
        return False
    scopes = submission.scopes_of.get(id(node))
    table = scopes.table_of_node.get(id(node)) if scopes else None
    try:
        symbol = table.lookup(node.id)
    except (KeyError, AttributeError):
        return False
    return symbol.is_parameter() and not symbol.is_assigned()


@dataclass(frozen=True)
class NoCall(SourceRule):
    names: tuple = ()
    kind = "no builtin"

    @property
    def hint(self):
        return f"Build it from elementary operations, without {', '.join(f'`{n}`' for n in self.names)}."

    def describe(self):
        return f"no {', '.join(self.names)} in `{self.target}`"

    def findings(self, answer):
        wanted = {normalized(n) for n in self.names}
        aliases, own = answer.aliases(), answer.own_names()
        found, seen = [], set()
        for part, node in answer.nodes():
            name = None
            if isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
                dotted = resolve_dotted(node, aliases)
                if dotted and dotted.split(".")[0] == "torch" and any(
                        normalized(c) in wanted for c in dotted.split(".")[1:]):
                    name = dotted
            what = " (a tensor method)"
            if (name is None and isinstance(node, ast.Attribute) and normalized(node.attr) in wanted
                    and not _own_receiver(node, aliases, own)):
                name = f".{node.attr}"
                if isinstance(node.value, ast.Name) and answer.submission.kind(node.value) == GLOBAL:
                    what = f" (an attribute of `{node.value.id}`, an object the reading cannot name)"
            if name and (part.label, getattr(node, "lineno", 0), name) not in seen:
                seen.add((part.label, getattr(node, "lineno", 0), name))
                found.append(Finding(f"`{self.target}` uses `{name.lstrip('.') if name.startswith('.') else name}`"
                                     + (what if name.startswith(".") else "")
                                     + ", which this exercise forbids", part.where(node)))
        return _outermost(found)


def _outermost(found):
    """One finding per line and construct (``torch.nn.functional.softmax`` is also ``torch.nn.functional``'s
    attribute: keep the longest name)."""
    best = {}
    for finding in found:
        key = (finding.where.part, finding.where.line)
        if key not in best or len(finding.construct) > len(best[key].construct):
            best[key] = finding
    return list(best.values())


def _own_receiver(node, aliases, own):
    """Whether ``node`` (``receiver.name``) is an attribute of the student's own object: ``self``/``cls`` in a class
    that defines ``name``, or a class or function the submission defines with ``def``/``class`` (a name bound to
    anything else, ``_T = [torch][0]``, could be any object)."""
    receiver = node.value
    if isinstance(receiver, ast.Name):
        if receiver.id in ("self", "cls"):
            return node.attr in own
        if receiver.id in own and receiver.id not in aliases and aliases.submission.kind(receiver) == GLOBAL:
            return True
    return False


@dataclass(frozen=True)
class MadeBy(SourceRule):
    name: str = ""
    kind = "made by"

    @property
    def hint(self):
        return f"Assign `{self.target} = {self.name}(...)` in your cell."

    def describe(self):
        return f"`{self.target}` is made by `{self.name}`"

    def findings(self, answer):
        node, aliases = answer.definition.node, answer.aliases()
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            if resolve_dotted(node.value.func, aliases) == self.name:
                return []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                called = decorator.func if isinstance(decorator, ast.Call) else decorator
                if resolve_dotted(called, aliases) == self.name:
                    return []
        return [Finding(f"`{self.target}` is not made by `{self.name}(...)`", answer.definition.part.where(node))]


@dataclass(frozen=True)
class Uses(SourceRule):
    names: tuple = ()
    kind = "uses"

    @property
    def hint(self):
        return f"Write `{self.target}` with `{self.names[0]}`, as the exercise asks."

    def describe(self):
        first = list({n.rsplit(".", 1)[-1]: n for n in reversed(self.names)}.values())[::-1]   # one spelling each
        spellings = " (in any of its spellings)" if len(first) < len(self.names) else ""
        return f"`{self.target}` uses {' or '.join(f'`{n}`' for n in first)}{spellings}"

    def findings(self, answer):
        aliases = answer.aliases()
        for _, node in answer.nodes():
            if isinstance(node, (ast.Name, ast.Attribute, ast.Call)) and resolve_dotted(node, aliases) in self.names:
                return []
        definition = answer.definition
        return [Finding(f"`{self.target}` does not use {' or '.join(f'`{n}`' for n in self.names)}",
                        definition.part.where(definition.node))]


@dataclass(frozen=True)
class AutogradFunction(SourceRule):
    function: str = ""
    kind = "autograd.Function"
    hint = ("Subclass `torch.autograd.Function` with `@staticmethod def forward(ctx, x)` and `@staticmethod def "
            "backward(ctx, grad_output)`, and return `Softplus.apply(x)` from your function.")

    def describe(self):
        return f"`{self.target}` subclasses `torch.autograd.Function`, `{self.function}` uses `{self.target}.apply`"

    def findings(self, answer, function_answer=None):
        node, part, aliases = answer.definition.node, answer.definition.part, answer.aliases()
        if not isinstance(node, ast.ClassDef):
            return [Finding(f"`{self.target}` is not a class", part.where(node))]
        found = []
        bases = {resolve_dotted(b, aliases) for b in node.bases}
        if not bases & {"torch.autograd.Function", "torch.autograd.function.Function"}:
            found.append(Finding(f"`{self.target}` does not subclass `torch.autograd.Function`", part.where(node)))
        methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for name in ("forward", "backward"):
            method = methods.get(name)
            if method is None:
                found.append(Finding(f"`{self.target}` defines no `{name}`", part.where(node)))
            elif not any(resolve_dotted(d, aliases) in ("staticmethod", "builtins.staticmethod")
                         for d in method.decorator_list):
                found.append(Finding(f"`{self.target}.{name}` is not a `@staticmethod`", part.where(method)))
        if function_answer is not None and not any(
                isinstance(n, ast.Attribute) and n.attr == "apply" and isinstance(n.value, ast.Name)
                and n.value.id == self.target for _, n in function_answer.nodes()):
            found.append(Finding(f"`{self.function}` does not call `{self.target}.apply`",
                                 function_answer.definition.part.where(function_answer.definition.node)))
        return found


@dataclass(frozen=True)
class SafeLoad(SourceRule):
    kind = "safe load"
    hint = "Load with `torch.load(path, weights_only=True)`: it rebuilds tensors and plain data and runs nothing."

    def describe(self):
        return f"every `torch.load` in `{self.target}` keeps `weights_only=True`; no `pickle`"

    def findings(self, answer):
        found, aliases = [], answer.aliases()
        for part, node in answer.nodes():
            if not isinstance(node, ast.Call):
                continue
            called = resolve_dotted(node.func, aliases) or ""
            if called.split(".")[0] in ("pickle", "dill", "cloudpickle", "marshal", "shelve", "joblib"):
                found.append(Finding(f"`{self.target}` calls `{called}`, which can run any code a file holds",
                                     part.where(node)))
            elif called in ("torch.load", "torch.serialization.load"):
                given = {k.arg: k.value for k in node.keywords}
                if None in given or ("weights_only" in given and not _true(given["weights_only"], answer)):
                    found.append(Finding(f"`{self.target}` calls `{called}` without `weights_only=True`",
                                         part.where(node)))
        return found


def _true(value, answer):
    """``value`` is the constant True, or a parameter whose default is True and that nothing assigns again."""
    if isinstance(value, ast.Constant):
        return value.value is True
    if not isinstance(value, ast.Name):
        return False
    nodes = [node for _, node in answer.nodes()]
    if any(isinstance(n, ast.Name) and n.id == value.id and isinstance(n.ctx, (ast.Store, ast.Del)) for n in nodes):
        return False
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                if arg.arg == value.id:
                    return isinstance(default, ast.Constant) and default.value is True
    return False


def safe_load(target):
    return SafeLoad(target)


def no_loop(target):
    return NoLoop(target)


def no_call(target, *names):
    return NoCall(target, tuple(names))


def made_by(target, name):
    return MadeBy(target, name)


def uses(target, *names):
    return Uses(target, tuple(names))


def autograd_function(cls_target, fn_target):
    return AutogradFunction(cls_target, fn_target)


def rule_findings(rule, submission):
    """``[Finding]`` for ``rule`` on ``submission``; a submission whose source cannot be read for the target (in
    process: a TorchScript function, a proxy) gives none, a notebook without the definition gives one."""
    answer = submission.answer(rule.target)
    if answer is None:
        if submission.in_process:
            return []
        return [Finding(f"the grader finds no definition of `{rule.target}` in your cells (a `def`, `class` or "
                        "assignment at the top level of a cell)", _nowhere())]
    if isinstance(rule, AutogradFunction):
        return rule.findings(answer, submission.answer(rule.function))
    return rule.findings(answer)


def _nowhere():
    return Where("the notebook", 0)


def expect_source(check, rules, submission):
    """Raise a :class:`CheckFailure` naming every broken rule of ``rules`` (the item's) on ``submission``."""
    __tracebackhide__ = True
    broken = [(rule, finding) for rule in rules for finding in rule_findings(rule, submission)]
    if broken:
        text = "; ".join(finding.text() for _, finding in broken[:4])
        more = f" (and {len(broken) - 4} more)" if len(broken) > 4 else ""
        hints = list(dict.fromkeys(rule.hint for rule, _ in broken if rule.hint))
        raise CheckFailure(check, f"read from your source: {text}{more}.", hint=" ".join(hints) or None,
                           measurements={"source": [f.as_dict() for _, f in broken]}, kind="forbidden source")


__all__ = ["BUILTINS", "Finding", "SourceRule", "autograd_function", "expect_source", "made_by", "no_call",
           "no_loop", "rule_findings", "safe_load", "uses"]
