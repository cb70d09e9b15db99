"""One package per topic; each graded ``check_<item>(student_object, ...)`` is declared with ``@graded``.

A check returns normally when every property holds and raises
:class:`autograder.errors.CheckFailure` (an ``AssertionError``) otherwise. The
declarations are the grading spec: :func:`items_of` reads them for every path
(notebook test cells, ``check``, ``grade``, reports, exports, the kit's proofs).
"""

import importlib

from autograder.checks.notebook_display import install as _install_notebook_display
from autograder.feedback import live_hint as _live_hint
from autograder.spec import declared_in, grading, observed

_install_notebook_display()   # in a notebook, a failed check shows its message, not the grader's frames

TOPICS = ("basics", "modules", "broadcasting", "operators", "vectorization", "dataloading", "stability", "amp", "memory",
          "distributed")


def items_of(topic):
    """The graded items of ``topic``, in the order its checks are defined."""
    module = importlib.import_module(f"{__name__}.{topic}")
    items = declared_in(module.__name__)
    if not items:
        raise LookupError(f"autograder.checks.{topic} declares no graded item (@graded)")
    return items


def item_of(topic, item_id):
    for item in items_of(topic):
        if item.id == item_id:
            return item
    raise LookupError(f"{topic} has no graded item {item_id!r}")


def max_points(topic):
    return sum(item.points for item in items_of(topic))


_NAMED = {}   # topic -> (mistake, failed items) last named on a test cell: named once, until the cells tell otherwise


def live_hint(failure):
    """What a failed test cell in a notebook adds to its message: the known mistake its topic's cells run so far
    match (``autograder.feedback.live_hint``), once; ``None`` otherwise."""
    item = next((i for t in TOPICS for i in declared_in(f"{__name__}.{t}") if i.name == failure.check), None)
    if item is None:
        return None
    try:
        mistakes = importlib.import_module(f"{__name__}.{item.topic}.mistakes").MISTAKES
    except ModuleNotFoundError:
        return None
    seen = observed(item.topic)
    found = _live_hint(mistakes, seen, item.id, hidden=grading())
    if found is None:
        return None
    key = (found["id"], frozenset(i for i, kind in seen.items() if kind))
    if _NAMED.get(item.topic) == key:
        return None
    _NAMED[item.topic] = key
    return found["says"]


_install_notebook_display(live_hint)   # ... and the known mistake its topic's cells match
