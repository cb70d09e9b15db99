"""The proofs of tests/checks/test_proofs.py, through the trusted runner, for every topic:
student code in a worker process, every check here on proxies and plain data. The reference and the second
solution keep full marks, the stub scores 0 on every item, and every mutant still fails every check it targets.

One worker per topic serves every submission (a cell swaps the names), so the whole file costs one torch import
per topic; the sandbox itself is proved in test_sandbox.py and, end to end, in tests/adversarial.
"""

import importlib

import pytest

from autograder.checks import items_of
from autograder.commands.build import topics
from autograder.engine.results import grade_item
from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher
from autograder.source_evidence.submitted_source import Submission
from tests.mistakes.grammar import internal_types
from tests.proving import ROOT, check_names, not_passed, with_replacements

SEED = 3


SETUP = f"import sys; sys.path.insert(0, {str(ROOT)!r})"


@pytest.fixture(scope="module", params=topics(ROOT))
def topic_worker(request, tmp_path_factory):
    worker = NotebookWorker([], plain_launcher, str(tmp_path_factory.mktemp("worker")))
    worker.live().request("cell", SETUP, timeout=120)
    yield request.param, worker
    worker.close()


def _load(worker, code):
    answer = worker.live().request("cell", code, timeout=120)
    assert not answer["ok"]["error"], answer["ok"]["error"]
    worker.cells = [("setup", SETUP), ("submission", code)]   # what a fresh worker of this notebook runs
    if worker.loader is not None:                            # (in_fresh_process: the checkpoint's loads)
        worker.loader.request("cell", code, timeout=120)


def _submit(worker, topic, kind, mutant=None):
    """Replace the worker's names with a submission: the reference, the alternative, the stub, or a mutant."""
    lines = ["for _name in [n for n in globals() if not n.startswith('_') and n not in ('sys',)]: del globals()[_name]"]
    if kind == "alternative":
        lines.append(f"from tests.alternatives.{topic} import *")
    elif kind == "stub":
        lines.append(f"from tests.proving import stub as _stub; globals().update(_stub({topic!r}))")
    else:
        lines.append(f"from tests.proving import reference as _ref; globals().update(_ref({topic!r}))")
    if mutant:
        lines.append(f"from tests.mutants.{topic} import MUTANTS as _M; globals().update(_M[{mutant!r}][0])")
    _load(worker, "\n".join(lines))


def _failing(worker, topic, names=None, source=None):
    namespace = RemoteNamespace(worker)
    results = [grade_item(item, namespace, seed=SEED, source=source) for item in items_of(topic)
               if names is None or item.name in names]
    return not_passed(results)


def _source(topic, kind):
    """What the grader reads of the submission (its source rules and evasion scan apply, as in an official grade)."""
    path = ROOT / ("solutions" if kind == "reference" else "tests/alternatives") / f"{topic}.py"
    return Submission.from_text(path.read_text(encoding="utf-8"), path.name)


def test_reference_and_alternative_full_stub_zero(topic_worker):
    topic, worker = topic_worker
    for kind in ("reference", "alternative"):
        _submit(worker, topic, kind)
        assert _failing(worker, topic, source=_source(topic, kind)) == {}, kind
    _submit(worker, topic, "stub")
    failed = _failing(worker, topic)
    assert set(failed) == check_names(topic)
    assert all("not implemented yet" in message for message in failed.values()), failed


def test_every_mutant_fails_its_checks(topic_worker):
    """... and every message it gets speaks of the student's objects: no internal type (the worker's proxies and
    handles) in what a student reads."""
    topic, worker = topic_worker
    mutants = importlib.import_module(f"tests.mutants.{topic}").MUTANTS
    wrong, leaked = {}, {}
    for name, (replacements, targets) in sorted(mutants.items()):
        _submit(worker, topic, "mutant", name)
        failed = _failing(worker, topic, targets, Submission.of_objects(with_replacements(topic, replacements)))
        if set(failed) != targets:
            wrong[name] = (sorted(targets), sorted(failed))
        named = {check: internal_types(message) for check, message in failed.items() if internal_types(message)}
        if named:
            leaked[name] = named
    assert wrong == {}
    assert leaked == {}
