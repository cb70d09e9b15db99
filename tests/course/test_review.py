"""Evasion under review, end to end on a graded course: ``grade`` puts the affected items under review (0 points,
listed in its summary), ``review`` lists each construct and its line, ``--accept`` grades an item on its evidence
as if not flagged, ``--reject`` keeps 0 with the note, the gradebook follows at once, and a regrade of the same
submission keeps both decisions."""

import pytest

from autograder.checks import items_of
from autograder.cli import main as cli
from autograder.commands.build import generate_assignments, scratch_course
from autograder.commands.demo import _fill
from autograder.commands.grade import grade_all
from autograder.course.grading import read_grades
from autograder.engine import notebooks
from autograder.engine.records import ACCEPTED, RecordStore, apply_decisions, review_key
from autograder.source_evidence.evasion import affecting
from autograder.source_evidence.submitted_source import Submission
from tests.adversarial.attacks import HIDE_EVERY_OP
from tests.proving import ROOT

TOPIC = "operators"
SEED = 20261124
ROW_SUM_ITEMS = {"row_sum", "row_sum_vectorized", "row_sum_speed"}


@pytest.mark.e2e
def test_items_under_review_listed_decided_and_kept_across_regrades(tmp_path, capsys):
    work = scratch_course(ROOT, tmp_path / "course")
    list(generate_assignments(work, [TOPIC]))
    reference = notebooks.solution_sources(notebooks.read(work / "source" / TOPIC / f"{TOPIC}.ipynb"))
    nb = _fill(notebooks.read(work / "release" / TOPIC / f"{TOPIC}.ipynb"), {**reference, "row_sum": HIDE_EVERY_OP})
    (work / "submitted" / "eve" / TOPIC).mkdir(parents=True)
    notebooks.write(nb, work / "submitted" / "eve" / TOPIC / f"{TOPIC}.ipynb")
    lines = []
    result, = grade_all(work, [TOPIC], ["eve"], progress=lambda text, **_: lines.append(text), seed=SEED)
    assert set(result.under_review) == ROW_SUM_ITEMS
    assert {k: s for k, (s, _) in result.grades.items() if k in ROW_SUM_ITEMS} == dict.fromkeys(ROW_SUM_ITEMS, 0.0)
    assert result.grades["masked_mean"] == [2.0, 2.0]
    assert any("UNDER REVIEW" in line and "eve/operators" in line for line in lines)
    record = RecordStore(work).latest("eve", TOPIC)
    message = next(i["message"] for i in record["items"] if i["item"] == "row_sum")
    assert "under review" in message and "DisableTorchFunction" in message and "line" in message

    capsys.readouterr()
    assert cli(["--course", str(work), "review"]) == 0
    listed = capsys.readouterr().out
    assert "eve/operators row_sum_vectorized" in listed and "_disable_current_modes" in listed

    assert cli(["--course", str(work), "review", "--accept", "eve", TOPIC, "row_sum"]) == 0
    assert cli(["--course", str(work), "review", "--reject", "eve", TOPIC, "row_sum_vectorized",
                "--note", "hides its loop from the recorder"]) == 0
    points = {item.id: item.points for item in items_of(TOPIC)}
    expected = {"row_sum": points["row_sum"], "row_sum_vectorized": 0.0, "row_sum_speed": 0.0}
    grades = read_grades(work, "eve", TOPIC)
    assert {k: grades[k][0] for k in ROW_SUM_ITEMS} == expected

    again, = grade_all(work, [TOPIC], ["eve"], progress=None, seed=SEED + 1, force=True)
    assert again.under_review == ["row_sum_speed"]
    assert {k: again.grades[k][0] for k in ROW_SUM_ITEMS} == expected
    latest = {i["item"]: i for i in RecordStore(work).latest("eve", TOPIC)["items"]}
    assert "hides its loop from the recorder" in latest["row_sum_vectorized"]["message"]
    assert latest["row_sum"]["status"] == "passed" and "accepted" in latest["row_sum"]["note"]
    assert len(RecordStore(work).history("eve", TOPIC)) == 4     # graded, two decisions, regraded
    capsys.readouterr()
    cli(["--course", str(work), "review"])
    assert "row_sum_speed" in capsys.readouterr().out


HONEST_GETATTR = ("import torch\n\n\ndef row_sum(x, name=\"{name}\"):\n    dtype = getattr(torch, name)\n"
                  "    return torch.sum(x, dim=0){use}\n")


def _under_review(row_sum):
    """A record's item as ``grade_item`` writes it for ``row_sum`` under review, with the check's verdict kept."""
    found = affecting(Submission.from_cells([("row_sum", row_sum)]), ["row_sum"], ["row_sum", "masked_mean"])
    assert found
    return {"item": "row_sum", "check": "check_row_sum", "status": "under review", "score": 0.0,
            "evidence": {"review": {"constructs": [f.as_dict() for f in found],
                                    "on_accept": {"status": "passed", "score": 2.0, "message": ""}}}}


@pytest.mark.quick
def test_a_decision_binds_to_the_code_it_was_made_on():
    honest = HONEST_GETATTR.format(name="float32", use=".to(dtype)")
    accepted = _under_review(honest)
    decision = {"item": "row_sum", "decision": ACCEPTED, "note": "", "constructs": review_key(accepted), "by": "i"}

    regraded = {"items": [_under_review(honest)]}           # the same code: the decision applies again
    assert apply_decisions(regraded, [decision]) == ["row_sum"] and regraded["items"][0]["score"] == 2.0

    moved = {"items": [_under_review("# a comment\n\n" + honest)]}   # comments and moved lines change nothing
    assert apply_decisions(moved, [decision]) == ["row_sum"]

    # The accepted line kept, the code around it changed (its name now reaches torch._C): reviewed again.
    reused = _under_review(HONEST_GETATTR.format(name="_C", use=".to(dtype)"))
    assert [c["snippet"] for c in reused["evidence"]["review"]["constructs"]] == \
        [c["snippet"] for c in accepted["evidence"]["review"]["constructs"]]
    record = {"items": [reused]}
    assert apply_decisions(record, [decision]) == [] and record["items"][0]["status"] == "under review"
