"""How a failed check looks in a notebook: the check's message, not the grader's stack.

A :class:`CheckFailure` already says what failed, on what input, and what to try. Its
traceback only shows the grader's own frames (``autograder/seam/student.py`` ...), and in a
graded notebook the test cell's hidden lines, so the feedback page would show both. When
a check is imported in an IPython kernel, this registers a handler that shows only
``CheckFailure: <message>``; in an official grade (``AUTOGRADER_GRADING=1``) every other
exception is shown as its type and message too, so no hidden-test line reaches feedback.
"""

from autograder.errors import CheckFailure
from autograder.feedback import LOOKS_LIKE
from autograder.spec import grading

_HINT = []   # the function that names a known mistake for a failed check (autograder.checks.live_hint), if given


def _show_message(shell, etype, value, tb, tb_offset=None):
    text = f"{etype.__name__}: {value}"
    if isinstance(value, CheckFailure) and _HINT:
        try:
            says = _HINT[0](value)
        except Exception:  # noqa: BLE001 - the hint is extra: the check's message is shown whatever happens to it
            says = None
        if says:
            text += f"\n{LOOKS_LIKE}{says}"
    lines = [text]
    shell._showtraceback(etype, value, lines)   # an "error" output: nbgrader scores the cell 0
    return lines


def install(hint=None):
    """Register :func:`_show_message` in the running IPython shell, once; a no-op outside IPython. ``hint(failure)``:
    the known mistake to name under a failed check's message, or ``None``."""
    if hint is not None and not _HINT:
        _HINT.append(hint)
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or not hasattr(shell, "_showtraceback") or getattr(shell, "_autograder_display", False):
        return
    shell.set_custom_exc((Exception,) if grading() else (CheckFailure,), _show_message)
    shell._autograder_display = True
