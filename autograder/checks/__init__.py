"""One package per topic; each graded ``check_<item>(student_object, ...)`` is declared with ``@graded``.

A check returns normally when every property holds and raises
:class:`autograder.errors.CheckFailure` (an ``AssertionError``) otherwise. The
declarations are the grading spec: :func:`items_of` reads them for every path
(notebook test cells, ``check``, ``grade``, reports, exports, the kit's proofs).
"""

import importlib

from ..notebook_display import install as _install_notebook_display
from ..spec import declared_in

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
