"""Every shell block in docs/*.md is run by a test named in its marker, or marked as not meant to run (and why);
the blocks a student runs are run here; no doc writes a count of topics by hand that the code does not have."""

import os
import re
import subprocess
import sys

import pytest

from autograder.checks import TOPICS
from tests.docs.shell_blocks import block, shell_blocks
from tests.proving import ROOT

NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
           "seventeen eighteen nineteen twenty").split()
ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
            "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()


@pytest.mark.quick
def test_every_shell_block_is_run_by_a_named_test_or_says_why_not():
    blocks = shell_blocks()
    assert len(blocks) >= 10
    for found in blocks:
        assert found.key, f"{found.where()}: no <!-- KEY: tests/... runs this block --> or <!-- not run: why --> " \
                          f"on the line before it (found {found.marker!r})"
        if found.key == "not run":
            assert len(found.says) > 10, f"{found.where()}: say why it is not run"
            continue
        test = re.search(r"tests/[\w/]+\.py", found.says)
        assert test, f"{found.where()}: the marker names no test file"
        text = (ROOT / test.group(0)).read_text(encoding="utf-8")
        assert f'"{found.key}"' in text, f"{found.where()}: {test.group(0)} does not use the block {found.key!r}"


@pytest.mark.quick
def test_the_marker_check_rejects_an_unmarked_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Run:\n\n```bash\nrm -rf /\n```\n\n<!-- not run: it needs a machine -->\n```sh\nls\n```\n")
    first, second = shell_blocks([page])
    assert first.key is None and first.text == "rm -rf /\n"
    assert second.key == "not run" and second.says == "it needs a machine" and second.line == 8


def _counts(text):
    """``[(phrase, number)]``: each count of the whole course's topics or assignments ("the nine topics", "all eight",
    "Ten assignments" at a sentence's start), and each ordinal of one ("a ninth topic": there is no ninth to add).
    Counts of a subset ("four topics of the first set", "100 students x 2 assignments") are not the course's."""
    found = []
    for match in re.finditer(r"\b(?:(?:all|the) (\w+) (?:topics|assignments)|(?:^|\. )(\w+) "
                             r"(?:topics|assignments))\b", text, flags=re.I | re.M):
        word = (match.group(1) or match.group(2)).lower()
        if word in NUMBERS or word.isdigit():
            found.append((match.group(0).lstrip(". "), NUMBERS.index(word) if word in NUMBERS else int(word)))
    for match in re.finditer(r"\b(\w+) (?:topic|assignment)\b", text, flags=re.I):
        if match.group(1).lower() in ORDINALS[1:]:
            found.append((match.group(0), None))
    return found


@pytest.mark.quick
def test_no_doc_counts_the_topics_by_hand_unless_it_is_the_count():
    stale = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for phrase, number in _counts(path.read_text(encoding="utf-8")):
            if number != len(TOPICS):
                stale.append(f"{path.relative_to(ROOT)}: {phrase!r}")
    assert not stale, f"the course has {len(TOPICS)} topics; these say otherwise (write no count): {stale}"


@pytest.mark.quick
def test_the_count_check_catches_a_stale_count():
    assert _counts("Ten assignments. All eight assignments, the nine topics, a ninth topic, four topics of the "
                   "first set, 100 students x 2 assignments, the first assignment") == [
        ("Ten assignments", 10), ("All eight assignments", 8), ("the nine topics", 9), ("ninth topic", None)]


@pytest.mark.quick
def test_the_student_install_block_is_what_kit_prints():
    from autograder import __version__
    from autograder.commands.kit import install_command

    wheel = f"effective_pytorch_lab_kit-{__version__}-py3-none-any.whl"
    assert block("student-install").text == install_command(wheel) + "\n"
    assert "torch==2.13.0" in install_command(wheel)


def test_kit_prints_the_pinned_install_line(tmp_path, capsys):
    """``python -m autograder kit``: the wheel, and the command students install it with, PyTorch pinned."""
    from autograder.cli import main
    from autograder.commands.kit import install_command

    assert main(["--course", str(ROOT), "kit", "-o", str(tmp_path / "kit")]) == 0
    out = capsys.readouterr().out
    wheel = next((tmp_path / "kit").glob("*.whl"))
    assert f"students install it with: {install_command(wheel.name)}\n" in out
    assert block("student-install").text.strip().endswith(f"pip install torch==2.13.0 {wheel.name}")


@pytest.mark.quick
def test_the_student_check_block_runs_verbatim(tmp_path):
    """In a folder like the student's (the notebooks, and a venv that has the checks: this one), the block runs and
    grades the notebook as handed out: every visible check says it is not implemented, exit status 1."""
    (tmp_path / ".venv").symlink_to(sys.prefix)
    (tmp_path / "release").symlink_to(ROOT / "release")
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_GRADING_SEED"}
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block("student-check").text], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert "0/29 points" in run.stdout and "is not implemented yet" in run.stdout
