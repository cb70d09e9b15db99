"""The course's settings file (``course_settings.json``, autograder/settings.py): read from the course directory,
``AUTOGRADER_SETTINGS`` over it, the blocks of ``override`` kept across a change of course; and the repository's
``.gitignore`` covering every folder that holds students' work or records."""

import json
import subprocess

import pytest

from autograder import settings as settings_module
from autograder.commands.analysis import OUT as AFTER_GRADING
from autograder.commands.grade import LOCK
from autograder.engine.records import KEPT, RECORDS
from autograder.settings import COURSE_SETTINGS, SettingsError, course_values, override, settings, use_course
from tests.proving import ROOT

pytestmark = pytest.mark.quick


def _course(tmp_path, name, values):
    course = tmp_path / name
    course.mkdir()
    (course / COURSE_SETTINGS).write_text(json.dumps(values), encoding="utf-8")
    return course


@pytest.fixture
def restore_course():
    yield
    use_course(ROOT)


def test_the_course_file_is_read_and_the_override_applies_over_it(tmp_path, monkeypatch, restore_course):
    course = _course(tmp_path, "a", {"call_timeout_s": 7, "deadlines": {"due": {"basics": "2026-12-01T23:59:00Z"},
                                                                         "extensions": {"ada": {"basics": 24}}}})
    monkeypatch.delenv("AUTOGRADER_SETTINGS", raising=False)
    use_course(course)
    assert settings.call_timeout_s == 7 and settings.deadlines.extensions == {"ada": {"basics": 24}}
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"call_timeout_s": 9, "deadlines": {"extensions": {"bob": {"basics": 2}}}}))
    monkeypatch.setenv("AUTOGRADER_SETTINGS", str(extra))
    use_course(course)
    assert settings.call_timeout_s == 9
    assert settings.deadlines.due == {"basics": "2026-12-01T23:59:00Z"}           # the course's due date stays
    assert settings.deadlines.extensions == {"ada": {"basics": 24}, "bob": {"basics": 2}}
    assert course_values(course)[1] == [str(course / COURSE_SETTINGS), str(extra)]


def test_a_course_without_the_file_has_the_defaults(tmp_path, monkeypatch, restore_course):
    monkeypatch.delenv("AUTOGRADER_SETTINGS", raising=False)
    use_course(_course(tmp_path, "a", {"call_timeout_s": 7}))
    empty = tmp_path / "empty"
    empty.mkdir()
    use_course(empty)
    assert settings.call_timeout_s == settings_module.Settings().call_timeout_s


def test_an_override_block_outlives_a_change_of_course_and_is_undone_after(tmp_path, monkeypatch, restore_course):
    monkeypatch.delenv("AUTOGRADER_SETTINGS", raising=False)
    first, second = _course(tmp_path, "a", {"call_timeout_s": 7}), _course(tmp_path, "b", {"call_timeout_s": 8,
                                                                                             "max_output_chars": 5})
    use_course(first)
    with override({"max_output_chars": 99}):
        use_course(second)          # what nbgrader_config.py does when a test grades another course in the block
        assert (settings.call_timeout_s, settings.max_output_chars) == (8, 99)
        use_course(second)          # the same files: nothing changes, values set in Python stay
        settings.max_examples_in_message = 3
        use_course(second)
        assert settings.max_examples_in_message == 3
    assert (settings.call_timeout_s, settings.max_output_chars) == (8, 5)


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "settings takes a JSON object, not list"),
    ('{"speed": {"repeatz": 3}}', "unknown setting settings.speed.repeatz"),
    ('{"deadlines": {"penalty": 10}}', "settings.deadlines.penalty takes a JSON object"),
    ('{"speed": {"thresholds": {"row_sum": 10}}}', "settings.speed.thresholds.row_sum takes a JSON object"),
])
def test_a_file_that_does_not_fit_the_settings_is_one_line_with_the_file_and_the_key(tmp_path, monkeypatch,
                                                                                      restore_course, content,
                                                                                      message):
    monkeypatch.delenv("AUTOGRADER_SETTINGS", raising=False)
    course = tmp_path / "c"
    course.mkdir()
    (course / COURSE_SETTINGS).write_text(content, encoding="utf-8")
    before = settings.call_timeout_s
    with pytest.raises(SettingsError) as excinfo:
        use_course(course)
    assert str(excinfo.value) == f"{course / COURSE_SETTINGS}: {message}"
    assert settings.call_timeout_s == before            # nothing half applied


def test_the_repository_holds_the_course_settings_file_and_it_loads():
    values, files = course_values(ROOT)
    assert files[:1] == [str(ROOT / COURSE_SETTINGS)] and "deadlines" in values


@pytest.mark.parametrize("path", [
    "submitted/ada/basics/basics.ipynb", "autograded/ada/basics/basics.ipynb", "feedback/ada/basics/basics.html",
    "downloaded/basics/archive/submissions.zip", f"{RECORDS}/ada/basics.json", f"{RECORDS}/.lock",
    f"{KEPT}/ada/basics.json", f"{AFTER_GRADING}/analysis.html", "gradebook.db", LOCK,
])
def test_gitignore_covers_every_folder_of_students_work_and_records(path):
    done = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT)
    assert done.returncode == 0, f"{path} is not ignored by .gitignore"
