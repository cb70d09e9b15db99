"""``python -m autograder <command>``: the instructor's command line."""

import argparse
import difflib
import importlib.util
import sys
from pathlib import Path

from ..errors import UserError


# The commands that work on a course directory, and where each keeps its assignment names (a list, or one name).
COURSE_COMMANDS = {"build": "topics", "demo": "topics", "grade": "assignments", "export": "assignments",
                   "collect-zip": "assignment", "similarity": "assignments", "analysis": "assignments",
                   "gradescope": "assignments", "kit": None, "pending": None, "review": None, "evidence": None}
DOING = {"settings": "list the settings", "collect-zip": "collect", "similarity": "write the similarity pages",
         "analysis": "write the item analysis", "gradescope": "write the Gradescope bundle", "kit": "write the kit",
         "pending": "list what is pending", "evidence": "write the evidence table", "build": "build",
         "review": "review"}
# The commands that name a topic of the checks package and need no course (``check`` runs in the student kit).
TOPIC_COMMANDS = {"check": "topic", "settings": "topics"}

# The modules of pyproject.toml's extras (not installed by `pip install -e .`), and the extra that brings each.
EXTRAS = {"matplotlib": "analysis", "psycopg": "postgres", "jupyterhub": "hub", "pytest": "test",
          "hypothesis": "test", "playwright": "test"}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Effective PyTorch Lab course tools.")
    parser.add_argument("--course", default=".", help="the nbgrader course directory (default: .)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="rebuild release/ and solutions/ from source/")
    p.add_argument("--check", action="store_true", help="only compare; exit 1 if release/ or solutions/ is stale")
    p.add_argument("topics", nargs="*", help="only these assignments (default: all)")

    p = sub.add_parser("demo", help="release, grade four sample students on a temporary course, print the gradebook")
    p.add_argument("topics", nargs="*", help="only these assignments (default: all)")
    p.add_argument("--keep", metavar="DIR", help="build the demo course in DIR and keep it")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="grading processes of the local Dask cluster (default: one per core; 0: this process)")

    p = sub.add_parser("grade", help="autograde every submission under submitted/ with limits and progress, in "
                                     "parallel on Dask; a rerun grades only what is new, changed or failed")
    p.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    p.add_argument("--student", action="append", help="only this student (repeatable)")
    p.add_argument("--seed", type=int, help="the hidden variants' seed (default: a new one, recorded in the report)")
    p.add_argument("--pending", action="store_true",
                   help="only the submissions with items waiting for a GPU (on a machine with one, or with "
                        "--scheduler and a Dask worker started with --resources GPU=1)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="grading processes of a local Dask cluster (default: one per core); 0 grades in this "
                        "process, one submission after another")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="grade on the Dask cluster at ADDRESS (tcp://HOST:8786) instead of a local one")
    p.add_argument("--force", action="store_true",
                   help="grade every submission again, even those recorded with the same notebook, checks and "
                        "settings")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run students' code without the sandbox (only on a machine where it may do anything; "
                        "every record says so)")

    p = sub.add_parser("export", help="export grades as CSV and/or Gradescope results.json files")
    p.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    p.add_argument("--csv", metavar="FILE", help="one table per assignment (FILE-<assignment>.csv; FILE itself for "
                                                  "one assignment): a row per student, a column per graded item")
    p.add_argument("--wide", action="store_true", help="with --csv: one table, a row per student, a column per "
                                                       "assignment and the total")
    p.add_argument("--gradescope", metavar="DIR", help="write DIR/<student>/<assignment>/results.json")
    p.add_argument("--canvas", metavar="FILE", help="write FILE: Canvas's gradebook import CSV (a column per "
                                                     "assignment, scores after the late penalty); needs --roster")
    _roster_options(p, "with --canvas: Canvas's gradebook export (Student, ID, SIS User ID, SIS Login ID, Section, ...)")
    p.add_argument("--canvas-column", action="append", default=[], metavar="ASSIGNMENT=TITLE (ID)",
                   help="with --canvas: the Canvas column of an assignment (default: the roster's column titled "
                        "like the assignment, else its name)")

    p = sub.add_parser("collect-zip", help="collect Canvas's \"Download Submissions\" zip into submitted/ with "
                                           "nbgrader zip_collect (student ids from a roster, submission times)")
    p.add_argument("assignment", help="the assignment, e.g. stability")
    p.add_argument("zip", help="the zip Canvas gave")
    _roster_options(p, "Canvas's gradebook export: Canvas user id (ID) -> student id (default: the Canvas user id "
                       "is the student id)")
    p.add_argument("--times", metavar="CSV", help="submission times (columns ID, submitted_at) instead of the zip "
                                                  "entries' dates")
    p.add_argument("--zip-timezone", default="UTC", help="the time zone of the zip entries' dates (default: UTC)")

    p = sub.add_parser("check", help="grade a .py or .ipynb file against a topic's items (visible and hidden), "
                                     "without nbgrader")
    p.add_argument("topic", help="the assignment whose items to grade, e.g. stability")
    p.add_argument("path", help="a Python module or a notebook defining the exercise's names")
    p.add_argument("--json", action="store_true", help="print nothing but the results as JSON")
    p.add_argument("--seed", type=int, help="the hidden variants' seed (default: a new one, printed)")
    p.add_argument("--trusted", action="store_true",
                   help="grade as the official grade is computed: the file's code in a sandboxed worker, every "
                        "check in this process (for instructors; students checking their own work leave it off)")
    p.add_argument("--no-sandbox", action="store_true", help="with --trusted: run the worker without the sandbox")

    p = sub.add_parser("similarity", help="after-grading/similarity-<assignment>.html: every pair of submissions "
                                          "scored on the students' own code, the closest side by side")
    p.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    p.add_argument("--threshold", type=float, default=None,
                   help="list the pairs at or above this score (default: the calibrated one, see docs/similarity.md)")

    p = sub.add_parser("analysis", help="after-grading/analysis.html: per graded item, who earned it, the frequent "
                                        "failures, the points histogram and the suspicious items")
    p.add_argument("assignments", nargs="*", help="only these assignments (default: all)")

    p = sub.add_parser("evidence", help="the evidence table: every graded item, its points, what earns them (data, "
                                        "clock, source) and what only the worker says")
    p.add_argument("--write", action="store_true", help="write it into docs/security.md between its markers")
    p.add_argument("--check", action="store_true", help="exit 1 when docs/security.md's table is stale")

    p = sub.add_parser("review", help="list the items under review (a construct that only serves to evade grading), "
                                      "or accept or reject one; the decision is kept across regrades")
    decide = p.add_mutually_exclusive_group()
    decide.add_argument("--accept", nargs=3, metavar=("STUDENT", "ASSIGNMENT", "ITEM"),
                        help="not evasion: grade the item on its evidence as if it were not flagged")
    decide.add_argument("--reject", nargs=3, metavar=("STUDENT", "ASSIGNMENT", "ITEM"), help="0 points, with --note")
    p.add_argument("--note", default="", help="the instructor's note (the student sees it on a rejection)")
    p.add_argument("--all", action="store_true", help="list decided items too")

    sub.add_parser("pending", help="list the submissions whose GPU items wait for a machine with a GPU")

    p = sub.add_parser("kit", help="write the student kit: the release notebooks and a wheel of the checks without "
                                   "the answers (what students install)")
    p.add_argument("-o", "--out", metavar="DIR", help="where to write it (default: kit/ in the course directory)")

    p = sub.add_parser("gradescope", help="write Gradescope's autograder.zip for one assignment or several: "
                                          "setup.sh, run_autograder and pinned wheels (docs/gradescope.md)")
    p.add_argument("assignments", nargs="*", help="the assignments it grades (default: every one Gradescope can)")
    p.add_argument("-o", "--out", metavar="ZIP", help="where to write it (default: autograder.zip, or "
                                                      "autograder-<assignment>.zip for one)")
    p.add_argument("--image", choices=("ubuntu-22.04", "ubuntu-24.04"), default="ubuntu-22.04",
                   help="Gradescope's base image: its python3 (3.10, 3.12) is the wheels' Python (default: "
                        "ubuntu-22.04)")
    p.add_argument("--python", choices=("3.10", "3.11", "3.12", "3.13"),
                   help="the wheels' Python, for an image other than those (default: the image's)")
    p.add_argument("--torch-index", metavar="URL",
                   help="an index with torch's CPU wheels, e.g. https://download.pytorch.org/whl/cpu")
    p.add_argument("--gpu-items", choices=("waive", "fail"), default="waive",
                   help="GPU-only items, since Gradescope has no GPU: waive (out of the total) or fail (0); "
                        "default: waive")
    p.add_argument("--feedback", choices=("immediate", "after_due_date"), default="immediate",
                   help="when students see each item's result (default: immediate)")
    p.add_argument("--item-feedback", action="append", default=[], metavar="ITEM=POLICY",
                   help="another policy for one item (repeatable), e.g. --item-feedback speed=after_due_date")
    p.add_argument("--wheels", metavar="DIR", help="the wheel cache to fill and reuse (default: "
                                                   "~/.cache/epl-gradescope-wheels)")

    p = sub.add_parser("settings", help="print every setting in force (JSON), and each topic's declared items, "
                                        "tolerances and limits")
    p.add_argument("topics", nargs="*", help="only these topics' declarations (default: all)")

    args = parser.parse_args(argv)
    from ..errors import ClusterUnavailable
    from ..trusted.sandbox import SandboxUnavailable

    try:
        from ..settings import use_course
        use_course(args.course)      # course_settings.json, and AUTOGRADER_SETTINGS over it (said on stderr)
        _check_names(args)
        return _run(parser, args)
    except UserError as error:
        print(f"Cannot {DOING.get(args.command, args.command)}: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:   # in the student kit, which has only the tools `check` needs
        from ..kit_contents import in_kit
        module = (error.name or "").split(".")
        extra = EXTRAS.get(module[0])
        if extra:                            # pyproject.toml's extras: not what grading needs
            print(f"`python -m autograder {args.command}` needs {module[0]}, which is not installed: "
                  f"pip install -e '.[{extra}]'", file=sys.stderr)
            return 2
        grader_side = module[:2] in (["autograder", "course"], ["autograder", "engine"])
        if not grader_side or in_kit("/".join(module[1:]) + ".py"):
            raise
        print(f"`python -m autograder {args.command}` needs {error.name}, an instructor's tool that the student kit "
              "does not hold (it has `python -m autograder check TOPIC FILE`, without --trusted).", file=sys.stderr)
        return 2
    except (SandboxUnavailable, ClusterUnavailable) as error:
        print(f"Cannot grade: {error}", file=sys.stderr)
        return 2
    except ValueError as error:      # bad settings, roster, download, gradebook; another grade running
        if type(error).__name__ not in ("DeadlineError", "LMSError", "SettingsError", "GradebookStateError",
                                        "GradeLocked"):
            raise
        print(f"Cannot {args.command}: {error}", file=sys.stderr)
        return 2


def _names(args, attribute):
    value = getattr(args, attribute, None) if attribute else None
    return [value] if isinstance(value, str) else list(value or [])


def course_assignments(course):
    """The assignments of the course at ``course`` (``build.topics``), or a :class:`UserError` when ``course`` is not
    a course directory."""
    if not (Path(course) / "source").is_dir() or not (Path(course) / "nbgrader_config.py").is_file():
        where = "this directory" if str(course) == "." else str(course)
        raise UserError(f"{where} is not the course directory (it has no source/ and nbgrader_config.py): run the "
                        "command in the course's repository root, or give it with --course DIR before the command")
    from .build import topics
    return topics(course)


def unknown_names(names, known):
    """A :class:`UserError` naming the first of ``names`` not in ``known``, the closest known one and all of them."""
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            raise UserError(f"no assignment {name!r}" + (f" (did you mean {close[0]}?)" if close else "")
                            + f"; the assignments are: {', '.join(known)}")


def _check_names(args):
    """Every assignment a command is given is one the course (or, for ``check`` and ``settings``, the checks package)
    has, before anything runs."""
    if args.command in COURSE_COMMANDS:
        if importlib.util.find_spec(f"{__package__}.build") is None:   # the student kit: main says it lacks the tool
            return
        unknown_names(_names(args, COURSE_COMMANDS[args.command]), course_assignments(args.course))
    elif args.command in TOPIC_COMMANDS:
        from ..checks import TOPICS
        names = _names(args, TOPIC_COMMANDS[args.command])
        unknown = [n for n in names if n not in TOPICS and (n.startswith("_") or not _has_checks(n))]
        unknown_names(unknown, list(TOPICS))


def _has_checks(topic):
    try:
        return topic.isidentifier() and importlib.util.find_spec(f"autograder.checks.{topic}") is not None
    except (ModuleNotFoundError, ValueError):
        return False


def _roster_options(parser, roster_help):
    """``--roster CSV`` (Canvas's gradebook export) and ``--id-column``, for the commands that read a roster."""
    parser.add_argument("--roster", metavar="CSV", help=roster_help)
    parser.add_argument("--id-column", default="SIS Login ID",
                        help="the roster's column that holds the student ids (default: SIS Login ID)")


def _run(parser, args):
    if args.command == "build":
        from .build import main as build
        return build(args.course, check=args.check, only=args.topics or None)
    if args.command == "demo":
        from .demo import run_demo
        run_demo(args.course, only=args.topics or None, keep=args.keep, workers=args.workers)
        return 0
    if args.command == "grade":
        from .build import topics
        from .grade import grade_all
        from .grading import load_report
        from .report import print_gradebook
        assignments = args.assignments or topics(args.course)
        results = grade_all(args.course, assignments, args.student, seed=args.seed, only_pending=args.pending,
                            sandbox=not args.no_sandbox, workers=args.workers, scheduler=args.scheduler,
                            force=args.force)
        students = sorted({r.student for r in results})
        print_gradebook(assignments, students, load_report(args.course))
        from .similarity_page import summary_text
        print(summary_text(args.course, assignments))
        return 3 if any(r.grader_errors for r in results) else 0   # the grader's own failure: see its summary
    if args.command == "export":
        from .build import topics
        from .export import export_csv, export_gradescope
        assignments = args.assignments or topics(args.course)
        if not (args.csv or args.gradescope or args.canvas):
            parser.error("export needs --csv FILE, --gradescope DIR and/or --canvas FILE --roster CSV")
        if args.canvas:
            from .lms import export_canvas
            if not args.roster:
                parser.error("export --canvas needs --roster CSV (Canvas's gradebook export: its ids)")
            columns = dict(c.split("=", 1) for c in args.canvas_column if "=" in c)
            left_out = export_canvas(args.course, args.canvas, assignments, args.roster, args.id_column, columns)
            print(f"wrote {args.canvas}" + (f"; not in the roster, so not exported: {', '.join(left_out)}"
                                            if left_out else ""))
        if args.csv:
            for path in export_csv(args.course, args.csv, assignments, wide=args.wide):
                print(f"wrote {path}")
        if args.gradescope:
            print(f"wrote {len(export_gradescope(args.course, args.gradescope, assignments))} results.json files")
        return 0
    if args.command == "collect-zip":
        from .lms import collect_zip
        print(collect_zip(args.course, args.assignment, args.zip, args.roster, args.id_column, args.times,
                          args.zip_timezone), end="")
        return 0
    if args.command == "check":
        from .selfcheck import main as selfcheck
        return selfcheck(args.topic, args.path, as_json=args.json, seed=args.seed, trusted=args.trusted,
                         sandbox=not args.no_sandbox)
    if args.command == "settings":
        from .listing import settings_text
        print(settings_text(args.topics or None))
        return 0
    if args.command == "kit":
        import os
        from .kit import TORCH_PIN, KitError, build_kit, install_command
        out = args.out or os.path.join(args.course, "kit")
        try:
            wheel = build_kit(args.course, out)
        except KitError as error:
            print(f"Cannot build the kit: {error}", file=sys.stderr)
            return 1
        print(f"wrote {wheel} and the notebooks under {os.path.join(out, 'release')}\n"
              f"students install it with: {install_command(wheel.name)}\n"
              f"(on a machine with an NVIDIA GPU, without {TORCH_PIN}: pip keeps the CUDA build of PyTorch there)")
        return 0
    if args.command == "similarity":
        from .build import topics
        from .similarity_page import write_reports
        pages = write_reports(args.course, args.assignments or topics(args.course), args.threshold)
        print("\n".join(f"wrote {path}" for path in pages) or "No submission found under submitted/.")
        return 0
    if args.command == "analysis":
        from .analysis_page import write_pages
        from .gradebook_state import require_gradebook
        require_gradebook(args.course)      # the records go with a gradebook: missing or out of step, it stops here
        page = write_pages(args.course, args.assignments or None)
        print(f"wrote {page} (and a page per assignment beside it)" if page else "", end="\n" if page else "")
        return 0 if page else 1
    if args.command == "evidence":
        from .evidence import run
        return run(args.course, write=args.write, check=args.check)
    if args.command == "review":
        from .review import run as review
        return review(args.course, accept=args.accept, reject=args.reject, note=args.note, everything=args.all)
    if args.command == "gradescope":
        from .gradescope.bundle import main as gradescope
        return gradescope(args.course, args.assignments, out=args.out, gpu_items=args.gpu_items,
                          feedback=args.feedback, wheels=args.wheels, item_feedback=args.item_feedback,
                          image=args.image, python=args.python, torch_index=args.torch_index)
    if args.command == "pending":
        from .report import pending_text
        print(pending_text(args.course))
        return 0
    return 2
