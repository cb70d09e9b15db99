"""The basics checks pass correct solutions and catch each realistic mistake; the source rule that reads whether
``grad_of`` and ``to_numpy`` change the caller's ``requires_grad`` fails the mistake and sends what it cannot place to
review, never to points."""

import inspect
import textwrap

import numpy as np
import pytest
import torch

from autograder.checks import basics
from autograder.checks.basics.rules import leaves_argument_flag
from autograder.source_evidence.submitted_source import Submission
from tests.mutants.basics import MUTANTS
from tests.proving import failing, reference, with_replacements

TOPIC = "basics"


@pytest.mark.gpu
def test_cuda_cases_are_graded_on_a_gpu():
    seen = []

    def recording(t):
        seen.append(t.device.type)
        return t.detach().cpu().numpy()

    basics.check_to_numpy_values(recording)
    assert "cuda" in seen and "cpu" in seen


def test_backward_on_x_message_names_the_grad_left_behind():
    replacements, _ = MUTANTS["grad_of with .backward() on x"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_grad_of_values"]
    assert "has a .grad" in message and "torch.autograd.grad" in message


def test_grad_of_is_graded_where_x_was_computed_from_a_leaf():
    def backward_on_a_view(f, x):   # leaves x's flag alone, but accumulates into the leaf x came from
        if not x.is_leaf:
            f(x).backward()
        leaf = x.detach().requires_grad_(True)
        return torch.autograd.grad(f(leaf), leaf)[0]

    failed = failing(TOPIC, with_replacements(TOPIC, {"grad_of": backward_on_a_view}))
    assert "the leaf w that x = 1.5 * w was computed from" in failed["check_grad_of_values"]


def test_sgd_message_points_at_adam():
    replacements, _ = MUTANTS["fit_quadratic with SGD"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_fit_quadratic"]
    assert "NaN" in message and "Adam" in message


def test_fit_tolerance_holds_for_the_reference_on_other_seeds():
    fit_quadratic = reference(TOPIC)["fit_quadratic"]
    for seed in (3, 4, 5):
        basics.check_fit_quadratic(fit_quadratic, seed=seed, cases=2)


def test_fit_tolerance_rejects_a_half_trained_fit():
    fit_quadratic = reference(TOPIC)["fit_quadratic"]
    with pytest.raises(AssertionError) as excinfo:
        basics.check_fit_quadratic(fit_quadratic, steps=150)
    assert "atol=0.05" in str(excinfo.value)


def test_to_numpy_oracle_keeps_nan_and_exact_int64():
    t = torch.tensor([2 ** 62 + 1, -(2 ** 62)], dtype=torch.int64)
    basics._expect_array("probe", t.numpy(), t, kind="an int64 tensor,")
    f = torch.tensor([float("nan"), 1.0])
    basics._expect_array("probe", f.numpy(), f, kind="a float tensor,")
    with pytest.raises(AssertionError) as excinfo:
        basics._expect_array("probe", (t + 1).numpy(), t, kind="an int64 tensor,")
    assert "2 of 2 elements" in str(excinfo.value)
    with pytest.raises(AssertionError):
        basics._expect_array("probe", np.array([1.0, 1.0]), f, kind="a float tensor,")


def test_flood_of_prints_in_fit_costs_only_its_checks():
    def chatty(generate_data, steps=1000, lr=0.1):
        print("loss" * 50_000)
        raise ValueError("diverged")

    failed = failing(TOPIC, with_replacements(TOPIC, {"fit_quadratic": chatty}))
    assert set(failed) == {"check_fit_quadratic", "check_fit_quadratic_fresh_samples"}
    assert len(failed["check_fit_quadratic"]) < 10_000


def test_a_wrong_shaped_gradient_gets_the_gradient_hint_not_the_reduction_hint():
    from tests.proving import run_check

    def grad_of_flattened(f, x):
        x = x.detach().reshape(-1).requires_grad_(True)
        (g,) = torch.autograd.grad(f(x.reshape(-1)), x)
        return g

    result = run_check(basics.check_grad_of_values, {"grad_of": grad_of_flattened})
    assert not result.passed and "has shape" in result.message
    assert "gradient with respect to x itself" in result.message and "keepdim" not in result.message


# ---------------------------------------------------------------- the caller's flag, read from the source

GRAD_OF_RULE = leaves_argument_flag("grad_of")
TO_NUMPY_RULE = leaves_argument_flag("to_numpy", position=0)
HEAD = "import copy\nimport torch\n\n\ndef grad_of(f, x):\n"


def _verdict(rule, text):
    """``(failures, undecided)``: the constructs the rule holds against the answer, and those it leaves to review."""
    answer = Submission.from_text(text).answer(rule.target)
    return [f.construct for f in rule.findings(answer)], [f.construct for f in rule.undecided(answer)]


@pytest.mark.quick
@pytest.mark.parametrize("body", [
    "    leaf = x.detach().requires_grad_(True)\n    return torch.autograd.grad(f(leaf), leaf)[0]\n",
    "    with torch.enable_grad():\n        point = x.detach().clone()\n        point.requires_grad = True\n"
    "        f(point).backward()\n    return point.grad\n",
    "    x = x.detach()\n    x.requires_grad_()\n    return torch.autograd.grad(f(x), x)[0]\n",
    "    x = x.detach().to(torch.float64)\n    x.requires_grad_(True)\n    return torch.autograd.grad(f(x), x)[0]\n",
    "    leaf = torch.tensor(x.tolist(), dtype=x.dtype, requires_grad=True)\n"
    "    return torch.autograd.grad(f(leaf), leaf)[0]\n",
    "    leaf = copy.deepcopy(x.detach())\n    leaf.requires_grad_()\n    return torch.autograd.grad(f(leaf), leaf)[0]\n",
    "    return torch.func.grad(f)(x.detach())\n",
    "    y = x.data.clone() if x.is_leaf else x.detach()\n    y.requires_grad_(True)\n"
    "    (g,) = torch.autograd.grad(f(y), [y])\n    return g\n",
])
def test_honest_grad_of_keeps_the_rule_and_goes_to_no_review(body):
    assert _verdict(GRAD_OF_RULE, HEAD + body) == ([], [])


@pytest.mark.quick
def test_a_helper_that_makes_a_new_leaf_is_followed():
    text = ("import torch\n\n\ndef new_leaf(t):\n    return t.detach().requires_grad_()\n\n\n"
            "def grad_of(f, x):\n    leaf = new_leaf(x)\n    return torch.autograd.grad(f(leaf), leaf)[0]\n")
    assert _verdict(GRAD_OF_RULE, text) == ([], [])


@pytest.mark.quick
@pytest.mark.parametrize("body", [
    "    x.requires_grad_(True)\n    return torch.autograd.grad(f(x), x)[0]\n",
    "    x.requires_grad = True\n    return torch.autograd.grad(f(x), x)[0]\n",
    "    setattr(x, 'requires_grad', True)\n    return torch.autograd.grad(f(x), x)[0]\n",
    "    y = x\n    y.requires_grad_()\n    return torch.autograd.grad(f(y), y)[0]\n",
    "    torch.Tensor.requires_grad_(x)\n    return torch.autograd.grad(f(x), x)[0]\n",
    "    x.requires_grad_()\n    grad = torch.autograd.grad(f(x), x)[0]\n    x = None\n    return grad\n",
])
def test_setting_the_flag_on_the_argument_fails_on_the_source(body):
    failures, undecided = _verdict(GRAD_OF_RULE, HEAD + body)
    assert failures == ["`grad_of` changes `requires_grad` of its argument `x` and never sets it back"]
    assert undecided == []


@pytest.mark.quick
@pytest.mark.parametrize("body", [
    # set and set back: right only if the flag is what it was, which the reading does not follow
    "    was = x.requires_grad\n    x.requires_grad_(True)\n    try:\n        return torch.autograd.grad(f(x), x)[0]\n"
    "    finally:\n        x.requires_grad_(was)\n",
    "    x.requires_grad_(True)\n    f(x).backward()\n    grad = x.grad\n    x.requires_grad_(False)\n    return grad\n",
    # x.to(dtype) and x.float() are x itself when nothing changes
    "    x = x.to(torch.float64).requires_grad_()\n    return torch.autograd.grad(f(x), x)[0].float()\n",
    "    leaf = x.float()\n    leaf.requires_grad_()\n    return torch.autograd.grad(f(leaf), leaf)[0]\n",
    "    for t in [x]:\n        t.requires_grad_()\n    return torch.autograd.grad(f(x), x)[0]\n",
])
def test_a_change_the_reading_cannot_place_goes_to_review_never_to_points(body):
    failures, undecided = _verdict(GRAD_OF_RULE, HEAD + body)
    assert failures == [] and undecided and all("`grad_of` changes `requires_grad` of" in u for u in undecided)


@pytest.mark.quick
def test_a_helper_that_sets_the_flag_on_its_parameter_goes_to_review():
    text = ("import torch\n\n\ndef leafify(t):\n    return t.requires_grad_()\n\n\n"
            "def grad_of(f, x):\n    x = leafify(x)\n    return torch.autograd.grad(f(x), x)[0]\n")
    assert _verdict(GRAD_OF_RULE, text) == ([], ["`grad_of` changes `requires_grad` of `t`, which may be the "
                                                 "caller's `x`: the grader cannot tell from the source whether it "
                                                 "is left as it was"])


@pytest.mark.quick
@pytest.mark.parametrize("text, failed", [
    ("def to_numpy(t):\n    return t.detach().cpu().numpy()\n", False),
    ("def to_numpy(t):\n    return t.numpy(force=True)\n", False),
    ("def to_numpy(t):\n    t.requires_grad_(False)\n    return t.cpu().numpy()\n", True),
    ("def to_numpy(t):\n    t.detach_()\n    return t.cpu().numpy()\n", True),
])
def test_to_numpy_that_clears_its_arguments_flag_fails_on_the_source(text, failed):
    failures, undecided = _verdict(TO_NUMPY_RULE, text)
    assert bool(failures) is failed and undecided == []


@pytest.mark.quick
def test_the_reference_alternative_and_every_grad_of_mutant_as_the_rule_reads_them():
    """The answers of the proofs, read from their own files: the correct ones keep the rule with nothing to review;
    the mutant that leaves the flag set fails on the source, the one that sets it back goes to review, the others
    change no flag of the argument."""
    from tests.alternatives import basics as alternative
    from tests.mutants import basics as mutants

    for fn in (reference(TOPIC)["grad_of"], alternative.grad_of, mutants.grad_of_create_graph,
               mutants.grad_of_tuple, mutants.grad_of_finite_differences):
        assert _verdict(GRAD_OF_RULE, _renamed(fn, "grad_of")) == ([], []), fn.__name__
    assert _verdict(GRAD_OF_RULE, _renamed(mutants.grad_of_flag_left_set, "grad_of"))[0]
    assert _verdict(GRAD_OF_RULE, _renamed(mutants.grad_of_backward_on_x, "grad_of"))[1]
    for fn in (reference(TOPIC)["to_numpy"], alternative.to_numpy):
        assert _verdict(TO_NUMPY_RULE, _renamed(fn, "to_numpy")) == ([], []), fn.__name__
    assert _verdict(TO_NUMPY_RULE, _renamed(mutants.to_numpy_clearing_the_flag, "to_numpy"))[0]


def _renamed(fn, name):
    source = textwrap.dedent(inspect.getsource(fn))
    return "import numpy as np\nimport torch\n\n\n" + source.replace(f"def {fn.__name__}(", f"def {name}(", 1)


def test_a_flag_set_and_set_back_is_reviewed_with_the_checks_own_verdict_kept_for_acceptance():
    """Graded on its cells: the item is under review (0 until an instructor decides), and what an acceptance would
    give is the check's own verdict (this answer is right: passed), kept in the record."""
    from autograder.checks import items_of
    from autograder.engine.results import PASSED, UNDER_REVIEW, grade_item

    text = ("import torch\n\n\ndef grad_of(f, x):\n    was = x.requires_grad\n    x.requires_grad_(True)\n"
            "    try:\n        return torch.autograd.grad(f(x), x)[0]\n    finally:\n        x.requires_grad_(was)\n")
    namespace = {}
    exec(compile(text, "<cell grad_of>", "exec"), namespace)
    item = next(i for i in items_of(TOPIC) if i.id == "grad_of_values")
    result = grade_item(item, namespace, seed=0, hidden=False, source=Submission.from_cells([("grad_of", text)]))
    assert result.status == UNDER_REVIEW and result.score == 0
    review = result.evidence["review"]
    assert review["on_accept"]["status"] == PASSED
    assert all(c["code"] and "changes `requires_grad` of its argument `x`" in c["construct"]
               for c in review["constructs"])
