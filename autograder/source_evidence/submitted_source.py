"""The submitted source, as the grader parses it: one of the three kinds of evidence a student cannot forge.

A :class:`Submission` holds the parsed code of a submission: a notebook's code cells (``[(cell key, text)]``, what
the trusted grader runs; the student cannot change what the grader reads) or a module's text (``solutions/<topic>.py``
and the kit's proofs). :meth:`Submission.answer` finds an exercise's answer by the name the exercise gives it (a
``def``, a ``class`` with its methods, or an assignment such as ``scripted = torch.jit.script(loop)``) and follows
the names it uses into the submission's other top-level definitions (transitively, at most :data:`MAX_REACH`).

Names are resolved with Python's own scoping (:mod:`autograder.source_evidence.source_scopes`, ``symtable``): a function's local
never reaches another function's local or a top-level name of the same spelling, and what an answer reaches is the
module-level names its code reads as globals, followed through *every* definition of each (a definition under
``if 0:`` or made through ``global`` could be the one in force). ``F.softmax`` after ``import torch.nn.functional as
F`` is ``torch.nn.functional.softmax``; ``s`` after ``from torch import softmax as s`` is ``torch.softmax``;
``getattr(torch, "softmax")`` is ``torch.softmax``; an alias ``sm = torch.softmax`` (module level, or a local of
the same function) is followed. What static reading cannot settle (several definitions of a reached name, a module
used as a value, a computed attribute, frames, ``exec``) is :mod:`autograder.source_evidence.evasion`'s: the item goes to review.

This module computes no answer: it is in the student kit, so ``python -m autograder check`` applies the same rules.
"""

import ast
import linecache
import os
import sysconfig
from dataclasses import dataclass, field

from autograder.source_evidence.source_names import (BUILTINS, MODULE_ROOTS, Names, import_bindings,  # noqa: F401
                                                     known_object, resolve_dotted)
from autograder.source_evidence.source_scopes import GLOBAL, CellScopes

MAX_REACH = 64            # top-level definitions followed from one answer, at most


@dataclass(frozen=True)
class Where:
    """A place in the submission: the cell (its key: grade id or ``cell <n>``) or file, and the line in it."""

    part: str
    line: int
    snippet: str = ""

    def __str__(self):
        return f"{self.part}, line {self.line}"


@dataclass
class Part:
    label: str                    # the cell's key ("row_sum", "cell 7") or the module's file name
    text: str
    tree: ast.Module | None = None
    error: str = ""               # why it does not parse (a cell with IPython magics, a syntax error)
    scopes: CellScopes | None = None

    def where(self, node):
        line = getattr(node, "lineno", 1)
        lines = self.text.splitlines()
        snippet = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return Where(self.label, line, snippet[:160])


@dataclass
class Definition:
    name: str
    part: Part
    node: ast.AST                 # FunctionDef, ClassDef, Assign / AnnAssign (its value), Import, or a binding
    #                               made inside a function through `global` (the function's own node)
    through_global: bool = False

    @property
    def is_data(self):
        """A plain value (a constant, a container of constants): no code of its own can run from it."""
        value = getattr(self.node, "value", None)
        return (isinstance(self.node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and value is not None
                and all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Load,
                                       ast.UnaryOp, ast.USub, ast.UAdd)) for n in ast.walk(value)))


def _parse(label, text):
    lines = [("pass  # " + line) if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines()]
    parsed = "\n".join(lines)
    try:
        tree = ast.parse(parsed)
        return Part(label, text, tree, scopes=CellScopes(tree, parsed, label))
    except (SyntaxError, ValueError) as error:
        return Part(label, text, None, f"{getattr(error, 'msg', error)} (line {getattr(error, 'lineno', '?')})")


def _bound_names(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def top_level(statements):
    """The statements run at module level: those of ``if``/``try``/``with``/``for`` blocks too, not function bodies."""
    for statement in statements:
        yield statement
        if isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.AsyncWith)):
            yield from top_level(statement.body + getattr(statement, "orelse", []))
        elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            yield from top_level(statement.body + statement.orelse + statement.finalbody
                                 + [s for h in statement.handlers for s in h.body])


class Submission:
    """The parsed code of one submission, in the order it runs."""

    def __init__(self, parts, *, located=None):
        self.parts = [_parse(label, text) for label, text in parts]
        self.definitions = {}         # name -> [Definition], in order (the last one is in force)
        self.aliases = {}             # module-level name -> dotted name it stands for ("F" -> "torch.nn.functional")
        self.local_aliases = {}       # (id(symtable of a function), name) -> dotted name, the same for its locals
        self._located = located       # objects mode: {target name: (part label, name in that part)}
        self.scopes_of = {}           # id(AST node) -> the CellScopes of its cell
        for part in self.parts:
            if part.tree is not None:
                self._index(part)
        for part in self.parts:
            if part.tree is not None:
                self._index_inside(part)
        self.names = Names(self)

    @classmethod
    def from_cells(cls, cells):
        """A notebook's code cells, ``[(cell key, text)]`` (``notebooks.code_cells``)."""
        return cls([(str(key), text) for key, text in cells])

    @classmethod
    def from_text(cls, text, label="the module"):
        return cls([(label, text)])

    @classmethod
    def of_objects(cls, objects):
        """In-process grading (the kit's proofs, ``check`` on a module): each student object's answer is read from
        the file it was defined in (``linecache``: code run from a string is registered there), found by the
        object's own name. An object whose source cannot be found (a TorchScript function, a proxy) has none."""
        texts, located = {}, {}
        for target, obj in objects.items():
            filename, name = _source_of(obj)
            if filename is None:
                continue
            if filename not in texts:
                text = "".join(linecache.getlines(filename))
                if not text:
                    continue
                texts[filename] = text
            located[target] = (filename, name)
        return cls(list(texts.items()), located=located)

    def _index(self, part):
        for statement in top_level(part.tree.body):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.definitions.setdefault(statement.name, []).append(Definition(statement.name, part, statement))
            elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    for name in _bound_names(target):
                        self.definitions.setdefault(name, []).append(Definition(name, part, statement))
                        value = resolve_dotted(statement.value, self.aliases) if statement.value else None
                        if value and value.split(".")[0] in MODULE_ROOTS:
                            self.aliases[name] = value
                        else:
                            self.aliases.pop(name, None)
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                for name, dotted in import_bindings(statement):
                    self.aliases[name] = dotted
                    self.definitions.setdefault(name, []).append(Definition(name, part, statement))
            elif isinstance(statement, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                targets = ([statement.target] if isinstance(statement, (ast.For, ast.AsyncFor))
                           else [i.optional_vars for i in statement.items if i.optional_vars is not None])
                for target in targets:
                    for name in _bound_names(target):
                        self.definitions.setdefault(name, []).append(Definition(name, part, statement))
                        self.aliases.pop(name, None)

    def _index_inside(self, part):
        """Bindings made inside functions: names bound through ``global`` (module-level definitions, made when the
        function runs) and each function's local aliases (``sm = torch.softmax``, ``import torch as T``)."""
        scopes = part.scopes
        for node_id in scopes.table_of_node:
            self.scopes_of[node_id] = scopes
        for statement in part.tree.body:          # `(row_sum := f)` at module level, in any expression
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for node in ast.walk(statement):
                    if isinstance(node, ast.NamedExpr) and scopes.kind(node.target) == GLOBAL:
                        self.definitions.setdefault(node.target.id, []).append(
                            Definition(node.target.id, part, node))
        for statement in top_level(part.tree.body):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for name, nodes in scopes.global_writes(statement).items():
                    for node in nodes:
                        self.definitions.setdefault(name, []).append(
                            Definition(name, part, _enclosing_function(statement, node), through_global=True))
        for node in ast.walk(part.tree):
            table = scopes.table_of_node.get(id(node))
            if table is None or table.get_type() == "module":
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name, dotted in import_bindings(node):
                    self.local_aliases[(id(table), name)] = dotted
            elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                  and scopes.kind(node.targets[0]) != GLOBAL):
                value = resolve_dotted(node.value, Names(self))
                if value and value.split(".")[0] in MODULE_ROOTS:
                    self.local_aliases[(id(table), node.targets[0].id)] = value

    def kind(self, name_node):
        """What ``name_node`` refers to: ``"local"``, ``"free"`` (an enclosing function's) or ``"global"``."""
        scopes = self.scopes_of.get(id(name_node))
        return scopes.kind(name_node) if scopes is not None else GLOBAL

    def is_builtin(self, name_node):
        """``name_node`` is Python's builtin of that name: a global that the submission never defines."""
        return (self.kind(name_node) == GLOBAL and name_node.id in BUILTINS
                and name_node.id not in self.definitions)

    def global_reads(self, definition):
        """``{name: [ast.Name]}``: the module-level names ``definition``'s code reads."""
        node = definition.node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return {}
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            node = node.value
            if node is None:
                return {}
        scopes = self.scopes_of.get(id(node))
        return scopes.global_reads(node) if scopes is not None else {}

    @property
    def in_process(self):
        """Read from the files the objects were defined in (the kit's proofs), not from a notebook's cells."""
        return self._located is not None

    @property
    def unparsed(self):
        return [(p.label, p.error) for p in self.parts if p.tree is None]

    def part(self, label):
        return next(p for p in self.parts if p.label == label)

    def answer(self, target):
        """The :class:`Answer` named ``target``, or None when the submission defines no such name."""
        cache = self.__dict__.setdefault("_answers", {})
        if target not in cache:
            cache[target] = self._find_answer(target)
        return cache[target]

    def _find_answer(self, target):
        if self._located is not None:
            if target not in self._located:
                return None
            label, name = self._located[target]
            found = [d for d in self.definitions.get(name, []) if d.part.label == label]
            if not found:
                found = _nested_definition(self.part(label), name)
        else:
            found = self.definitions.get(target, [])
        if not found:
            return None
        if self._located is not None:
            return Answer(self, target, found[-1], starts=found[-1:])
        return Answer(self, target, found[-1], starts=[d for d in found if not d.through_global] or found[-1:])

    def reach(self, starts):
        """``([Definition], {name: [Definition]}, calls, truncated)``: ``starts`` and every module-level definition
        their code reads as a global, transitively (at most :data:`MAX_REACH`), through every definition of each
        name; the names followed; the edges ``(from definition, to definition)`` (recursion is a cycle in them);
        whether the bound stopped the reading (what lies beyond is unknown reach)."""
        seen, order, todo, followed, edges = set(), [], list(starts), {}, []
        while todo and len(order) < MAX_REACH:
            definition = todo.pop(0)
            key = (definition.part.label, id(definition.node))
            if key in seen:
                continue
            seen.add(key)
            order.append(definition)
            for name in sorted(self.global_reads(definition)):
                found = [d for d in self.definitions.get(name, []) if not isinstance(d.node, (ast.Import,
                                                                                             ast.ImportFrom))]
                if found:
                    followed[name] = self.definitions[name]
                    todo.extend(found)
                    edges.extend((definition, d) for d in found)
        truncated = any((d.part.label, id(d.node)) not in seen for d in todo)
        return order, followed, edges, truncated


def _enclosing_function(statement, node):
    """The innermost function of ``statement`` that holds ``node`` (what runs when that binding is made)."""
    best = statement
    for sub in ast.walk(statement):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(n is node for n in ast.walk(sub)):
            best = sub if best is statement or any(n is sub for n in ast.walk(best)) else best
    return best


def _nested_definition(part, name):
    if part.tree is None:
        return []
    return [Definition(name, part, node) for node in ast.walk(part.tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name][-1:]


LIBRARIES = tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in ("purelib", "platlib",
                                                                                             "stdlib")}) + (
    os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep,)   # installed code (torch's own classes), and this package


def _source_of(obj):
    """``(file name, definition name)`` of a student object, or ``(None, None)`` (as for an object of an installed
    library: a mutant that is ``torch.nn.functional.softplus`` is no student's source)."""
    filename, name = _defined_in(obj)
    if filename is None or os.path.realpath(filename).startswith(LIBRARIES):
        return None, None
    return filename, name


def _defined_in(obj):
    code = getattr(obj, "__code__", None)
    if code is not None and isinstance(getattr(obj, "__name__", None), str):
        return code.co_filename, obj.__name__
    if isinstance(obj, type):
        for value in vars(obj).values():
            function = getattr(value, "__func__", value)
            code = getattr(function, "__code__", None)
            if code is not None and getattr(function, "__qualname__", "").startswith(obj.__name__ + "."):
                return code.co_filename, obj.__name__
    return None, None


@dataclass
class Answer:
    """An exercise's answer in the submission: its definitions (every one that could be in force) and what they
    reach."""

    submission: Submission
    target: str
    definition: Definition            # the last one (where messages point)
    starts: list = field(default_factory=list)
    reached: list = field(default_factory=list)
    followed: dict = field(default_factory=dict)     # name -> every definition of it, for each name followed
    edges: list = field(default_factory=list)
    truncated: bool = False           # the reading stopped at MAX_REACH definitions

    def __post_init__(self):
        self.starts = self.starts or [self.definition]
        self.reached, self.followed, self.edges, self.truncated = self.submission.reach(self.starts)
        self.followed = {self.target: [d for d in self.submission.definitions.get(self.target, [])
                                       if not isinstance(d.node, (ast.Import, ast.ImportFrom))] or self.starts,
                         **self.followed}

    def nodes(self):
        """``(part, node)`` for every AST node of every definition the answer reaches."""
        for definition in self.reached:
            for node in ast.walk(definition.node):
                yield definition.part, node

    def aliases(self, part_node=None):
        """The scoped name resolution (:class:`Names`) for :func:`resolve_dotted`."""
        return self.submission.names

    def own_names(self):
        """Names of the functions and classes the submission defines itself (methods of its classes included)."""
        names = {name for name, found in self.submission.definitions.items()
                 if found and all(isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                                  for d in found)}
        for _, node in self.nodes():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
        return names

    def recursion(self):
        """``[(part, node)]``: each function the answer reaches that can call itself (directly, through other
        module-level functions, or a nested function calling its own name)."""
        found = []
        graph = {}
        for source, target in self.edges:
            graph.setdefault(id(source.node), set()).add(id(target.node))
        for definition in self.reached:
            if _on_cycle(graph, id(definition.node)):
                found.append((definition.part, definition.node))
        for part, node in self.nodes():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not any(
                    node is d.node for d in self.reached):
                if any(isinstance(n, ast.Name) and n.id == node.name and isinstance(n.ctx, ast.Load)
                       and self.submission.kind(n) != GLOBAL for n in ast.walk(node)):
                    found.append((part, node))
        return found


def _on_cycle(graph, start):
    todo, seen = list(graph.get(start, ())), set()
    while todo:
        node = todo.pop()
        if node == start:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False
