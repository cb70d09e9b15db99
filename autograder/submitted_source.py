"""The submitted source, as the grader parses it: one of the three kinds of evidence a student cannot forge.

A :class:`Submission` holds the parsed code of a submission: a notebook's code cells (``[(cell key, text)]``, what
the trusted grader runs; the student cannot change what the grader reads) or a module's text (``solutions/<topic>.py``
and the kit's proofs). :meth:`Submission.answer` finds an exercise's answer by the name the exercise gives it (a
``def``, a ``class`` with its methods, or an assignment such as ``scripted = torch.jit.script(loop)``) and follows
the names it uses into the submission's other top-level definitions (transitively, at most :data:`MAX_REACH`).

Names are resolved as the AST can see them (:meth:`Answer.resolve`): ``F.softmax`` after ``import
torch.nn.functional as F`` is ``torch.nn.functional.softmax``; ``s`` after ``from torch import softmax as s`` is
``torch.softmax``; ``getattr(torch, "softmax")`` is ``torch.softmax``; an alias ``sm = torch.softmax`` (module level
or inside the answer) is followed. What only runs (``torch.ops.aten`` reached through a computed name) is beyond the
AST: the worker's op recorder sees it, and may cost points, never earn them.

This module computes no answer: it is in the student kit, so ``python -m autograder check`` applies the same rules.
"""

import ast
import builtins
import linecache
import os
import sysconfig
from dataclasses import dataclass, field

MAX_REACH = 64            # top-level definitions followed from one answer, at most
BUILTINS = frozenset(dir(builtins))


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

    def where(self, node):
        line = getattr(node, "lineno", 1)
        lines = self.text.splitlines()
        snippet = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return Where(self.label, line, snippet[:160])


@dataclass
class Definition:
    name: str
    part: Part
    node: ast.AST                 # FunctionDef, ClassDef, Assign / AnnAssign (its value), or Import


def _parse(label, text):
    lines = [("pass  # " + line) if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines()]
    try:
        return Part(label, text, ast.parse("\n".join(lines)))
    except SyntaxError as error:
        return Part(label, text, None, f"{error.msg} (line {error.lineno})")


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
        self._located = located       # objects mode: {target name: (part label, name in that part)}
        for part in self.parts:
            if part.tree is not None:
                self._index(part)

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
        return Answer(self, target, found[-1])

    def reach(self, start):
        """``[Definition]``: ``start`` and every top-level definition it names, transitively (bounded)."""
        seen, order, todo = set(), [], [start]
        while todo and len(order) < MAX_REACH:
            definition = todo.pop(0)
            key = (definition.part.label, id(definition.node))
            if key in seen:
                continue
            seen.add(key)
            order.append(definition)
            for name in sorted(names_used(definition.node)):
                found = [d for d in self.definitions.get(name, []) if not isinstance(d.node, (ast.Import,
                                                                                             ast.ImportFrom))]
                if found:
                    todo.append(found[-1])
        return order


def _nested_definition(part, name):
    if part.tree is None:
        return []
    return [Definition(name, part, node) for node in ast.walk(part.tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name][-1:]


LIBRARIES = tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in ("purelib", "platlib",
                                                                                             "stdlib")}) + (
    os.path.dirname(os.path.realpath(__file__)) + os.sep,)   # installed code (torch's own classes), and this package


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


MODULE_ROOTS = ("torch", "autograder", "builtins", "sys", "gc", "ctypes", "inspect", "importlib", "numpy", "os",
                "functools", "itertools", "operator", "types")


def import_bindings(statement):
    """``[(name bound, dotted name it stands for)]`` of an import statement."""
    found = []
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname:
                found.append((alias.asname, alias.name))
            else:
                root = alias.name.split(".")[0]
                found.append((root, root))
    elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
        for alias in statement.names:
            if alias.name != "*":
                found.append((alias.asname or alias.name, f"{statement.module}.{alias.name}"))
    return found


def resolve_dotted(node, aliases):
    """The dotted name ``node`` stands for (``torch.nn.functional.softmax``), or None when the AST cannot say."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = resolve_dotted(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and node.func.id not in aliases and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)):
        base = resolve_dotted(node.args[0], aliases)
        return f"{base}.{node.args[1].value}" if base else None
    return None


def names_used(node):
    """Every name ``node`` reads (``ast.Name`` in a load context), its decorators and class bases included."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def local_names(function):
    """The names a function binds itself (parameters, assignments, loop targets, imports, nested defs)."""
    bound = set()
    args = function.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            bound.add(arg.arg)
    for node in ast.walk(function):
        if node is function:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(name for name, _ in import_bindings(node))
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound


@dataclass
class Answer:
    """An exercise's answer in the submission: its definition and what it reaches."""

    submission: Submission
    target: str
    definition: Definition
    reached: list = field(default_factory=list)

    def __post_init__(self):
        self.reached = self.submission.reach(self.definition)

    def nodes(self):
        """``(part, node)`` for every AST node of every definition the answer reaches."""
        for definition in self.reached:
            for node in ast.walk(definition.node):
                yield definition.part, node

    def aliases(self, part_node=None):
        """Module-level aliases, with the imports and simple assignments made inside the reached definitions."""
        aliases = dict(self.submission.aliases)
        for _, node in self.nodes():
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                aliases.update(import_bindings(node))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = resolve_dotted(node.value, aliases)
                if value and value.split(".")[0] in MODULE_ROOTS:
                    aliases[node.targets[0].id] = value
        return aliases

    def own_names(self):
        """Names the submission defines itself (functions, classes, methods of its classes)."""
        names = set(self.submission.definitions)
        for _, node in self.nodes():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
        return names

    def shadowed(self):
        """Names bound inside the reached functions (a local ``sum`` is not the builtin)."""
        bound = set()
        for _, node in self.nodes():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and hasattr(node, "args"):
                if isinstance(node, ast.Lambda):
                    bound.update(a.arg for a in node.args.args)
                else:
                    bound |= local_names(node)
        return bound
