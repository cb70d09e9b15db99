"""The demo course: release every assignment, grade four sample students, print the gradebook, and write the
similarity and item-analysis pages (``after-grading/``; printed where they are).

Runs on a fresh temporary copy of the course, so the repository is never touched:

* ``reference`` submits the reference solutions (full marks),
* ``untouched`` submits the release notebooks as they are (zero),
* ``buggy`` submits plausible mistakes (``autograder/commands/demo_submissions/<topic>.py``),
* ``mangled`` submits one notebook that is not valid JSON and one whose graded cells were deleted,
  to show that broken submissions are reported by name and grading goes on.
"""

import copy
import importlib
import shutil
import tempfile
import time
from pathlib import Path

from autograder.commands.build import generate_assignments, scratch_course, topics
from autograder.commands.grade import grade_all
from autograder.commands.pending import print_gradebook
from autograder.course.grading import load_report
from autograder.course.progress import counted
from autograder.engine import notebooks

STUDENTS = ("reference", "untouched", "buggy", "mangled")


def buggy_cells(topic):
    """``{grade_id: cell text}``: the demo's plausible mistakes for ``topic`` (shipped with the package)."""
    try:
        module = importlib.import_module(f"{__package__}.demo_submissions.{topic}")
    except ModuleNotFoundError:
        return {}
    return dict(module.CELLS)


def _fill(release_nb, answers):
    nb = copy.deepcopy(release_nb)
    for cell in nb["cells"]:
        if notebooks.is_solution(cell) and notebooks.grade_id(cell) in answers:
            cell["source"] = answers[notebooks.grade_id(cell)].splitlines(keepends=True)
    return nb


def write_submissions(course, work, names):
    """Write ``submitted/<student>/<topic>/<topic>.ipynb`` for the sample students."""
    for index, topic in enumerate(names):
        release_nb = notebooks.read(work / "release" / topic / f"{topic}.ipynb")
        reference = notebooks.solution_sources(notebooks.read(work / "source" / topic / f"{topic}.ipynb"))
        answers = {
            "reference": reference,
            "untouched": {},
            "buggy": {**reference, **buggy_cells(topic)},
        }
        for student, filled in answers.items():
            target = work / "submitted" / student / topic
            target.mkdir(parents=True, exist_ok=True)
            notebooks.write(_fill(release_nb, filled), target / f"{topic}.ipynb")
        mangled = work / "submitted" / "mangled" / topic
        if index == 0:
            mangled.mkdir(parents=True, exist_ok=True)
            (mangled / f"{topic}.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "oops', encoding="utf-8")
        elif index == 1:
            nb = _fill(release_nb, reference)
            first_test = next(c for c in nb["cells"] if notebooks.is_graded_test(c))
            nb["cells"].remove(first_test)          # the student deleted a graded cell
            mangled.mkdir(parents=True, exist_ok=True)
            notebooks.write(nb, mangled / f"{topic}.ipynb")


def add_students(work, students):
    """The sample students in the course's gradebook, as ``nbgrader db student add NAME --last-name=NAME
    --first-name=Sample`` adds each (its one Gradebook call, with the course's db_url and course_id), in this
    process: an nbgrader process per student took 3.5 to 4.6 s."""
    from nbgrader.api import Gradebook
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(work)).load_config()
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gradebook:
        for student in students:
            gradebook.update_or_create_student(student, last_name=student, first_name="Sample", email=None,
                                               lms_user_id=None)


def show_after_grading(work, names, keep, progress=print):
    """Write the similarity and item-analysis pages of the demo course and print where they are: in the kept course,
    or copied out of the temporary one, which is removed at the end (every path printed is where the pages stay)."""
    from autograder.commands.analysis import write_pages
    from autograder.commands.similarity import write_reports
    from autograder.course.similarity import OUT

    written = Path(work) / OUT
    pages = written if keep else Path(tempfile.mkdtemp(prefix="epl-demo-pages-")) / OUT

    def say(line):
        progress(line.replace(str(written), str(pages)), flush=True)

    say("\nSimilarity between submissions (what `python -m autograder similarity` writes in a course):")
    write_reports(work, names, progress=say)
    say("Item analysis (what `python -m autograder analysis` writes in a course):")
    write_pages(work, names, progress=say)
    if not keep:
        shutil.copytree(written, pages)
    say(f"The pages: {pages / 'analysis.html'} (the course), and beside it similarity-<assignment>.html and "
        f"analysis-<assignment>.html")
    return pages


def run_demo(course=".", only=None, keep=None, progress=print, seed=None, workers=None):
    """``workers``: the local Dask cluster's processes (None: one per core; 0: grade in this process)."""
    course = Path(course).resolve()
    names = [t for t in topics(course) if not only or t in only]
    started = time.perf_counter()
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="epl-demo-"))
    try:
        scratch_course(course, work)
        progress(f"Demo course in {work} ({counted(len(names), 'assignment')}: {', '.join(names)})", flush=True)
        for n, topic in enumerate(generate_assignments(work, names), 1):
            progress(f"[{n}/{len(names)}] released {topic}", flush=True)
        add_students(work, STUDENTS)
        write_submissions(course, work, names)
        progress(f"Grading {len(STUDENTS)} sample students with nbgrader autograde:", flush=True)
        grade_all(work, names, list(STUDENTS), progress=progress, seed=seed, workers=workers, released=True)
        print_gradebook(names, list(STUDENTS), load_report(work))
        show_after_grading(work, names, keep, progress)
        progress(f"\nDemo finished in {time.perf_counter() - started:.0f} s.", flush=True)
        return work
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("topics", nargs="*", help="only these assignments (default: all)")
    parser.add_argument("--keep", metavar="DIR", help="build the demo course in DIR and keep it")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="grading processes of the local Dask cluster (default: one per core; 0: this process)")


def from_command_line(args, parser):
    """``python -m autograder demo``: what the command prints, and its exit status."""
    run_demo(args.course, only=args.topics or None, keep=args.keep, workers=args.workers)
    return 0
