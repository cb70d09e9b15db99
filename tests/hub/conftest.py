"""Fixtures for a class on a real JupyterHub: Unix accounts, nbgrader's exchange, the hub, Chromium.

Everything lives in one session: the accounts (an instructor and two students, random suffix), a
directory under /tmp (mode 0755) with the exchange (mode 1777, as nbgrader documents), each side's
Jupyter configuration and the hub's state; the hub runs as root on 127.0.0.1. At the end the hub and
every server it spawned are stopped by process id, the accounts are removed with their homes, the
directory is deleted, even when a test failed.

They need root (to create accounts and spawn servers as them), ``useradd``, JupyterHub,
``configurable-http-proxy`` and Chromium; without one of them the tests skip with the reason, and
in CI (``CI`` set) they fail instead, as the browser tests do. scripts/install-system-packages.sh
installs Node.js, npm and configurable-http-proxy.
"""

import contextlib
import importlib.metadata
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.commands.build import scratch_course
from tests.browser.server import LAB_SETTINGS
from tests.hub import accounts
from tests.hub.hub import CHP, Environment, JupyterHub
from tests.prerequisites import missing
# The student kit and its venv, shared with tests/kit (session fixtures).
from tests.proving import ROOT

COURSE_ID = "effective-pytorch-lab"
# Chromium as the browser tests start it (tests/browser/conftest.py).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
# What a student's JupyterLab leaves out: the instructor's tools (nbgrader 0.9 for JupyterLab: the formgrader
# and the create-assignment toolbar, labextension and server extension alike).
STUDENT_DISABLED_LAB = {"@jupyter/nbgrader:formgrader": True, "@jupyter/nbgrader:create-assignment": True}
# JupyterHub's single-user server forbids every frame (CSP frame-ancestors 'none'); the formgrader is a frame
# of the instructor's own JupyterLab page, so the instructor's server allows frames from its own origin.
INSTRUCTOR_SERVER_CONFIG = {"ServerApp": {"tornado_settings": {"headers": {
    "Content-Security-Policy": "frame-ancestors 'self'"}}}}
STUDENT_SERVER_CONFIG = {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False}}}


@pytest.fixture(scope="session")
def hub_prerequisites():
    reason = accounts.missing_tools()
    if reason:
        missing(reason, "the hub tests")
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        missing("JupyterHub is not installed: pip install -e '.[test]' installs it", "the hub tests")
    if not shutil.which(CHP):
        missing(f"{CHP} is not installed: run scripts/install-system-packages.sh (npm install -g {CHP})", "the hub tests")
    chromium = os.environ.get("EPL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        missing("Chromium is not installed: run scripts/install-system-packages.sh (Debian's `chromium`)", "the hub tests")
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError:
        missing("Playwright is not installed: pip install -e '.[test]' installs it", "the hub tests")
    return chromium


@dataclass
class Klass:
    """One course on the hub: who is in it and where its things are."""

    base: Path
    exchange: Path
    instructor: accounts.Account
    students: list
    course: Path                  # the instructor's course directory
    instructor_venv: Path
    student_venv: Path

    def instructor_env(self, **extra):
        return accounts.environment(self.instructor, path=f"{self.instructor_venv}/bin:{accounts.BASE_PATH}",
                                    JUPYTER_CONFIG_PATH=str(self.base / "config-instructor"), **extra)

    def student_env(self, student, **extra):
        return accounts.environment(student, path=f"{self.student_venv}/bin:{accounts.BASE_PATH}",
                                    JUPYTER_CONFIG_PATH=str(self.base / "config-students"), **extra)


def _write(path, text, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)


def _lab_settings(account):
    """No "get notified about official Jupyter news?" popup over the page (the browser tests' settings)."""
    settings = account.home / ".jupyter" / "lab" / "user-settings"
    for name, values in LAB_SETTINGS.items():
        _write(settings / name, json.dumps(values))
    accounts.give(account, account.home / ".jupyter")


def _configs(base, exchange, course):
    """Each side's Jupyter configuration (on JUPYTER_CONFIG_PATH): the exchange and the course for both;
    the students' JupyterLab without the instructor's tools."""
    students, instructor = base / "config-students", base / "config-instructor"
    _write(students / "nbgrader_config.py",
           f"c = get_config()  # noqa: F821\nc.Exchange.root = {str(exchange)!r}\n"
           f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
           # Submissions readable by their student and the instructor only (autograder/nbgrader_plugins/exchange_submit.py, in the kit).
           'c.ExchangeFactory.submit = "autograder.nbgrader_plugins.exchange_submit.PrivateSubmit"\n')
    _write(students / "jupyter_server_config.json", json.dumps(STUDENT_SERVER_CONFIG))
    _write(students / "labconfig" / "page_config.json", json.dumps({"disabledExtensions": STUDENT_DISABLED_LAB}))
    _write(instructor / "nbgrader_config.py",
           f"c = get_config()  # noqa: F821\nc.Exchange.root = {str(exchange)!r}\n"
           f"c.CourseDirectory.root = {str(course)!r}\n")
    _write(instructor / "jupyter_server_config.json", json.dumps(INSTRUCTOR_SERVER_CONFIG))


@pytest.fixture(scope="session")
def student_venv(hub_prerequisites, kit_venv):
    """The students' environment: the student kit's fresh venv (tests/student_kit.py), where JupyterHub's
    single-user server is installed too (the hub's own version), as on a course's hub."""
    if not (kit_venv / "bin" / "jupyterhub-singleuser").exists():
        done = subprocess.run([str(kit_venv / "bin" / "pip"), "install", "-q",
                               f"jupyterhub=={importlib.metadata.version('jupyterhub')}"],
                              capture_output=True, text=True, timeout=600, preexec_fn=lambda: os.umask(0o022))
        assert done.returncode == 0, f"pip install jupyterhub into the kit's venv failed:\n{done.stderr[-3000:]}"
    return kit_venv


@pytest.fixture(scope="session")
def klass(hub_prerequisites, student_venv):
    suffix = secrets.token_hex(3)
    base = Path(tempfile.mkdtemp(prefix="epl-hub-", dir="/tmp"))
    os.chmod(base, 0o755)
    made = []
    instructor_venv = ROOT / ".venv"      # the course's own environment: the whole instructor package
    try:
        with accounts.traversable(instructor_venv / "bin" / "python", Path(student_venv) / "bin" / "python"):
            instructor = accounts.create(f"epl-instr-{suffix}")
            made.append(instructor)
            students = []
            for name in ("alice", "bob"):
                students.append(accounts.create(f"epl-{name}-{suffix}"))
                made.append(students[-1])
            exchange = base / "exchange"
            exchange.mkdir()
            os.chmod(exchange, 0o1777)
            course = scratch_course(ROOT, instructor.home / "course")
            accounts.give(instructor, course)
            _configs(base, exchange, course)
            for account in made:
                _lab_settings(account)
            yield Klass(base, exchange, instructor, students, course, instructor_venv, Path(student_venv))
    finally:
        for account in made:
            with contextlib.suppress(Exception):
                accounts.remove(account)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def hub(klass):
    environments = {klass.instructor.name: Environment(klass.instructor_venv, klass.base / "config-instructor")}
    for student in klass.students:
        environments[student.name] = Environment(klass.student_venv, klass.base / "config-students")
    server = JupyterHub(klass.base / "hub-state", environments)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(hub_prerequisites, playwright):
    chromium = playwright.chromium.launch(executable_path=hub_prerequisites, args=CHROMIUM_ARGS, headless=True)
    yield chromium
    chromium.close()


@pytest.fixture(scope="session")
def round_trip(klass, hub, browser):
    """The class's whole round trip (tests/hub/round_trip.py), once for every test that judges it."""
    from tests.hub import round_trip as trip
    return trip.run(klass, hub, browser)
