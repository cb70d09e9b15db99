"""benchmarks/results/: one file per benchmark and date, ``<benchmark>-<YYYY-MM-DD>.md``, each stating its date,
device, torch version and command (benchmarks/results/README.md); and no doc says how long the tests take (CI's log
does)."""

import datetime
import re

import pytest

from tests.proving import ROOT

RESULTS = ROOT / "benchmarks" / "results"
NAME = re.compile(r"^(?P<benchmark>[a-z][a-z0-9-]*[a-z0-9])-(?P<date>\d{4}-\d{2}-\d{2})\.md$")
FIELDS = ("Date", "Device", "Torch", "Command")
DURATION = r"\d+(?:\.\d+)? ?(?:s|min|seconds|minutes)\b"
SUITE_TIMINGS = [re.compile(pattern) for pattern in (
    r"\bpassed(?:, \d+ skipped)? in \d",                             # pytest's summary line
    r"`(?:python -m )?pytest[^`]*`[^.]*?" + DURATION,                  # `pytest ...` ... 15 s
    r"\(\d+ tests?\b[^)]*\)?[^.]{0,30}?" + DURATION,                  # (46 tests) runs in about 15 s
    r"`tests/[\w/]+\.py`(?: -k \w+)?[^.`]{0,30}?" + DURATION,          # `tests/checks/test_memory.py` 4 s
    r"\b(?:test suite|the suite|this module|the module)\b (?:takes|took|runs? in|ran in|lasts?)[^.]{0,20}?" + DURATION,
    DURATION + r"\W{0,3} (?:for|of) (?:the|this) (?:module|suite)\b")]


def problems_of(name, text):
    """What a results file named ``name`` with ``text`` lacks (an empty list when it has it all)."""
    found = NAME.match(name)
    if not found:
        return [f"{name}: not named <benchmark>-<YYYY-MM-DD>.md"]
    problems = []
    try:
        datetime.date.fromisoformat(found.group("date"))
    except ValueError:
        problems.append(f"{name}: {found.group('date')} is not a date")
    if not text.startswith(f"# {found.group('benchmark')}, {found.group('date')}"):
        problems.append(f"{name}: the title does not start with '# {found.group('benchmark')}, {found.group('date')}'")
    for field in FIELDS:
        if not re.search(rf"^- \*\*{field}\*\*: \S", text, flags=re.M):
            problems.append(f"{name}: no '- **{field}**: ...' line")
    return problems


@pytest.mark.quick
def test_every_results_file_is_named_and_dated_and_states_its_fields():
    files = sorted(p for p in RESULTS.glob("*.md") if p.name != "README.md")
    assert len(files) >= 10
    problems = [msg for path in files for msg in problems_of(path.name, path.read_text(encoding="utf-8"))]
    assert not problems, problems


@pytest.mark.quick
def test_the_results_check_accepts_a_complete_file_and_rejects_what_is_missing():
    good = ("# speed, 2026-11-28: what\n\n- **Date**: 2026-11-28.\n- **Device**: 2 cores.\n"
            "- **Torch**: 2.13.0+cpu.\n- **Command**: `python benchmarks/speed.py`.\n")
    assert problems_of("speed-2026-11-28.md", good) == []
    assert problems_of("grading-scale-2026-11-22.md", good.replace("speed, 2026-11-28", "grading-scale, 2026-11-22")) == []
    assert problems_of("speed.md", good) == ["speed.md: not named <benchmark>-<YYYY-MM-DD>.md"]
    assert problems_of("speed-2026-13-28.md", good.replace("11-28", "13-28")) == [
        "speed-2026-13-28.md: 2026-13-28 is not a date"]
    assert problems_of("speed-2026-11-28.md", good.replace("- **Torch**: 2.13.0+cpu.\n", "")) == [
        "speed-2026-11-28.md: no '- **Torch**: ...' line"]
    assert problems_of("amp-2026-11-28.md", good) == [
        "amp-2026-11-28.md: the title does not start with '# amp, 2026-11-28'"]


def suite_timings(text):
    """Each statement in ``text`` (Markdown, lines joined) of how long a test, a test module or the suite takes."""
    text = re.sub(r"\s*\n\s*", " ", text)
    return [found.group(0) for pattern in SUITE_TIMINGS for found in pattern.finditer(text)]


@pytest.mark.quick
def test_no_doc_says_how_long_the_tests_take():
    said = [f"{path.relative_to(ROOT)}: {timing!r}" for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
            for timing in suite_timings(path.read_text(encoding="utf-8"))]
    assert not said, f"CI's log has the suite's timings; a doc does not repeat them: {said}"


@pytest.mark.quick
def test_the_timing_check_catches_suite_timings_and_spares_other_durations():
    for timing in ("`pytest tests/checks/test_vectorization.py`: 46 passed, 2 skipped in 35 s",
                   "| `pytest tests/checks/test_operators.py` (7 tests) | 12 s | 4.5 s |",
                   "`tests/checks/test_broadcasting.py` (46 tests) runs in about\n  15 s.",
                   "The tests this topic adds: `tests/checks/test_memory.py` 4 s, its share of",
                   "**Its cost, measured: 227 s** for the module's 27 tests",
                   "the suite takes about 20 minutes"):
        assert suite_timings(timing), timing
    for other in ("The launch is bounded: the group times out after 10 s (`GROUP_TIMEOUT_S`)",
                  "`tests/checks/test_distributed.py` proves that a hung rank with a child of its own is stopped in 3 s",
                  "Every DataLoader pass runs under `settings.dataloader_timeout_s` (60 s)",
                  "one student's eight reference notebooks take 42 s serially (benchmarks/results/grading-time-*.md)",
                  "Done in 2 min with 2 local Dask workers: 8 graded"):
        assert not suite_timings(other), other
