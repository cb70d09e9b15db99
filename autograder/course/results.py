"""Results are data: one :class:`ItemResult` per graded item, serialisable to JSON.

``grade_items`` grades a namespace of student objects (a module, a dict, or the
globals of a notebook) against a topic's graded items, each with its visible and
hidden variants, exactly as the notebook's test cells do under nbgrader: an item
scores its points when every variant passes, else 0. This is how ``python -m
autograder check`` grades without nbgrader, and how the kit's own tests prove each check.
"""

import time
import traceback
from dataclasses import asdict, dataclass, field

from ..checks import items_of
from ..errors import CheckFailure, WorkerLost
from ..spec import PendingGPU, run_seed

PASSED, FAILED, PENDING = "passed", "failed", "pending"


@dataclass
class ItemResult:
    item: str                  # the graded item's id, e.g. "softmax_forward"
    check: str                 # the check function a student calls, e.g. "check_softmax_forward"
    status: str                # "passed", "failed", or "pending" (a GPU item on a machine without one)
    score: float               # points scored: all of max_score when every variant passed, else 0
    max_score: float           # the item's points in the spec
    message: str = ""          # the student-facing message when it failed (or a note)
    seconds: float = 0.0       # wall time of all its variants
    measurements: dict = field(default_factory=dict)  # ratios, op counts, ... when the check reports them

    @property
    def passed(self):
        return self.status == PASSED

    def as_dict(self):
        return asdict(self)


def grade_item(item, namespace, *, seed=None, hidden=True, **overrides):
    """Run every variant of ``item`` with the student objects it names, taken from ``namespace``.

    ``seed`` is the grading run's seed (hidden variants draw theirs from it); ``overrides``
    replace keyword arguments of every variant (the kit's tests use ``seed=`` this way).
    """
    started = time.perf_counter()
    objects = namespace if isinstance(namespace, dict) else vars(namespace)
    variants = item.variants(seed if seed is not None else run_seed())
    if not hidden:
        variants = variants[:1]
    status, message, measurements = PASSED, "", {}
    try:
        missing = [n for n in item.targets if n not in objects]
        if missing:
            raise CheckFailure(item.name, f"the submission defines no {', '.join(missing)}.",
                               hint="Keep the exact names given in the exercise.")
        for kwargs in variants:
            item.check(*(objects[n] for n in item.targets), **{**kwargs, **overrides})
    except PendingGPU as pending:
        status, message = PENDING, str(pending)
    except CheckFailure as failure:
        status, message, measurements = FAILED, str(failure), failure.measurements
    except WorkerLost as lost:
        status, message = FAILED, f"[{item.name}] the process running your code stopped answering: {lost}."
    except Exception:  # noqa: BLE001 - a grader bug must still produce a result
        status, message = FAILED, "internal error in the check:\n" + traceback.format_exc()
    score = item.points if status == PASSED else 0.0
    return ItemResult(item.id, item.name, status, score, item.points, message, time.perf_counter() - started,
                      measurements)


def grade_items(topic, namespace, *, only=None, **kwargs):
    """Every graded item of ``topic`` (or those whose ids are in ``only``), in spec order."""
    return [grade_item(item, namespace, **kwargs) for item in items_of(topic) if only is None or item.id in only]


def total(results):
    """``(score, max_score)`` over results."""
    return sum(r.score for r in results), sum(r.max_score for r in results)
