"""The theft test: no callable of the student kit, submitted as an exercise's answer, earns that exercise full marks.

Every function and class the kit's modules define (found by importing them with only the kit on the path) is
submitted as each exercise whose number of positional arguments it can take, the other answers being the
reference's. A screen grades each pair in the sandbox, checks and candidate in one process, item by item until one
fails (in-process and trusted grading agree: tests/trusted/test_trusted_proofs.py). What the screen cannot decide
(a pair that ran past its time or ended its process), a pair that would earn full marks, and a fixed sample of the
kit's float64 oracles go through the official grade: the trusted runner, the candidate imported in the sandboxed
worker, which shows the kit.
"""

import pytest

from autograder.checks import items_of
from autograder.engine.results import grade_item
from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, sandbox_launcher
from tests.kit import theft

pytestmark = pytest.mark.e2e
SEED = 7
# Kit modules whose callables are not submitted: the worker's own plumbing, which forks and execs (processes), kills
# process families (processes.end_family) or serves the grader's pipe (worker.main); no tensor goes in or out.
PLUMBING = ("autograder.sandbox.processes", "autograder.seam.worker")
# The kit's oracles closest to an answer (float64 references the exercises forbid or the checks catch), and the
# kit's look-up of expected outputs, graded officially whatever the screen says.
SAMPLE = (("vectorization", "masked_batch_mean", "autograder.checks.vectorization.masked_mean", "oracle"),
          ("stability", "stable_softmax", "autograder.checks.stability.softmax_cases", "ref_softmax"),
          ("operators", "masked_mean", "autograder.measuring.expected_outputs", "oracle"))


def official_scores(pairs, scratch):
    """``{pair: {item: (score, max_score, message)}}``: each pair graded by the trusted runner in the sandbox (one
    worker per topic; each pair's cell defines the reference's answers, then the candidate under the exercise's
    name)."""
    scores, workers = {}, {}
    try:
        for topic, exercise, module, name in pairs:
            if topic not in workers:
                folder = scratch / topic
                folder.mkdir()
                workers[topic] = NotebookWorker([], sandbox_launcher, str(folder))
            worker = workers[topic]
            cell = ((theft.REPO / "solutions" / f"{topic}.py").read_text() +
                    f"\ndel {exercise}\nfrom {module} import {name} as {exercise}\n")
            worker.cells = [("submission", cell)]   # a worker started again runs it again
            worker.live().request("cell", cell, timeout=120)
            results = [grade_item(item, RemoteNamespace(worker), seed=SEED)
                       for item in items_of(topic) if exercise in item.targets]
            scores[(topic, exercise, module, name)] = {r.item: (r.score, r.max_score, r.message[:200]) for r in results}
    finally:
        for worker in workers.values():
            worker.close()
    return scores


def test_no_kit_callable_earns_an_exercise_full_marks(ready, tmp_path):
    callables, unimportable = theft.kit_callables()
    assert unimportable == {}
    assert len(callables) > 400
    candidates = [c for c in callables if c["module"] not in PLUMBING]
    pairs = theft.pairs(candidates, theft.exercises())
    verdicts = theft.screen(pairs, range(len(pairs)), seed=SEED, per_pair_s=5, total_s=300)
    assert sorted(verdicts) == list(range(len(pairs)))
    slow = [i for i, v in verdicts.items() if v.get("undecided", "").startswith("ran past")]
    if slow:   # a second look, with more time each
        verdicts.update(theft.screen(pairs, slow, seed=SEED, per_pair_s=30, total_s=300, processes=1))
    undecided = [i for i, v in verdicts.items() if v["failed"] is None]
    official = official_scores([tuple(pairs[i]) for i in undecided] + list(SAMPLE), tmp_path)
    thefts = {pair: items for pair, items in official.items()
              if items and all(score == most for score, most, _ in items.values())}
    assert thefts == {}
    for pair in SAMPLE:
        assert any(score < most for score, most, _ in official[pair].values()), pair
