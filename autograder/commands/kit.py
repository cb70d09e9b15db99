"""``python -m autograder kit``: what an instructor hands out, with nothing that answers an exercise.

``build_kit(course, out)`` writes ``out/release/<topic>/<topic>.ipynb`` (copies of ``release/``) and
``out/effective_pytorch_lab_kit-<version>-py3-none-any.whl``: the ``autograder`` package with only the kit's
modules (``autograder.kit_contents``) and the expected outputs of the visible test cells (``expected/<topic>.pkl``),
recorded by running each topic's visible checks with the reference solution (``solutions/<topic>.py``) where the
topic has a grader-only oracle. The wheel is written here with ``zipfile`` (PEP 427: METADATA, WHEEL, RECORD with
SHA-256), so the build needs no network and no build backend; the same course gives the same bytes.
"""

import base64
import hashlib
import importlib
import pkgutil
import shutil
import zipfile
from pathlib import Path

from autograder import __version__, kit_contents
from autograder.checks import items_of
from autograder.commands.build import topics
from autograder.commands.check import exec_source
from autograder.engine.results import FAILED, grade_item
from autograder.measuring import expected_outputs
from autograder.sandbox.kit_tree import PACKAGE_DIR

DISTRIBUTION = "effective-pytorch-lab-kit"
REQUIRES = ("torch>=2.11", "numpy>=1.26", "opencv-python-headless>=4.9", "jupyterlab>=4", "nbgrader>=0.9.5",
            "psutil>=5.9")   # nbgrader: the students' Assignments list on JupyterHub; psutil: open files off Linux
# The PyTorch that students install beside the kit on a machine without a GPU: pinned, so that pip takes the CPU
# build (an unpinned torch downloads several GB of CUDA packages); on an NVIDIA GPU machine, leave it out.
TORCH_PIN = "torch==2.13.0"


def install_command(wheel_name):
    """How a student installs the kit (``kit`` prints it; docs/student.md says the same, and a test keeps them so)."""
    return f"python3 -m venv .venv && .venv/bin/pip install {TORCH_PIN} {wheel_name}"


SUMMARY = "Effective PyTorch Lab, the student kit: the notebooks' checks, without the answers."
FIXED_TIME = (1980, 1, 1, 0, 0, 0)   # every entry's timestamp: the same course gives the same wheel


class KitError(RuntimeError):
    """The kit cannot be built as asked; the message says why."""


def wheel_name(version=__version__):
    return f"{DISTRIBUTION.replace('-', '_')}-{version}-py3-none-any.whl"


def build_kit(course_dir, out_dir):
    """Write the release notebooks and the kit's wheel into ``out_dir``; return the wheel's path."""
    course, out = Path(course_dir).resolve(), Path(out_dir).resolve()
    names = topics(course)
    missing = [t for t in names if not (course / "release" / t / f"{t}.ipynb").is_file()]
    if missing:
        raise KitError(f"release/ has no notebook for {', '.join(missing)}: run `python -m autograder build` first.")
    tables = record_expected_outputs(course, names)
    out.mkdir(parents=True, exist_ok=True)
    for topic in names:
        target = out / "release" / topic
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(course / "release" / topic / f"{topic}.ipynb", target / f"{topic}.ipynb")
    return write_wheel(out / wheel_name(), tables)


def oracle_topics():
    """The topics with a grader-only oracle (a module in ``autograder.oracles`` named after a topic; ``speed``, the
    grader's references for the speed checks, is none)."""
    from autograder.checks import TOPICS

    oracles = importlib.import_module(f"{kit_contents.PACKAGE}.oracles")
    return sorted(info.name for info in pkgutil.iter_modules(oracles.__path__) if info.name in TOPICS)


def record_expected_outputs(course, names):
    """``{topic: {digest: value}}``: every oracle value the visible checks ask for, with the reference solution.

    Each item runs as its test cell calls it (the check's defaults) and as its visible variant; an item the
    reference fails stops the build (its expected outputs would be missing from the kit)."""
    recorded = {}
    for topic in [t for t in names if t in oracle_topics()]:
        path = Path(course) / "solutions" / f"{topic}.py"
        if not path.is_file():
            raise KitError(f"{path} is missing: run `python -m autograder build` first.")
        namespace = exec_source(path.read_text(encoding="utf-8"), str(path), f"solutions.{topic}")
        with expected_outputs.recording() as tables:
            for item in items_of(topic):
                result = grade_item(item, namespace, hidden=False)
                if result.status == FAILED:
                    raise KitError(f"the reference solution fails {topic}.{item.id}, so the kit cannot record its "
                                   f"expected outputs:\n{result.message}")
                if item.visible:   # the test cell calls the check with its defaults
                    item.check(*(namespace[n] for n in item.targets))
        recorded[topic] = tables.get(topic, {})
    return recorded


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _metadata():
    lines = ["Metadata-Version: 2.1", f"Name: {DISTRIBUTION}", f"Version: {__version__}", f"Summary: {SUMMARY}",
             "Requires-Python: >=3.10", *(f"Requires-Dist: {requirement}" for requirement in REQUIRES)]
    return ("\n".join(lines) + "\n").encode()


def _wheel_file():
    return b"Wheel-Version: 1.0\nGenerator: autograder.commands.kit\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def kit_entries(tables):
    """``{path in the wheel: bytes}`` of the package: the kit's modules and the expected-output tables."""
    package = kit_contents.PACKAGE
    entries = {f"{package}/{relative}": path.read_bytes() for relative, path in kit_contents.kit_files(PACKAGE_DIR)}
    for topic in sorted(tables):
        entries[f"{package}/{expected_outputs.TABLES.name}/{topic}.pkl"] = expected_outputs.table_bytes(tables[topic])
    return entries


def write_wheel(path, tables):
    """Write the wheel at ``path`` (replacing an older one of that name); return ``path``."""
    info = f"{DISTRIBUTION.replace('-', '_')}-{__version__}.dist-info"
    entries = dict(sorted(kit_entries(tables).items()))
    entries[f"{info}/METADATA"] = _metadata()
    entries[f"{info}/WHEEL"] = _wheel_file()
    entries[f"{info}/top_level.txt"] = f"{kit_contents.PACKAGE}\n".encode()
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in entries.items())
    entries[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    partial = Path(str(path) + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries.items():
            entry = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    partial.replace(path)
    return Path(path)


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("-o", "--out", metavar="DIR", help="where to write it (default: kit/ in the course directory)")


def from_command_line(args, parser):
    """``python -m autograder kit``: what the command prints, and its exit status."""
    import os
    import sys
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
