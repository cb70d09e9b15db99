"""The one exception type a check raises when a property does not hold."""

import ast
import functools
import re
import sys

# What kind of failure a CheckFailure is, one of KINDS: with the items that failed, the pattern the grader compares
# with the known mistakes' (autograder.feedback) to say "This looks like: ...". The kind is data set where the
# failure is raised, never read from the message: a check names it (``kind="wrong shape"``; "raised: <exception
# type>"; "not finite: NaN, +inf" (which of NaN, +inf and -inf the result holds, autograder.measuring.compare.not_finite_kind);
# "wrong dtype: float32 for float64" (what came back, for what was expected, autograder.measuring.compare.dtype_kind)), or,
# when it names none, the kind is the place that raised it (:func:`raise_site`): "failed at <module>.<function>:<n>",
# which a reworded message leaves as it is.
FAILED_KIND = "failed"
KINDS = ("wrong type", "wrong shape", "wrong dtype", "wrong device", "wrong value", "not finite", "no gradient",
         "wrong gradient", "raised", "did not raise", "timed out", "crashed", "not implemented", "changed its input",
         "forbidden op", "grows with size", "forbidden source", "too slow", "host syncs", "missing", "known",
         FAILED_KIND)     # "known: <the mistake's name>" (autograder.measuring.compare.known_kind); "failed at <site>" or
                          # "failed: <what a check found>" (named_kind)


class CheckFailure(AssertionError):
    """A graded property failed; the message is written for the student.

    It subclasses ``AssertionError`` so that nbgrader scores the test cell 0,
    and carries its parts as data so that the command-line tools can report them.
    """

    def __init__(self, check, message, *, hint=None, measurements=None, kind=None, cause=None):
        self.check = check
        self.detail = message
        self.hint = hint
        self.measurements = dict(measurements or {})
        self.kind = kind or raise_site()
        self.cause = cause or ""     # the student's exception in one line, when one raised: items that share it
                                     # are reported once (autograder.feedback.same_cause)
        text = f"[{check}] {message}"
        if hint:
            text += f"\nHint: {hint}"
        super().__init__(text)


def named_kind(words):
    """The kind of a failure a check names by what it found (which part of a state, which blocks): "failed: " and
    ``words``, their numbers masked, so that it reads the same on every input and seed."""
    return f"{FAILED_KIND}: " + re.sub(r"\d+", "#", words)


def raise_site():
    """The kind of a failure whose check names none: where it was raised, ``"failed at <module>.<function>:<n>"``.

    The place is the first frame outside this module (the ``fail`` helper, a subclass's ``__init__``) that builds
    the failure, past any helper that only words a failure for its caller (a function that sets
    ``__kind_at_caller__ = True``, as ``__tracebackhide__`` hides a frame): its module (without ``autograder.``), the
    qualified name of the function that holds it, and ``n``, the ordinal of its raise site within that function,
    read from the function's source with ``ast``: the statements that raise or build a failure (or call such a
    helper), in source order, and the one that built it among them. A reworded
    message, or a message on more lines, keeps its kind; a new raise site above it renumbers the ones below (the
    signatures are written again: their digest covers the topic's checks). Where the source cannot be read, ``n``
    is the line's offset in the function (``"L<offset>"``).
    """
    frame, helpers = sys._getframe(1), ()
    while frame is not None and (frame.f_code.co_filename == __file__ or (
            frame.f_code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), CheckFailure))
            or frame.f_locals.get("__kind_at_caller__") is True):
        if frame.f_locals.get("__kind_at_caller__") is True:
            helpers += (frame.f_code.co_name,)
        frame = frame.f_back
    if frame is None:
        return FAILED_KIND
    module = frame.f_globals.get("__name__", "?").removeprefix("autograder.")
    found = _site(frame.f_code.co_filename, frame.f_lineno, helpers)
    if found is None:
        code = frame.f_code
        return f"{FAILED_KIND} at {module}.{code.co_qualname}:L{frame.f_lineno - code.co_firstlineno}"
    return f"{FAILED_KIND} at {module}.{found[0]}:{found[1]}"


_BUILDS = ("CheckFailure", "UnderReview", "PendingGPU", "fail")


@functools.lru_cache(maxsize=256)
def _site(filename, line, helpers=()):
    """``(qualified name of the innermost function holding line, ordinal of its raise site)`` in ``filename``, or
    None when its source cannot be read or the line is in no statement of a function."""
    tree = _tree(filename)
    if tree is None:
        return None
    holder, name = _holder(tree, line, "")
    if holder is None:
        return None
    statements = list(_own_statements(holder))
    containing = [s for s in statements if s.lineno <= line <= (s.end_lineno or s.lineno)]
    if not containing:
        return None
    site = min(containing, key=lambda s: (s.end_lineno or s.lineno) - s.lineno)
    sites = sorted({s for s in statements if _raises(s, _BUILDS + helpers)} | {site},
                   key=lambda s: (s.lineno, s.col_offset))
    return name, sites.index(site) + 1


@functools.lru_cache(maxsize=64)
def _tree(filename):
    try:
        with open(filename, encoding="utf-8") as source:
            return ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):
        return None


def _holder(node, line, prefix):
    """The innermost function (or method) whose lines hold ``line``, with its qualified name."""
    for child in ast.iter_child_nodes(node):
        if not (child.lineno if hasattr(child, "lineno") else 0) <= line <= (getattr(child, "end_lineno", 0) or 0):
            continue
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner, name = _holder(child, line, f"{prefix}{child.name}.<locals>.")
            return (inner, name) if inner is not None else (child, prefix + child.name)
        if isinstance(child, ast.ClassDef):
            return _holder(child, line, f"{prefix}{child.name}.")
        found = _holder(child, line, prefix)
        if found[0] is not None:
            return found
    return None, ""


def _own_statements(function):
    """The statements of ``function``, nested blocks included, not those of the functions and classes it defines."""
    pending = list(function.body)
    while pending:
        statement = pending.pop(0)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield statement
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(statement, field, ()):
                pending.extend(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child])


def _raises(statement, builds=_BUILDS):
    """Whether ``statement`` itself (not a block it holds) raises, or builds a failure (``CheckFailure(...)``,
    ``fail(...)``)."""
    if isinstance(statement, ast.Raise):
        return True
    if hasattr(statement, "body"):        # a compound statement: its own statements are counted apart
        heads = [getattr(statement, f) for f in ("test", "iter", "subject") if getattr(statement, f, None)]
        heads += [item.context_expr for item in getattr(statement, "items", ())]
    else:
        heads = [statement]
    return any(isinstance(node, ast.Call) and _callee(node.func) in builds
               for head in heads for node in ast.walk(head))


def _callee(func):
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def fail(check, message, *, hint=None, **measurements):
    """Raise a :class:`CheckFailure` (a helper, hidden from the traceback)."""
    __tracebackhide__ = True
    raise CheckFailure(check, message, hint=hint, measurements=measurements)


class UnderReview(CheckFailure):
    """The item's evidence needs a person: a construct that only serves to evade grading, or a measurement past what
    is plausible. It scores 0 and is recorded "under review" until an instructor accepts or rejects it."""


class WorkerLost(RuntimeError):
    """The process running the student's code (the grading worker) died, was stopped after a deadline, or sent
    something that is not a well-formed answer. ``timed_out`` says which of the first two."""

    def __init__(self, message, timed_out=False):
        super().__init__(message)
        self.timed_out = timed_out


class ClusterUnavailable(RuntimeError):
    """No Dask cluster to grade on (``grade --scheduler``): what is wrong and what to do."""


class UserError(Exception):
    """A person's mistake that a command names in one line, with what to do (an unknown assignment, a file that
    does not exist or is not a notebook, a command run outside the course): the command line
    (``autograder.cli.main``) prints "Cannot <command>: <message>" and exits with status 2, no traceback."""
