"""The hint and the one-cause message reach every path the feedback takes: the trusted grader's data (what
``grade`` records, nbgrader's feedback is written from, and ``export``s), Gradescope's ``results.json``, and
``python -m autograder check``."""

import json

import pytest

from autograder.commands import check as selfcheck
from autograder.engine import notebooks
from autograder.engine.jobs import grade_job_here
from autograder.feedback import LOOKS_LIKE
from autograder.gradescope.results import results_json
from tests.mutants.operators import DESCRIPTIONS
from tests.proving import ROOT

TOPIC = "operators"
FLOAT64 = "masked_mean in float64"
MISTAKE = ("def masked_mean(x, low, high):\n    x = x.to(torch.float64)\n    keep = (x >= low) & (x <= high)\n"
           "    return torch.where(keep, x, 0).sum(0) / keep.sum(0).clamp(min=1)\n")


def cells():
    """The reference's cells with the mistake in masked_mean's answer cell (one definition: a second one would put
    the items under review)."""
    return [(name, "import torch\n\n\n" + MISTAKE if name == "masked_mean" else source)
            for name, source in notebooks.code_cells(notebooks.read(ROOT / "source" / TOPIC / f"{TOPIC}.ipynb"),
                                                     TOPIC)]


@pytest.mark.e2e
def test_the_trusted_grade_and_gradescope_name_the_mistake_once():
    data = grade_job_here(TOPIC, cells(), seed=7, sandbox=False)
    failed = [i for i in data["items"] if i["status"] == "failed"]
    assert [i["item"] for i in failed] == ["masked_mean", "masked_mean_special_values"]
    assert failed[0]["message"].endswith(f"{LOOKS_LIKE}{DESCRIPTIONS[FLOAT64]}")
    assert LOOKS_LIKE not in failed[1]["message"]
    assert failed[0]["evidence"]["looks_like"] == FLOAT64
    tests = results_json(data, TOPIC, feedback="immediate", gpu_policy="pending")["tests"]
    assert sum(LOOKS_LIKE in t.get("output", "") for t in tests) == 1


def test_check_names_the_mistake(tmp_path, capsys):
    path = tmp_path / "answer.py"
    reference = (ROOT / "solutions" / f"{TOPIC}.py").read_text(encoding="utf-8")
    start, end = reference.index("def masked_mean("), reference.index("# --- cell row_sum ---")
    path.write_text(reference[:start] + MISTAKE + "\n\n" + reference[end:], encoding="utf-8")   # one definition
    assert selfcheck.main(TOPIC, path, as_json=True, seed=0) == 1
    items = json.loads(capsys.readouterr().out)["items"]
    assert sum(LOOKS_LIKE in i["message"] for i in items) == 1
    assert items[[i["status"] for i in items].index("failed")]["message"].endswith(DESCRIPTIONS[FLOAT64])


def test_a_notebooks_test_cells_name_the_mistake_once_on_the_cell_that_completes_it(monkeypatch):
    """Cells run one item at a time: the hint comes on the failed cell after which every item of the mistake's
    (visible) signature has run, and only once; the message is shown as the display hook shows it."""
    from autograder import checks, spec
    from autograder.checks import notebook_display, operators
    from autograder.errors import CheckFailure
    from tests.mutants.operators import masked_mean_float64

    monkeypatch.setattr(spec, "_OBSERVED", {})
    monkeypatch.setattr(checks, "_NAMED", {})
    shown = []

    class Shell:
        def _showtraceback(self, etype, value, lines):
            shown.append(lines[0])

    def cell(check, *args):
        try:
            check(*args)
        except CheckFailure as failure:
            notebook_display._show_message(Shell(), type(failure), failure, None)
            return shown[-1]
        return None

    reference = with_reference()
    assert cell(operators.check_row_sum, reference["row_sum"]) is None
    first = cell(operators.check_masked_mean, masked_mean_float64)
    second = cell(operators.check_masked_mean_special_values, masked_mean_float64)
    assert LOOKS_LIKE not in first
    assert second.endswith(f"\n{LOOKS_LIKE}{DESCRIPTIONS[FLOAT64]}")
    again = cell(operators.check_masked_mean_special_values, masked_mean_float64)
    assert LOOKS_LIKE not in again


def with_reference():
    from tests.proving import reference
    return reference(TOPIC)
