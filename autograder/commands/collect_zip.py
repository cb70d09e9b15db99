"""``python -m autograder collect-zip ASSIGNMENT ZIP``: Canvas's "Download submissions" zip into ``submitted/``
(docs/lms.md).

``collect_zip`` puts the download in ``downloaded/<assignment>/archive/`` and runs the real ``nbgrader zip_collect``
with two plugins of ours (``autograder/nbgrader_plugins/zip_collect.py``); nbgrader copies each notebook to
``submitted/<student>/<assignment>/<assignment>.ipynb`` and writes ``timestamp.txt``.

What Canvas gives about time: the name's ``_LATE`` mark (late by Canvas's own due date) and the zip entry's date
(the time the file was written into the zip, as Canvas stamps it; a zip stores no time zone, so it is read in
``zip_timezone``, UTC by default). A times CSV (``ID`` and ``submitted_at``, e.g. from Canvas's submissions API)
replaces the entry date where given. A file Canvas marked late whose time is not after the course's due date is
reported, so the instructor can look.
"""

import datetime
import shutil
import zipfile
from pathlib import Path

from autograder.course.canvas import ID_COLUMN, LMSError, read_roster, roster_arguments


def collect_zip(course, assignment, download, roster=None, id_column=ID_COLUMN, times=None, zip_timezone="UTC"):
    """Canvas's download zip into ``submitted/`` through the real ``nbgrader zip_collect`` (see the module's
    docstring); returns nbgrader's output. Earlier collected files of the students in the zip are replaced; an
    earlier download is kept in ``downloaded/<assignment>/earlier/<time>/``."""
    from autograder.commands.build import nbgrader

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


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("assignment", help="the assignment, e.g. stability")
    parser.add_argument("zip", help="the zip Canvas gave")
    roster_arguments(parser, "Canvas's gradebook export: Canvas user id (ID) -> student id (default: the Canvas user id "
                             "is the student id)")
    parser.add_argument("--times", metavar="CSV", help="submission times (columns ID, submitted_at) instead of the zip "
                                                       "entries' dates")
    parser.add_argument("--zip-timezone", default="UTC", help="the time zone of the zip entries' dates (default: UTC)")


def from_command_line(args, parser):
    """``python -m autograder collect-zip``: what the command prints, and its exit status."""
    print(collect_zip(args.course, args.assignment, args.zip, args.roster, args.id_column, args.times,
                      args.zip_timezone), end="")
    return 0
