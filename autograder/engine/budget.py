"""One notebook's wall-clock budget, enforced from outside the student's worker.

A :class:`Budget` starts when the grading of a notebook starts and ends ``seconds`` later, by the grader's clock
(``time.monotonic``). Every request of the notebook's worker sessions (``remote.Session``) waits at most what is left
of it (its own timeout or the budget's end, whichever comes first); when the budget is spent the worker is killed, and
no worker is started again for that notebook: starting workers, running the cells (again after every restart) and the
items all count against the same budget. ``trusted_runner.grade_cells`` scores the items not finished 0, naming the
budget's setting and the item that was running.
"""

import time

SETTING = "settings.grading.submission_timeout_s"


class Budget:
    """The wall-clock budget of one notebook: ``seconds`` from now."""

    def __init__(self, seconds):
        self.seconds = float(seconds)
        self.started = time.monotonic()
        self.ends = self.started + self.seconds
        self.running = ""       # what is being graded now (an item's check name, or a cell), for the message

    def left(self):
        return self.ends - time.monotonic()

    def spent(self):
        return time.monotonic() >= self.ends

    def elapsed(self):
        return time.monotonic() - self.started

    def deadline(self, timeout):
        """``(deadline, by_budget)``: when a request given ``timeout`` seconds from now must be answered, and whether
        that is the budget's end rather than its own timeout."""
        own = time.monotonic() + timeout
        return (self.ends, True) if self.ends < own else (own, False)

    def why(self):
        """Why the worker was stopped, for the item's message and the report."""
        during = f" while {self.running} was running" if self.running else ""
        return (f"the notebook's grading time of {self.seconds:g} s ({SETTING}) ran out{during}; the worker was "
                "stopped")
