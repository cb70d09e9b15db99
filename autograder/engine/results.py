"""Results are data: one :class:`~autograder.engine.verdict.Verdict` per graded item, serialisable to JSON.

``grade_items`` grades a namespace of student objects (a module, a dict, or the
globals of a notebook) against a topic's graded items, each with its visible and
hidden variants, exactly as the notebook's test cells do under nbgrader: an item
scores its points when every variant passes, else 0. This is how ``python -m
autograder check`` grades without nbgrader, and how the kit's own tests prove each check.
"""

import dataclasses
import importlib
import time
import traceback

from autograder.checks import items_of
from autograder.engine.verdict import (FAILED, GRADER_ERROR, PASSED, PENDING, STATUSES, UNDER_REVIEW,  # noqa: F401
                                       Verdict)
from autograder.errors import CheckFailure, UnderReview, WorkerLost
from autograder.feedback import name_mistake, same_cause
from autograder.source_evidence.evasion import affecting, code_digest
from autograder.source_evidence.source_rules import expect_source
from autograder.source_evidence.submitted_source import Submission
from autograder.spec import PendingGPU, run_seed

GRADER_ERROR_MESSAGE = ("not graded yet: the grader itself failed on this item (a problem in the grading code, "
                        "not in your work); your instructor has been told and will grade it again")


REVIEW_MESSAGE = ("under review: your code uses {constructs}, which can hide your work from the grader or change how "
                  "it grades. Your instructor will look at it; until then this item scores 0.")


def grade_item(item, namespace, *, seed=None, hidden=True, source=None, **overrides):
    """Run every variant of ``item`` with the student objects it names, taken from ``namespace``.

    ``seed`` is the grading run's seed (hidden variants draw theirs from it); ``overrides``
    replace keyword arguments of every variant (the kit's tests use ``seed=`` this way).
    ``source``: the submission's parsed code (:class:`autograder.source_evidence.submitted_source.Submission`; the trusted grader
    passes the notebook's cells). Without it, the source of plain objects (a module, a dict of functions: the
    kit's proofs) is read from the files they were defined in; a proxy's has none. The item's source rules then
    apply (a broken one fails it), and a construct that only serves to evade grading puts it under review.
    """
    started = time.perf_counter()
    objects = namespace if isinstance(namespace, dict) else vars(namespace)
    if source is None and type(objects) is dict:
        source = Submission.of_objects({n: objects[n] for n in item.targets if n in objects})
    variants = item.variants(seed if seed is not None else run_seed())
    if not hidden:
        variants = variants[:1]
    status, message, measurements, detail, kind, cause = PASSED, "", {}, "", "", ""
    doubted = []      # measurements a check did not believe without a person (UnderReview: its variant's last word)
    try:
        missing = [n for n in item.targets if n not in objects]
        if missing:
            raise CheckFailure(item.name, f"the submission defines no {', '.join(missing)}.",
                               hint="Keep the exact names given in the exercise.", kind="missing")
        for kwargs in variants:
            try:
                returned = item.check(*(objects[n] for n in item.targets), **{**kwargs, **overrides})
            except UnderReview as review:      # the rest of that variant passed; the other variants still count
                doubted.append(review)
                measurements = review.measurements
                continue
            if callable(getattr(returned, "as_dict", None)):     # a speed result: its ratios go on the record
                measurements = returned.as_dict()
        if source is not None and item.source:
            expect_source(item.name, item.source, source)
        if doubted:
            raise doubted[0]
    except PendingGPU as pending:
        status, message = PENDING, str(pending)
    except UnderReview as review:
        status, message, measurements = UNDER_REVIEW, str(review), review.measurements
    except CheckFailure as failure:
        status, message, measurements = FAILED, str(failure), failure.measurements
        kind, cause = failure.kind, failure.cause   # named by the check, or where it was raised
    except WorkerLost as lost:
        status, kind = FAILED, "crashed"
        message = f"[{item.name}] the process running your code stopped answering: {lost}."
    except Exception as error:  # noqa: BLE001 - a result either way: the student's failure, or the grader's
        if raised_by_student(error):
            status, kind = FAILED, f"raised: {type(error).__name__}"
            message = f"[{item.name}] your code raised {type(error).__name__}: {error}"
            cause = f"your code raised {type(error).__name__}: {error}"
        else:
            status, message, detail = GRADER_ERROR, GRADER_ERROR_MESSAGE, traceback.format_exc()
    score = item.points if status == PASSED else 0.0
    evidence = {"variants": len(variants), "hidden": bool(hidden), "seed": seed if seed is not None else run_seed(),
                "kinds": list(item.evidence)}
    if source is not None and item.source:
        evidence["source_rules"] = [rule.describe() for rule in item.source]
    found = under_review(item, source) if status in (PASSED, FAILED) or doubted else []
    found += undecided(item, source) if status == PASSED or doubted else []
    if doubted and status == UNDER_REVIEW:     # decided as a construct is: accepted, the item passes
        evidence["review"] = {"constructs": [f.as_dict() for f in found] + [doubted_measurement(doubted[0], item, source)],
                              "on_accept": {"status": PASSED, "score": item.points, "message": ""}}
        if found:
            message = f"[{item.name}] " + REVIEW_MESSAGE.format(constructs="; ".join(f.text() for f in found[:3]))
    elif found:
        evidence["review"] = {"constructs": [f.as_dict() for f in found],
                              "on_accept": {"status": status, "score": score, "message": message}}
        status, score = UNDER_REVIEW, 0.0
        message = f"[{item.name}] " + REVIEW_MESSAGE.format(constructs="; ".join(f.text() for f in found[:3]))
    return Verdict(item.id, item.name, status, score, item.points, message, time.perf_counter() - started,
                      measurements, evidence, detail=detail, kind=kind if status == FAILED else "",
                      cause=cause if status == FAILED else "")


def doubted_measurement(review, item, source):
    """A measurement a check did not believe without a person (``UnderReview``), as a construct of the review: what
    was measured, and the digest of the code the answers run (a decision applies again only to that code)."""
    found = {"construct": review.detail.partition("\nCase:")[0], "part": "the grader's measurement", "line": None,
             "snippet": ""}
    return {**found, "code": code_digest(source, item.targets)} if source is not None else found


def under_review(item, source):
    """The evasive constructs (``autograder.source_evidence.evasion``) that ``item``'s answers reach in ``source``."""
    if source is None:
        return []
    names = {target for other in items_of(item.topic) for target in other.targets}
    return affecting(source, item.targets, names)


def undecided(item, source):
    """What ``item``'s source rules cannot decide on ``source`` (``rule.undecided``: a change of the caller's flag
    the reading cannot place), each with the digest of the code the answers run: a pass on the rest of the evidence
    goes to review, never to points."""
    if source is None:
        return []
    found = [f for rule in item.source if hasattr(rule, "undecided") and source.answer(rule.target)
             for f in rule.undecided(source.answer(rule.target))]
    if not found:
        return []
    digest = code_digest(source, item.targets)
    return [dataclasses.replace(f, code=digest) for f in found]


def raised_by_student(error):
    """Whether ``error`` came out of the student's code (an exception rebuilt from the sandboxed worker, or one that
    the wire refused), not out of the grader's own: only the grader's own is a grader error."""
    return hasattr(error, "remote_traceback") or type(error).__name__ in ("WireError", "RemoteError")


def grade_items(topic, namespace, *, only=None, **kwargs):
    """Every graded item of ``topic`` (or those whose ids are in ``only``), in spec order, with the feedback of the
    whole grade (:func:`explain`); ``source=``: the submission's parsed code (see :func:`grade_item`)."""
    results = [grade_item(item, namespace, **kwargs) for item in items_of(topic) if only is None or item.id in only]
    return explain(topic, results, hidden=kwargs.get("hidden", True), whole=only is None)


def explain(topic, results, *, hidden=True, whole=True):
    """What only the whole grade shows, added to ``results``' messages (``autograder.feedback``): one message per
    cause, and the known mistake the pattern of failures matches. ``whole``: every item of the topic was graded
    (a pattern of some items names no mistake). Every path reads the messages from here: ``check``, the trusted
    grader and so nbgrader's feedback, Gradescope's results."""
    same_cause(results)
    if whole:
        name_mistake(results, known_mistakes(topic), hidden=hidden)
    return results


def known_mistakes(topic):
    """The signatures of ``topic``'s known mistakes (``autograder/checks/<topic>/mistakes.py``), or ``()``."""
    try:
        module = importlib.import_module(f"autograder.checks.{topic}.mistakes")
    except ModuleNotFoundError as error:
        if error.name != f"autograder.checks.{topic}.mistakes":
            raise
        return ()
    return module.MISTAKES


def total(results):
    """``(score, max_score)`` over results."""
    return sum(r.score for r in results), sum(r.max_score for r in results)
