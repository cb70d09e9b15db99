"""Gradescope's ``autograder.zip`` (``python -m autograder gradescope [assignment ...]``), for one assignment or
several (by default every assignment Gradescope can grade: one zip serves each of the course's Gradescope assignments).

The zip holds ``setup.sh`` and ``run_autograder`` (Gradescope runs them as root: once when the autograder is built, once
per submission), ``README.md`` (what to set in Gradescope, measured), ``gradescope.json`` (the assignments, the Python,
the GPU policy, the feedback policy and the instructor's settings), ``source_map.json`` (each assignment's graded cells,
as ``jobs.source_map``: no solution), the release notebooks students start from, ``requirements.txt`` and
``wheels/``: this package built as a wheel (the grader, with the oracles: it never reaches the student's code) and
the wheels grading needs, no more (``wheelhouse.GRADESCOPE``: torch 2.13.0's CPU build, NumPy, OpenCV headless,
IPython, which runs the notebook's cells in the worker), chosen for the Python of Gradescope's base image and pinned,
so that setup installs with ``pip install --no-index --no-deps`` and does not depend on the day's package versions
(otter-grader's ``otter generate`` is the model: requirements and tests in the zip; here the packages themselves
too). ``collect_wheels`` fills a cache directory once; every bundle reuses it.
"""

import hashlib
import json
import re
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from autograder import __version__
from autograder.checks import TOPICS, items_of
from autograder.course import wheelhouse
from autograder.engine.jobs import source_map
from autograder.gradescope import templates
from autograder.gradescope.results import FEEDBACK, GPU_POLICIES

TORCH = wheelhouse.TORCH           # the CPU build (Gradescope has no GPU)
# Gradescope's base images and their Python (python3 of the image: no PPA, no second interpreter).
IMAGES = {"ubuntu-22.04": "3.10", "ubuntu-24.04": "3.12"}
DEFAULT_IMAGE = "ubuntu-22.04"
DISTRIBUTION = "effective_pytorch_lab"
EXECUTABLE = ("setup.sh", "run_autograder")
# Assignments whose graded runs talk TCP on 127.0.0.1 (gloo's ranks and their TCPStore): Gradescope's container gets
# the fallback sandbox, whose seccomp filter refuses every socket but AF_UNIX (seccomp.deny_network), and gloo has no
# transport over anything else. Grade them with `python -m autograder grade` (bubblewrap gives the worker its own lo).
NEEDS_LOOPBACK = ("distributed",)
GRADABLE = tuple(topic for topic in TOPICS if topic not in NEEDS_LOOPBACK)


class BundleError(RuntimeError):
    """The bundle cannot be built as asked; the message says why."""


def build_wheel(project, cache):
    """This package as a wheel in ``cache`` (``pip wheel --no-deps``); returns its path."""
    if not (Path(project) / "pyproject.toml").exists():
        raise BundleError(f"{project} has no pyproject.toml: build the bundle from the course repository (--course)")
    for old in Path(cache).glob(f"{DISTRIBUTION}-*.whl"):
        old.unlink()
    _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(cache), str(project))
    (wheel,) = Path(cache).glob(f"{DISTRIBUTION}-*.whl")
    return wheel


def collect_wheels(project, cache, python, *, torch_index=None, progress=None):
    """Every wheel the bundle needs for Python ``python`` ("3.10"), in ``cache`` (made if missing, reused: pip
    downloads only what is not there); returns ``{file name: path}``: this package's wheel and the set's.

    The set is resolved by pip for that Python (``wheelhouse.resolve``, about a minute with the index) and remembered:
    ``<python>-<key>/`` holds its wheels and ``resolved.json`` its pins, under a key of what was resolved; while the
    files are there, the same key is not resolved again. torch must be a CPU build: PyPI's Linux wheel is the CUDA one
    (with its NVIDIA libraries, several GB), so the CPU wheel comes from pip's find-links, the cache itself, or
    ``torch_index`` (https://download.pytorch.org/whl/cpu)."""
    if python not in wheelhouse.PYTHONS:
        raise BundleError(f"--python takes one of {', '.join(wheelhouse.PYTHONS)}, not {python!r}")
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    ours = build_wheel(project, cache)
    folder = cache / f"{python}-{set_key(python, torch_index)}"
    resolved = folder / "resolved.json"
    say = progress or (lambda line: None)
    try:
        if resolved.exists() and all((folder / name).exists() for name in json.loads(resolved.read_text())):
            names = json.loads(resolved.read_text())
        else:
            say(f"resolving the grader's wheels for Python {python} (pip, about a minute)")
            _expect_cpu_torch(wheelhouse.resolve([TORCH], python, find_links=[cache], extra_index=torch_index,
                                                 no_deps=True), python, cache)
            packages = wheelhouse.prune(wheelhouse.resolve(wheelhouse.GRADESCOPE, python, find_links=[cache],
                                                           extra_index=torch_index), wheelhouse.GRADESCOPE)
            folder.mkdir(exist_ok=True)
            total = len(packages)
            state = {"done": 0}

            def downloading(line):
                if line.startswith(("Collecting", "File was already downloaded")):
                    state["done"] += line.startswith("Collecting")
                    say(f"  [{state['done']}/{total}] {line.split()[-1] if line.startswith('File') else line[11:]}")

            say(f"downloading {total} wheels into {folder}")
            files = wheelhouse.download(packages, python, folder, find_links=[cache], extra_index=torch_index,
                                        progress=downloading)
            names = sorted(path.name for path in files)
            resolved.write_text(json.dumps(names), encoding="utf-8")
    except wheelhouse.WheelhouseError as error:
        raise BundleError(str(error)) from None
    return {ours.name: ours, **{name: folder / name for name in names}}


def set_key(python, torch_index=None):
    """What a remembered resolution is keyed by: the set asked for, what is pruned, the Python, torch's index (not
    this package's code, which changes at every commit)."""
    text = "\n".join([*wheelhouse.GRADESCOPE, *sorted(wheelhouse.PRUNED), python, str(torch_index)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _expect_cpu_torch(packages, python, cache):
    torch = next((package for package in packages if package["name"] == "torch"), None)
    if torch is None or "+cpu" not in torch["version"] or any(
            requirement.startswith("nvidia") for requirement in torch["requires"]):
        found = torch["version"] if torch else "none"
        raise BundleError(f"pip found no CPU build of {TORCH} for Python {python} (it found {found}; PyPI's Linux "
                          "wheel is the CUDA build, with several GB of NVIDIA libraries): pass --torch-index "
                          f"https://download.pytorch.org/whl/cpu, or put that index's cp{python.replace('.', '')} "
                          f"wheel of torch 2.13.0+cpu into {cache}")


def _pip(*args):
    done = subprocess.run([sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", *args],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BundleError(f"pip {args[0]} failed: {done.stderr.strip()[-2000:]}")


def requirements(wheels):
    """``name==version`` for every wheel, ours and torch first: what setup.sh installs, exactly."""
    pins = []
    for name in wheels:
        distribution, version = name.split("-")[:2]
        pins.append(f"{distribution}=={version}")
    return sorted(pins, key=lambda pin: (not pin.startswith((DISTRIBUTION, "torch=")), pin.lower()))


def config(assignments, gpu_items, feedback, settings_values, item_feedback=None, python=None):
    """The bundle's ``gradescope.json``. ``item_feedback``: ``{item: policy}`` for the items whose feedback differs
    from ``feedback`` (then ``feedback`` is written as ``{"default": ..., "items": ...}``)."""
    assignments = [assignments] if isinstance(assignments, str) else list(assignments)
    unknown = [name for name in assignments if name not in TOPICS]
    if unknown or not assignments:
        raise BundleError(f"no assignment {', '.join(unknown) or '(none given)'}: the course's are "
                          f"{', '.join(GRADABLE)}")
    for assignment in assignments:
        if assignment in NEEDS_LOOPBACK:
            raise BundleError(f"{assignment!r} trains on several processes that talk TCP over 127.0.0.1 (gloo), and "
                              "Gradescope's sandbox (no namespaces: the fallback, docs/gradescope.md) refuses every "
                              "socket but AF_UNIX; grade it with `python -m autograder grade` instead")
    if gpu_items not in GPU_POLICIES:
        raise BundleError(f"--gpu-items takes {' or '.join(GPU_POLICIES)}, not {gpu_items!r} (Gradescope has no GPU: "
                          "an item cannot stay pending there)")
    for policy in (feedback, *(item_feedback or {}).values()):
        if policy not in FEEDBACK:
            raise BundleError(f"feedback is {' or '.join(FEEDBACK)}, not {policy!r}")
    known = {item.id for assignment in assignments for item in items_of(assignment)}
    unknown = sorted(set(item_feedback or {}) - known)
    if unknown:
        raise BundleError(f"{', '.join(assignments)} has no item {', '.join(unknown)} (--item-feedback ITEM=POLICY "
                          f"takes the items `python -m autograder settings {assignments[0]}` lists)")
    if item_feedback:
        feedback = {"default": feedback, "items": dict(item_feedback)}
    return {"assignments": assignments, "python": python, "gpu_items": gpu_items, "feedback": feedback,
            "settings": settings_values, "version": __version__,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def instructor_settings(course="."):
    """The course's settings (``course_settings.json``, with ``AUTOGRADER_SETTINGS`` over it), as JSON, or ``{}``:
    the bundle grades with them."""
    from autograder.settings import course_values

    return course_values(course)[0]


def build_bundle(course, assignments, out, *, wheels, python, gpu_items="waive", feedback="immediate",
                 settings_values=None, with_wheels=True, item_feedback=None):
    """Write ``out`` (the zip) for ``assignments`` (one name or several) of ``course``; ``wheels``:
    :func:`collect_wheels`'s dict, for ``python``. ``with_wheels=False`` leaves ``wheels/`` out (and nothing else): a
    test builds the full zip once and others without their identical wheels."""
    course = Path(course)
    settings_values = instructor_settings(course) if settings_values is None else settings_values
    spec = config(assignments, gpu_items, feedback, settings_values, item_feedback, python)
    for assignment in spec["assignments"]:
        release = course / "release" / assignment / f"{assignment}.ipynb"
        if not release.exists():
            raise BundleError(f"no release notebook {release}: run `python -m autograder build` first")
        if not items_of(assignment):
            raise BundleError(f"{assignment!r} has no graded items")
    if not any(name.startswith(f"{DISTRIBUTION}-") for name in wheels) or not any(
            name.startswith("torch-") for name in wheels):
        raise BundleError("the wheel set lacks this package or torch: collect_wheels first")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    names = ", ".join(spec["assignments"])
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, text in (("setup.sh", templates.SETUP_SH), ("run_autograder", templates.RUN_AUTOGRADER),
                           ("README.md", templates.README)):
            text = text.replace("@ASSIGNMENTS@", names).replace("@PYTHON@", python).replace("@IMAGE@", image_of(python))
            _add(bundle, name, text, executable=name in EXECUTABLE)
        _add(bundle, "gradescope.json", json.dumps(spec, indent=1))
        _add(bundle, "source_map.json", json.dumps({assignment: source_map(course, assignment)
                                                    for assignment in spec["assignments"]}, indent=1))
        for assignment in spec["assignments"]:
            release = course / "release" / assignment / f"{assignment}.ipynb"
            _add(bundle, f"notebooks/{assignment}.ipynb", release.read_text(encoding="utf-8"))
        _add(bundle, "requirements.txt", "\n".join(requirements(wheels)) + "\n")
        for name, path in sorted(wheels.items()) if with_wheels else ():
            bundle.write(path, f"wheels/{name}", compress_type=zipfile.ZIP_STORED)   # wheels are zips already
    partial.replace(out)
    return out


def image_of(python):
    """Gradescope's base image whose python3 is ``python``, as README.md names it."""
    images = [image for image, version in IMAGES.items() if version == python]
    return images[0].replace("ubuntu-", "Ubuntu ") if images else f"an image whose python3 is {python}"


def _add(bundle, name, text, executable=False):
    info = zipfile.ZipInfo(name, date_time=time.gmtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    bundle.writestr(info, text)


def wheel_names(zip_path):
    """The wheels inside a bundle (a test compares bundles without unpacking them)."""
    with zipfile.ZipFile(zip_path) as bundle:
        return sorted(re.sub(r"^wheels/", "", n) for n in bundle.namelist() if n.startswith("wheels/"))


def _item_policy(text):
    """``"ITEM=POLICY"`` -> ``(item, policy)``."""
    item, sep, policy = str(text).partition("=")
    if not sep or not item:
        raise BundleError(f"--item-feedback takes ITEM=POLICY (e.g. softmax_forward=after_due_date), not {text!r}")
    return item.strip(), policy.strip()


WHEEL_CACHE = Path.home() / ".cache" / "epl-gradescope-wheels"


def main(course, assignments, *, out=None, gpu_items="waive", feedback="immediate", wheels=None, item_feedback=(),
         image=DEFAULT_IMAGE, python=None, torch_index=None):
    """The command: collect the wheels (once; the cache is reused), write the zip, say where and how big."""
    project = Path(course).resolve()
    assignments = list(assignments or GRADABLE)
    try:
        if image not in IMAGES:
            raise BundleError(f"--image takes {' or '.join(IMAGES)}, not {image!r}")
        python = python or IMAGES[image]
        per_item = dict(_item_policy(text) for text in item_feedback)
        config(assignments, gpu_items, feedback, None, per_item)     # a wrong option stops before the long part
        found = collect_wheels(project, Path(wheels) if wheels else WHEEL_CACHE, python, torch_index=torch_index,
                               progress=lambda line: print(line, flush=True))
        default = f"autograder-{assignments[0]}.zip" if len(assignments) == 1 else "autograder.zip"
        path = build_bundle(project, assignments, Path(out or default), wheels=found, python=python,
                            gpu_items=gpu_items, feedback=feedback, item_feedback=per_item)
    except BundleError as error:
        print(f"Cannot build the Gradescope bundle: {error}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({path.stat().st_size / 2**20:.0f} MB, {len(found)} wheels, for Python {python}, "
          f"{len(assignments)} assignment(s)): upload it in Gradescope's Configure Autograder with the base image "
          f"{image_of(python)}; docs/gradescope.md says which limits to raise")
    return 0
