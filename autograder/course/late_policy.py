"""The late policy's rules and arithmetic, from ``settings.deadlines`` alone (docs/deadlines.md): the due dates and
extensions read and checked, and what a submission so late loses. Apart from ``late`` (nbgrader's plugin and steps,
which re-exports these names) so that a process that only applies the policy does not import nbgrader: 0.7 s of
``run_autograder``'s start-up, once per Gradescope submission (``gradescope.results``)."""

import datetime
import math
from dataclasses import dataclass

from autograder.settings import settings

DAY_S = 86400.0


class DeadlineError(ValueError):
    """The deadlines in the settings cannot be used (a date without an offset, a negative number, ...)."""


# ------------------------------------------------------------------ the settings, read and checked

def due_date(assignment, deadlines=None):
    """``assignment``'s due date as an aware datetime, or None when it has none; DeadlineError for a bad one."""
    deadlines = deadlines or settings.deadlines
    text = deadlines.due.get(assignment)
    if text is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(str(text))
    except ValueError:
        raise DeadlineError(f"settings.deadlines.due.{assignment}: {text!r} is not an ISO 8601 date and time "
                            "(e.g. \"2026-12-01T23:59:00+01:00\")") from None
    if when.tzinfo is None:
        raise DeadlineError(f"settings.deadlines.due.{assignment}: {text!r} has no UTC offset; write it with one "
                            f"(e.g. \"{when.isoformat()}+00:00\") so that it means one instant everywhere")
    return when


def extension_hours(student, assignment, deadlines=None):
    """The hours ``student``'s due date for ``assignment`` moves (0 without an extension)."""
    deadlines = deadlines or settings.deadlines
    hours = (deadlines.extensions.get(student) or {}).get(assignment, 0)
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or hours < 0:
        raise DeadlineError(f"settings.deadlines.extensions.{student}.{assignment}: {hours!r} is not a number of "
                            "hours >= 0")
    return float(hours)


def check_deadlines(assignments, deadlines=None):
    """Warnings (an entry for an assignment the course does not have) for the deadlines in force; raises
    DeadlineError for what cannot be used."""
    deadlines = deadlines or settings.deadlines
    penalty = deadlines.penalty
    for name, value in (("grace_minutes", deadlines.grace_minutes), ("penalty.per_day_percent",
                        penalty.per_day_percent), ("penalty.cap_percent", penalty.cap_percent)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise DeadlineError(f"settings.deadlines.{name}: {value!r} is not a number >= 0")
    if penalty.cap_percent > 100:
        raise DeadlineError(f"settings.deadlines.penalty.cap_percent: {penalty.cap_percent!r} is over 100")
    cut = penalty.zero_after_days
    if cut is not None and (isinstance(cut, bool) or not isinstance(cut, (int, float)) or cut < 0):
        raise DeadlineError(f"settings.deadlines.penalty.zero_after_days: {cut!r} is not a number of days >= 0 "
                            "(or null for no cut-off)")
    if not isinstance(deadlines.due, dict) or not isinstance(deadlines.extensions, dict):
        raise DeadlineError("settings.deadlines.due and .extensions take JSON objects")
    warnings = []
    for assignment in deadlines.due:
        due_date(assignment, deadlines)
        if assignment not in assignments:
            warnings.append(f"settings.deadlines.due names {assignment!r}, which is not an assignment of this course "
                            f"({', '.join(assignments)}): ignored")
    for student, given in deadlines.extensions.items():
        if not isinstance(given, dict):
            raise DeadlineError(f"settings.deadlines.extensions.{student}: takes {{\"<assignment>\": <hours>}}")
        for assignment in given:
            extension_hours(student, assignment, deadlines)
            if assignment not in assignments:
                warnings.append(f"settings.deadlines.extensions.{student} names {assignment!r}, which is not an "
                                "assignment of this course: ignored")
    check_extensions_have_due_dates(assignments, deadlines)
    return warnings


def check_extensions_have_due_dates(assignments, deadlines=None):
    """DeadlineError for an extension on one of ``assignments`` that has no due date: nbgrader counts an extension
    from the due date, so one without the other is refused before anything is written (docs/deadlines.md)."""
    deadlines = deadlines or settings.deadlines
    for student, given in sorted(deadlines.extensions.items()):
        for assignment, hours in sorted((given or {}).items()) if isinstance(given, dict) else ():
            if assignment in assignments and hours and deadlines.due.get(assignment) is None:
                raise DeadlineError(
                    f"settings.deadlines.extensions.{student}.{assignment}: an extension of {hours:g} h, but "
                    f"{assignment} has no due date (settings.deadlines.due.{assignment}): give {assignment} its due "
                    f"date, or remove every extension on it")


# ------------------------------------------------------------------ the policy's arithmetic

@dataclass
class Lateness:
    """How late one submission was and what that cost."""

    seconds_late: float     # past the due date (with any extension); 0 when on time
    percent: float          # of the points earned, taken
    points: float           # taken
    grace_minutes: float = 0.0
    cut_off: bool = False   # past zero_after_days: scores 0

    def describe(self):
        """For people: "late by 3 h 12 min: -10% (2.1 points)"."""
        if self.seconds_late <= 0:
            return "on time"
        late = f"late by {duration_text(self.seconds_late)}"
        if self.seconds_late <= self.grace_minutes * 60:
            return f"{late}, within the {self.grace_minutes:g}-minute grace period: no penalty"
        if self.cut_off:
            return f"{late}, past the cut-off of {settings.deadlines.penalty.zero_after_days:g} days: scores 0 " \
                   f"(-{self.points:g} points)"
        if not self.percent:
            return f"{late}: no penalty"
        return f"{late}: -{self.percent:g}% ({self.points:g} points)"


def duration_text(seconds):
    """``3 h 12 min``, ``2 d 1 h 5 min``, ``45 s``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    return " ".join(p for p in parts if p)


def penalty_percent(seconds_late, deadlines=None):
    """``(percent of the points earned taken, cut off?)`` for a submission ``seconds_late`` past its due date."""
    deadlines = deadlines or settings.deadlines
    penalty = deadlines.penalty
    if seconds_late <= 0:
        return 0.0, False
    if penalty.zero_after_days is not None and seconds_late > penalty.zero_after_days * DAY_S:
        return 100.0, True
    after_grace = seconds_late - deadlines.grace_minutes * 60
    if after_grace <= 0:
        return 0.0, False
    days = math.ceil(after_grace / DAY_S)
    return float(min(penalty.cap_percent, penalty.per_day_percent * days)), False


def lateness(score, seconds_late, deadlines=None):
    """The :class:`Lateness` of a submission that earned ``score`` points and came ``seconds_late`` late."""
    deadlines = deadlines or settings.deadlines
    percent, cut = penalty_percent(seconds_late, deadlines)
    return Lateness(max(0.0, float(seconds_late)), percent, round(score * percent / 100, 6),
                    float(deadlines.grace_minutes), cut)
