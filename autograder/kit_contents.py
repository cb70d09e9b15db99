"""What the student kit holds, declared once: every module of the ``autograder`` package except the grader-only ones.

Grader-only: ``autograder/oracles/`` (functions that compute an exercise's answer), the instructor's tools
(``autograder/commands/``, ``autograder/course/``, ``autograder/nbgrader_plugins/``, ``autograder/gradescope/``) and
the grading engine's grader side in ``autograder/engine/`` (the trusted runner, jobs, records), except the few
modules a student's ``python -m autograder check <topic> FILE`` and ``nbgrader submit`` run.
Everything else (the checks with their messages, the shared machinery, the worker and its sandbox) is the kit:
what ``python -m autograder kit`` packs into the students' wheel and what the grading sandbox shows to a
submission (``autograder.sandbox.kit_tree``).
"""

import os
from pathlib import Path

PACKAGE = "autograder"
# folders of the package that the kit leaves out ...
GRADER_ONLY = ("oracles", "commands", "course", "nbgrader_plugins", "gradescope", "engine")
STUDENT_MODULES = {"commands": ("__init__.py", "check.py"),                              # ... but these of them
                   "nbgrader_plugins": ("__init__.py", "exchange_submit.py"),
                   "engine": ("__init__.py", "results.py", "verdict.py", "notebooks.py")}
SUFFIXES = (".py",)


def in_kit(relative):
    """Whether ``relative`` (a path inside the package, e.g. ``"checks/operators/__init__.py"``) is in the kit."""
    parts = Path(relative).parts
    if not parts or "__pycache__" in parts or not parts[-1].endswith(SUFFIXES):
        return False
    if parts[0] in STUDENT_MODULES:
        return len(parts) == 2 and parts[1] in STUDENT_MODULES[parts[0]]
    return parts[0] not in GRADER_ONLY


def kit_files(package_dir):
    """``[(path inside the package, absolute path)]`` of the kit's files in ``package_dir``, sorted."""
    package_dir = Path(package_dir)
    found = []
    for root, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in files:
            path = Path(root) / name
            relative = path.relative_to(package_dir).as_posix()
            if in_kit(relative):
                found.append((relative, path))
    return sorted(found)
