"""Grade a file against a topic's graded items from a plain script, without nbgrader or Jupyter.

    python -m autograder check stability my_solutions.py
    python -m autograder check amp release/amp/amp.ipynb --json

Every item runs its visible and hidden variants, as under nbgrader, and the output gives
points per item and the total (in the student kit, which holds the expected outputs of the visible
tests only, the visible variants). For a notebook, the code cells that are not test cells run,
in order (the exercise code and the cells a student added). This is how the GPU checks
run on a machine that has torch but no nbgrader. Needs only torch, numpy and OpenCV.
"""

import contextlib
import json
import linecache
import sys
from pathlib import Path

from autograder.checks import items_of
from autograder.engine import notebooks
from autograder.engine.results import FAILED, GRADER_ERROR, PENDING, UNDER_REVIEW, grade_items, total
from autograder.errors import UserError
from autograder.measuring.expected_outputs import have_oracles
from autograder.seam.student import CallTimeout, time_limit
from autograder.settings import settings
from autograder.source_evidence.submitted_source import Submission
from autograder.spec import grading_run, new_run_seed


def _compiled(source, filename):
    """``source`` compiled under ``filename``, its text registered in ``linecache`` first."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return compile(source, filename, "exec")


def exec_source(source, filename, name="submission"):
    """Run ``source`` as a module named ``name`` and return its namespace.

    The text is registered in ``linecache`` under ``filename`` first: ``torch.jit.script``
    and ``inspect.getsource`` read a function's source from there, and code run from a
    string (a notebook's cells) has no file to read it from.
    """
    namespace = {"__name__": name, "__file__": filename}
    exec(_compiled(source, filename), namespace)  # noqa: S102 - the user's own code
    return namespace


def code_cells(nb):
    """The code a notebook runs when graded (``notebooks.code_cells``), IPython magics and shell escapes (``%time``,
    ``!ls``) dropped: they need a kernel."""
    for key, source in notebooks.code_cells(nb):
        yield key, "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def run_cells(cells, filename, name="submission"):
    """Run cells one by one in one namespace, as a kernel does: a cell that raises or runs past the cell
    timeout is reported on stderr and the next cell still runs (nbgrader grades the same way)."""
    namespace = {"__name__": name, "__file__": filename}
    for cell_id, source in cells:
        try:
            with time_limit(settings.grading.cell_timeout_s):
                exec(_compiled(source, f"{filename} (cell {cell_id})"), namespace)  # noqa: S102 - graded like a kernel cell
        except CallTimeout:
            print(f"cell {cell_id} ran longer than {settings.grading.cell_timeout_s} s and was stopped",
                  file=sys.stderr)
        except BaseException as error:  # noqa: BLE001 - a student's cell may raise anything, SystemExit too
            print(f"cell {cell_id} raised {type(error).__name__}: {error}", file=sys.stderr)
    return namespace


def source_of(path, topic):
    """What the grader reads of ``path`` (``autograder.source_evidence.submitted_source``): a notebook's code cells, or a module."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return Submission.from_cells(notebooks.code_cells(notebooks.read(path), topic))
    return Submission.from_text(path.read_text(encoding="utf-8"), path.name)


def load_namespace(path):
    path = Path(path)
    if path.suffix == ".ipynb":
        return run_cells(code_cells(notebooks.read(path)), f"<{path.name}>")
    return exec_source(path.read_text(encoding="utf-8"), str(path))


def report_text(topic, results, seed, hidden=True):
    score, possible = total(results)
    lines = [f"{topic}: hidden-test seed {seed}" if hidden else
             f"{topic}: the visible tests only (the student kit has no hidden tests: your instructor's grade adds them)"]
    width = max(len(f"{r.score:g}/{r.max_score:g}") for r in results)
    for r in results:
        mark = {"passed": "PASS", "failed": "FAIL", "pending": "PEND", GRADER_ERROR: "GRADER ERROR",
                UNDER_REVIEW: "REVIEW"}.get(r.status, r.status)
        lines.append(f"  {mark}  {f'{r.score:g}/{r.max_score:g}':>{width}}  {r.item}  ({r.seconds:.1f} s)")
        if r.message:
            lines.append("        " + r.message.replace("\n", "\n        "))
    counts = {s: sum(r.status == s for r in results) for s in ("passed", "failed", "pending", GRADER_ERROR)}
    lines.append(f"{score:g}/{possible:g} points ({counts['passed']} passed, {counts['failed']} failed, "
                 f"{counts['pending']} pending" + (f", {counts[GRADER_ERROR]} not graded: the grader failed on them"
                                                   if counts[GRADER_ERROR] else "") + ")")
    return "\n".join(lines)


def trusted_results(topic, path, seed, sandbox=True):
    """Grade ``path`` the way the official grade is computed: its code in a (sandboxed) worker, the checks here."""
    from autograder.engine.trusted_runner import grade_cells, launcher_for

    path = Path(path)
    if path.suffix == ".ipynb":
        cells = notebooks.code_cells(notebooks.read(path), topic)
    else:
        cells = [(path.name, path.read_text(encoding="utf-8"))]
    grade = grade_cells(topic, cells, seed=seed, launcher=launcher_for(sandbox and settings.grading.sandbox))
    for outcome in grade.cells:
        if outcome.error:
            print(f"cell {outcome.cell} raised {outcome.error}", file=sys.stderr)
    for problem in grade.problems:
        print(problem, file=sys.stderr)
    return grade.items


def readable(path):
    """A :class:`UserError` saying what to do when ``path`` does not exist, or is a notebook that cannot be
    read, before any of it runs."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path} " + ("is a folder" if path.is_dir() else "does not exist")
                        + ": give the path of your notebook (.ipynb) or of a Python file")
    if path.suffix == ".ipynb":
        try:
            notebooks.read(path)
        except notebooks.NotebookError as error:
            raise UserError(f"{path} cannot be read as a notebook: {error}. Open it in JupyterLab and save it "
                            "again (File > Save Notebook), or start again from the notebook you were given") from None


def main(topic, path, as_json=False, seed=None, trusted=False, sandbox=True):
    """Grade ``path``; exit status 0 when no item failed (pending GPU items do not fail), 1 when one failed, 3 when
    the grader itself failed on one (a grader error).

    ``trusted``: the student's code runs in a sandboxed worker and every check here (how an instructor grades
    with this command); otherwise in this process (how a student checks their own work)."""
    items_of(topic)   # an unknown topic fails here, before the student's code runs
    readable(path)
    hidden = trusted or have_oracles()   # the student kit holds the visible tests' expected outputs only
    seed = new_run_seed() if seed is None else seed
    # Whatever the student's code prints goes to stderr, so that --json prints nothing but JSON.
    with contextlib.redirect_stdout(sys.stderr), grading_run(official=True, seed=seed):
        if trusted:
            results = trusted_results(topic, path, seed, sandbox=sandbox)
        else:
            results = grade_items(topic, load_namespace(path), seed=seed, hidden=hidden, source=source_of(path, topic))
    if as_json:
        score, possible = total(results)
        print(json.dumps({"topic": topic, "seed": seed, "hidden": hidden, "score": score, "max_score": possible,
                          "pending": [r.item for r in results if r.status == PENDING],
                          "items": [r.as_dict() for r in results]}, indent=2, default=str))
    else:
        print(report_text(topic, results, seed, hidden))
    sys.stdout.flush()
    if any(r.status == GRADER_ERROR for r in results):
        return 3        # the grader's own failure, as `grade` says it
    return 1 if any(r.status == FAILED for r in results) else 0


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("topic", help="the assignment whose items to grade, e.g. stability")
    parser.add_argument("path", help="a Python module or a notebook defining the exercise's names")
    parser.add_argument("--json", action="store_true", help="print nothing but the results as JSON")
    parser.add_argument("--seed", type=int, help="the hidden variants' seed (default: a new one, printed)")
    parser.add_argument("--trusted", action="store_true",
                        help="grade as the official grade is computed: the file's code in a sandboxed worker, every "
                             "check in this process (for instructors; students checking their own work leave it off)")
    parser.add_argument("--no-sandbox", action="store_true", help="with --trusted: run the worker without the sandbox")


def from_command_line(args, parser):
    """``python -m autograder check``: what the command prints, and its exit status."""
    return main(args.topic, args.path, as_json=args.json, seed=args.seed, trusted=args.trusted,
                     sandbox=not args.no_sandbox)
