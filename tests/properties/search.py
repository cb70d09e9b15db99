"""The search itself: a drawn case on which a candidate and the reference differ, shrunk by Hypothesis.

Deterministic (``derandomize=True``, no example database) and bounded: the suite runs ``SUITE_EXAMPLES`` per
search; ``EPL_LONG_SEARCH=1`` runs ``LONG_EXAMPLES``. Shrinking is most of a search's time (every step runs both
answers again), so the suite searches without it and shrinks only the case it reports: a failed test shows the
simplest input Hypothesis finds.
"""

import functools
import warnings

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from tests import proving

from .outcomes import difference, observe

SUITE_EXAMPLES = 30
LONG_EXAMPLES = 1000


def search_settings(max_examples, shrink=True):
    phases = (Phase.explicit, Phase.generate) + ((Phase.shrink,) if shrink else ())
    return settings(max_examples=max_examples, derandomize=True, database=None, deadline=None, phases=phases,
                    suppress_health_check=list(HealthCheck))


@functools.lru_cache(maxsize=None)
def reference(topic):
    return proving.reference(topic)


def mutant_namespace(topic, replacements):
    return proving.with_replacements(topic, replacements)


def disagreement(exercise, candidate, case):
    """How ``candidate`` (a namespace) departs from the reference on ``case``, or ``None``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = observe(exercise, reference(exercise.topic), case)
        got = observe(exercise, candidate, case)
    return difference(exercise, case, got, want)


def first_case(space, predicate, max_examples=SUITE_EXAMPLES, shrink=False):
    """A drawn case for which ``predicate`` holds (the simplest after shrinking, with ``shrink``), or ``None``."""
    try:
        return find(space, predicate, settings=search_settings(max_examples, shrink))
    except NoSuchExample:
        return None


def separating_case(exercise, candidate, max_examples=SUITE_EXAMPLES, shrink=False):
    """A drawn case on which ``candidate`` departs from the reference, or ``None``."""
    return first_case(exercise.space, lambda case: disagreement(exercise, candidate, case) is not None,
                      max_examples, shrink)
