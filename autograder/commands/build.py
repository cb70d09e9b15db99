"""Build ``release/`` (with nbgrader's generate_assignment) and ``solutions/`` from ``source/``.

``python -m autograder build`` rewrites both; ``python -m autograder build --check``
builds into a temporary directory and fails when the committed files differ.
"""

import contextlib
import filecmp
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import contracts
from autograder.engine import notebooks


def topics(course):
    """The assignments that exist in ``source/``, in the order students see them."""
    from autograder.checks import TOPICS
    present = {p.name for p in (Path(course) / "source").iterdir()
               if (p / f"{p.name}.ipynb").exists()}
    return [t for t in TOPICS if t in present] + sorted(present - set(TOPICS))


# ``python -m nbgrader``, after importing autograder, which defers jsonschema's IRI parsers (autograder/__init__.py):
# 1.5 to 2.5 s less of every nbgrader command here.
NBGRADER_MAIN = "import autograder, runpy; runpy.run_module('nbgrader', run_name='__main__', alter_sys=True)"


def nbgrader(course, *args, check=True, timeout=None, env=None, preexec_fn=None):
    """Run an nbgrader command in ``course``; return the CompletedProcess (output captured).

    It runs in its own process group, so that on ``timeout`` the kernel it started
    is killed with it before ``subprocess.TimeoutExpired`` is raised.
    """
    run_env = dict(os.environ, **(env or {}))
    # nbgrader runs `alembic` (and kernels) from PATH: put this interpreter's scripts first.
    run_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + run_env.get("PATH", "")
    run_env.setdefault("PYTHONWARNINGS", "ignore")
    command = [sys.executable, "-c", NBGRADER_MAIN, *args]
    with subprocess.Popen(command, cwd=course, env=run_env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec_fn) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    done = subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
    if check and done.returncode:
        raise subprocess.CalledProcessError(done.returncode, command, stdout, stderr)
    return done


def scratch_course(course, dest, with_release=False):
    """A minimal copy of the course (config + source [+ release]) at ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(Path(course) / "nbgrader_config.py", dest / "nbgrader_config.py")
    shutil.copytree(Path(course) / "source", dest / "source", dirs_exist_ok=True)
    if with_release and (Path(course) / "release").exists():
        shutil.copytree(Path(course) / "release", dest / "release", dirs_exist_ok=True)
    return dest


@contextlib.contextmanager
def _scripts_on_path():
    """nbgrader runs `alembic` from PATH: put this interpreter's scripts first while it works."""
    saved = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + saved
    try:
        yield
    finally:
        os.environ["PATH"] = saved


def generate_assignments(course, names):
    """The real ``nbgrader generate_assignment`` for each of ``names``, in this process.

    nbgrader's API pays its start-up (config, gradebook migration) once instead of
    once per assignment: 8 assignments take seconds, not a minute. Yields each name when done.
    """
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(Path(course).resolve())
    with _scripts_on_path():
        api = NbGraderAPI(config=config)
        for name in names:
            result = api.generate_assignment(name, force=True, create=True)
            if not result["success"]:
                raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{result.get('error')}\n"
                                   f"{result.get('log', '')}")
            yield name


RUN_PAST_ERRORS = "raises-exception"


def _call(item, extra="", args=None):
    targets = ", ".join(item.targets)
    options = "".join(f", {k}={v!r}" for k, v in (args or {}).items())
    return f"{item.name}({targets}{extra}{options})"


def item_cell_source(item):
    """The text of an item's test cell, written from the spec: the visible call, then each hidden variant."""
    lines = [f"from autograder.checks.{item.topic} import {item.name}", _call(item, args=item.visible)]
    if item.hidden:
        lines += [notebooks.BEGIN_HIDDEN, "from autograder.spec import hidden_seed"]
        lines += [_call(item, f', seed=hidden_seed("{item.topic}.{item.id}", {k})', extra)
                  for k, extra in enumerate(item.hidden, 1)]
        lines.append(notebooks.END_HIDDEN)
    return "\n".join(lines) + "\n"


def apply_spec(nb, topic):
    """``nb`` with every graded test cell's text and points written from the topic's spec, and every code cell
    but the solutions tagged so that Run All runs past an error (a stub's, or a failed check's).

    The author places the cells (one per item, grade id ``test_<item>``); the spec says what they run.
    Raises ``ValueError`` naming the cells that are missing or not in the spec.
    """
    from autograder.checks import items_of

    items = {item.cell_id: item for item in items_of(topic)}
    present = notebooks.graded_test_ids(nb)
    missing, extra = [i for i in items if i not in present], [i for i in present if i not in items]
    if missing or extra:
        raise ValueError(f"source/{topic}/{topic}.ipynb: " + "; ".join(
            part for part in (f"no test cell for {', '.join(missing)} (add a test cell with that grade id)"
                              if missing else "",
                              f"test cells {', '.join(extra)} are not in the spec (declare them with @graded "
                              f"in autograder/checks/{topic}/)" if extra else "") if part))
    for cell in nb["cells"]:
        if notebooks.is_graded_test(cell):
            item = items[notebooks.grade_id(cell)]
            cell["source"] = notebooks.lines(item_cell_source(item))
            cell["metadata"]["nbgrader"]["points"] = int(item.points) if item.points.is_integer() else item.points
        if cell.get("cell_type") == "code" and not notebooks.is_solution(cell):
            # JupyterLab's Run All goes on past a cell with this tag: an unfinished exercise stops no later check.
            tags = cell["metadata"].setdefault("tags", [])
            if RUN_PAST_ERRORS not in tags:
                tags.append(RUN_PAST_ERRORS)
    return nb


def contracts_of(topic):
    """``CONTRACTS`` of ``autograder/checks/<topic>/contract.py``, or ``None`` for a topic that declares none."""
    try:
        module = importlib.import_module(f"autograder.checks.{topic}.contract")
    except ModuleNotFoundError as error:
        if error.name != f"autograder.checks.{topic}.contract":
            raise
        return None
    return tuple(module.CONTRACTS)


def apply_contracts(nb, topic):
    """``nb`` with each exercise's bullet list written from its declared contract, between the lines
    ``<!-- contract: <exercise> -->`` and ``<!-- end of contract -->`` of a markdown cell.

    Raises ``ValueError`` naming the contracts whose markers are missing (or twice), and markers of exercises
    that declare no contract.
    """
    declared = contracts_of(topic) or ()
    by_name = {contract.exercise: contract for contract in declared}
    where = f"source/{topic}/{topic}.ipynb"
    markdown = [cell for cell in nb["cells"] if cell.get("cell_type") == "markdown"]
    marked = [name for cell in markdown for name in contracts.marked_exercises(notebooks.source_text(cell))]
    problems = [f"no marker {contracts.BEGIN.format(exercise=name)} for its declared contract (put it, and "
                f"{contracts.END}, around the exercise's bullet list)" for name in by_name if marked.count(name) != 1]
    problems += [f"a contract marker for {name!r}, which autograder/checks/{topic}/contract.py does not declare"
                 for name in dict.fromkeys(marked) if name not in by_name]
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))
    for cell in markdown:
        text = notebooks.source_text(cell)
        names = contracts.marked_exercises(text)
        if not names:
            continue
        for name in names:
            try:
                text = contracts.between(text, contracts.BEGIN.format(exercise=name), contracts.END,
                                         by_name[name].markdown())
            except LookupError as error:
                raise ValueError(f"{where}: the contract of {name}: {error}") from None
        cell["source"] = notebooks.lines(text)
    return nb


def write_spec_into_source(course, names, check=False):
    """Write (or, with ``check``, compare) the test cells and the contracts' bullet lists of
    ``source/<topic>/<topic>.ipynb`` from the spec.

    Returns the notebooks whose test cells or contracts differ from the spec.
    """
    stale = []
    for topic in names:
        path = Path(course) / "source" / topic / f"{topic}.ipynb"
        nb = notebooks.read(path)
        before = json.dumps(nb, sort_keys=True)
        apply_spec(nb, topic)
        after_cells = json.dumps(nb, sort_keys=True)
        apply_contracts(nb, topic)
        differ = [what for what, changed in (("test cells", after_cells != before),
                                             ("contracts", json.dumps(nb, sort_keys=True) != after_cells)) if changed]
        if differ:
            stale.append(f"source/{topic}/{topic}.ipynb: {' and '.join(differ)} differ from the spec")
            if not check:
                notebooks.write(nb, path)
    return stale


def write_contract_tables(course, names, check=False):
    """Write (or, with ``check``, compare) the contract table of ``docs/<topic>.md`` between the lines
    ``<!-- contract table -->`` and ``<!-- end of contract table -->``, for every topic that declares contracts.

    Returns the docs whose table differs (or is missing)."""
    stale = []
    for topic in names:
        declared = contracts_of(topic)
        if declared is None:
            continue
        path = Path(course) / "docs" / f"{topic}.md"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        try:
            fresh = contracts.between(text, contracts.TABLE_BEGIN, contracts.TABLE_END, contracts.table(declared))
        except LookupError:
            stale.append(f"docs/{topic}.md: no contract table (add the lines {contracts.TABLE_BEGIN} and "
                         f"{contracts.TABLE_END}, then build)")
            continue
        if fresh != text:
            stale.append(f"docs/{topic}.md: contract table differs from the spec")
            if not check:
                path.write_text(fresh, encoding="utf-8")
    return stale


def build_into(course, out, only=None, quiet=False):
    """Write ``out/release/<topic>/`` and ``out/solutions/<topic>.py`` for every topic (or those in ``only``)."""
    course, out = Path(course), Path(out)
    with tempfile.TemporaryDirectory(prefix="epl-build-") as tmp:
        work = scratch_course(course, tmp)
        names = [t for t in topics(course) if not only or t in only]
        for topic in generate_assignments(work, names):
            release = out / "release" / topic
            if release.exists():
                shutil.rmtree(release)
            shutil.copytree(work / "release" / topic, release)
            nb = notebooks.read(course / "source" / topic / f"{topic}.ipynb")
            (out / "solutions").mkdir(parents=True, exist_ok=True)
            (out / "solutions" / f"{topic}.py").write_text(notebooks.solutions_module(nb, topic), encoding="utf-8")
            if not quiet:
                print(f"built {topic}: release/{topic}/, solutions/{topic}.py", flush=True)


def differences(course):
    """Paths under source/ (test cells, contracts), docs/ (contract tables), release/ and solutions/ that differ
    from what the spec and source/ build (empty when up to date)."""
    course = Path(course)
    with tempfile.TemporaryDirectory(prefix="epl-check-") as tmp:
        found = write_spec_into_source(course, topics(course), check=True)
        found += write_contract_tables(course, topics(course), check=True)
        build_into(course, tmp, quiet=True)
        fresh = Path(tmp)
        for kind in ("release", "solutions"):
            committed = {p.relative_to(course / kind) for p in (course / kind).rglob("*")
                         if p.is_file() and "__pycache__" not in p.parts} if (course / kind).exists() else set()
            built = {p.relative_to(fresh / kind) for p in (fresh / kind).rglob("*") if p.is_file()}
            for rel in sorted(committed | built):
                if rel not in committed:
                    found.append(f"{kind}/{rel} is missing")
                elif rel not in built:
                    found.append(f"{kind}/{rel} is not built from source/ (stale)")
                elif not filecmp.cmp(course / kind / rel, fresh / kind / rel, shallow=False):
                    found.append(f"{kind}/{rel} is out of date")
        return found


def main(course=".", check=False, only=None):
    if check:
        found = differences(course)
        for line in found:
            print(line)
        if found:
            print("source/ test cells or contracts, docs/ contract tables, release/ or solutions/ are out of date: "
                  "run `python -m autograder build` and commit.")
            return 1
        print(f"checked {len(topics(course))} assignments: the test cells and contracts match the spec, and "
              "release/ and solutions/ match source/.")
        return 0
    names = [t for t in topics(course) if not only or t in only]
    for line in write_spec_into_source(course, names) + write_contract_tables(course, names):
        print(line.replace("differ from the spec", "rewritten from the spec")
              .replace("differs from the spec", "rewritten from the spec"))
    build_into(course, course, only=only)
    return 0


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if release/ or solutions/ is stale")
    parser.add_argument("topics", nargs="*", help="only these assignments (default: all)")


def from_command_line(args, parser):
    """``python -m autograder build``: what the command prints, and its exit status."""
    return main(args.course, check=args.check, only=args.topics or None)
