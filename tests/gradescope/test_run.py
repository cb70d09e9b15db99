"""``run_autograder``'s choice of the notebook, without a container: the file named for the assignment, else the only
notebook; never a symbolic link (root reads it, and a link could point at the grader's files)."""

import os

import pytest

from autograder.gradescope.run import Layout, find_notebook


@pytest.mark.quick
def test_the_notebook_named_for_the_assignment_else_the_only_one(tmp_path):
    layout = Layout(tmp_path)
    (layout.submission / "sub").mkdir(parents=True)
    (layout.submission / "notes.ipynb").write_text("{}")
    assert find_notebook(layout, "stability") == (layout.submission / "notes.ipynb", None)
    (layout.submission / "sub" / "stability.ipynb").write_text("{}")
    assert find_notebook(layout, "stability") == (layout.submission / "sub" / "stability.ipynb", None)


@pytest.mark.quick
def test_a_link_is_never_graded(tmp_path):
    layout = Layout(tmp_path)
    layout.submission.mkdir()
    secret = tmp_path / "source_map.json"
    secret.write_text("{}")
    os.symlink(secret, layout.submission / "stability.ipynb")
    path, why = find_notebook(layout, "stability")
    assert path is None and "No notebook named stability.ipynb" in why


def amp_data(speed_status="failed"):
    """``grade_job_here``'s data for amp: every item passed but the GPU item (failed without a GPU, as graded with
    ``gpu_items="fail"``, which run_autograder always uses)."""
    from autograder.checks import items_of

    return {"items": [{"item": i.id, "score": 0.0 if i.needs else i.points, "max_score": i.points,
                       "status": speed_status if i.needs else "passed",
                       "message": "(The instructor requires a GPU for this check.)" if i.needs else ""}
                      for i in items_of("amp")], "problems": [], "seconds": 3.0}


@pytest.mark.quick
def test_gpu_items_waived_or_failed_as_built():
    from autograder.checks import items_of
    from autograder.gradescope.results import WAIVED, results_json

    gpu = [i for i in items_of("amp") if i.needs]
    full = sum(i.points for i in items_of("amp"))
    assert gpu, "amp has a GPU item"
    waived = results_json(amp_data(), "amp", feedback="immediate", gpu_policy="waive")
    failed = results_json(amp_data(), "amp", feedback="immediate", gpu_policy="fail")
    by_name = {t["name"]: t for t in waived["tests"]}
    assert all(by_name[i.id]["max_score"] == 0 and by_name[i.id]["output"] == WAIVED for i in gpu)
    assert waived["score"] == full - sum(i.points for i in gpu) == sum(t["max_score"] for t in waived["tests"])
    assert failed["score"] == waived["score"] and sum(t["max_score"] for t in failed["tests"]) == full
    assert all(t["visibility"] == "visible" for t in failed["tests"])


@pytest.mark.quick
def test_a_grader_error_is_said_as_the_graders():
    from autograder.gradescope.results import results_json

    data = amp_data()
    data["items"][0].update(status="grader error", score=0.0, message="not graded yet: the grader itself failed")
    result = results_json(data, "amp", feedback="after_due_date", gpu_policy="fail")
    assert "Grader error on" in result["output"] and "not in your work" in result["output"]
    assert result["tests"][0]["tags"] == ["grader error: to be regraded"]
    assert result["extra_data"]["grader_errors"] == [data["items"][0]["item"]]


@pytest.mark.quick
def test_feedback_per_item_as_the_instructor_chose():
    from autograder.gradescope.bundle import BundleError, config
    from autograder.gradescope.results import results_json

    chosen = config("amp", "fail", "immediate", {}, {"speed": "after_due_date"})
    assert chosen["feedback"] == {"default": "immediate", "items": {"speed": "after_due_date"}}
    result = results_json(amp_data(), "amp", feedback=chosen["feedback"], gpu_policy="fail")
    shown = {t["name"]: t["visibility"] for t in result["tests"]}
    assert shown.pop("speed") == "after_due_date" and set(shown.values()) == {"visible"}
    assert result["visibility"] == "visible"
    assert config("amp", "fail", "after_due_date", {})["feedback"] == "after_due_date"    # one policy, as before
    with pytest.raises(BundleError, match="has no item nonsense"):
        config("amp", "fail", "immediate", {}, {"nonsense": "immediate"})
    with pytest.raises(BundleError, match="not 'sometimes'"):
        config("amp", "fail", "immediate", {}, {"speed": "sometimes"})


@pytest.mark.quick
def test_a_remembered_resolution_is_keyed_by_what_pip_resolves():
    """``collect_wheels`` skips pip's resolution when one for the same set and Python is in the cache: the key
    changes with the Python and torch's index, not with the package's own code (which changes at every commit)."""
    from autograder.gradescope.bundle import set_key
    assert set_key("3.10") == set_key("3.10") != set_key("3.12")
    assert set_key("3.10") != set_key("3.10", "https://download.pytorch.org/whl/cpu")


@pytest.mark.quick
def test_a_bundle_of_several_assignments_grades_the_one_named(tmp_path):
    """The Gradescope assignment's title names it; else the uploaded notebook's name; else nothing is graded, saying
    which notebooks to upload. A bundle of one assignment grades that one."""
    import json

    from autograder.gradescope.run import choose_assignment

    layout = Layout(tmp_path)
    layout.submission.mkdir(parents=True)
    course = ["basics", "amp", "memory"]
    assert choose_assignment(layout, ["amp"]) == ("amp", None)
    assignment, why = choose_assignment(layout, course)
    assert assignment is None and "upload exactly one of basics.ipynb, amp.ipynb, memory.ipynb" in why
    (layout.submission / "memory.ipynb").write_text("{}")
    assert choose_assignment(layout, course) == ("memory", None)
    layout.metadata.write_text(json.dumps({"assignment": {"title": "Lab 8: AMP (mixed precision)"}}))
    assert choose_assignment(layout, course) == ("amp", None)        # the title wins over the file's name
    layout.metadata.write_text(json.dumps({"assignment": {"title": "Lab 2: example"}}))
    assert choose_assignment(layout, course) == ("memory", None)     # "example" names none of them


@pytest.mark.quick
def test_setup_stops_in_one_line_on_an_image_without_the_bundles_python(tmp_path):
    """A bundle for a Python the image lacks: setup.sh installs nothing (no PPA) and names the image to choose."""
    import shutil
    import subprocess

    from autograder.gradescope import templates

    def runs(version):
        found = shutil.which(f"python{version}")
        return found is not None and subprocess.run([found, "-c", "pass"], capture_output=True).returncode == 0

    absent = next((v for v in ("3.10", "3.12", "3.13", "3.9") if not runs(v)), None)
    if absent is None:
        pytest.skip("every Python this test could ask for is installed here")
    script = tmp_path / "setup.sh"
    script.write_text(templates.SETUP_SH.replace("@PYTHON@", absent).replace("@IMAGE@", "Ubuntu 22.04"))
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and not done.stderr and len(done.stdout.splitlines()) == 1, done
    assert done.stdout.startswith(f"setup.sh: this bundle's wheels are for Python {absent} and this image has Python")
    assert "choose the base image Ubuntu 22.04 in Gradescope" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["setup.sh"]


@pytest.mark.quick
def test_run_autograder_imports_nothing_the_lean_bundle_leaves_out():
    """Gradescope's bundle carries what grading needs and no more (no nbformat, nbgrader, JupyterLab, matplotlib):
    ``run_autograder``'s whole import chain must work without them (a notice writer that imported nbformat failed
    every run once)."""
    import subprocess
    import sys

    probe = ("import sys; import autograder.gradescope.run; "
             "print(sorted({'nbformat', 'nbgrader', 'jupyterlab', 'matplotlib', 'jupyterhub'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
