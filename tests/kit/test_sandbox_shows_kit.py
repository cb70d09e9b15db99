"""During an official grade the submission sees the student kit, not the instructor's package: the grader-only
modules (oracles, course tools, demo answers) cannot be imported and ``solutions/`` cannot be read, so the two
oracles that used to be model answers earn nothing; the honest reference keeps full marks."""

import json

import pytest

from autograder.engine.trusted_runner import grade_cells, sandbox_launcher
from autograder.trusted import sandbox
from tests.proving import ROOT

pytestmark = pytest.mark.e2e
SEED = 5
GRADER_ONLY = ("autograder.oracles", "autograder.oracles.operators", "autograder.oracles.dataloading",
               "autograder.course.grading", "autograder.engine.trusted_runner", "autograder.engine.jobs",
               "autograder.engine.records", "autograder.course.demo_submissions",
               "autograder.course.kit")
KIT = ("autograder.checks.operators", "autograder.trusted.worker", "autograder.expected_outputs",
       "autograder.course.selfcheck")
PEEK = f"""
import importlib, json, os
seen = {{}}
for name in {GRADER_ONLY + KIT!r}:
    try:
        importlib.import_module(name)
        seen[name] = "imported"
    except ImportError as error:
        seen[name] = type(error).__name__
for path in {[str(ROOT / "solutions" / "operators.py"), str(ROOT / "autograder" / "oracles" / "operators.py")]!r}:
    try:
        open(path).read()
        seen[path] = "read"
    except OSError as error:
        seen[path] = type(error).__name__
print("SEEN " + json.dumps(seen))
"""


@pytest.fixture(scope="module")
def ready():
    try:
        return sandbox.probe()
    except sandbox.SandboxUnavailable as why:
        pytest.skip(f"no sandbox here: {why}")


def _grade(topic, *sources):
    return grade_cells(topic, [(f"cell {i}", source) for i, source in enumerate(sources)], seed=SEED,
                       launcher=sandbox_launcher)


def _scores(grade):
    return {result.item: result.score for result in grade.items}


def test_the_submission_sees_the_kit_and_the_honest_reference_keeps_full_marks(ready):
    grade = _grade("operators", (ROOT / "solutions" / "operators.py").read_text(), PEEK)
    printed = grade.cells[1].output
    seen = json.loads(printed[printed.index("SEEN ") + 5:].splitlines()[0])
    assert {name: seen[name] for name in GRADER_ONLY} == {name: "ModuleNotFoundError" for name in GRADER_ONLY}
    assert {name: seen[name] for name in KIT} == {name: "imported" for name in KIT}
    assert [seen[path] for path in seen if path.startswith("/")] == ["FileNotFoundError", "FileNotFoundError"]
    assert all(result.score == result.max_score for result in grade.items), [r.message for r in grade.items]


def _reference_but(topic, *replacement):
    return [(ROOT / "solutions" / f"{topic}.py").read_text(), *replacement]


def test_the_two_known_thefts_earn_nothing(ready):
    """The masked-mean and collate oracles were model answers in the kit; submitted from where they live now,
    from where they lived, or through the kit's table of expected outputs, they earn nothing."""
    for theft in ("from autograder.oracles.operators import masked_mean",
                  "from autograder.checks.operators import reference_masked_mean as masked_mean",
                  "from autograder.expected_outputs import oracle\n"
                  "def masked_mean(x, low, high):\n    return oracle('operators.masked_mean', x, low, high)"):
        grade = _grade("operators", *_reference_but("operators", "del masked_mean", theft))
        scores = _scores(grade)
        assert scores["masked_mean"] == scores["masked_mean_special_values"] == 0, (theft, scores)
        assert scores["row_sum"] == 2, (theft, scores)   # the rest of the reference is graded as usual
    for theft in ("from autograder.oracles.dataloading import collated as collate_images",
                  "from autograder.checks.dataloading.batches import collated as collate_images"):
        grade = _grade("dataloading", *_reference_but("dataloading", "del collate_images", theft))
        scores = _scores(grade)
        assert [scores[item] for item in scores if item.startswith("collate_images")] == [0, 0, 0], (theft, scores)
        assert scores["image_directory_dataset"] > 0, (theft, scores)
