"""The README's instructor flow, run verbatim on a fresh copy of the repository with real nbgrader.

The block under the ``instructor-flow`` marker in README.md is extracted and run by bash, as an
instructor would paste it, with the virtualenv's scripts first on PATH (``. .venv/bin/activate``).
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from autograder.checks import TOPICS, max_points
from autograder.course.grading import load_report
from tests.proving import ROOT

pytestmark = pytest.mark.e2e
FULL = max_points("stability")


def readme_block(marker):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- {marker}:.*?-->\s*```bash\n(.*?)```", text, flags=re.S)
    assert found, f"README.md has no ```bash block after <!-- {marker}: ... -->"
    return found.group(1)


def fresh_clone(dest):
    """The files a clone of this repository holds (tracked, plus untracked files that git does not ignore)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    return dest


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    course = fresh_clone(tmp_path_factory.mktemp("clone"))
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("AUTOGRADER_GRADING_SEED", None)
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_block("instructor-flow")], cwd=course, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return course, run.stdout


def test_the_flow_grades_both_students(flow):
    course, out = flow
    assert f"checked {len(TOPICS)} assignments" in out and "built " not in out
    report = load_report(course)
    assert report["bob/stability"]["grades"]["softmax_forward"] == [3.0, 3.0]
    assert sum(s for s, _ in report["bob/stability"]["grades"].values()) == FULL
    assert sum(s for s, _ in report["alice/stability"]["grades"].values()) == 0
    assert report["bob/stability"]["seed"] == report["alice/stability"]["seed"] is not None
    assert "bob" in out and f"{FULL:g}/{FULL:g}" in out


def test_the_flow_exports_csv_and_gradescope(flow):
    course, _ = flow
    rows = {r["student"]: r for r in csv.DictReader(open(course / "grades.csv", encoding="utf-8"))}
    assert rows["bob"]["score"] == f"{FULL:g}" and rows["alice"]["score"] == "0" and rows["bob"]["softmax_forward"] == "3"
    alice = json.loads((course / "gradescope" / "alice" / "stability" / "results.json").read_text())
    assert alice["score"] == 0 and all("not implemented yet" in t["output"] for t in alice["tests"])


def test_feedback_shows_the_message_without_grader_frames_or_hidden_code(flow):
    course, _ = flow
    html = (course / "feedback" / "alice" / "stability" / "stability.html").read_text(encoding="utf-8")
    assert "not implemented yet" in html and "check_softmax_forward" in html
    for leaked in ("autograder/seam/student.py", "site-packages", "hidden_seed", "HIDDEN TESTS"):
        assert leaked not in html, leaked


def test_no_relative_root_warning(flow):
    course, _ = flow
    out = subprocess.run([sys.executable, "-m", "nbgrader", "db", "assignment", "list"], cwd=course, capture_output=True, text=True,
                         env=dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]))
    assert "is not absolute" not in out.stdout + out.stderr
