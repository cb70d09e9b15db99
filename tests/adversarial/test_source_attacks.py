"""Attacks on the submitted source as evidence: each scores at most its control, the same wrong answer hiding
nothing, through the real ``nbgrader autograde`` with the sandbox.

The controls: a ``row_sum`` written as a loop in plain sight (its value is right: the no-loop and speed items are
lost), and ``stable_softmax``/``softmax_cross_entropy``/``softplus`` built on torch's own softmax, log_softmax and
softplus in plain sight (the three no-builtin items are lost). Each attack is one of those answers with a way to
hide it from the reading: a decoy definition under ``if 0:``, the real definition made through ``global`` inside
another function, recursion instead of a loop, ``exec`` reached through ``print.__self__``, torch or sys through an
alias the reading cannot name (``[torch][0]``), ``setattr`` on it, ``_functools.reduce``. One course grades them all
(one ``grade_all`` per assignment). The quick tests check the same sources against the source analysis alone.
"""

import pytest

from autograder.checks import items_of
from autograder.commands.grade import grade_all
from autograder.engine import notebooks
from autograder.source_evidence.evasion import affecting
from autograder.source_evidence.submitted_source import Submission
from tests.adversarial.attacks import REFERENCE, build_notebook, write_submission
from tests.adversarial.test_attacks import course_with_assignments
from tests.source_findings import held_against

SEED = 35035

LOOP_BODY = '''    total = torch.zeros(x.shape[1:], dtype=x.dtype if x.is_floating_point() else torch.int64, device=x.device)
    for row in x.unbind(0):
        total = total + row
    return total
'''
LOOP = "import torch\n\n\ndef row_sum(x):\n" + LOOP_BODY
VECTORIZED = "import torch\n\n\ndef row_sum(x):\n    return torch.sum(x, dim=0)\n"

BUILTINS = {
    "stable_softmax": "import torch\n\n\ndef stable_softmax(logits, dim=-1):\n    return torch.softmax(logits, dim=dim)\n",
    "softmax_cross_entropy": ("def softmax_cross_entropy(labels, logits, dim=-1):\n"
                              "    return -(labels * torch.log_softmax(logits, dim=dim)).sum(dim=dim)\n"),
    "softplus": ("import torch\n\n\nclass Softplus(torch.autograd.Function):\n    @staticmethod\n"
                 "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
                 "        return torch.nn.functional.softplus(x)\n\n    @staticmethod\n"
                 "    def backward(ctx, grad_output):\n        (x,) = ctx.saved_tensors\n"
                 "        return grad_output * torch.sigmoid(x)\n\n\ndef softplus(x):\n    return Softplus.apply(x)\n"),
}
ALIASED = {cell: text.replace("torch.softmax", "_T.softmax").replace("torch.log_softmax", "_T.log_softmax")
           .replace("torch.nn.functional.softplus", "_T.nn.functional.softplus") for cell, text in BUILTINS.items()}
ALIASED["stable_softmax"] = ALIASED["stable_softmax"].replace("import torch\n", "import torch\n_T = [torch][0]\n")
DECOYS = ("\n\nif 0:\n    def stable_softmax(logits, dim=-1):\n        e = (logits - logits.amax(dim, keepdim=True)).exp()\n"
          "        return e / e.sum(dim, keepdim=True)\n")

OPERATORS = {      # student -> the row_sum cell (masked_mean keeps the reference answer)
    "control_loop": LOOP,
    "decoy_under_if_0": LOOP + "\n\nif 0:\n    def row_sum(x):\n        return torch.sum(x, dim=0)\n",
    "defined_through_global": (VECTORIZED + "\n\ndef _install():\n    global row_sum\n\n    def row_sum(x):\n"
                               + "".join("    " + line + "\n" for line in LOOP_BODY.splitlines()) + "\n\n_install()\n"),
    "recursion": ("import torch\n\n\ndef row_sum(x):\n    if x.shape[0] <= 1:\n        return torch.sum(x, dim=0)\n"
                  "    half = x.shape[0] // 2\n    return row_sum(x[:half]) + row_sum(x[half:])\n"),
    "exec_through_print_self": (VECTORIZED + f"\n\n_run = getattr(print.__self__, 'ex' + 'ec')\n_run({LOOP!r})\n"),
    "private_functools": ("import _functools\nimport torch\n\n\ndef row_sum(x):\n"
                          "    start = torch.zeros(x.shape[1:], dtype=x.dtype if x.is_floating_point() else torch.int64)\n"
                          "    return _functools.reduce(lambda a, b: a + b, x.unbind(0), start)\n"),
    "torch_sum_patched_through_alias": (VECTORIZED + "\n\ndef _loop(x, dim=0, **kwargs):\n" + LOOP_BODY
                                        + "\n\n_T = [torch][0]\n_T.sum = _loop\n"),
    "setattr_through_alias": (VECTORIZED + "\n\ndef _loop(x, dim=0, **kwargs):\n" + LOOP_BODY
                              + "\n\n_T = [torch][0]\nsetattr(_T, 'sum', _loop)\n"),
}
STABILITY = {       # student -> the three cells
    "control_builtins": BUILTINS,
    "builtins_through_alias": ALIASED,
    "torch_C_through_alias": {**BUILTINS, "stable_softmax": (
        "import torch\n_T = [torch][0]\n\n\ndef stable_softmax(logits, dim=-1):\n"
        "    return _T._C._VariableFunctions.softmax(logits, dim)\n")},
    "builtins_then_decoys": {**BUILTINS, "stable_softmax": BUILTINS["stable_softmax"] + DECOYS},
}
NOT_FLAGGED_BEFORE = {       # row_sum cells: constructs the scanner missed before; each must now be under review
    "assign_through_alias": "import torch\n_T = [torch][0]\n_T.sum = None\n" + VECTORIZED,
    "setattr_through_alias": "import torch\n_T = [torch][0]\nsetattr(_T, 'sum', None)\n" + VECTORIZED,
    "sys_modules_through_alias": "import sys\n[sys][0].modules['torch'] = None\n" + VECTORIZED,
    "getframe_through_alias": "import sys\n_f = [sys][0]._getframe\n" + VECTORIZED,
    "globals_item": VECTORIZED + "globals()['row_sum'] = None\n",
    "loop_through_sys_modules": VECTORIZED + "import sys\nsetattr(sys.modules[__name__], 'row_sum', None)\n",
}


def _submission(cells):
    return Submission.from_cells(list(cells.items()))


def _held_against(topic, cells):
    """``{item: [what the source analysis holds against it]}``."""
    return held_against(topic, _submission(cells))


@pytest.mark.quick
@pytest.mark.parametrize("student", sorted(OPERATORS))
def test_every_row_sum_attack_loses_its_no_loop_item_to_the_reading(student):
    found = _held_against("operators", {"row_sum": OPERATORS[student]})
    assert "row_sum_vectorized" in found, found


@pytest.mark.quick
@pytest.mark.parametrize("student", sorted(STABILITY))
def test_every_softmax_attack_loses_its_no_builtin_items_to_the_reading(student):
    found = _held_against("stability", STABILITY[student])
    assert {"softmax_no_builtin", "cross_entropy_no_builtin"} <= set(found) or len(found) >= 3, found


@pytest.mark.quick
@pytest.mark.parametrize("student", sorted(NOT_FLAGGED_BEFORE))
def test_constructs_missed_before_put_every_item_under_review(student):
    submission = _submission({"row_sum": NOT_FLAGGED_BEFORE[student]})
    assert affecting(submission, ["row_sum"], ["row_sum", "masked_mean"]), student
    assert affecting(submission, ["masked_mean"], ["row_sum", "masked_mean"]), student


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = course_with_assignments(tmp_path_factory.mktemp("source_attacks") / "course", ["operators", "stability"])
    for student, row_sum in OPERATORS.items():
        write_submission(course, student, "operators",
                         build_notebook(course, "operators", {"masked_mean": REFERENCE, "row_sum": row_sum}))
    for student, cells in STABILITY.items():
        write_submission(course, student, "stability", build_notebook(course, "stability", cells))
    scores = {}
    for topic, students in (("operators", OPERATORS), ("stability", STABILITY)):
        for result in grade_all(course, [topic], list(students), progress=None, seed=SEED):
            scores[result.student] = {item: score for item, (score, _) in result.grades.items()}
    return scores


def _total(scores):
    return sum(scores.values())


@pytest.mark.e2e
@pytest.mark.timeout(1800)
def test_controls_lose_exactly_the_items_their_answers_break(graded):
    full = {topic: sum(item.points for item in items_of(topic)) for topic in ("operators", "stability")}
    loop, builtins = graded["control_loop"], graded["control_builtins"]
    assert loop["row_sum"] > 0 and loop["row_sum_vectorized"] == 0 and _total(loop) < full["operators"], loop
    assert builtins["softmax_no_builtin"] == 0 and _total(builtins) < full["stability"], builtins


@pytest.mark.e2e
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", [s for s in OPERATORS if s != "control_loop"])
def test_row_sum_attack_scores_at_most_the_loop_in_plain_sight(graded, student):
    assert _total(graded[student]) <= _total(graded["control_loop"]), graded[student]
    assert graded[student]["row_sum_vectorized"] == 0, graded[student]


@pytest.mark.e2e
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", [s for s in STABILITY if s != "control_builtins"])
def test_softmax_attack_scores_at_most_the_builtins_in_plain_sight(graded, student):
    assert _total(graded[student]) <= _total(graded["control_builtins"]), graded[student]
    assert graded[student]["softmax_no_builtin"] == 0, graded[student]
