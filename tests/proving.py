"""Shared tools for proving checks: the reference, a second correct solution, the stub, the mutants."""

import importlib
from pathlib import Path

import torch

from autograder.course import notebooks
from autograder.results import checks_of, run_check, run_checks
from autograder.selfcheck import exec_source

ROOT = Path(__file__).resolve().parents[1]


def _exec(source, name):
    return exec_source(source, f"<{name}>", name)


def reference(topic):
    """The namespace of ``solutions/<topic>.py`` (generated from source/)."""
    path = ROOT / "solutions" / f"{topic}.py"
    return _exec(path.read_text(encoding="utf-8"), f"solutions.{topic}")


def alternative(topic):
    """A second, differently written correct solution from ``tests/alternatives/<topic>.py``."""
    return vars(importlib.import_module(f"tests.alternatives.{topic}"))


def stub(topic):
    """What a student who changed nothing submits: the release notebook's solution cells, run."""
    nb = notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")
    source = "\n".join(notebooks.source_text(c) for c in nb["cells"]
                       if c.get("cell_type") == "code" and notebooks.is_solution(c))
    return _exec(source, f"stub.{topic}")


def with_replacements(topic, replacements):
    namespace = dict(reference(topic))
    namespace.update(replacements)
    return namespace


def failing(topic, namespace, **kwargs):
    """``{check name: message}`` for every check of ``topic`` that fails on ``namespace``."""
    torch.manual_seed(0)
    return {r.check: r.message for r in run_checks(topic, namespace, **kwargs) if not r.passed}


def failing_among(topic, namespace, names, **kwargs):
    """Like :func:`failing`, running only the checks named in ``names``."""
    torch.manual_seed(0)
    results = [run_check(c, namespace, **kwargs) for c in checks_of(topic) if c.__name__ in names]
    return {r.check: r.message for r in results if not r.passed}


def check_names(topic):
    return {c.__name__ for c in checks_of(topic)}
