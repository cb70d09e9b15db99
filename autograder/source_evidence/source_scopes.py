"""Python's own scoping over a submitted cell: which binding every name in it refers to (``symtable``).

A notebook's cells run in one module namespace; each cell is compiled on its own, so each cell's ``symtable`` says,
for every scope in it (function, lambda, comprehension, class), whether a name is the scope's own local, a closure
variable of an enclosing function, or a global (the module's, else a builtin). :class:`CellScopes` maps every AST
node of the cell to the scope it runs in, so that the source analysis asks Python, not a guess by spelling:

* a function's local ``weights`` never reaches another function's ``weights`` or a top-level ``weights``;
* the globals a definition reads are the names it can reach in the module (:meth:`CellScopes.global_reads`);
* a name a function binds through ``global`` is a module-level definition (:meth:`CellScopes.global_writes`).
"""

import ast
import symtable

SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
               ast.DictComp, ast.GeneratorExp)
_TABLE_NAMES = {ast.Lambda: "lambda", ast.ListComp: "listcomp", ast.SetComp: "setcomp", ast.DictComp: "dictcomp",
                ast.GeneratorExp: "genexpr"}

LOCAL, FREE, GLOBAL = "local", "free", "global"


class CellScopes:
    """The scopes of one parsed cell: ``tree`` (its AST) and ``text`` (what was parsed)."""

    def __init__(self, tree, text, label):
        self.tree = tree
        self.table_of_node = {}       # id(AST node) -> the symtable.SymbolTable it runs in
        self.scope_table = {}         # id(scope node: def, lambda, class, comprehension) -> its own table
        self.parent = {}              # id(scope node) -> enclosing scope node (None: module level)
        self.module_table = symtable.symtable(text, label, "exec")
        self._visit(tree, self.module_table, None)

    # -- mapping AST nodes to symtable's tables

    def _child(self, table, node):
        name = getattr(node, "name", None) or _TABLE_NAMES.get(type(node))
        line = node.lineno
        used = self.__dict__.setdefault("_used", set())
        for child in table.get_children():
            if child.get_name() == name and child.get_lineno() == line and id(child) not in used:
                used.add(id(child))
                return child
        return None

    def _visit(self, node, table, scope):
        self.table_of_node[id(node)] = table
        if isinstance(node, SCOPE_NODES) and node is not self.tree:
            inner = self._child(table, node) or table
            self.scope_table[id(node)] = inner
            self.parent[id(node)] = scope
            outer, inside = _split(node)
            for child in outer:
                self._visit(child, table, scope)
            for child in inside:
                self._visit(child, inner, node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                for arg in ast.walk(node.args):
                    if isinstance(arg, ast.arg):
                        self.table_of_node[id(arg)] = inner
            return
        for child in ast.iter_child_nodes(node):
            self._visit(child, table, scope)

    # -- questions

    def kind(self, name_node):
        """``LOCAL``, ``FREE`` or ``GLOBAL``: what ``name_node`` (an ``ast.Name``) refers to where it is."""
        table = self.table_of_node.get(id(name_node), self.module_table)
        if table.get_type() == "module":
            return GLOBAL
        try:
            symbol = table.lookup(name_node.id)
        except KeyError:
            return GLOBAL
        if symbol.is_global() or symbol.is_declared_global():
            return GLOBAL
        if symbol.is_free():
            return FREE
        return LOCAL

    def is_global(self, name_node):
        return self.kind(name_node) == GLOBAL

    def global_reads(self, node):
        """``{name: [ast.Name]}``: the module-level names ``node`` (a definition or statement) reads, in every scope
        inside it."""
        found = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and self.is_global(sub):
                found.setdefault(sub.id, []).append(sub)
        return found

    def global_writes(self, node):
        """``{name: [ast node]}``: module-level names bound from inside a function through ``global``."""
        found = {}
        for sub in ast.walk(node):
            if sub is node and not isinstance(sub, SCOPE_NODES):
                continue
            table = self.table_of_node.get(id(sub))
            if table is None or table.get_type() == "module":
                continue
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)) and self.is_global(sub):
                found.setdefault(sub.id, []).append(sub)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                try:
                    symbol = table.lookup(sub.name)
                except KeyError:
                    continue
                if symbol.is_declared_global():
                    found.setdefault(sub.name, []).append(sub)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                for alias in sub.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    try:
                        if table.lookup(bound).is_declared_global():
                            found.setdefault(bound, []).append(sub)
                    except KeyError:
                        pass
        return found


def _split(node):
    """``(evaluated in the enclosing scope, evaluated in the node's own scope)`` for a scope node."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        outer = [*node.decorator_list, *args.defaults, *[d for d in args.kw_defaults if d is not None]]
        annotations = [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                                              args.kwarg] if a is not None and a.annotation is not None]
        outer += annotations + ([node.returns] if node.returns else [])
        return outer, list(node.body)
    if isinstance(node, ast.Lambda):
        args = node.args
        return [*args.defaults, *[d for d in args.kw_defaults if d is not None]], [node.body]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords], list(node.body)
    first, *rest = node.generators       # comprehension: the first iterable runs outside
    inside = [first.target, *first.ifs, *rest]
    inside += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    return [first.iter], inside
