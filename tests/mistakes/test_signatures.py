"""The known mistakes the grader ships (``autograder/checks/<topic>/mistakes.py``) are the proofs' mutants, as they
grade today: a new, renamed or re-described mutant, or a check that now fails a mutant otherwise, makes them stale.

The quick tests compare ids, descriptions and the digest of the files the signatures were graded from (the topic's
mutants, checks and oracles) without grading anything. Regenerating grades every mutant on every item twice (about
20 minutes for the nine topics on this 2-core machine under load, over the suite's budget): it runs with
``EPL_REGENERATE_MISTAKES=1`` (and ``python -m tests.mistakes.signatures --check`` does the same), for a change of
shared machinery (``measuring/compare.py``, ``seam/student.py`` ...) that the digest does not cover.
"""

import importlib
import os
import re

import pytest

from autograder.commands.build import topics
from autograder.engine.results import known_mistakes
from autograder.errors import KINDS
from autograder.feedback import looks_like
from tests.mistakes.signatures import inputs_digest, mutants, path_of, table, text_of
from tests.proving import ROOT

TOPICS = topics(ROOT)


@pytest.mark.quick
@pytest.mark.parametrize("topic", TOPICS)
def test_every_mutant_is_known_with_its_description(topic):
    shipped = [(m["id"], m["says"]) for m in known_mistakes(topic)]
    assert shipped == [(name, says) for name, says, _ in mutants(topic)], (
        f"autograder/checks/{topic}/mistakes.py is stale: python -m tests.mistakes.signatures --write {topic}")


@pytest.mark.quick
@pytest.mark.parametrize("topic", TOPICS)
def test_signatures_were_graded_from_todays_checks_and_mutants(topic):
    shipped = importlib.import_module(f"autograder.checks.{topic}.mistakes").DIGEST
    assert shipped == inputs_digest(topic), (
        f"tests/mutants/{topic}.py or autograder/checks/{topic}/ changed since the signatures were graded: "
        f"python -m tests.mistakes.signatures --write {topic}")


@pytest.mark.quick
@pytest.mark.parametrize("topic", TOPICS)
def test_signatures_name_real_items_and_kinds(topic):
    items = {item.id for item in importlib.import_module("autograder.checks").items_of(topic)}
    for mistake in known_mistakes(topic):
        for key in ("signature", "visible"):
            assert set(mistake[key]) <= items, mistake["id"]
            assert {re.split(r":| at ", kind)[0] for kind in mistake[key].values()} <= set(KINDS), mistake["id"]
        # The mutant fails at least what the proofs say it must (its targets), and the visible variants fail no
        # item that every variant passes.
        targets = importlib.import_module(f"tests.mutants.{topic}").MUTANTS[mistake["id"]][1]
        assert {t.removeprefix("check_") for t in targets} <= set(mistake["signature"]), mistake["id"]
        assert set(mistake["visible"]) <= set(mistake["signature"]), mistake["id"]


@pytest.mark.e2e
@pytest.mark.skipif(os.environ.get("EPL_REGENERATE_MISTAKES") != "1",
                    reason="grades every mutant on every item (minutes): EPL_REGENERATE_MISTAKES=1 runs it")
@pytest.mark.parametrize("topic", TOPICS)
def test_signatures_are_what_the_mutants_grade_today(topic):
    assert path_of(topic).read_text(encoding="utf-8") == text_of(topic, table(topic)), (
        f"python -m tests.mistakes.signatures --write {topic}")


@pytest.mark.quick
def test_every_mutant_is_named_right_or_not_at_all_by_its_own_signature():
    """The table against itself (docs/feedback.md): no mutant's signature names another mistake, and at least as
    many mutants are named by their own signature as measured (236 of 251; the rest tie with a mutant told
    otherwise, or leave generic kinds only)."""
    named = wrong = 0
    for topic in TOPICS:
        table = known_mistakes(topic)
        for mistake in table:
            found = looks_like(table, dict(mistake["signature"]))
            named += found is not None and found["says"] == mistake["says"]
            wrong += found is not None and found["says"] != mistake["says"]
    assert wrong == 0
    assert named >= 236
