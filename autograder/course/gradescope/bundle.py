"""``python -m autograder gradescope <assignment>``: Gradescope's ``autograder.zip`` for one assignment.

The zip holds ``setup.sh`` and ``run_autograder`` (Gradescope runs them as root: once when the autograder is built, once
per submission), ``README.md`` (what to set in Gradescope, measured), ``gradescope.json`` (the assignment, the GPU
policy, the feedback policy and the instructor's settings), ``source_map.json`` (the instructor's graded cells, as
``jobs.source_map``: no solution), the release notebook students start from, ``requirements.txt`` and ``wheels/``:
this package built as a wheel (the grader, with the oracles: it never reaches the student's code) and every wheel it
and torch 2.13.0 CPU need, pinned, so that setup installs with ``pip install --no-index`` and does not depend on the
day's package versions (otter-grader's ``otter generate`` is the model: requirements and tests in the zip; here the
packages themselves too). ``collect_wheels`` fills a cache directory once; every bundle reuses it.
"""

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from ... import __version__
from ...checks import items_of
from ...engine.jobs import source_map
from . import templates
from .results import FEEDBACK, GPU_POLICIES

TORCH = "torch==2.13.0"            # the CPU build, from pip's find-links (Gradescope has no GPU)
PYTHON_VERSION = "3.11"            # the wheels are chosen for any Python 3.11 (Ubuntu 22.04's deadsnakes, Debian 12)
DISTRIBUTION = "effective_pytorch_lab"
EXECUTABLE = ("setup.sh", "run_autograder")
# Assignments whose graded runs talk TCP on 127.0.0.1 (gloo's ranks and their TCPStore): Gradescope's container gets
# the fallback sandbox, whose seccomp filter refuses every socket but AF_UNIX (seccomp.deny_network), and gloo has no
# transport over anything else. Grade them with `python -m autograder grade` (bubblewrap gives the worker its own lo).
NEEDS_LOOPBACK = ("distributed",)


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


def collect_wheels(project, cache):
    """Every wheel the grader needs, in ``cache`` (made if missing, reused: pip downloads only what is not there);
    returns ``{file name: path}``. No network is needed where pip's index and find-links are local.

    pip resolves the whole set again on every call (about 30 s here, with every file in the cache), so a resolution
    is remembered: ``resolved-<key>.json`` lists the files it left, under a key of what it resolved (this package's
    declared dependencies, torch's pin and the Python version). While those files are all there, the same key is not
    resolved again; a changed dependency is a new key."""
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    ours = build_wheel(project, cache)
    resolved = cache / f"resolved-{_requirements_key(ours)}.json"
    if resolved.exists():
        names = json.loads(resolved.read_text(encoding="utf-8"))
        if all((cache / name).exists() for name in names):
            return {path.name: path for path in sorted(cache.glob("*.whl"))}
    _pip("download", "-d", str(cache), "--only-binary=:all:", "--python-version", PYTHON_VERSION, TORCH, str(ours))
    found = {path.name: path for path in sorted(cache.glob("*.whl"))}
    resolved.write_text(json.dumps(sorted(name for name in found if name != ours.name)), encoding="utf-8")
    return found


def _requirements_key(wheel):
    """A digest of what ``pip download`` resolves for ``wheel``: its ``Requires-Dist`` lines, torch's pin, Python's
    version."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        requires = sorted(line for line in archive.read(metadata).decode().splitlines()
                          if line.startswith("Requires-Dist:"))
    return hashlib.sha256("\n".join([*requires, TORCH, PYTHON_VERSION]).encode()).hexdigest()[:16]


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


def config(assignment, gpu_items, feedback, settings_values, item_feedback=None):
    """The bundle's ``gradescope.json``. ``item_feedback``: ``{item: policy}`` for the items whose feedback differs
    from ``feedback`` (then ``feedback`` is written as ``{"default": ..., "items": ...}``)."""
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
    unknown = sorted(set(item_feedback or {}) - {item.id for item in items_of(assignment)})
    if unknown:
        raise BundleError(f"{assignment} has no item {', '.join(unknown)} (--item-feedback ITEM=POLICY takes the "
                          f"items `python -m autograder settings {assignment}` lists)")
    if item_feedback:
        feedback = {"default": feedback, "items": dict(item_feedback)}
    return {"assignment": assignment, "gpu_items": gpu_items, "feedback": feedback, "settings": settings_values,
            "version": __version__, "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def instructor_settings(course="."):
    """The course's settings (``course_settings.json``, with ``AUTOGRADER_SETTINGS`` over it), as JSON, or ``{}``:
    the bundle grades with them."""
    from ...settings import course_values

    return course_values(course)[0]


def build_bundle(course, assignment, out, *, wheels, gpu_items="waive", feedback="immediate", settings_values=None,
                 with_wheels=True, item_feedback=None):
    """Write ``out`` (the zip) for ``assignment`` of ``course``; ``wheels``: :func:`collect_wheels`'s dict.
    ``with_wheels=False`` leaves ``wheels/`` out (and nothing else): the test builds the full zip once and the other
    assignments' without their 450 MB of identical wheels."""
    course = Path(course)
    release = course / "release" / assignment / f"{assignment}.ipynb"
    if not release.exists():
        raise BundleError(f"no release notebook {release}: run `python -m autograder build` first")
    if not items_of(assignment):
        raise BundleError(f"{assignment!r} has no graded items")
    settings_values = instructor_settings(course) if settings_values is None else settings_values
    if not any(name.startswith(f"{DISTRIBUTION}-") for name in wheels) or not any(
            name.startswith("torch-") for name in wheels):
        raise BundleError("the wheel set lacks this package or torch: collect_wheels first")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, text in (("setup.sh", templates.SETUP_SH), ("run_autograder", templates.RUN_AUTOGRADER),
                           ("README.md", templates.README)):
            _add(bundle, name, text.replace("@ASSIGNMENT@", assignment), executable=name in EXECUTABLE)
        _add(bundle, "gradescope.json", json.dumps(config(assignment, gpu_items, feedback, settings_values, item_feedback),
                                                    indent=1))
        _add(bundle, "source_map.json", json.dumps(source_map(course, assignment), indent=1))
        _add(bundle, f"{assignment}.ipynb", release.read_text(encoding="utf-8"))
        _add(bundle, "requirements.txt", "\n".join(requirements(wheels)) + "\n")
        for name, path in sorted(wheels.items()) if with_wheels else ():
            bundle.write(path, f"wheels/{name}", compress_type=zipfile.ZIP_STORED)   # wheels are zips already
    partial.replace(out)
    return out


def _add(bundle, name, text, executable=False):
    info = zipfile.ZipInfo(name, date_time=time.gmtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    bundle.writestr(info, text)


def wheel_names(zip_path):
    """The wheels inside a bundle (the test compares bundles without unpacking 450 MB each)."""
    with zipfile.ZipFile(zip_path) as bundle:
        return sorted(re.sub(r"^wheels/", "", n) for n in bundle.namelist() if n.startswith("wheels/"))


def _item_policy(text):
    """``"ITEM=POLICY"`` -> ``(item, policy)``."""
    item, sep, policy = str(text).partition("=")
    if not sep or not item:
        raise BundleError(f"--item-feedback takes ITEM=POLICY (e.g. softmax_forward=after_due_date), not {text!r}")
    return item.strip(), policy.strip()


WHEEL_CACHE = Path.home() / ".cache" / "epl-gradescope-wheels"


def main(course, assignment, *, out=None, gpu_items="waive", feedback="immediate", wheels=None, item_feedback=()):
    """The command: collect the wheels (once; the cache is reused), write the zip, say where and how big."""
    project = Path(course).resolve()
    try:
        per_item = dict(_item_policy(text) for text in item_feedback)
        config(assignment, gpu_items, feedback, None, per_item)     # a wrong option stops before the long part
        found = collect_wheels(project, Path(wheels) if wheels else WHEEL_CACHE)
        path = build_bundle(project, assignment, Path(out or f"autograder-{assignment}.zip"), wheels=found,
                            gpu_items=gpu_items, feedback=feedback, item_feedback=per_item)
    except BundleError as error:
        print(f"Cannot build the Gradescope bundle: {error}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({path.stat().st_size / 2**20:.0f} MB, {len(found)} wheels): upload it in Gradescope's "
          "Configure Autograder; docs/gradescope.md says which limits to raise")
    return 0
