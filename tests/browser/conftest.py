"""Fixtures for the browser tests: one JupyterLab server and one Chromium for all of them.

They live as long as this package's tests run (package scope), so that the rest of a full run
does not share the machine with an idle JupyterLab and browser.

Chromium is Debian's ``chromium`` package (``scripts/install-system-packages.sh`` installs it),
driven by Playwright from PyPI through ``launch(executable_path=...)``: Playwright's own browser
download cannot reach its host from machines that see only package registries. Without
Chromium these tests skip with the reason, except in CI (``CI`` set), where they fail.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.commands.build import scratch_course
from tests.browser import lab as jl
from tests.browser.server import JupyterLab
from tests.prerequisites import missing
from tests.proving import ROOT

# A fresh profile every launch (Playwright's default), and no background traffic: on a network that
# reaches package registries only, Chromium's own connections are refused and slow every page.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
GRADED_COURSE_TESTS = ("test_instructor.py", "test_after_grading.py")   # they need the gradebook job's course


def pytest_collection_modifyitems(items):
    """The instructor's tests (and the after-grading pages') after the student's: the gradebook they need is prepared
    meanwhile."""
    here = [i for i, item in enumerate(items) if Path(item.path).parent == Path(__file__).parent]
    ordered = sorted((items[i] for i in here), key=lambda item: Path(item.path).name in GRADED_COURSE_TESTS)
    for i, item in zip(here, ordered):
        items[i] = item


@pytest.fixture(scope="package")
def chromium_path():
    path = os.environ.get("EPL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        missing("Chromium is not installed: run scripts/install-system-packages.sh (Debian's `chromium`) "
                "or set EPL_CHROMIUM to a Chromium binary", "the browser tests")
    return path


@pytest.fixture(scope="package")
def browser(chromium_path, playwright):
    chromium = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
    yield chromium
    chromium.close()


@pytest.fixture(scope="package")
def course(tmp_path_factory):
    """A temporary copy of the course (config, source/, release/) that JupyterLab serves."""
    work = scratch_course(ROOT, tmp_path_factory.mktemp("course"), with_release=True)
    # Keep nbgrader's exchange inside the temporary course instead of /usr/local/share/nbgrader/exchange.
    with open(work / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"\nc.Exchange.root = {str(work / 'exchange')!r}\n")
    (work / "exchange").mkdir()
    return work


class Background:
    """A command running beside the tests; ``wait()`` gives its exit status and output."""

    def __init__(self, command, log):
        self.log = Path(log)
        with open(self.log, "w", encoding="utf-8") as out:
            self.proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def wait(self, timeout=600):
        status = self.proc.wait(timeout=timeout)
        return status, self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@pytest.fixture(scope="package", autouse=True)
def gradebook_job(request, chromium_path, course, tmp_path_factory):
    """When the instructor's tests are selected, the first browser test starts preparing their gradebook
    (``tests/browser/gradebook.py``: the real nbgrader commands) in a process of its own, which works
    while the student tests run: it needs the CPU when they mostly wait for the page.
    """
    if not any(Path(item.path).name in GRADED_COURSE_TESTS for item in request.session.items):
        yield None
        return
    job = Background([sys.executable, "-m", "tests.browser.gradebook", str(course)],
                     tmp_path_factory.mktemp("gradebook") / "prepare.log")
    yield job
    job.stop()


@pytest.fixture(scope="package")
def lab(browser, course, tmp_path_factory):
    """JupyterLab on 127.0.0.1 (free port, own token) serving the temporary course; stopped at the end."""
    server = JupyterLab(course, tmp_path_factory.mktemp("jupyterlab")).start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def browser_context(browser):
    context = browser.new_context(viewport=VIEWPORT)
    yield context
    context.close()


@pytest.fixture
def page(browser_context, lab, tmp_path):
    """One page for all the browser tests: JupyterLab loads once, and each test opens its notebook in it.

    After each test: a picture of the page as it was left, every tab closed (unsaved changes
    discarded), every kernel shut down; a page that cannot be tidied is closed and replaced.
    """
    page = browser_context.pages[0] if browser_context.pages else browser_context.new_page()
    page.set_default_timeout(30_000)
    yield page
    page.screenshot(path=str(tmp_path / "last-page.png"))
    try:
        jl.close_all(page)
    except Exception:  # noqa: BLE001 - a dialog or menu left open: start the next test on a fresh page
        page.close()
    lab.shutdown_sessions()


@pytest.fixture
def screenshots(tmp_path):
    """Where to save pictures: always the test's tmp dir, and ``$EPL_SCREENSHOTS`` (e.g. docs/screenshots)."""
    publish = os.environ.get("EPL_SCREENSHOTS")
    return tmp_path, (Path(publish).resolve() if publish else None)
