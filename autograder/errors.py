"""The one exception type a check raises when a property does not hold."""


class CheckFailure(AssertionError):
    """A graded property failed; the message is written for the student.

    It subclasses ``AssertionError`` so that nbgrader scores the test cell 0,
    and carries its parts as data so that the command-line tools can report them.
    """

    def __init__(self, check, message, *, hint=None, measurements=None):
        self.check = check
        self.detail = message
        self.hint = hint
        self.measurements = dict(measurements or {})
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
