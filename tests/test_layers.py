"""Dependencies run one way, package by package (``LAYERS``: the command line on top, the foundation at the bottom),
and the import graph has no cycle.

No topic imports a sibling topic, no package imports one above it, the engine
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


# The packages of ``autograder``, lowest first, each with what it holds (docs/architecture.md is drawn from this
# table and the imports: ``python -m tests.architecture --write``). A module imports only from its own layer and
# the layers listed before it; the modules of a layer import one another without a cycle.
LAYERS = (
    ("foundation", ("errors", "settings", "feedback", "kit_contents"),
     "errors, settings, the feedback's words, what the student kit holds"),
    ("seam", ("seam",), "the one way a check reaches the student's code: calls with guards, handles, the worker"),
    ("items", ("spec", "contracts"), "the item declarations: @graded hands a check its seam; the hidden seed"),
    ("measuring", ("measuring",), "what a check measures with: values, gradients, ops, speed, recorded oracles"),
    ("source_evidence", ("source_evidence",), "the submitted source as the grader parses it; rules and evasion"),
    ("sandbox", ("sandbox",), "the confinement the worker runs in: namespaces, limits, processes, loopback"),
    ("checks", ("checks",), "one package per topic: its graded items, probes, contract and known mistakes"),
    ("oracles", ("oracles",), "the grader-only answers"),
    ("engine", ("engine",), "grading one notebook: the trusted runner, jobs, results, records"),
    ("course", ("course",), "grading a class and what is kept of it: batches, the gradebook, lateness, similarity"),
    ("nbgrader_plugins", ("nbgrader_plugins",), "every extension of nbgrader, one concern a module"),
    ("gradescope", ("gradescope",), "what runs on Gradescope's machine"),
    ("commands", ("commands",), "one module per command, named after it"),
    ("cli", ("cli", "__main__"), "the table of commands"),
)
RANK = {package: rank for rank, (_, packages, _) in enumerate(LAYERS) for package in packages}
TOOLS = ("nbgrader", "dask", "distributed", "traitlets", "argparse", "nbconvert", "jupyter_server", "tqdm")


KNOWN = {dotted(p) for p in MODULES}


def package_of(module):
    """The package of ``autograder.<package>...`` as LAYERS names it (``autograder`` itself: the foundation); a name
    imported from a module (``autograder.__version__``) is that module's."""
    while module not in KNOWN and "." in module:
        module = module.rpartition(".")[0]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "errors"


def layer(module):
    return LAYERS[RANK[package_of(module)]][0]


def topic_of(module):
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "checks" else None


@pytest.mark.quick
def test_every_package_has_its_layer():
    packages = {package_of(dotted(p)) for p in MODULES}
    assert packages <= set(RANK), f"add {sorted(packages - set(RANK))} to LAYERS"
    assert set(RANK) <= packages, f"LAYERS names {sorted(set(RANK) - packages)}, which the package lacks"


@pytest.mark.quick
@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_down_the_layers(path):
    me = dotted(path)
    for module, _ in imports(path):
        if not module.startswith("autograder.") and module != "autograder":
            assert not module.startswith(("tests", "solutions")), f"{me} imports {module}"
            continue
        mine, theirs = RANK[package_of(me)], RANK[package_of(module)]
        assert theirs <= mine, f"{me} ({layer(me)}) imports {module} ({layer(module)}), a layer above it"
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
@pytest.mark.parametrize("path", [p for p in MODULES if package_of(dotted(p)) == "engine"],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_engine_imports_no_tool(path):
    """A grading worker imports the engine with torch and nothing else of the instructor's: no nbgrader, Dask,
    traitlets or command-line module, and nothing of ``autograder.course``."""
    for module, _ in imports(path):
        assert module.split(".")[0] not in TOOLS, f"{dotted(path)} imports {module}"
        if module.startswith("autograder."):
            assert RANK[package_of(module)] <= RANK["engine"], f"{dotted(path)} imports the tool {module}"


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

