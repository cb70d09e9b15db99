"""Tests marked ``gpu`` need CUDA: without a device they are skipped, with the reason, in one place."""

import pytest
import torch

from tests.prerequisites import missing
from tests.student_kit import kit_home, kit_venv, kit_wheel  # noqa: F401 - one kit and venv per session


KIT_FIXTURES = {"kit_home", "kit_wheel", "kit_venv"}   # one student kit and venv per session: one worker builds them


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """With ``-n 2 --dist loadgroup`` (the README's test command), tests that share an expensive fixture run on one
    worker, which sets it up once: a module's (or a package's) shared fixtures keep its tests together, and the
    student kit's tests share the kit. Everything else is handed out test by test."""
    for item in items:
        group = _shared_fixture_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    _skip_gpu_tests_without_a_gpu(items)


def _shared_fixture_group(item):
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    names = set(info.names_closure)
    if names & KIT_FIXTURES or "hub" in item.path.parts:   # the hub's students use the kit's venv
        return "student-kit"
    for name in sorted(names):
        definitions = info.name2fixturedefs.get(name) or ()
        scope = definitions[-1].scope if definitions else "function"
        if scope == "package":
            return f"package:{item.path.parent}"
        if scope == "module":
            return f"module:{item.path}"
    return None


def _skip_gpu_tests_without_a_gpu(items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (marked gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def ready():
    """The sandbox this machine gives (``sandbox.probe()``'s description); without one the tests that need it skip
    with the reason, and fail in CI."""
    from autograder.trusted import sandbox

    try:
        return sandbox.probe()
    except sandbox.SandboxUnavailable as error:
        missing(f"no sandbox on this machine: {error}", "the sandbox tests")
