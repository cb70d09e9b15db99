"""The probe registry and the timed inputs, in this process (the worker's side is proved through real workers in
tests/adversarial/test_probe_liars.py and the trusted proofs)."""

import pytest
import torch

from autograder.checks.vectorization.probes import worker_facts
from autograder.measuring import timing
from autograder.seam import probes as probe_registry
from autograder.seam import remote, timed_inputs
from autograder.spec import grading_run

DECOY = {"0.weight": torch.ones(3, 2), "0.bias": torch.zeros(3)}     # the values of a Linear(2, 3) the probe builds


def test_only_declared_probes_run_beside_student_code():
    with pytest.raises(probe_registry.NotAProbe):
        remote.beside(len, [1, 2])                      # in one process too: the same rule everywhere
    with pytest.raises(probe_registry.NotAProbe):
        remote.by_name(torch.sum)
    assert isinstance(remote.beside(worker_facts.model_for, len, (2, 3), DECOY)[0], torch.nn.Linear)
    with pytest.raises(ValueError, match="probes module"):
        probe_registry.probe(test_only_declared_probes_run_beside_student_code)


def test_a_frozen_registry_undoes_what_student_code_changes(monkeypatch):
    frozen = probe_registry.freeze()
    key = probe_registry.key_of(worker_facts.model_for)
    honest = worker_facts.model_for
    code = honest.__code__
    try:
        worker_facts.model_for = lambda fn, sizes, decoy: "a lie"
        honest.__code__ = (lambda fn, sizes, decoy: "a lie").__code__
        monkeypatch.setattr(worker_facts, "torch", None)       # a helper module of the probe's, replaced
        monkeypatch.setattr(worker_facts, "mlp", lambda sizes: "a lie")     # and a helper function
        probe = frozen.get(key)
        assert probe is honest and probe.__code__ is code and worker_facts.torch is torch
        assert worker_facts.model_for is honest and worker_facts.mlp is not None and worker_facts.mlp([2, 3]) != "a lie"
        assert torch.equal(probe(len, (2, 3), DECOY)[0].weight, DECOY["0.weight"])
    finally:
        honest.__code__ = code
        worker_facts.model_for = honest
    with pytest.raises(probe_registry.NotAProbe):
        frozen.get("os:system")


def test_timed_inputs_are_drawn_from_their_seed_and_keep_indices_valid():
    template = (torch.zeros(64, 16, 4), torch.tensor([0, 15] * 32), 3)
    a, b = timed_inputs.draw_input(template, 7), timed_inputs.draw_input(template, 7)
    c = timed_inputs.draw_input(template, 8)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and a[2] == 3
    assert not torch.equal(a[0], c[0])
    assert a[1].dtype == torch.int64 and int(a[1].min()) >= 0 and int(a[1].max()) <= 15
    assert timed_inputs.nbytes(template) == 64 * 16 * 4 * 4 + 64 * 8


def test_every_timed_request_draws_new_seeds_from_the_run_seed():
    with grading_run(seed=11):
        first, second = timing.draw_seeds(4), timing.draw_seeds(4)
    assert len(set(first + second)) == 8
    assert all(0 <= s < 2 ** timed_inputs.SEED_BITS for s in first)


def test_probes_are_found_by_convention_in_each_topics_probes_module():
    """Every module that declares a probe is a topic's ``probes`` module (or one of its ``probes/`` package) or a
    shared probe module, and the registry finds each by that name alone: no hand-kept list to forget."""
    from pathlib import Path
    package = Path(probe_registry.__file__).parents[1]
    declaring = sorted(".".join(p.relative_to(package.parent).with_suffix("").parts)
                       for p in package.rglob("*.py") if "\n@probe\n" in p.read_text(encoding="utf-8"))
    found = probe_registry.probe_modules()
    assert declaring and all(name in found for name in declaring), set(declaring) - set(found)
    assert all(probe_registry.is_probe_module(name) for name in found)
    assert not probe_registry.is_probe_module("autograder.checks.amp.speed")
