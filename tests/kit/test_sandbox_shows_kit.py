"""During an official grade the submission sees the student kit, not the instructor's package: the grader-only
modules (oracles, course tools, demo answers) cannot be imported and ``solutions/`` cannot be read, so the two
oracles that used to be model answers earn nothing; the honest reference keeps full marks."""

import json

import pytest

from autograder.checks import items_of
from autograder.engine.results import grade_item
from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, sandbox_launcher
from tests.proving import ROOT

pytestmark = pytest.mark.e2e
SEED = 5
GRADER_ONLY = ("autograder.oracles", "autograder.oracles.operators", "autograder.oracles.dataloading",
               "autograder.course.grading", "autograder.engine.trusted_runner", "autograder.engine.jobs",
               "autograder.engine.records", "autograder.commands.demo_submissions",
               "autograder.commands.kit")
COLLATE = ("collate_images_values", "collate_images_copies", "collate_images_loader")
KIT = ("autograder.checks.operators", "autograder.seam.worker", "autograder.measuring.expected_outputs",
       "autograder.commands.check")
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
def workers(ready, tmp_path_factory):
    """One sandboxed worker per topic, as the trusted runner starts it; each submission's cells replace the last's."""
    started = {}

    def worker(topic):
        if topic not in started:
            started[topic] = NotebookWorker([], sandbox_launcher, str(tmp_path_factory.mktemp(topic)))
        return started[topic]

    yield worker
    for each in started.values():
        each.close()


def _grade(worker, topic, *sources, only=None):
    """Grade a submission of ``sources`` (its cells) officially: ``(results, what each cell printed)``."""
    names = "[n for n in globals() if not n.startswith('_') and n not in ('sys',)]"
    cells = [("clear", f"for _name in {names}: del globals()[_name]"),
             *((f"cell {i}", source) for i, source in enumerate(sources))]
    printed = []
    for cell_id, source in cells:
        answer = worker(topic).live().request("cell", source, timeout=120)
        printed.append(str((answer.get("ok") or {}).get("output", "")))
    worker(topic).cells = cells   # a worker started again runs them again
    return [grade_item(item, RemoteNamespace(worker(topic)), seed=SEED) for item in items_of(topic)
            if only is None or item.id in only], printed[1:]


def _scores(results):
    return {result.item: result.score for result in results}


def test_the_submission_sees_the_kit_and_the_honest_reference_keeps_full_marks(workers):
    results, printed = _grade(workers, "operators", (ROOT / "solutions" / "operators.py").read_text(), PEEK)
    printed = printed[1]
    seen = json.loads(printed[printed.index("SEEN ") + 5:].splitlines()[0])
    assert {name: seen[name] for name in GRADER_ONLY} == {name: "ModuleNotFoundError" for name in GRADER_ONLY}
    assert {name: seen[name] for name in KIT} == {name: "imported" for name in KIT}
    assert [seen[path] for path in seen if path.startswith("/")] == ["FileNotFoundError", "FileNotFoundError"]
    assert all(result.score == result.max_score for result in results), [r.message for r in results]


def _reference_but(topic, *replacement):
    return [(ROOT / "solutions" / f"{topic}.py").read_text(), *replacement]


def test_the_two_known_thefts_earn_nothing(workers):
    """The masked-mean and collate oracles were model answers in the kit; submitted from where they live now,
    from where they lived, or through the kit's table of expected outputs, they earn nothing."""
    for theft in ("from autograder.oracles.operators import masked_mean",
                  "from autograder.checks.operators import reference_masked_mean as masked_mean",
                  "from autograder.measuring.expected_outputs import oracle\n"
                  "def masked_mean(x, low, high):\n    return oracle('operators.masked_mean', x, low, high)"):
        scores = _scores(_grade(workers, "operators", *_reference_but("operators", "del masked_mean", theft))[0])
        assert scores["masked_mean"] == scores["masked_mean_special_values"] == 0, (theft, scores)
        assert scores["row_sum"] == 2, (theft, scores)   # the rest of the reference is graded as usual
    for theft in ("from autograder.oracles.dataloading import collated as collate_images",
                  "from autograder.checks.dataloading.batches import collated as collate_images"):
        submission = _reference_but("dataloading", "del collate_images", theft)
        scores = _scores(_grade(workers, "dataloading", *submission, only=COLLATE + ("image_directory_dataset",))[0])
        assert [scores[item] for item in COLLATE] == [0, 0, 0], (theft, scores)
        assert scores["image_directory_dataset"] > 0, (theft, scores)
