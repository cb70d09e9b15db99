"""Tests marked ``gpu`` need CUDA: without a device they are skipped, with the reason, in one place.

The README's test command runs the suite on two pytest workers (pytest-xdist, ``-n 2``). Every test is in a group
that one worker runs whole, so that a module's (or a package's) expensive fixtures are set up once: its file, or
the browser tests' package (one JupyterLab and one Chromium), or the student kit (tests/kit and tests/hub share one
kit venv, a session fixture). The groups are handed out longest first (``LONGEST``), so that the two workers end
at about the same time. Three workers are no faster than two on the 2-core machine: every group is slower beside
two others."""

import pytest
import torch

from tests.prerequisites import missing
from tests.student_kit import kit_home, kit_venv, kit_wheel  # noqa: F401 - one kit and venv per session

SHARED = {"kit": "student-kit", "hub": "student-kit", "browser": "browser"}   # tests/<package> -> its group

# the groups that take longest, handed out first; the rest follow in order. The order matters more than the numbers
# (each group's summed seconds in a full run on 2026-11-28, two workers on 2 cores).
LONGEST = {
    "student-kit": 470,
    "browser": 270,
    "tests/adversarial/test_attacks.py": 260,
    "tests/gradescope/test_gradescope.py": 240,
    "tests/course/test_parallel.py": 235,
    "tests/course/test_grading.py": 235,
    "tests/course/test_course_state.py": 195,
    "tests/honest/test_corpus.py": 185,
    "tests/trusted/test_trusted_proofs.py": 130,
    "tests/checks/test_proofs.py": 125,
    "tests/checks/test_spec_agreement.py": 90,
    "tests/test_gpu_scripts.py": 80,
}


def group_of(nodeid):
    """The group a test runs in: its file, or its package's group (``SHARED``)."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    if len(parts) > 2 and parts[0] == "tests" and parts[1] in SHARED:
        return SHARED[parts[1]]
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scope scheduling, with our groups as the scopes, handed out in collection order (xdist's own
    ``--dist loadgroup`` marks a group by editing a test's node id, which pytest 9 no longer reads)."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return group_of(nodeid)

    config.option.loadscopereorder = False
    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: -LONGEST.get(group_of(item.nodeid), 0))     # stable: the rest keep their order
    _skip_gpu_tests_without_a_gpu(items)


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
    from autograder.sandbox import bubblewrap as sandbox

    try:
        return sandbox.probe()
    except sandbox.SandboxUnavailable as error:
        missing(f"no sandbox on this machine: {error}", "the sandbox tests")


@pytest.fixture(scope="session")
def playwright():
    """One Playwright per pytest process, for the browser tests and the hub's alike: its sync API runs an event loop
    in this thread, so a second one cannot start while the first lives (the hub's browser lives to the session's
    end, and on a pytest worker the browser tests may come after it)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright is not installed: pip install -e '.[test]' installs it", "the browser and hub tests")
    with sync_playwright() as driver:
        yield driver

