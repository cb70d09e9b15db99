"""The one exception type a check raises when a property does not hold."""


# What kind of failure a CheckFailure is, one of KINDS: with the items that failed, the pattern the grader compares
# with the known mistakes' (autograder.feedback) to say "This looks like: ...". FAILED_KIND when nothing more is known
# (the grade then adds the fixed words of the check's message: "failed: <skeleton>"); "raised: <exception type>";
# "not finite: NaN, +inf" (which of NaN, +inf and -inf the result holds, autograder.compare.not_finite_kind);
# "wrong dtype: float32 for float64" (what came back, for what was expected, autograder.compare.dtype_kind).
FAILED_KIND = "failed"
KINDS = ("wrong type", "wrong shape", "wrong dtype", "wrong device", "wrong value", "not finite", "no gradient",
         "wrong gradient", "raised", "did not raise", "timed out", "crashed", "not implemented", "changed its input",
         "forbidden op", "grows with size", "forbidden source", "too slow", "host syncs", "missing",
         FAILED_KIND)


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
        self.kind = kind or FAILED_KIND
        self.cause = cause or ""     # the student's exception in one line, when one raised: items that share it
                                     # are reported once (autograder.feedback.same_cause)
        text = f"[{check}] {message}"
        if hint:
            text += f"\nHint: {hint}"
        super().__init__(text)


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
    (``autograder.course.cli.main``) prints "Cannot <command>: <message>" and exits with status 2, no traceback."""
