"""The LMS round trip with Canvas (docs/lms.md): its "Download submissions" zip in, its gradebook import CSV out.

**In.** Canvas names each file of the download ``<lastfirst>_<user id>_<attachment id>_<file name>``, with
``_LATE`` after the name where Canvas counted the submission late (``doejane_LATE_1001_52_stability.ipynb``), and
``<file name>`` as the student uploaded it (Canvas renames a second upload of ``stability.ipynb`` to
``stability-1.ipynb``). ``collect_zip`` puts the download in ``downloaded/<assignment>/archive/`` and runs the real
``nbgrader zip_collect`` with two plugins of ours (set in ``nbgrader_config.py``): :class:`TimedExtractor` unzips
keeping each entry's date as the file's time, and :class:`CanvasCollector` reads the Canvas user id from the name,
maps it to the student id through a roster (Canvas's gradebook export: ``Student, ID, SIS User ID, SIS Login ID,
Section, ...``; the student id is the ``SIS Login ID`` column by default), and gives nbgrader the notebook's name
(``<assignment>.ipynb``, whatever the student called it) and the submission time. nbgrader copies it to
``submitted/<student>/<assignment>/<assignment>.ipynb`` and writes ``timestamp.txt``.

What Canvas gives about time: the name's ``_LATE`` mark (late by Canvas's own due date) and the zip entry's date
(the time the file was written into the zip, as Canvas stamps it; a zip stores no time zone, so it is read in
``zip_timezone``, UTC by default). A times CSV (``ID`` and ``submitted_at``, e.g. from Canvas's submissions API)
replaces the entry date where given. A file Canvas marked late whose time is not after the course's due date is
reported, so the instructor can look.

**Out.** ``export_canvas`` writes the CSV Canvas's gradebook import takes: the header ``Student, ID, SIS User ID,
SIS Login ID, Section, <Assignment title> (<Canvas assignment id>)``, then a ``Points Possible`` row, then a row per
student of the roster with the score after the late penalty (blank where nothing was recorded, which Canvas leaves
unchanged).
"""

import csv
import datetime
import os
import re
import shutil
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
from traitlets import Unicode

# <lastfirst>[_LATE]_<user id>_<attachment id>_<file name>; anonymous downloads use "anon" for the name
CANVAS_NAME = r"^(?P<lastfirst>.+?)(?P<late>_LATE)?_(?P<user_id>\d+)_(?P<attachment_id>\d+)_(?P<file_name>.+)$"
ID_COLUMN = "SIS Login ID"
ROSTER_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


class LMSError(ValueError):
    """A roster, a download or an export that cannot be used, with what is wrong."""


# ------------------------------------------------------------------ the roster

def read_roster(path, id_column=ID_COLUMN):
    """``{Canvas user id: row}`` from a Canvas gradebook export (its ``Points Possible`` row and rows without an id
    skipped); each row gets ``"student_id"``: its ``id_column``."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("Student", "ID", id_column) if c not in (reader.fieldnames or [])]
        if missing:
            raise LMSError(f"{path}: no column {', '.join(map(repr, missing))} (a Canvas gradebook export has "
                           f"{', '.join(ROSTER_COLUMNS)}, ...)")
        roster = {}
        for number, row in enumerate(reader, start=2):
            canvas_id = (row.get("ID") or "").strip()
            if not canvas_id or (row.get("Student") or "").strip() == "Points Possible":
                continue
            student = (row.get(id_column) or "").strip()
            if not student:
                raise LMSError(f"{path}, line {number}: {row.get('Student')!r} (Canvas id {canvas_id}) has no "
                               f"{id_column!r}")
            if "/" in student or student.startswith("."):
                raise LMSError(f"{path}, line {number}: {student!r} cannot be a student id (a directory name)")
            roster[canvas_id] = dict(row, student_id=student)
        return roster, list(reader.fieldnames)


def read_times(path):
    """``{Canvas user id: submission time (aware)}`` from a CSV with the columns ``ID`` and ``submitted_at``."""
    if not path:
        return {}
    times = {}
    with open(path, newline="", encoding="utf-8-sig") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            text = (row.get("submitted_at") or "").strip()
            if not text:
                continue
            try:
                when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise LMSError(f"{path}, line {number}: submitted_at {text!r} is not an ISO 8601 time") from None
            times[(row.get("ID") or "").strip()] = when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)
    return times


# ------------------------------------------------------------------ nbgrader zip_collect's plugins

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
        from .late import due_date

        due = due_date(assignment)
        if due is not None and marked_late and when <= due:
            self.log.warning("%s: Canvas marked it late, but its time %s is not after the due date %s (check the "
                             "zip's time zone, zip_timezone, or give the times)", name, when.isoformat(),
                             due.isoformat())


def collect_zip(course, assignment, download, roster=None, id_column=ID_COLUMN, times=None, zip_timezone="UTC"):
    """Canvas's download zip into ``submitted/`` through the real ``nbgrader zip_collect`` (see the module's
    docstring); returns nbgrader's output. Earlier collected files of the students in the zip are replaced; an
    earlier download is kept in ``downloaded/<assignment>/earlier/<time>/``."""
    from .build import nbgrader

    course, download = Path(course), Path(download)
    if not zipfile.is_zipfile(download):
        raise LMSError(f"{download} is not a zip file (Canvas: Assignments > the assignment > Download Submissions)")
    if roster:
        read_roster(roster, id_column)           # a bad roster stops here, with the reason
    archive = course / "downloaded" / assignment / "archive"
    extracted = course / "downloaded" / assignment / "extracted"
    if archive.exists() and any(archive.iterdir()):     # an earlier download: kept, out of this collection's way
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        earlier = course / "downloaded" / assignment / "earlier" / stamp
        earlier.parent.mkdir(parents=True, exist_ok=True)
        archive.rename(earlier)
    if extracted.exists():
        shutil.rmtree(extracted)                         # derived from the archive alone
    archive.mkdir(parents=True, exist_ok=True)
    shutil.copy2(download, archive / download.name)
    args = ["zip_collect", assignment, "--force",
            f"--TimedExtractor.zip_timezone={zip_timezone}", f"--CanvasCollector.id_column={id_column}"]
    if roster:
        args.append(f"--CanvasCollector.roster={Path(roster).resolve()}")
    if times:
        args.append(f"--CanvasCollector.times={Path(times).resolve()}")
    done = nbgrader(course, *args, check=False)
    if done.returncode:
        raise LMSError("nbgrader zip_collect failed:\n" + (done.stdout or "") + (done.stderr or ""))
    return (done.stdout or "") + (done.stderr or "")


# ------------------------------------------------------------------ the gradebook import

def canvas_column(assignment, fieldnames, given=None):
    """The Canvas column of ``assignment``: ``given`` ("Title (id)"), else the roster's column whose title is the
    assignment's name (any case), else the bare name (Canvas then creates a new assignment)."""
    if given:
        return given
    for name in fieldnames:
        match = re.match(r"^(?P<title>.*?)\s*\((?P<id>\d+)\)$", name)
        if match and match["title"].strip().lower() == assignment.lower():
            return name
    return assignment


def export_canvas(course, path, assignments, roster, id_column=ID_COLUMN, columns=None):
    """Write ``path``: Canvas's gradebook import CSV for ``assignments`` (see the module's docstring). Returns the
    students recorded in the report that the roster does not have (not exported)."""
    from ..checks import max_points
    from .grading import load_report, score_after_penalty

    people, fieldnames = read_roster(roster, id_column)
    titles = [canvas_column(a, fieldnames, (columns or {}).get(a)) for a in assignments]
    report = load_report(course)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(ROSTER_COLUMNS + titles)
        writer.writerow(["Points Possible", "", "", "", ""] + [f"{max_points(a):g}" for a in assignments])
        for canvas_id, row in people.items():
            scores = []
            for assignment in assignments:
                record = report.get(f"{row['student_id']}/{assignment}")
                scores.append("" if record is None else f"{score_after_penalty(record):g}")
            writer.writerow([row.get(c, "") if c != "ID" else canvas_id for c in ROSTER_COLUMNS] + scores)
    known = {row["student_id"] for row in people.values()}
    return sorted({r["student"] for r in report.values() if r["assignment"] in assignments} - known)
