"""Dependencies run one way: ``course/`` (the instructor's tools) above ``engine/`` (the grading engine) above
``checks/`` above the shared machinery, and the import graph has no cycle.

No topic imports a sibling topic, shared machinery imports neither checks nor engine nor course tools, the engine
imports nothing of nbgrader, Dask, traitlets or the command line (a grading worker imports it alone), shipped
code never reaches into ``tests/`` (nor imports ``solutions/``), and no module uses another's private names.
Every import counts, those inside functions too.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def dotted(path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path):
    """``(module imported, names imported)`` for every import in ``path``, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = dotted(path) if path.name == "__init__.py" else dotted(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            names = [alias.name for alias in node.names]
            found.append((module, names))
            found += [(f"{module}.{n}", []) for n in names]   # `from . import synthetic` imports a module
    return found


def layer(module):
    if module.startswith("autograder.course") or module == "autograder.__main__":   # the command line
        return "course"
    if module.startswith("autograder.engine"):
        return "engine"
    if module.startswith("autograder.checks"):
        return "checks"
    return "shared"


def topic_of(module):
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "checks" else None


RANK = {"shared": 0, "checks": 1, "engine": 2, "course": 3}
TOOLS = ("nbgrader", "dask", "distributed", "traitlets", "argparse", "nbconvert", "jupyter_server", "tqdm")


@pytest.mark.quick
@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_down_the_layers(path):
    me = dotted(path)
    for module, _ in imports(path):
        if not module.startswith("autograder.") and module != "autograder":
            assert not module.startswith(("tests", "solutions")), f"{me} imports {module}"
            continue
        if module in ("autograder.__main__",):
            continue
        assert RANK[layer(module)] <= RANK[layer(me)], f"{me} ({layer(me)}) imports {module} ({layer(module)})"
        if topic_of(me) and topic_of(module) and module != "autograder.checks":
            assert topic_of(me) == topic_of(module), f"{me} imports its sibling topic {module}"


@pytest.mark.quick
@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_names_across_modules(path):
    for module, names in imports(path):
        if module.startswith("autograder"):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private or module == dotted(path), f"{dotted(path)} imports private {private} from {module}"


@pytest.mark.quick
def test_shipped_code_never_reads_the_kits_tests():
    """(``solutions/`` is written by the build and imported by nobody: the import test covers it.)"""
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            joined = [node.left, node.right] if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) else []
            if any(isinstance(n, ast.Constant) and n.value == "tests" for n in joined) or (
                    isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("tests/")):
                pytest.fail(f"{path.relative_to(PACKAGE)} reaches into the tests folder")


@pytest.mark.quick
@pytest.mark.parametrize("path", [p for p in MODULES if layer(dotted(p)) == "engine"],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_engine_imports_no_tool(path):
    """A grading worker imports the engine with torch and nothing else of the instructor's: no nbgrader, Dask,
    traitlets or command-line module, and nothing of ``autograder.course``."""
    for module, _ in imports(path):
        assert module.split(".")[0] not in TOOLS, f"{dotted(path)} imports {module}"
        assert layer(module) != "course", f"{dotted(path)} imports the tool {module}"


def import_graph():
    """``{module: {autograder modules it imports}}`` over the package, every import (inside functions too)."""
    known = {dotted(p) for p in MODULES}

    def edges(path):
        found = set()
        for module, names in imports(path):
            if names and all(f"{module}.{n}" in known for n in names):
                continue    # `from . import probes` imports the module probes, not its package's own code
            if module in known and module != dotted(path):
                found.add(module)
        return found

    return {dotted(p): edges(p) for p in MODULES}


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.quick
def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"d"}, "d": {"c"}}) == [["c", "d"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []


@pytest.mark.quick
def test_no_import_cycle():
    """No module imports, directly or through others, one that imports it (``course.batch`` and ``course.grading``
    once did, each inside functions)."""
    assert cycles(import_graph()) == []

