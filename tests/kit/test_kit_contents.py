"""What the kit holds (``autograder/kit_contents.py``), that no module of the kit imports a grader-only one, and
that the wheel is reproducible and well formed."""

import ast
import zipfile
from pathlib import Path

import pytest

from autograder import kit_contents
from autograder.commands.kit import wheel_name, write_wheel

PACKAGE = Path(kit_contents.__file__).resolve().parent


@pytest.mark.quick
def test_what_the_kit_holds():
    files = {relative for relative, _ in kit_contents.kit_files(PACKAGE)}
    assert "checks/operators/__init__.py" in files and "seam/worker.py" in files and "commands/check.py" in files
    assert not {f for f in files if f.startswith("oracles/")}
    for folder, kept in kit_contents.STUDENT_MODULES.items():
        assert {f for f in files if f.startswith(f"{folder}/")} == {f"{folder}/{m}" for m in kept}
    assert not {f for f in files if f.startswith(("course/", "gradescope/"))}
    assert not kit_contents.in_kit("course/grading.py") and not kit_contents.in_kit("commands/demo_submissions/basics.py")
    assert not kit_contents.in_kit("checks/__pycache__/x.py") and not kit_contents.in_kit("checks/notes.txt")


def _imported(path, relative):
    package = ["autograder", *Path(relative).parent.parts]
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:   # what importing it imports
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.quick
def test_no_kit_module_imports_a_grader_only_one():
    """At import time (the command line imports an instructor's tool only when its command runs; in the kit that
    says the tool is the instructor's: tests/kit/test_student_kit.py)."""
    modules = {".".join(["autograder", *Path(r).with_suffix("").parts]).removesuffix(".__init__")
               for r, _ in kit_contents.kit_files(PACKAGE)}
    for relative, path in kit_contents.kit_files(PACKAGE):
        for name in _imported(path, relative):
            if name.startswith("autograder.") and name.split(".")[1] in kit_contents.GRADER_ONLY:
                assert name in modules or name.rpartition(".")[0] in modules, f"{relative} imports {name}"


def test_the_wheel_is_reproducible_and_well_formed(tmp_path):
    tables = {"operators": {"ab": 1}}
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    one, two = write_wheel(first / wheel_name(), tables), write_wheel(second / wheel_name(), tables)
    assert one.read_bytes() == two.read_bytes()
    with zipfile.ZipFile(one) as wheel:
        names = wheel.namelist()
        info = "effective_pytorch_lab_kit-0.1.0.dist-info"
        assert names[-4:] == [f"{info}/METADATA", f"{info}/WHEEL", f"{info}/top_level.txt", f"{info}/RECORD"]
        record = wheel.read(f"{info}/RECORD").decode().splitlines()
        assert len(record) == len(names) and record[-1] == f"{info}/RECORD,,"
        metadata = wheel.read(f"{info}/METADATA").decode()
        assert "Name: effective-pytorch-lab-kit" in metadata and "Requires-Dist: nbgrader>=0.9.5" in metadata
        assert "autograder/expected/operators.pkl" in names
        assert not [n for n in names if n.startswith(("autograder/oracles", "solutions", "source"))]
