"""The proof every topic's checks owe, in one place, for every topic:

the reference and a second, differently written correct solution get full marks (on seed 0 here; on another
seed, 4242, in ``test_spec_agreement.py``, which grades both there anyway), the untouched stub fails every check
with "not implemented yet",
and each realistic mistake in ``tests/mutants/<topic>.py`` fails every check that targets it.
Topic-specific tests (messages, edge cases, GPU-only mistakes) live in ``test_<topic>.py``.
"""

import importlib

import pytest

from autograder.checks import items_of
from autograder.commands.build import topics
from tests.proving import (ROOT, alternative, cell_points, check_names, failing, failing_among, reference, stub,
                           with_replacements)

TOPICS = topics(ROOT)


def _mistakes(kind):
    """``(topic, name)`` for every mistake in ``tests/mutants/<topic>.py``'s ``kind`` dict."""
    return [(topic, name) for topic in TOPICS
            for name in sorted(getattr(importlib.import_module(f"tests.mutants.{topic}"), kind, {}))]


MUTANTS = _mistakes("MUTANTS")
GPU_MUTANTS = _mistakes("GPU_MUTANTS")   # mistakes that only a machine with CUDA can catch


@pytest.mark.quick
@pytest.mark.parametrize("topic", TOPICS)
def test_reference_gets_full_marks(topic):
    assert failing(topic, reference(topic)) == {}


@pytest.mark.parametrize("topic", TOPICS)
def test_second_correct_solution_gets_full_marks(topic):
    assert failing(topic, alternative(topic)) == {}


@pytest.mark.parametrize("topic", TOPICS)
def test_stub_fails_every_check(topic):
    failed = failing(topic, stub(topic))
    assert set(failed) == check_names(topic)
    assert all("not implemented yet" in message for message in failed.values())


def _loses_its_check(topic, mistake, kind, monkeypatch):
    replacements, targets = getattr(importlib.import_module(f"tests.mutants.{topic}"), kind)[mistake]
    assert targets and targets <= check_names(topic), f"{mistake}: unknown target checks {targets}"
    namespace = with_replacements(topic, replacements)
    failed = failing_among(topic, namespace, targets)
    assert set(failed) == targets, f"{mistake}: expected {targets} to fail, failed {set(failed)}"
    # The notebook's own test cells, run with the same seed, give the same 0 for each of them.
    monkeypatch.setenv("AUTOGRADER_GRADING_SEED", "0")
    only = {item.id for item in items_of(topic) if item.name in targets}
    assert cell_points(topic, namespace, only) == dict.fromkeys(only, 0), mistake


@pytest.mark.parametrize("topic, mistake", MUTANTS, ids=[f"{t}: {m}" for t, m in MUTANTS])
def test_mistake_loses_its_check(topic, mistake, monkeypatch):
    _loses_its_check(topic, mistake, "MUTANTS", monkeypatch)


@pytest.mark.gpu
@pytest.mark.parametrize("topic, mistake", GPU_MUTANTS, ids=[f"{t}: {m}" for t, m in GPU_MUTANTS])
def test_gpu_only_mistake_loses_its_check(topic, mistake, monkeypatch):
    _loses_its_check(topic, mistake, "GPU_MUTANTS", monkeypatch)
