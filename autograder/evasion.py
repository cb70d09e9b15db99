"""Constructs that only serve to hide from grading or tamper with it, found in the submitted source.

:func:`affecting` lists, for an item's answers, each such construct that the answer reaches (inside its definition
or a top-level definition it names) or that runs at module level (it affects every item of the notebook). An item
with any is put **under review** (:class:`autograder.errors.UnderReview`): 0 points, the construct and its line in
the record, until an instructor accepts (the item is graded on its evidence as if not flagged) or rejects it
(``python -m autograder review``). The list (docs/security.md):

* turning off torch's modes or dispatch, or any ``torch._C`` internal: ``torch._C.DisableTorchFunction``,
  ``torch._C._DisableTorchDispatch``, ``torch.utils._python_dispatch._disable_current_modes``, ``torch.overrides``
  (each use, resolved through import aliases; an import alone does nothing and is not flagged);
* assigning or deleting attributes of ``torch``, its modules or ``autograder`` (``torch.sum = ...``,
  ``setattr(torch, ...)``), ``sys.modules``, ``builtins``/``__builtins__``;
* importing ``autograder`` from an answer cell (a cell that defines an exercise's answer) or inside a definition,
  or using it inside one; the notebook's own example and test cells import it legitimately;
* ``gc.get_objects``/``get_referrers``/``get_referents``, ``sys.modules``/``sys._getframe``/``settrace``,
  ``inspect.currentframe``/``stack``, frame attributes (``f_back``, ``f_globals``...), ``__code__``/``__globals__``/
  ``__subclasses__``, ``ctypes``;
* ``exec``, ``eval``, ``compile``, ``__import__``, ``importlib``; ``getattr``/``setattr``/``delattr`` with a
  computed (non-constant) name on a module.

Honest look-alikes stay unflagged: ``model.eval()``, ``torch.compile``, ``setattr(self, name, value)``,
``getattr(self, name)``, a docstring that mentions ``torch._C``. A false alarm on honest code is as serious as a
missed cheat: ``tests/test_evasion_calibration.py`` runs this over every reference, alternative, mutant, the demo's
students and the adversarial suite's honest students. Read in process (the kit's proofs), only the answers' own
definitions count: a test module that defines a student's function is no submission.
"""

import ast
from dataclasses import dataclass

from .source_rules import Finding
from .submitted_source import import_bindings, resolve_dotted, top_level

TORCH_HIDING = ("torch._C", "torch.utils._python_dispatch", "torch.overrides", "torch._dispatch",
                "torch.utils._mode_utils")
HIDING_NAMES = {"_disable_current_modes", "DisableTorchFunction", "DisableTorchFunctionSubclass",
                "_DisableTorchDispatch", "_pop_mode", "_push_mode", "_pop_mode_temporarily", "_set_torch_function_mode"}
FORBIDDEN_MODULES = ("ctypes", "builtins", "importlib")
SYS_TRICKS = {"modules", "_getframe", "settrace", "setprofile", "meta_path", "path_hooks", "path_importer_cache",
              "addaudithook", "_current_frames", "exc_info"}
GC_TRICKS = {"get_objects", "get_referrers", "get_referents"}
INSPECT_TRICKS = {"currentframe", "stack", "getouterframes", "getinnerframes", "trace", "getframeinfo"}
FRAME_ATTRIBUTES = {"f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "gi_frame", "cr_frame",
                    "__code__", "__globals__", "__subclasses__", "__builtins__"}
DYNAMIC = {"exec", "eval", "compile", "__import__", "__builtins__", "breakpoint"}
TAMPER_ROOTS = ("torch", "autograder", "builtins", "sys", "numpy", "gc", "inspect", "importlib")
CONFIGURATION = ("torch.backends.",)   # settings a lesson may change (`torch.backends.cudnn.benchmark = True`)


@dataclass(frozen=True)
class Evasion:
    finding: Finding
    part: str                 # the cell or file
    scope: int | None         # id() of the top-level definition it is in; None: module level


def _module_names(aliases):
    return {name for name, dotted in aliases.items() if "." not in dotted or dotted.split(".")[0] in TAMPER_ROOTS}


class _Scanner:
    def __init__(self, submission, answer_names):
        self.submission = submission
        self.answer_cells = {d.part.label for n in answer_names for d in submission.definitions.get(n, [])}
        self.found = []

    def scan(self):
        for part in self.submission.parts:
            if part.tree is None:
                continue
            nested = set()
            for statement in top_level(part.tree.body):
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    aliases = dict(self.submission.aliases)
                    for node in ast.walk(statement):
                        if isinstance(node, (ast.Import, ast.ImportFrom)):
                            aliases.update(import_bindings(node))
                    for node in ast.walk(statement):
                        nested.add(id(node))
                        self.visit(part, node, aliases, id(statement), inside=True)
            for statement in top_level(part.tree.body):
                if id(statement) in nested or isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)):
                    continue
                for node in _walk_statement(statement):
                    self.visit(part, node, self.submission.aliases, None, inside=False)
        return _longest(self.found)

    def flag(self, part, node, construct, scope):
        finding = Finding(construct, part.where(node))
        if not any(e.finding.where.line == finding.where.line and e.part == part.label
                   and e.finding.construct == construct for e in self.found):
            self.found.append(Evasion(finding, part.label, scope))

    def visit(self, part, node, aliases, scope, inside):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            dotted = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                d for _, d in import_bindings(node)]
            for name in dotted[:1] if isinstance(node, ast.ImportFrom) else dotted:
                self._import(part, node, name, scope, inside)
            return
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                self._assignment(part, target, aliases, scope)
            return
        if isinstance(node, ast.Call):
            self._call(part, node, aliases, scope)
        if isinstance(node, ast.Attribute):
            if node.attr in FRAME_ATTRIBUTES:
                self.flag(part, node, f"`.{node.attr}` (reaching into frames or code objects)", scope)
            self._dotted(part, node, resolve_dotted(node, aliases), scope, inside)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in DYNAMIC and node.id not in aliases and node.id not in self.submission.definitions:
                self.flag(part, node, f"`{node.id}` (running code the grader cannot read)", scope)
            elif node.id in aliases:
                self._dotted(part, node, aliases[node.id], scope, inside)

    def _import(self, part, node, dotted, scope, inside):
        root = dotted.split(".")[0]
        if root == "autograder" and (inside or part.label in self.answer_cells):
            where = "inside a definition" if inside else "in a cell that defines an answer"
            self.flag(part, node, f"imports `{dotted}` {where}", scope)
        # Importing torch internals, ctypes or importlib does nothing by itself: each use of the name is flagged
        # where it is (resolved through the import), so that only the items whose answers use it are affected.

    def _dotted(self, part, node, dotted, scope, inside):
        if not dotted:
            return
        parts = dotted.split(".")
        root = parts[0]
        if root == "torch" and (dotted.startswith(TORCH_HIDING) or HIDING_NAMES & set(parts)):
            self.flag(part, node, f"`{dotted}` (torch internals that can hide operations from grading)", scope)
        elif root in FORBIDDEN_MODULES:
            self.flag(part, node, f"`{dotted}`", scope)
        elif len(parts) > 1 and ((root == "sys" and parts[1] in SYS_TRICKS) or (root == "gc" and parts[1] in GC_TRICKS)
                                 or (root == "inspect" and parts[1] in INSPECT_TRICKS)):
            self.flag(part, node, f"`{dotted}`", scope)
        elif root == "autograder" and inside:
            self.flag(part, node, f"uses `{dotted}` inside a definition", scope)

    def _assignment(self, part, target, aliases, scope):
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._assignment(part, element, aliases, scope)
            return
        if isinstance(target, ast.Attribute):
            dotted = resolve_dotted(target, aliases) or ""
        elif isinstance(target, ast.Subscript):
            dotted = resolve_dotted(target.value, aliases) or ""
            if isinstance(target.value, ast.Call):    # vars(torch)[...], globals()[...] of a module: computed
                inner = target.value
                if isinstance(inner.func, ast.Name) and inner.func.id == "vars" and inner.args:
                    dotted = (resolve_dotted(inner.args[0], aliases) or "") + ".__dict__"
        else:
            return
        if dotted.split(".")[0] in TAMPER_ROOTS and "." in dotted and not dotted.startswith(CONFIGURATION):
            self.flag(part, target, f"assigns `{dotted}`", scope)
        elif dotted in ("__builtins__",) or dotted.startswith("__builtins__."):
            self.flag(part, target, f"assigns `{dotted}`", scope)

    def _call(self, part, node, aliases, scope):
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in ("setattr", "getattr", "delattr", "hasattr")
                and func.id not in aliases and func.id not in self.submission.definitions and node.args):
            return
        owner = resolve_dotted(node.args[0], aliases) or ""
        on_module = owner.split(".")[0] in TAMPER_ROOTS or (isinstance(node.args[0], ast.Name)
                                                           and node.args[0].id in _module_names(aliases))
        constant = len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
        if func.id in ("setattr", "delattr") and on_module:
            self.flag(part, node, f"`{func.id}` on `{owner}`", scope)
        elif on_module and not constant and func.id != "hasattr":
            self.flag(part, node, f"`{func.id}` with a computed name on `{owner}`", scope)


def _name(construct):
    return construct.split("`")[1] if construct.count("`") >= 2 else construct


def _longest(found):
    """One finding per construct on a line: ``torch._C.DisableTorchFunction`` is also ``torch._C``: keep the
    longest name."""
    kept = []
    for e in found:
        name = _name(e.finding.construct)
        if not any(o is not e and o.part == e.part and o.finding.where.line == e.finding.where.line
                   and _name(o.finding.construct).startswith(name + ".") for o in found):
            kept.append(e)
    return kept


def _walk_statement(statement):
    """The nodes of a module-level statement, without the bodies of blocks (``top_level`` yields those)."""
    if isinstance(statement, (ast.If, ast.While)):
        return ast.walk(statement.test)
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [*ast.walk(statement.target), *ast.walk(statement.iter)]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [n for item in statement.items for n in ast.walk(item)]
    if isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
        return [n for h in statement.handlers if h.type is not None for n in ast.walk(h.type)]
    return ast.walk(statement)


def scan(submission, answer_names=()):
    """Every evasive construct of ``submission`` (``[Evasion]``); ``answer_names``: the topic's exercise names (an
    ``autograder`` import in a cell that defines one counts)."""
    cached = getattr(submission, "_evasions", None)
    if cached is None or cached[0] != tuple(sorted(answer_names)):
        cached = (tuple(sorted(answer_names)), _Scanner(submission, answer_names).scan())
        submission._evasions = cached
    return cached[1]


def affecting(submission, targets, answer_names=()):
    """``[Finding]``: the evasive constructs that ``targets``' answers reach, and those at module level (read in
    process, from the files that define the objects: the answers' own definitions only)."""
    found = scan(submission, answer_names)
    if not found:
        return []
    scopes = set()
    for target in targets:
        answer = submission.answer(target)
        if answer is None:
            continue
        scopes.update((d.part.label, id(d.node)) for d in answer.reached)
    in_force = set() if submission.in_process else {p.label for p in submission.parts}   # in process: the
    # answers' own definitions only (a test module that defines a student's function is no submission)
    return [e.finding for e in found
            if (e.scope is None and e.part in in_force) or (e.part, e.scope) in scopes]
