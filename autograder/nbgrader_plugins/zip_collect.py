"""nbgrader ``zip_collect``'s two plugins for Canvas's "Download submissions" zip (set in ``nbgrader_config.py``).

Canvas names each file of the download ``<lastfirst>_<user id>_<attachment id>_<file name>``, with ``_LATE`` after
the name where Canvas counted the submission late (``doejane_LATE_1001_52_stability.ipynb``), and ``<file name>`` as
the student uploaded it (Canvas renames a second upload of ``stability.ipynb`` to ``stability-1.ipynb``).
:class:`TimedExtractor` unzips keeping each entry's date as the file's time; :class:`CanvasCollector` reads the
Canvas user id from the name, maps it to the student id through the roster (``autograder/course/canvas.py``), and
gives nbgrader the notebook's name (``<assignment>.ipynb``, whatever the student called it) and the submission time.
"""

import datetime
import os
import shutil
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
from traitlets import Unicode

from autograder.course.canvas import ID_COLUMN, read_roster, read_times

# <lastfirst>[_LATE]_<user id>_<attachment id>_<file name>; anonymous downloads use "anon" for the name
CANVAS_NAME = r"^(?P<lastfirst>.+?)(?P<late>_LATE)?_(?P<user_id>\d+)_(?P<attachment_id>\d+)_(?P<file_name>.+)$"


class TimedExtractor(ExtractorPlugin):
    """nbgrader's extractor, but each file keeps its zip entry's date as its time (nbgrader's unzip drops it, and
    Canvas gives no other), and no entry is written outside the extracted folder."""

    zip_timezone = Unicode("UTC", help="the time zone of the zip entries' dates (a zip stores none)").tag(config=True)

    def extract(self, archive_path, extracted_path):
        zone = ZoneInfo(self.zip_timezone)
        for name in sorted(os.listdir(archive_path)):
            source = os.path.join(archive_path, name)
            if not name.endswith(".zip"):
                os.makedirs(extracted_path, exist_ok=True)
                shutil.copy2(source, os.path.join(extracted_path, name))
                continue
            into = Path(extracted_path) / Path(name).stem
            into.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(source) as archive:
                for entry in archive.infolist():
                    base = os.path.basename(entry.filename.replace("\\", "/"))
                    if entry.is_dir() or not base or base.startswith("."):
                        continue
                    target = into / base
                    with archive.open(entry) as data, open(target, "wb") as out:
                        shutil.copyfileobj(data, out)
                    when = datetime.datetime(*entry.date_time, tzinfo=zone).timestamp()
                    os.utime(target, (when, when))
                    self.log.info("Extracted %s (%s)", target, datetime.datetime.fromtimestamp(
                        when, datetime.timezone.utc).isoformat())


class CanvasCollector(FileNameCollectorPlugin):
    """Canvas's download names (``CANVAS_NAME``) to nbgrader's student id, notebook and submission time."""

    named_regexp = Unicode(CANVAS_NAME, help="a Canvas download's file name").tag(config=True)
    roster = Unicode("", help="a Canvas gradebook export (CSV): Canvas user id (ID) -> student id").tag(config=True)
    id_column = Unicode(ID_COLUMN, help="the roster's column that is nbgrader's student id").tag(config=True)
    times = Unicode("", help="optional CSV with ID and submitted_at: submission times that replace the zip's").tag(
        config=True)

    _loaded = None

    def _tables(self):
        if self._loaded is None:
            roster = read_roster(self.roster, self.id_column)[0] if self.roster else None
            self._loaded = (roster, read_times(self.times))
        return self._loaded

    def collect(self, submitted_file):
        name = os.path.basename(submitted_file)
        found = self._match(name)
        if found is None:
            return None
        if os.path.splitext(found["file_name"])[1] not in self.valid_ext:
            self.log.warning("Skipped %s: not a notebook", name)
            return None
        roster, times = self._tables()
        user = found["user_id"]
        if roster is None:
            student = user
        elif user in roster:
            student = roster[user]["student_id"]
        else:
            self.log.warning("Skipped %s: Canvas user %s (%s) is not in the roster %s", name, user,
                             found["lastfirst"], self.roster)
            return None
        if user in times:
            when = times[user].astimezone(datetime.timezone.utc)
        else:
            when = datetime.datetime.fromtimestamp(os.path.getmtime(submitted_file), datetime.timezone.utc)
        assignment = self.parent.coursedir.assignment_id
        self._compare_late_mark(name, assignment, bool(found["late"]), when)
        return {"student_id": student, "file_id": f"{assignment}.ipynb", "timestamp": when.isoformat()}

    def _compare_late_mark(self, name, assignment, marked_late, when):
        from autograder.course.late_policy import due_date

        due = due_date(assignment)
        if due is not None and marked_late and when <= due:
            self.log.warning("%s: Canvas marked it late, but its time %s is not after the due date %s (check the "
                             "zip's time zone, zip_timezone, or give the times)", name, when.isoformat(),
                             due.isoformat())
