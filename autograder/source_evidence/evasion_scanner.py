"""The scan behind :mod:`autograder.source_evidence.evasion`: each construct of the submitted source that static reading cannot
settle, where it is (the cell and line) and when it runs (in a definition's body, or at module level).

What counts and why is :mod:`autograder.source_evidence.evasion`'s docstring; this module only finds.
"""

import ast
import importlib.util
import sys
import types
from dataclasses import dataclass

from autograder.source_evidence.source_rules import Finding
from autograder.source_evidence.submitted_source import known_object, resolve_dotted, top_level

TORCH_HIDING = ("torch._C", "torch.utils._python_dispatch", "torch.overrides", "torch._dispatch",
                "torch.utils._mode_utils")
HIDING_NAMES = {"_disable_current_modes", "DisableTorchFunction", "DisableTorchFunctionSubclass",
                "_DisableTorchDispatch", "_pop_mode", "_push_mode", "_pop_mode_temporarily", "_set_torch_function_mode"}
TORCH_UNREADABLE = ("torch.utils.cpp_extension", "torch.hub", "torch.package", "torch.jit.CompilationUnit",
                    "torch.library")       # code from strings, files or native extensions the reading cannot see
UNREADABLE_MODULES = ("ctypes", "_ctypes", "builtins", "importlib", "marshal", "runpy", "code", "codeop",
                      "_frozen_importlib", "_imp", "site", "pkgutil", "zipimport")
# pickle is not among them: the distributed lesson's own cell unpickles what its processes send (the safe_load rule
# reads it where an exercise loads a file); docs/security.md says what that leaves.
READABLE = ("importlib.metadata", "importlib.resources")
SYS_TRICKS = {"modules", "path", "_getframe", "settrace", "setprofile", "meta_path", "path_hooks", "path_importer_cache",
              "addaudithook", "_current_frames", "exc_info", "exception", "last_traceback", "_getframemodulename",
              "monitoring", "builtin_module_names"}
GC_TRICKS = {"get_objects", "get_referrers", "get_referents"}
INSPECT_TRICKS = {"currentframe", "stack", "getouterframes", "getinnerframes", "trace", "getframeinfo",
                  "getmembers", "getclosurevars"}
TYPES_TRICKS = {"FunctionType", "CodeType", "LambdaType", "ModuleType", "FrameType", "TracebackType"}
FRAME_ATTRIBUTES = {"f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame",
                    "cr_frame", "ag_frame", "co_code", "co_consts"}
HARMLESS_DUNDERS = {"__name__", "__qualname__", "__doc__", "__version__", "__module__", "__file__", "__class__",
                    "__init__", "__call__", "__len__", "__repr__", "__str__", "__annotations__", "__all__",
                    "__enter__", "__exit__", "__iter__", "__next__", "__getitem__", "__setitem__", "__contains__",
                    "__post_init__", "__slots__", "__version_info__", "__config__", "__path__"}
DYNAMIC = {"exec", "eval", "compile", "__import__", "breakpoint", "globals", "locals", "vars", "__builtins__",
           "__loader__", "__spec__"}
MODULE_SAFE_CALLS = {"getattr", "hasattr", "isinstance", "issubclass", "print", "repr", "str", "type", "id", "dir",
                     "help", "format"}
TAMPER_ROOTS = ("torch", "autograder", "builtins", "sys", "numpy", "gc", "inspect", "importlib", "functools",
                "itertools", "operator", "types", "_functools", "math", "collections", "copy", "abc")
CONFIGURATION = ("torch.backends.",)   # settings a lesson may change (`torch.backends.cudnn.benchmark = True`)


@dataclass(frozen=True)
class Evasion:
    finding: Finding
    part: str                 # the cell or file
    scope: int | None         # id() of the top-level definition whose body it is in; None: runs at module level
    weak: bool = False        # counts only where an answer reaches it, not for code run at module level
    contained: bool = False   # changes no other code (hides ops from the recorder): a function called from module
    #                           level that holds it affects the items that reach it, not every item


def _is_module(dotted, imported):
    if not dotted:
        return False
    return dotted in imported or isinstance(known_object(dotted), types.ModuleType)


def _readable_module(name):
    """A module the grader can read: the standard library, or installed (not a file the notebook wrote)."""
    root = name.split(".")[0]
    if root in sys.stdlib_module_names or root in sys.modules:
        return True
    try:
        return importlib.util.find_spec(root) is not None
    except (ImportError, ValueError):
        return False


def _catches_import_error(kind):
    """An ``except`` clause's type that catches ImportError (a bare ``except`` too)."""
    names = [kind] if not isinstance(kind, ast.Tuple) else kind.elts
    return kind is None or any(isinstance(n, ast.Name) and n.id in (
        "ImportError", "ModuleNotFoundError", "Exception", "BaseException") for n in names)


class Scanner:
    """Finds every construct of a submission that static reading cannot settle (`scan()`: `[Evasion]`)."""

    def __init__(self, submission, answer_names):
        self.submission = submission
        self.names = submission.names
        self.answer_cells = {d.part.label for n in answer_names for d in submission.definitions.get(n, [])}
        self.imported = {dotted for part in submission.parts if part.tree is not None
                         for node in ast.walk(part.tree) if isinstance(node, ast.Import)
                         for dotted in [a.name for a in node.names]}
        self.module_loops = set()     # names a loop binds to each module of a literal tuple: `for lib in (torch, np)`
        self.looked_up = set()        # names bound to what a computed name looked up on a module
        self.found = []

    def scan(self):
        for part in self.submission.parts:
            if part.tree is None:
                continue
            self.parent = {id(child): node for node in ast.walk(part.tree) for child in ast.iter_child_nodes(node)}
            for node in ast.walk(part.tree):
                if (isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name)
                        and self._modules_listed(node.iter)):
                    self.module_loops.add(node.target.id)
                    self.imported.add(node.target.id)
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and self._computed_lookup(
                        node.value)):
                    self.looked_up.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
            nested = set()
            for statement in top_level(part.tree.body):
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for node, later in timed(statement, False):
                        nested.add(id(node))
                        self.visit(part, node, id(statement) if later else None, inside=later)
            for statement in top_level(part.tree.body):
                if id(statement) in nested or isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)):
                    continue
                for node in _walk_statement(statement):
                    self.visit(part, node, None, inside=False)
        return _longest(self.found)

    def flag(self, part, node, construct, scope, weak=False, contained=False):
        finding = Finding(construct, part.where(node))
        if not any(e.finding.where.line == finding.where.line and e.part == part.label
                   and e.finding.construct == construct for e in self.found):
            self.found.append(Evasion(finding, part.label, scope, weak, contained))

    def visit(self, part, node, scope, inside):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(part, node, scope, inside)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                self._assignment(part, target, scope)
        elif isinstance(node, ast.Call):
            self._call(part, node, scope, inside)
            root = node.func
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.looked_up:
                self.flag(part, node, f"calls what a computed name looked up (`{root.id}`)", scope)
        elif isinstance(node, ast.Attribute):
            if node.attr in FRAME_ATTRIBUTES or (node.attr.startswith("__") and node.attr.endswith("__")
                                                and node.attr not in HARMLESS_DUNDERS):
                self.flag(part, node, f"`.{node.attr}` (reaching into frames, code or namespaces)", scope)
            self._dotted(part, node, resolve_dotted(node, self.names), scope, inside)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in DYNAMIC and self.submission.is_builtin(node):
                self.flag(part, node, f"`{node.id}` (running or reaching code the grader cannot read)", scope)
                return
            dotted = self.names.of(node)
            if dotted and (node.id in self.submission.aliases or self.submission.kind(node) != "global"
                           or node.id in self.module_loops):
                if _is_module(dotted, self.imported) and not self._module_named(node):
                    self.flag(part, node, f"uses the module `{dotted}` as a value (what is done with it cannot be "
                                          "followed)", scope)
                self._dotted(part, node, dotted, scope, inside)

    def _module_named(self, node):
        """``node`` (a module) is only named: an attribute's base, an alias (``T = torch``), or an argument of a
        builtin that only looks at it (``print``, ``getattr``, ``isinstance``)."""
        parent = self.parent.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return True
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node and all(
                isinstance(t, ast.Name) for t in (parent.targets if isinstance(parent, ast.Assign) else [parent.target])):
            return True
        if isinstance(parent, (ast.Tuple, ast.List)) and self._modules_listed(parent):
            loop = self.parent.get(id(parent))
            if isinstance(loop, (ast.For, ast.comprehension)) and loop.iter is parent:
                return True
        if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in MODULE_SAFE_CALLS
                and self.submission.is_builtin(parent.func) and node in parent.args):
            return parent.func.id not in ("getattr", "hasattr") or parent.args[0] is node
        return False

    def _modules_listed(self, node):
        """``node`` is a literal tuple or list of modules, named (``(torch, np)``): what a version print loops over."""
        return (isinstance(node, (ast.Tuple, ast.List)) and node.elts and all(
            isinstance(e, ast.Name) and e.id in self.submission.aliases
            and _is_module(self.names.of(e), self.imported) for e in node.elts))

    def _constant_names(self, node):
        """The strings ``node`` (a name) can hold when a loop binds it from a literal tuple of strings
        (``for name in ("relu", "sigmoid")``), or None."""
        if not isinstance(node, ast.Name):
            return None
        here = self.parent.get(id(node))
        while here is not None:
            loops = [here] if isinstance(here, ast.For) else getattr(here, "generators", [])
            for loop in loops:
                if isinstance(loop.target, ast.Name) and loop.target.id == node.id:
                    values = loop.iter.elts if isinstance(loop.iter, (ast.Tuple, ast.List)) else None
                    if values and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
                        return [v.value for v in values]
                    return None
            here = self.parent.get(id(here))
        return None

    def _import(self, part, node, scope, inside):
        dotted = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module] if node.module and not node.level else [])
        if isinstance(node, ast.ImportFrom) and node.level:
            self.flag(part, node, "a relative import (a module the grader cannot read)", scope)
        for name in dotted:
            root = name.split(".")[0]
            if root == "autograder" and (inside or part.label in self.answer_cells):
                where = "inside a definition" if inside else "in a cell that defines an answer"
                self.flag(part, node, f"imports `{name}` {where}", scope)
            elif not _readable_module(name) and not self._optional(node):
                self.flag(part, node, f"imports `{name}`, a module that is neither installed nor in the standard "
                                      "library (code the grader cannot read)", scope)
        # Importing torch internals, ctypes or importlib does nothing by itself: each use of the name is flagged
        # where it is (resolved through the import), so that only the items whose answers use it are affected.

    def _optional(self, node):
        """``node`` (an import) is in the body of a ``try`` that catches its ImportError: the code is written to go
        on without the module. The worker cannot import a file the notebook wrote (its working directory is not on
        ``sys.path``, and changing ``sys.path`` is read as a trick), so a missing module only raises there."""
        child, here = node, self.parent.get(id(node))
        while here is not None:
            if isinstance(here, ast.Try) and child in here.body and any(
                    _catches_import_error(handler.type) for handler in here.handlers):
                return True
            child, here = here, self.parent.get(id(here))
        return False

    def _dotted(self, part, node, dotted, scope, inside):
        if not dotted:
            return
        parts = dotted.split(".")
        root = parts[0]
        if root == "torch" and (dotted.startswith(TORCH_HIDING) or HIDING_NAMES & set(parts)):
            self.flag(part, node, f"`{dotted}` (torch internals that can hide operations from grading)", scope,
                      contained=True)
        elif dotted.startswith(TORCH_UNREADABLE):
            self.flag(part, node, f"`{dotted}` (runs code the grader cannot read)", scope)
        elif root in UNREADABLE_MODULES and not dotted.startswith(READABLE) and dotted != root:
            self.flag(part, node, f"`{dotted}`", scope)
        elif len(parts) > 1 and ((root == "sys" and parts[1] in SYS_TRICKS) or (root == "gc" and parts[1] in GC_TRICKS)
                                 or (root == "inspect" and parts[1] in INSPECT_TRICKS)
                                 or (root == "types" and parts[1] in TYPES_TRICKS)):
            self.flag(part, node, f"`{dotted}`", scope)
        elif root == "autograder" and inside:     # the lesson's own helpers use it: only an answer's use counts
            self.flag(part, node, f"uses `{dotted}` inside a definition", scope, weak=True)

    def _assignment(self, part, target, scope):
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for element in (target.elts if not isinstance(target, ast.Starred) else [target.value]):
                self._assignment(part, element, scope)
            return
        if isinstance(target, ast.Attribute) and _through_call_or_class(target.value):
            self.flag(part, target, f"assigns `{ast.unparse(target)[:60]}`: changes a class or object the reading "
                                    "cannot name", scope)
            return
        if isinstance(target, ast.Attribute):
            owner = resolve_dotted(target.value, self.names) or ""
            dotted = resolve_dotted(target, self.names) or ""
        elif isinstance(target, ast.Subscript):
            owner = dotted = resolve_dotted(target.value, self.names) or ""
        else:
            return
        if owner and self._rooted_in_module(target.value):     # a module, or its class or function
            if not dotted.startswith(CONFIGURATION):
                # the modules whose functions the reading names (torch, builtins, functools...) or that reach into
                # code: anywhere; any other module (`time.perf_counter = ...`): where an answer reaches it
                self.flag(part, target, f"assigns `{dotted or owner}` (changes a module)", scope,
                          weak=owner.split(".")[0] not in TAMPER_ROOTS and owner not in self.module_loops)
        elif owner == "__builtins__" or owner.startswith("__builtins__."):
            self.flag(part, target, f"assigns `{dotted or owner}`", scope)
        elif owner in self.looked_up:
            self.flag(part, target, f"assigns into `{owner}`, what a computed name looked up", scope)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and (
                self.submission.kind(target.value) == "global" and any(
                isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                for d in self.submission.definitions.get(target.value.id, []))):
            self.flag(part, target, f"assigns `{target.value.id}.{target.attr}`: changes `{target.value.id}` after "
                                    "its definition", scope)

    def _call(self, part, node, scope, inside):
        func = node.func
        dotted = resolve_dotted(func, self.names) or ""
        if dotted in ("operator.attrgetter", "operator.methodcaller") and not all(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and not a.value.startswith("_")
                for a in node.args[:1 if dotted.endswith("methodcaller") else None]):
            self.flag(part, node, f"`{dotted}` with a computed or private name", scope)
        if not (isinstance(func, ast.Name) and func.id in ("setattr", "getattr", "delattr", "hasattr")
                and self.submission.is_builtin(func) and node.args):
            return
        obj = node.args[0]
        owner = resolve_dotted(obj, self.names) or ""
        name = node.args[1] if len(node.args) > 1 else None
        constant = isinstance(name, ast.Constant) and isinstance(name.value, str)
        values = [name.value] if constant else self._constant_names(name)
        for value in values or []:
            if value.startswith("__") and value not in HARMLESS_DUNDERS:
                self.flag(part, node, f"`{func.id}` of `{value}` (reaching into frames, code or namespaces)", scope)
            elif owner and not constant:
                self._dotted(part, node, f"{owner}.{value}", scope, inside)
        constant = values is not None
        if func.id in ("setattr", "delattr"):
            if _is_module(owner, self.imported) or not self._local_data(obj):
                self.flag(part, node, f"`{func.id}` on `{owner or ast.unparse(obj)[:40]}` (an object the grader "
                                      "cannot follow)", scope)
        elif not constant and func.id == "getattr":
            on_module = _is_module(owner, self.imported)
            if on_module and not self._used_as_code(node):
                # a value looked up by name on a module (`dtype = getattr(torch, name)`): unknown where an answer
                # reaches it; elsewhere only what is done with it counts (calls and stores through it are flagged)
                self.flag(part, node, f"`getattr` with a computed name on `{owner}`", scope, weak=True)
            elif on_module or not self._own_instance(obj):
                self.flag(part, node, f"`getattr` with a computed name on `{owner or ast.unparse(obj)[:40]}`"
                          + (", then used as code" if on_module else ""), scope)

    def _rooted_in_module(self, node):
        """``node`` (an attribute chain) starts at a name bound to a module (``torch.Tensor``, ``np.random``)."""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        dotted = self.names.of(node)
        return bool(dotted) and (node.id in self.submission.aliases or node.id in self.module_loops
                                 or self.submission.kind(node) != "global") and _is_module(dotted.split(".")[0],
                                                                                          self.imported)

    def _computed_lookup(self, call):
        """``call`` is ``getattr(<module>, <computed name>)``."""
        return (isinstance(call.func, ast.Name) and call.func.id == "getattr" and self.submission.is_builtin(call.func)
                and len(call.args) >= 2 and not isinstance(call.args[1], ast.Constant)
                and self._constant_names(call.args[1]) is None
                and _is_module(resolve_dotted(call.args[0], self.names) or "", self.imported))

    def _own_instance(self, node):
        """``node`` is ``self`` or ``cls``: the first parameter of a method, never rebound."""
        if not (isinstance(node, ast.Name) and node.id in ("self", "cls") and self.submission.kind(node) != "global"):
            return False
        scopes = self.submission.scopes_of.get(id(node))
        try:
            symbol = scopes.table_of_node[id(node)].lookup(node.id)
        except (AttributeError, KeyError):
            return False
        return symbol.is_parameter() and not symbol.is_assigned()

    def _local_data(self, node):
        """``node`` is a function's own local or parameter (``self``, ``model``), or an attribute of one (not its
        class: ``self.__class__``)."""
        if _through_call_or_class(node):
            return False
        while isinstance(node, ast.Attribute):
            node = node.value
        return (isinstance(node, ast.Name) and self.submission.kind(node) != "global"
                and node.id not in self.looked_up and not _is_module(self.names.of(node), self.imported))

    def _used_as_code(self, node):
        parent = self.parent.get(id(node))
        return ((isinstance(parent, ast.Call) and parent.func is node)
                or (isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node))


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


def _through_call_or_class(node):
    """``node`` (an attribute chain) goes through a call's result or a dunder (``type(self)``, ``self.__class__``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(node, ast.Call) or (isinstance(node, ast.Attribute) and node.attr.startswith("__")):
            return True
        node = node.value
    return False


def timed(node, later):
    """``(node, runs later)`` for ``node`` and everything in it: a function's body runs when it is called; its
    decorators, defaults and annotations, and a class's body, run where the definition is."""
    yield node, later
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        body = node.body if isinstance(node.body, list) else [node.body]
        inner = {id(n) for n in body}
        for child in ast.iter_child_nodes(node):
            yield from timed(child, later or id(child) in inner)
        return
    for child in ast.iter_child_nodes(node):
        yield from timed(child, later)


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
