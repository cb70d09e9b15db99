"""Shared tools for proving checks: the reference, a second correct solution, the stub, the mutants."""

import dataclasses
import importlib
from pathlib import Path

import torch

from autograder.checks import items_of
from autograder.commands.check import exec_source
from autograder.engine import notebooks
from autograder.engine.results import FAILED, GRADER_ERROR, grade_item, grade_items

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


def failing(topic, namespace, seed=0, **overrides):
    """``{check name: message}`` for every item of ``topic`` that fails on ``namespace``, every variant run
    (the hidden ones with the grading-run seed ``seed``), exactly as grading does."""
    torch.manual_seed(0)
    return not_passed(grade_items(topic, namespace, seed=seed, **overrides))


def not_passed(results):
    """``{check name: message}`` of the results that failed; a grader error counts (the check itself raised: its
    traceback is the message), so that no proof passes on a check that crashed."""
    return {r.check: r.message if r.status == FAILED else f"GRADER ERROR: {r.detail}"
            for r in results if r.status in (FAILED, GRADER_ERROR)}


def failing_among(topic, namespace, names, seed=0):
    """Like :func:`failing`, grading only the items whose checks are named in ``names``."""
    torch.manual_seed(0)
    results = [grade_item(item, namespace, seed=seed) for item in items_of(topic) if item.name in names]
    return not_passed(results)


def run_check(check, namespace, **kwargs):
    """One call of a declared check (its visible variant, with ``kwargs``) as a Verdict."""
    return grade_item(check.item, namespace, hidden=False, **kwargs)


def check_names(topic):
    return {item.name for item in items_of(topic)}


def without_hidden_variants(monkeypatch, topic, index):
    """Delete every hidden variant of the ``index``-th item of ``topic`` from the spec, for one test."""
    from autograder.spec import _REGISTRY
    items = items_of(topic)
    items[index] = dataclasses.replace(items[index], hidden=())
    monkeypatch.setitem(_REGISTRY, f"autograder.checks.{topic}", items)
    return items[index]


def cell_points(topic, namespace, only=None):
    """``{item id: points}`` from executing each graded test cell of the source notebook (hidden tests included,
    as nbgrader restores them at autograde) against ``namespace``; the grading run's seed comes from the
    environment, as in a kernel."""
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    points = {}
    for cell in nb["cells"]:
        if not notebooks.is_graded_test(cell):
            continue
        item_id = notebooks.grade_id(cell).removeprefix("test_")
        if only is not None and item_id not in only:
            continue
        torch.manual_seed(0)
        try:
            exec(notebooks.source_text(cell), dict(namespace))  # noqa: S102 - the kit's own cells
            points[item_id] = cell["metadata"]["nbgrader"]["points"]
        except AssertionError:
            points[item_id] = 0
    return points


def reference_cells(topic, course=ROOT):
    """``{grade id: reference text}`` of each answer cell, from ``course``'s source notebook of ``topic``."""
    return notebooks.solution_sources(notebooks.read(Path(course) / "source" / topic / f"{topic}.ipynb"))


def submission(topic, answers=None, course=ROOT):
    """``course``'s release notebook of ``topic`` with ``answers`` (``{grade id: text}``; the reference's by default)
    typed into its answer cells, as a student hands it in."""
    from autograder.commands.demo import _fill

    release = notebooks.read(Path(course) / "release" / topic / f"{topic}.ipynb")
    return _fill(release, reference_cells(topic, course) if answers is None else answers)


def hand_in(course, student, topic, notebook, stamp=None):
    """``notebook`` written where nbgrader's ``submitted/`` keeps ``student``'s ``topic``, with nbgrader's
    ``timestamp.txt`` when ``stamp`` (its text) is given."""
    target = Path(course) / "submitted" / student / topic
    target.mkdir(parents=True, exist_ok=True)
    notebooks.write(notebook, target / f"{topic}.ipynb")
    if stamp is not None:
        (target / "timestamp.txt").write_text(stamp, encoding="utf-8")
