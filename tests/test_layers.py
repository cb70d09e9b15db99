"""Dependencies run one way: ``course/`` above ``checks/`` above the shared machinery.

No topic imports a sibling topic, shared machinery imports neither checks nor course tools, shipped
code never reaches into ``tests/`` (nor imports ``solutions/``), and no module uses another's private names.
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
    if module.startswith("autograder.checks"):
        return "checks"
    return "shared"


def topic_of(module):
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "checks" else None


RANK = {"shared": 0, "checks": 1, "course": 2}


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
