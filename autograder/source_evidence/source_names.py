"""What a name in the submitted source stands for: a module's constant attribute (``torch.nn.functional.softmax``),
a builtin, or something the reading cannot name.

:func:`resolve_dotted` turns an expression into the dotted name it stands for, through import aliases and simple
assignments (``F = torch.nn.functional``; ``sm = torch.softmax``), module-level or a function's own locals, with
Python's scoping (:class:`Names`, over :mod:`autograder.source_evidence.source_scopes`): a local ``F`` is not the module alias
``F``. :func:`known_object` finds the object a dotted name is in the grader's own process (``_functools.reduce`` is
``functools.reduce``), from modules already imported.
"""

import ast
import builtins

from autograder.source_evidence.source_scopes import GLOBAL

BUILTINS = frozenset(dir(builtins))


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


class Names:
    """Scoped name resolution for :func:`resolve_dotted`: a global is the module's alias (or its own spelling: a
    builtin, a module-level name); a local is its function's alias, or nothing the grader can name."""

    def __init__(self, submission):
        self.submission = submission

    def of(self, name_node):
        submission = self.submission
        scopes = submission.scopes_of.get(id(name_node))
        if scopes is None or scopes.kind(name_node) == GLOBAL:
            return submission.aliases.get(name_node.id, name_node.id)
        table = scopes.table_of_node.get(id(name_node))
        for candidate in _tables_up(scopes, table):
            dotted = submission.local_aliases.get((id(candidate), name_node.id))
            if dotted:
                return dotted
        return None

    def shadows(self, name_node):
        """The name is not the builtin (a local, or a module-level definition of the same spelling)."""
        return not self.submission.is_builtin(name_node)

    def get(self, name, default=None):          # dict-like, for callers holding a plain name
        return self.submission.aliases.get(name, default)

    def __contains__(self, name):
        return name in self.submission.aliases


def _tables_up(scopes, table):
    """``table`` and the tables of the functions around it (a closure variable's binding is in one of them)."""
    found = [table]
    by_table = {id(t): node_id for node_id, t in scopes.scope_table.items()}
    node_id = by_table.get(id(table))
    while node_id is not None:
        node_id = scopes.parent.get(node_id)
        node_id = id(node_id) if node_id is not None else None
        if node_id is not None and node_id in scopes.scope_table:
            found.append(scopes.scope_table[node_id])
    return found


def resolve_dotted(node, aliases):
    """The dotted name ``node`` stands for (``torch.nn.functional.softmax``), or None when the AST cannot say.
    ``aliases``: :class:`Names` (scoped), or a plain ``{name: dotted}``."""
    if isinstance(node, ast.Name):
        if isinstance(aliases, Names):
            return aliases.of(node)
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = resolve_dotted(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and _is_builtin_name(node.func, aliases) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)):
        base = resolve_dotted(node.args[0], aliases)
        return f"{base}.{node.args[1].value}" if base else None
    return None


def known_object(dotted):
    """The object ``dotted`` names in the grader's own process, looked up from modules already imported (nothing is
    imported for it), or None."""
    import sys
    first, *rest = dotted.split(".")
    obj = sys.modules.get(first)
    if obj is None:
        obj = getattr(builtins, first, None) if first in BUILTINS else None
    for name in rest:
        if obj is None:
            return None
        try:
            obj = getattr(obj, name, None) if not name.startswith("__") else None
        except Exception:       # noqa: BLE001 - a lazy module attribute that fails to load: not known
            return None
    return obj


def _is_builtin_name(name_node, aliases):
    if isinstance(aliases, Names):
        return aliases.submission.is_builtin(name_node)
    return name_node.id not in aliases
