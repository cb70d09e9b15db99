"""Results are data: one :class:`CheckResult` per graded check, serialisable to JSON.

``run_checks`` grades a namespace of student objects (a module, a dict, or the
globals of a notebook) against a topic's checks from a plain script: this is
how the GPU checks run on a machine without nbgrader, and how the kit's own
tests prove each check.
"""

import importlib
import inspect
import json
import time
import traceback
from dataclasses import asdict, dataclass, field

from .errors import CheckFailure

TOPICS = ("basics", "modules", "broadcasting", "operators", "vectorization", "dataloading", "stability", "amp")


@dataclass
class CheckResult:
    check: str                 # the check function's name, e.g. "check_softmax_forward"
    passed: bool               # every property held
    message: str = ""          # the student-facing message when it failed (or a note)
    seconds: float = 0.0       # wall time of the check
    measurements: dict = field(default_factory=dict)  # ratios, op counts, ... when the check reports them

    def as_dict(self):
        return asdict(self)


def checks_of(topic):
    """The graded check functions of a topic, in the order they are defined."""
    module = importlib.import_module(f"autograder.checks.{topic}")
    return [fn for name, fn in vars(module).items()
            if name.startswith("check_") and inspect.isfunction(fn) and fn.__module__ == module.__name__]


def target_names(check):
    """A check's positional parameters name the student objects it grades (``check_x(stable_softmax, *, seed)``)."""
    return [p.name for p in inspect.signature(check).parameters.values()
            if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]


def run_check(check, namespace, **kwargs):
    """Run one check with the student objects it names, taken from ``namespace``."""
    started = time.perf_counter()
    names = target_names(check)
    lookup = namespace if isinstance(namespace, dict) else vars(namespace)
    try:
        missing = [n for n in names if n not in lookup]
        if missing:
            raise CheckFailure(check.__name__, f"the submission defines no {', '.join(missing)}.",
                               hint="Keep the exact names given in the exercise.")
        check(*(lookup[n] for n in names), **kwargs)
    except CheckFailure as failure:
        return CheckResult(check.__name__, False, str(failure), time.perf_counter() - started, failure.measurements)
    except Exception:  # noqa: BLE001 - a grader bug must still produce a result
        return CheckResult(check.__name__, False, "internal error in the check:\n" + traceback.format_exc(),
                           time.perf_counter() - started)
    return CheckResult(check.__name__, True, "", time.perf_counter() - started)


def run_checks(topic, namespace, **kwargs):
    return [run_check(check, namespace, **kwargs) for check in checks_of(topic)]


def to_json(results):
    return json.dumps([r.as_dict() for r in results], indent=2, default=str)
