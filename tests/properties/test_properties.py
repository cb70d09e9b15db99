"""Property search over each exercise's contract (issue 23): the reference and the alternative agree on every drawn
input, and every mutant is told apart on some drawn input, or is listed with its reason (``classified``).

Deterministic (Hypothesis ``derandomize=True``, no database) and bounded (``search.SUITE_EXAMPLES`` per search);
``EPL_LONG_SEARCH=1`` runs the same searches with ``search.LONG_EXAMPLES`` (docs/authoring.md, "Property search").
"""

import importlib
import os

import pytest

from autograder.checks import TOPICS
from tests import proving

from .classified import KNOWN_GAPS, OUT_OF_SEARCH
from .exercises import EXERCISES, exercise_for
from .outcomes import observe
from .search import (LONG_EXAMPLES, SUITE_EXAMPLES, disagreement, first_case, mutant_namespace, reference,
                     separating_case)


def _every_mutant(topic):
    """The ids of ``topic``'s mutants, the CPU ones (``MUTANTS``) and the GPU-only ones (``GPU_MUTANTS``)."""
    module = importlib.import_module(f"tests.mutants.{topic}")
    return set(module.MUTANTS) | set(getattr(module, "GPU_MUTANTS", {}))


def _searched():
    """(topic, mutant id, exercise, replacements) of every CPU mutant whose objects a searched exercise covers."""
    found = []
    for topic in TOPICS:
        module = importlib.import_module(f"tests.mutants.{topic}")
        for name, (replacements, _items) in module.MUTANTS.items():
            exercise = exercise_for(topic, replacements)
            if exercise is not None:
                found.append((topic, name, exercise, replacements))
    return found


SEARCHED = _searched()


def test_every_mutant_is_searched_or_classified():
    """A new mutant must be searched (its exercise is in ``EXERCISES``) or classified in ``OUT_OF_SEARCH``, once."""
    classified = [(topic, name) for names in OUT_OF_SEARCH.values() for topic, ids in names.items() for name in ids]
    assert len(classified) == len(set(classified)), "a mutant is classified twice in OUT_OF_SEARCH"
    searched = {(topic, name) for topic, name, _, _ in SEARCHED}
    everything = {(topic, name) for topic in TOPICS for name in _every_mutant(topic)}
    assert not searched & set(classified), f"searched and classified both: {sorted(searched & set(classified))}"
    assert everything - searched - set(classified) == set(), \
        f"mutants neither searched nor classified: {sorted(everything - searched - set(classified))}"
    assert set(classified) - everything == set(), f"classified mutants that do not exist: " \
                                                  f"{sorted(set(classified) - everything)}"
    assert set(KNOWN_GAPS) <= searched, f"known gaps that are not searched: {sorted(set(KNOWN_GAPS) - searched)}"


def _agreement_failure(exercise, examples, shrink=False):
    """A drawn case where the alternative departs from the reference, or the reference breaks a clause of its own
    contract; ``None`` when there is none."""
    alternative = proving.alternative(exercise.topic)

    def wrong(case):
        return observe(exercise, reference(exercise.topic), case).broken is not None \
            or disagreement(exercise, alternative, case) is not None
    return first_case(exercise.space, wrong, examples, shrink)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_reference_and_alternative_agree(exercise):
    case = _agreement_failure(exercise, SUITE_EXAMPLES) and _agreement_failure(exercise, SUITE_EXAMPLES, shrink=True)
    assert case is None, (f"{exercise.id}: on {case!r}: "
                          f"{observe(exercise, reference(exercise.topic), case).broken or ''} "
                          f"{disagreement(exercise, proving.alternative(exercise.topic), case)}")


def _verdict(topic, name, exercise, replacements, examples):
    candidate = mutant_namespace(topic, replacements)
    case = separating_case(exercise, candidate, examples)
    gap = KNOWN_GAPS.get((topic, name))
    if gap is not None and case is not None:
        case = separating_case(exercise, candidate, examples, shrink=True)     # the simplest, for the message
    if gap is not None:
        return None if case is None else (f"listed as a known gap ({gap}) but separated on {case!r}: "
                                          f"{disagreement(exercise, candidate, case)}; remove it from KNOWN_GAPS")
    return None if case is not None else (f"no drawn input separates {name!r} from the reference in "
                                          f"{examples} examples: a gap (decide, and list it in KNOWN_GAPS)")


@pytest.mark.parametrize("topic, name, exercise, replacements", SEARCHED,
                         ids=[f"{t}/{n}" for t, n, _, _ in SEARCHED])
def test_mutant_is_told_apart(topic, name, exercise, replacements):
    """Every mutant is separated on some drawn input, except exactly the known gaps (a closed gap fails too)."""
    problem = _verdict(topic, name, exercise, replacements, SUITE_EXAMPLES)
    assert problem is None, problem


@pytest.mark.skipif(os.environ.get("EPL_LONG_SEARCH") != "1",
                    reason=f"the long property search ({LONG_EXAMPLES} examples per search, minutes): "
                           f"run it with EPL_LONG_SEARCH=1 python -m pytest tests/properties -k long_search")
def test_long_search():
    problems = []
    for exercise in EXERCISES:
        case = _agreement_failure(exercise, LONG_EXAMPLES) and _agreement_failure(exercise, LONG_EXAMPLES, shrink=True)
        if case is not None:
            problems.append(f"{exercise.id}: the alternative or the reference departs on {case!r}")
    for topic, name, exercise, replacements in SEARCHED:
        problem = _verdict(topic, name, exercise, replacements, LONG_EXAMPLES)
        if problem:
            problems.append(f"{topic}/{name}: {problem}")
    assert not problems, "\n".join(problems)
