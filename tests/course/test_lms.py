"""The Canvas round trip (autograder/commands/collect_zip.py, docs/lms.md): a synthetic "Download Submissions" zip of Canvas's
shape through ``python -m autograder collect-zip`` (the real ``nbgrader zip_collect``), ``grade`` and
``export --canvas``, on a temporary course; and the pieces on their own (``quick``)."""

import csv
import datetime
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

from autograder.commands.build import generate_assignments, scratch_course
from autograder.commands.demo import _fill
from autograder.course.canvas import LMSError, canvas_column, read_roster, read_times
from autograder.course.grading import load_report, points
from autograder.engine import notebooks
from autograder.nbgrader_plugins.zip_collect import CANVAS_NAME
from tests.proving import ROOT

TOPIC = "operators"
DUE = "2026-11-24T12:00:00+00:00"
ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section,Operators (777),Basics (778)\n"
          "    Points Possible,,,,,9,13\n"
          "\"Lovelace, Ada\",1001,S-1,ada,Mon,,\n"
          "\"Hopper, Grace\",1002,S-2,grace,Mon,,\n"
          "\"Turing, Alan\",1003,S-3,alan,Tue,,\n"
          "\"Noether, Emmy\",1004,S-4,emmy,Tue,,\n")
# (name in Canvas's zip, the zip entry's date): Ada on time; Grace late (Canvas's _LATE mark, and her second upload,
# which Canvas renamed operators-1.ipynb); Alan on time, under his own file name; a PDF; someone not on the roster
ENTRIES = [
    ("lovelaceada_1001_50001_operators.ipynb", (2026, 11, 24, 9, 30, 0)),
    ("hoppergrace_LATE_1002_50002_operators-1.ipynb", (2026, 11, 24, 15, 12, 0)),
    ("turingalan_1003_50003_my operators work.ipynb", (2026, 11, 24, 11, 59, 0)),
    ("turingalan_1003_50004_notes.pdf", (2026, 11, 24, 11, 59, 0)),
    ("babbagecharles_1099_50005_operators.ipynb", (2026, 11, 24, 10, 0, 0)),
]


# ------------------------------------------------------------------ the pieces

@pytest.mark.quick
@pytest.mark.parametrize("name, fields", [
    ("doejane_1001_52_stability.ipynb", ("doejane", None, "1001", "52", "stability.ipynb")),
    ("doejane_LATE_1001_52_stability-1.ipynb", ("doejane", "_LATE", "1001", "52", "stability-1.ipynb")),
    ("o'neillmary_77_9_my_work_2.ipynb", ("o'neillmary", None, "77", "9", "my_work_2.ipynb")),
    ("anon_5_6_stability.ipynb", ("anon", None, "5", "6", "stability.ipynb")),
])
def test_canvas_file_names(name, fields):
    found = re.match(CANVAS_NAME, name)
    assert found and (found["lastfirst"], found["late"], found["user_id"], found["attachment_id"],
                      found["file_name"]) == fields


@pytest.mark.quick
def test_a_roster_maps_canvas_ids_to_student_ids_and_says_what_is_wrong(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    roster, columns = read_roster(path)
    assert {k: v["student_id"] for k, v in roster.items()} == {"1001": "ada", "1002": "grace", "1003": "alan",
                                                                "1004": "emmy"}
    assert {k: v["student_id"] for k, v in read_roster(path, "SIS User ID")[0].items()}["1002"] == "S-2"
    assert canvas_column("operators", columns) == "Operators (777)" and canvas_column("amp", columns) == "amp"
    assert canvas_column("operators", columns, "Week 4 (900)") == "Week 4 (900)"
    path.write_text("Student,ID,Section\n\"A\",1,x\n", encoding="utf-8")
    with pytest.raises(LMSError) as no_column:
        read_roster(path)
    assert "no column 'SIS Login ID'" in str(no_column.value)
    path.write_text("Student,ID,SIS Login ID\n\"Lovelace, Ada\",1001,\n", encoding="utf-8")
    with pytest.raises(LMSError) as no_id:
        read_roster(path)
    assert "line 2: 'Lovelace, Ada' (Canvas id 1001) has no 'SIS Login ID'" in str(no_id.value)
    times = tmp_path / "times.csv"
    times.write_text("ID,submitted_at\n1001,2026-11-24T13:00:00Z\n1002,\n", encoding="utf-8")
    assert read_times(times) == {"1001": datetime.datetime(2026, 11, 24, 13, tzinfo=datetime.timezone.utc)}


# ------------------------------------------------------------------ the round trip

def _autograder(course, *args, env=None):
    done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), *args], capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def canvas_round_trip(tmp_path_factory):
    base = tmp_path_factory.mktemp("canvas")
    course = scratch_course(ROOT, base / "course")
    list(generate_assignments(course, [TOPIC]))
    release = notebooks.read(course / "release" / TOPIC / f"{TOPIC}.ipynb")
    reference = notebooks.solution_sources(notebooks.read(course / "source" / TOPIC / f"{TOPIC}.ipynb"))
    download = base / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:
        for name, when in ENTRIES:
            data = b"%PDF-1.4 notes" if name.endswith(".pdf") else json.dumps(_fill(release, reference)).encode()
            archive.writestr(zipfile.ZipInfo(name, date_time=when), data)
    roster = base / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    settings = base / "settings.json"
    settings.write_text(json.dumps({"deadlines": {"due": {TOPIC: DUE}, "penalty": {"per_day_percent": 10}}}))
    env = {"AUTOGRADER_SETTINGS": str(settings)}
    collected = _autograder(course, "collect-zip", TOPIC, str(download), "--roster", str(roster), env=env)
    graded = _autograder(course, "grade", TOPIC, "--workers", "0", env=env)
    exported = _autograder(course, "export", TOPIC, "--canvas", str(base / "canvas.csv"), "--roster", str(roster),
                           env=env)
    return course, base, collected, graded, exported


@pytest.mark.e2e
def test_collect_zip_places_each_notebook_with_its_time(canvas_round_trip):
    course, _, collected, _, _ = canvas_round_trip
    submitted = course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["ada", "alan", "grace"]
    for student in ("ada", "alan", "grace"):
        assert sorted(p.name for p in (submitted / student / TOPIC).iterdir()) == [f"{TOPIC}.ipynb", "timestamp.txt"]
        assert notebooks.read(submitted / student / TOPIC / f"{TOPIC}.ipynb")["cells"]
    stamps = {s: (submitted / s / TOPIC / "timestamp.txt").read_text() for s in ("ada", "alan", "grace")}
    assert stamps == {"ada": "2026-11-24 09:30:00", "alan": "2026-11-24 11:59:00", "grace": "2026-11-24 15:12:00"}
    assert "Skipped babbagecharles_1099_50005_operators.ipynb: Canvas user 1099 (babbagecharles) is not in the " \
           "roster" in collected
    assert "Skipped turingalan_1003_50004_notes.pdf: not a notebook" in collected
    # nothing lost: every file of the download is kept as Canvas named it
    extracted = course / "downloaded" / TOPIC / "extracted" / "submissions"
    assert sorted(p.name for p in extracted.iterdir()) == sorted(name for name, _ in ENTRIES)


@pytest.mark.e2e
def test_grade_takes_the_late_penalty_and_export_canvas_writes_what_canvas_imports(canvas_round_trip):
    course, base, _, graded, exported = canvas_round_trip
    report = load_report(course)
    scores = {s: points(report[f"{s}/{TOPIC}"]["grades"])[0] for s in ("ada", "alan", "grace")}
    assert report[f"grace/{TOPIC}"]["late_percent"] == 10
    assert report[f"grace/{TOPIC}"]["late_penalty"] == round(scores["grace"] * 0.1, 6)
    assert report[f"ada/{TOPIC}"]["late_penalty"] == report[f"alan/{TOPIC}"]["late_penalty"] == 0
    assert "grace/operators: late by 3 h 12 min: -10%" in graded
    said = [line for line in exported.strip().splitlines() if not line.startswith("autograder: settings from ")]
    assert said == [f"wrote {base / 'canvas.csv'}"], exported   # and the override in force named, on its own line
    table = list(csv.reader(open(base / "canvas.csv", encoding="utf-8")))
    assert table == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Operators (777)"],
        ["Points Possible", "", "", "", "", "9"],
        ["Lovelace, Ada", "1001", "S-1", "ada", "Mon", f"{scores['ada']:g}"],
        ["Hopper, Grace", "1002", "S-2", "grace", "Mon", f"{round(scores['grace'] * 0.9, 6):g}"],
        ["Turing, Alan", "1003", "S-3", "alan", "Tue", f"{scores['alan']:g}"],
        ["Noether, Emmy", "1004", "S-4", "emmy", "Tue", ""],      # nothing recorded: Canvas keeps what it has
    ]
    assert scores["grace"] == 9 and table[3][5] == "8.1"


@pytest.mark.e2e
def test_a_second_download_replaces_only_its_students_and_keeps_the_first(tmp_path):
    from autograder.commands.collect_zip import collect_zip

    course = scratch_course(ROOT, tmp_path / "course", with_release=True)
    release = (course / "release" / TOPIC / f"{TOPIC}.ipynb").read_bytes()
    first, second = tmp_path / "first.zip", tmp_path / "second.zip"
    with zipfile.ZipFile(first, "w") as archive:
        archive.writestr(zipfile.ZipInfo("lovelaceada_1001_1_operators.ipynb", (2026, 11, 24, 9, 0, 0)), release)
        archive.writestr(zipfile.ZipInfo("hoppergrace_1002_2_operators.ipynb", (2026, 11, 24, 9, 5, 0)), release)
    with zipfile.ZipFile(second, "w") as archive:
        archive.writestr(zipfile.ZipInfo("lovelaceada_1001_3_operators-1.ipynb", (2026, 11, 24, 11, 0, 0)),
                         release.replace(b"YOUR CODE HERE", b"YOUR CODE HERE (second try)"))
    collect_zip(course, TOPIC, first)                  # no roster: the Canvas user id is the student id
    collect_zip(course, TOPIC, second)
    ada, grace = (course / "submitted" / s / TOPIC for s in ("1001", "1002"))
    assert b"(second try)" in (ada / f"{TOPIC}.ipynb").read_bytes()
    assert (ada / "timestamp.txt").read_text() == "2026-11-24 11:00:00"
    assert (grace / f"{TOPIC}.ipynb").read_bytes() == release
    assert (grace / "timestamp.txt").read_text() == "2026-11-24 09:05:00"
    (kept,) = (course / "downloaded" / TOPIC / "earlier").iterdir()
    assert [p.name for p in kept.iterdir()] == ["first.zip"]
    assert [p.name for p in (course / "downloaded" / TOPIC / "archive").iterdir()] == ["second.zip"]
    with pytest.raises(LMSError) as not_zip:
        collect_zip(course, TOPIC, tmp_path / "course" / "nbgrader_config.py")
    assert "is not a zip file" in str(not_zip.value)
