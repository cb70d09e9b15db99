"""``python -m autograder <command>``: the instructor's command line, a table of commands.

Each command is a module of ``autograder/commands/`` named after it (``collect-zip``: ``collect_zip.py``) with
``arguments(parser)`` (its arguments and their defaults) and ``from_command_line(args, parser)`` (what it does and
prints; its exit status). Only the module of the command given is imported: the student kit holds ``check`` alone.
"""

import argparse
import difflib
import importlib
import importlib.util
import sys
from collections import namedtuple
from pathlib import Path

from autograder.errors import UserError

# module: in autograder/commands/; doing: what "Cannot <doing>: ..." says; names: the argument that names its
# assignments, checked before anything runs against the course ("course:ATTR") or the checks package ("topics:ATTR")
Command = namedtuple("Command", "module doing names help")
COMMANDS = {
    "build": Command("build", "build", "course:topics", "rebuild release/ and solutions/ from source/"),
    "demo": Command("demo", "demo", "course:topics",
                    "release, grade four sample students on a temporary course, print the gradebook"),
    "grade": Command("grade", "grade", "course:assignments",
                     "autograde every submission under submitted/ with limits and progress, in parallel on Dask; a "
                     "rerun grades only what is new, changed or failed"),
    "export": Command("export", "export", "course:assignments",
                      "export grades as CSV and/or Gradescope results.json files"),
    "collect-zip": Command("collect_zip", "collect", "course:assignment",
                           "collect Canvas's \"Download Submissions\" zip into submitted/ with nbgrader zip_collect "
                           "(student ids from a roster, submission times)"),
    "check": Command("check", "check", "topics:topic",
                     "grade a .py or .ipynb file against a topic's items (visible and hidden), without nbgrader"),
    "similarity": Command("similarity", "write the similarity pages", "course:assignments",
                          "after-grading/similarity-<assignment>.html: every pair of submissions scored on the "
                          "students' own code, the closest side by side"),
    "analysis": Command("analysis", "write the item analysis", "course:assignments",
                        "after-grading/analysis.html: per graded item, who earned it, the frequent failures, the "
                        "points histogram and the suspicious items"),
    "evidence": Command("evidence", "write the evidence table", "course:",
                        "the evidence table: every graded item, its points, what earns them (data, clock, source) "
                        "and what only the worker says"),
    "review": Command("review", "review", "course:",
                      "list the items under review (a construct that only serves to evade grading), or accept or "
                      "reject one; the decision is kept across regrades"),
    "pending": Command("pending", "list what is pending", "course:",
                       "list the submissions whose GPU items wait for a machine with a GPU"),
    "kit": Command("kit", "write the kit", "course:",
                   "write the student kit: the release notebooks and a wheel of the checks without the answers "
                   "(what students install)"),
    "gradescope": Command("gradescope", "write the Gradescope bundle", "course:assignments",
                          "write Gradescope's autograder.zip for one assignment or several: setup.sh, run_autograder "
                          "and pinned wheels (docs/gradescope.md)"),
    "settings": Command("settings", "list the settings", "topics:topics",
                        "print every setting in force (JSON), and each topic's declared items, tolerances and limits"),
}

# The modules of pyproject.toml's extras (not installed by `pip install -e .`), and the extra that brings each.
EXTRAS = {"matplotlib": "analysis", "psycopg": "postgres", "jupyterhub": "hub", "pytest": "test",
          "hypothesis": "test", "playwright": "test"}


def command_module(verb):
    """The module of ``verb`` (``ModuleNotFoundError`` in the student kit for an instructor's command)."""
    return importlib.import_module(f"autograder.commands.{COMMANDS[verb].module}")


def parser_for(verb=None):
    """The command line's parser, with the arguments of ``verb``'s command (the others' are read only when given)."""
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Effective PyTorch Lab course tools.")
    parser.add_argument("--course", default=".", help="the nbgrader course directory (default: .)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help, description=command.help)
        if name == verb:
            command_module(name).arguments(p)
    return parser, sub


def _verb(argv):
    """The command named in ``argv`` (``None`` when there is none or it is not one)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--course")
    pre.add_argument("command", nargs="?")
    known, _ = pre.parse_known_args(argv)
    return known.command if known.command in COMMANDS else None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    verb = _verb(argv)
    try:
        parser, sub = parser_for(verb)
    except ModuleNotFoundError as error:
        return _not_installed(verb, error)
    args = parser.parse_args(argv)
    from autograder.errors import ClusterUnavailable
    from autograder.sandbox.bubblewrap import SandboxUnavailable

    try:
        from autograder.settings import use_course
        use_course(args.course)      # course_settings.json, and AUTOGRADER_SETTINGS over it (said on stderr)
        _check_names(args)
        return command_module(args.command).from_command_line(args, sub.choices[args.command])
    except UserError as error:
        print(f"Cannot {COMMANDS[args.command].doing}: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        return _not_installed(args.command, error)
    except (SandboxUnavailable, ClusterUnavailable) as error:
        print(f"Cannot grade: {error}", file=sys.stderr)
        return 2
    except ValueError as error:      # bad settings, roster, download, gradebook; another grade running
        if type(error).__name__ not in ("DeadlineError", "LMSError", "SettingsError", "GradebookStateError",
                                        "GradeLocked"):
            raise
        print(f"Cannot {args.command}: {error}", file=sys.stderr)
        return 2


def _not_installed(verb, error):
    """One line for a module that is not installed: an extra of pyproject.toml, or an instructor's tool that the
    student kit does not hold (it has ``check`` alone); anything else is a bug, raised."""
    from autograder.kit_contents import GRADER_ONLY, in_kit
    module = (error.name or "").split(".")
    extra = EXTRAS.get(module[0])
    if extra:                            # pyproject.toml's extras: not what grading needs
        print(f"`python -m autograder {verb}` needs {module[0]}, which is not installed: "
              f"pip install -e '.[{extra}]'", file=sys.stderr)
        return 2
    grader_side = module[0] == "autograder" and len(module) > 1 and module[1] in GRADER_ONLY
    if not grader_side or in_kit("/".join(module[1:]) + ".py"):
        raise error
    print(f"`python -m autograder {verb}` needs {error.name}, an instructor's tool that the student kit "
          "does not hold (it has `python -m autograder check TOPIC FILE`, without --trusted).", file=sys.stderr)
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
    from autograder.commands.build import topics
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
    where, _, attribute = COMMANDS[args.command].names.partition(":")
    if where == "course":
        unknown_names(_names(args, attribute), course_assignments(args.course))
    else:
        from autograder.checks import TOPICS
        names = _names(args, attribute)
        unknown = [n for n in names if n not in TOPICS and (n.startswith("_") or not _has_checks(n))]
        unknown_names(unknown, list(TOPICS))


def _has_checks(topic):
    try:
        return topic.isidentifier() and importlib.util.find_spec(f"autograder.checks.{topic}") is not None
    except (ModuleNotFoundError, ValueError):
        return False
