"""After grading: ``python -m autograder similarity`` and ``analysis`` on the browser tests' course, whose records the
real grader wrote (``tests/browser/gradebook.py``: nbgrader autograde of two students), and both pages in Chromium,
with a picture of each (``EPL_SCREENSHOTS=docs/screenshots`` publishes them)."""

import subprocess
import sys

import pytest

from tests.browser import lab as jl
from tests.proving import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
TOPIC = "stability"


@pytest.fixture(scope="module")
def pages(course, gradebook_job):
    """Both commands run on the graded course, as an instructor runs them."""
    status, log = gradebook_job.wait()
    assert status == 0, f"preparing the gradebook failed:\n{log[-6000:]}"
    out = {}
    for command in ("similarity", "analysis"):
        done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), command, TOPIC],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        out[command] = done.stdout
    return course / "after-grading", out


@pytest.fixture
def tab(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    yield page
    page.close()


def test_similarity_page_in_chromium(tab, pages, screenshots):
    folder, out = pages
    assert f"{TOPIC}: " in out["similarity"] and "similarity-stability.html" in out["similarity"]
    tab.goto((folder / f"similarity-{TOPIC}.html").as_uri())
    tab.wait_for_selector("h1")
    # the reference student's code is the reference solution: flagged, its lines marked on both sides
    assert tab.locator("table.list a", has_text="reference ~ reference solution").count() == 1
    assert tab.locator("#pair-0 + table.code span.same").count() >= 6
    keep, publish = screenshots
    jl.screenshot(tab, "after-grading-similarity.png", keep, publish)


def test_analysis_page_in_chromium(tab, pages, screenshots):
    folder, out = pages
    assert "wrote" in out["analysis"] and "analysis.html" in out["analysis"]
    tab.goto((folder / f"analysis-{TOPIC}.html").as_uri())
    tab.wait_for_selector("img")
    images = tab.locator("img")
    assert images.count() == 2
    for n in range(2):    # the pictures loaded (a broken image has no natural width)
        assert images.nth(n).evaluate("img => img.complete && img.naturalWidth > 0")
    # the buggy student's mistake (the global max) fails items with its check's message, counted once each
    assert tab.locator("td.msg").filter(has_text="1x").count() >= 1
    tab.goto((folder / "analysis.html").as_uri())
    assert tab.locator("a", has_text=TOPIC).count() == 1


def test_analysis_page_of_a_class_with_a_broken_item(tab, tmp_path, screenshots):
    """The picture in docs/analysis.md: the synthetic class of 40 (graded in-process, tests/course/test_analysis.py)
    with its planted broken item at the top of the suspicious list."""
    from autograder.commands.analysis import write_pages
    from autograder.engine.records import RecordStore, new_record
    from tests.course.test_analysis import TOPIC as CLASS_TOPIC
    from tests.course.test_analysis import synthetic_class

    store = RecordStore(tmp_path)
    for student, items in synthetic_class().items():
        store.append(new_record(student, CLASS_TOPIC, items=items, seed=7, graded_by="in-process grade_items"))
    write_pages(tmp_path, [CLASS_TOPIC], progress=None)
    tab.goto((tmp_path / "after-grading" / f"analysis-{CLASS_TOPIC}.html").as_uri())
    first = tab.locator("table").first.locator("tr").nth(1)
    assert first.locator("td").first.inner_text() == "pairwise_self_distance"
    assert tab.locator("img").first.evaluate("img => img.complete && img.naturalWidth > 0")
    keep, publish = screenshots
    jl.screenshot(tab, "after-grading-analysis.png", keep, publish)
