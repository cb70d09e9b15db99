"""nbgrader's collect, taking only submissions that their student made, when they made them.

nbgrader's default exchange lets any student write into ``inbound/`` (mode 2733): it trusts the name
of a submission's directory, ``<student>+<assignment>+<timestamp>+<random>``, for who submitted it and
when, and copies what it holds as the instructor. A student can therefore (all tried on the hub, as
real users, in tests/hub/test_student_permissions.py):

- submit in another student's name (``nbgrader submit --student alice``, or a directory made by
  hand): nbgrader's ``check_owner`` only warns, after it has picked that directory as the newest;
- backdate their own submission (a directory named with an earlier timestamp, and a
  ``timestamp.txt`` to match) and so escape the late penalty;
- hand in a symbolic link (``operators.ipynb -> /home/instructor/course/source/...``), which
  ``collect`` follows as the instructor: the instructor's own notebook, with its solutions, is
  graded as the student's and returned to them as feedback.

:class:`VerifiedCollect` (``c.ExchangeFactory.collect`` in ``nbgrader_config.py``) refuses such a
submission, with a warning that says why, before it chooses each student's newest; the others are
collected as nbgrader does. A submission is taken when its directory and everything in it belong to
the student it names, it holds only directories and regular files, its ``timestamp.txt`` says what
its name says, and that time is no earlier than the kernel's record of the directory's last change
(its ctime, which no user can set back) allows.
"""

import datetime
import glob
import os
import stat
import sys

from nbgrader.exchange.default.collect import ExchangeCollect, groupby
from nbgrader.utils import parse_utc

if sys.platform != "win32":
    import pwd
else:   # pragma: no cover - the exchange does not run on Windows
    pwd = None

# nbgrader's submit takes its timestamp, then copies the files, then sets the directory's mode: the
# directory's ctime comes that much after the timestamp. Five minutes covers a slow copy of the largest
# notebook nbgrader accepts (CourseDirectory.max_file_size); a backdated submission is earlier by more.
CLOCK_SLACK_S = 300


def _uid_of(name):
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def refusal(path, student):
    """Why the submission at ``path``, named as ``student``'s, must not be collected; None when it may be."""
    if pwd is None:
        return None
    uid = _uid_of(student)
    if uid is None:
        return f"it names {student!r}, who has no account on this machine"
    top = os.lstat(path)
    if not stat.S_ISDIR(top.st_mode):
        return "it is not a directory"
    for where, dirs, files in os.walk(path):
        for name in [None, *dirs, *files]:
            item = where if name is None else os.path.join(where, name)
            info = os.lstat(item)
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                return f"{os.path.relpath(item, path)} is not a regular file (a link or a device): refused unread"
            if info.st_uid != uid:
                what = "its directory" if name is None else os.path.relpath(item, path)
                return f"{what} belongs to {_name_of(info.st_uid)}, not to {student}"
    named = parse_utc(os.path.basename(path).rsplit("+", 3)[2])
    try:
        with open(os.path.join(path, "timestamp.txt"), encoding="utf-8") as handle:
            written = parse_utc(handle.read().strip())
    except (OSError, ValueError) as error:
        return f"its timestamp.txt cannot be read ({error})"
    if written != named:
        return f"its timestamp.txt says {written}, its name {named}"
    changed = parse_utc(_utc_text(top.st_ctime))
    if (changed - named).total_seconds() > CLOCK_SLACK_S:
        return (f"it claims to be submitted at {named} UTC, but its directory was made or changed at {changed} UTC "
                f"(more than {CLOCK_SLACK_S} s later): a backdated submission")
    return None


def _name_of(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user id {uid}"


def _utc_text(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


class VerifiedCollect(ExchangeCollect):
    """``nbgrader collect`` that refuses, with a warning, each submission :func:`refusal` finds wrong, before it
    picks each student's newest (or newest before the due date, with ``--before-duedate``)."""

    def init_src(self):
        super().init_src()       # checks the course and the inbound directory; reads the due date
        student_id = self.coursedir.student_id if self.coursedir.student_id else "*"
        pattern = os.path.join(self.inbound_path, f"{student_id}+{self.coursedir.assignment_id}+*")
        records = []
        for path in sorted(glob.glob(pattern)):
            record = self._path_to_record(path)
            why = refusal(path, record["username"])
            if why:
                self.log.warning("Not collected: %s (%s).", path, why)
                continue
            records.append(record)
        self.src_records = []
        for mine in groupby(records, lambda item: item["username"]).values():
            newest = self._sort_by_timestamp(mine)
            if self.duedate is not None and self.before_duedate:
                on_time = [r for r in newest if r["timestamp"] <= self.duedate]
                newest = on_time or newest
            self.src_records.append(newest[0])
