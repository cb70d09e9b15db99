"""Feedback over a whole grade (``autograder.feedback``): what "matches" means, the hint once on the first failed
item, one message per cause, and Expected/Got as the student's dtype shows them."""

import pytest
import torch

from autograder.engine.results import FAILED, PASSED, explain, grade_items, known_mistakes
from autograder.engine.verdict import Verdict
from autograder.errors import CheckFailure
from autograder.feedback import LOOKS_LIKE, looks_like, name_mistake, pattern, same_cause
from autograder.measuring.compare import expect_close
from tests.mistakes.grammar import slips
from tests.proving import stub, with_replacements

pytestmark = pytest.mark.quick

MISTAKES = (
    {"id": "a", "says": "A is wrong.", "signature": {"one": "wrong value", "two": "wrong value"}, "visible": {}},
    {"id": "b", "says": "B is wrong.", "signature": {"one": "wrong shape"}, "visible": {"one": "wrong shape"}},
    {"id": "c", "says": "C is wrong.", "signature": {"three": "raised"}, "visible": {"three": "raised"}},
    {"id": "d", "says": "D is wrong.", "signature": {"three": "raised"}, "visible": {"three": "raised"}},
    {"id": "e", "says": "A loop.", "signature": {"four": "grows with size"}, "visible": {}},
    {"id": "f", "says": "A loop.", "signature": {"four": "grows with size"}, "visible": {}},
    {"id": "h", "says": "H.", "signature": {"seven": "raised: TypeError", "eight": "wrong value"}, "visible": {}},
    {"id": "i", "says": "I.", "signature": {"seven": "failed: x is halved", "eight": "wrong value",
                                            "nine": "wrong value"}, "visible": {}},
)


def result(item, status=FAILED, kind="wrong value", cause="", message=None):
    return Verdict(item, f"check_{item}", status, 0.0, 1.0, message or f"[check_{item}] it failed.", kind=kind,
                      cause=cause)


@pytest.mark.parametrize("seen, named", [
    ({"one": "wrong value", "two": "wrong value"}, None),  # exactly, but "wrong value" only: any mistake leaves it
    ({"one": "wrong shape"}, "b"),                         # exactly, and a kind that says more: named
    ({"three": "raised"}, None),                           # two mistakes, two descriptions: cannot tell
    ({"four": "grows with size"}, "e"),                    # two mistakes told the same way: named
    ({"one": "wrong value"}, None),                        # one item fewer: no near match is named
    ({"seven": "raised: TypeError"}, None),                # one item fewer, an exception's type agrees: silent
    ({"seven": "raised: TypeError", "eight": "wrong value"}, "h"),   # exactly, an exception's type in it
    ({"seven": "raised: TypeError", "eight": "wrong shape"}, None),  # one item of another kind: silent
    ({"seven": "failed: x is halved", "eight": "wrong value"}, None),  # i one item fewer: silent
    ({"seven": "failed: x is halved", "eight": "wrong value", "nine": "wrong value"}, "i"),
    ({"two": "wrong shape"}, None),
    ({"one": "raised", "two": "raised"}, None),
    ({"one": "wrong shape", "three": "raised"}, None),
    ({}, None),
])
def test_what_matches(seen, named):
    found = looks_like(MISTAKES, seen)
    assert (found and found["id"]) == named


def test_a_signature_of_generic_kinds_only_names_nothing():
    """Right or silent: "wrong value" on every failed item is what many mistakes leave, a known one's or not; a
    known result (named by the check) on one of them is evidence."""
    generic = ({"id": "g", "says": "G.", "signature": {"five": "wrong value", "six": "wrong value"}, "visible": {}},
               {"id": "k", "says": "K.", "signature": {"five": "known: the batch's mean", "six": "wrong value"},
                "visible": {}})
    assert looks_like(generic, {"five": "wrong value", "six": "wrong value"}) is None
    assert looks_like(generic, {"five": "known: the batch's mean", "six": "wrong value"})["id"] == "k"


def test_functions_not_written_yet_are_left_out_of_both_sides():
    assert looks_like(MISTAKES, {"one": "wrong shape", "two": "not implemented"})["id"] == "b"
    assert looks_like(MISTAKES, {"seven": "raised: TypeError", "eight": "not implemented"})["id"] == "h"
    assert looks_like(MISTAKES, {"one": "not implemented", "two": "not implemented"}) is None


def test_the_visible_signatures_for_a_grade_without_hidden_variants():
    assert looks_like(MISTAKES, {"one": "wrong shape"}, hidden=False)["id"] == "b"
    assert looks_like(MISTAKES, {"four": "grows with size"}, hidden=False) is None
    assert looks_like(MISTAKES, {"three": "raised"}, hidden=False) is None


def test_a_grade_that_says_nothing_about_a_mistake_has_no_pattern():
    assert pattern([result("one", PASSED, kind="")]) == {}
    assert pattern([result("one", kind="crashed")]) is None
    assert pattern([result("one", kind="missing")]) is None
    assert pattern([result("one"), result("two", "grader error", kind="")]) is None


def test_the_mistake_is_named_once_on_the_first_failed_item():
    results = [result("zero", PASSED, kind=""), result("seven", kind="raised: TypeError"), result("eight")]
    assert name_mistake(results, MISTAKES)["id"] == "h"
    assert results[1].message.endswith(f"\n{LOOKS_LIKE}H.")
    assert results[1].evidence["looks_like"] == "h"
    assert LOOKS_LIKE not in results[0].message + results[2].message


def test_one_cause_one_message():
    cause = "f raised ValueError: no (at line 3: raise ValueError('no'))"
    results = [result("one", kind="raised", cause=cause, message=f"[check_one] f(tensor of shape [2]) {cause[2:]}"),
               result("two", kind="wrong value"),
               result("three", kind="raised", cause=cause), result("four", kind="raised", cause="g raised KeyError")]
    assert same_cause(results) == 1
    assert results[0].message.startswith("[check_one] f(tensor of shape [2]) raised ValueError")
    assert results[2].message == f"[check_three] same cause as check_one: {cause}."
    assert results[3].message == "[check_four] it failed."


def test_the_stub_fails_every_item_with_one_message_and_names_no_mistake():
    results = grade_items("operators", stub("operators"), seed=0)
    assert [r.message.split("] ", 1)[1] for r in results] == [
        "row_sum is not implemented yet (it raised NotImplementedError).\n"
        "Hint: Replace the `raise NotImplementedError()` line with your code.",
        "same cause as check_row_sum: row_sum is not implemented yet.",
        "same cause as check_row_sum: row_sum is not implemented yet.",
        "masked_mean is not implemented yet (it raised NotImplementedError).\n"
        "Hint: Replace the `raise NotImplementedError()` line with your code.",
        "same cause as check_masked_mean: masked_mean is not implemented yet."]
    assert not any("looks_like" in r.evidence for r in results)


def test_a_mutant_is_named_through_grade_items():
    """The shipped table, end to end: the mutant whose signature it is gets its description."""
    entry = next(m for m in known_mistakes("operators") if m["id"] == "masked_mean in float64")
    from tests.mutants.operators import MUTANTS
    results = grade_items("operators", with_replacements("operators", MUTANTS[entry["id"]][0]), seed=0)
    first = next(r for r in results if r.status == FAILED)
    assert first.message.endswith(f"{LOOKS_LIKE}{entry['says']}")
    assert sum(LOOKS_LIKE in r.message for r in results) == 1


def test_a_partial_grade_names_no_mistake():
    results = [result("one"), result("two")]
    explain("operators", results, whole=False)
    assert not any(LOOKS_LIKE in r.message for r in results)


def _message(actual, expected):
    with pytest.raises(CheckFailure) as excinfo:
        expect_close("check_x", actual, expected, what="the result")
    return str(excinfo.value)


def test_expected_and_got_in_the_students_dtype_with_the_float64_difference():
    message = _message(torch.tensor([1.0, 2.5, 3.0], dtype=torch.float16), torch.tensor([1.0, 2.0, 3.0]).double())
    assert "Expected: tensor of shape [3], torch.float16, on cpu, values [1, 2, 3]" in message
    assert "Got:      tensor of shape [3], torch.float16, on cpu, values [1, 2.5, 3]" in message
    assert "Difference (got - expected, in float64): [0, 0.5, 0]" in message
    assert "float64" not in message.split("Expected:")[1].split("Difference")[0]
    assert excinfo_kind(torch.tensor([1.0], dtype=torch.float16), torch.tensor([2.0]).double()) == "wrong value"


def test_more_digits_when_both_print_the_same():
    expected = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    message = _message((expected * (1 + 1e-4)).float(), expected)
    assert "values [1, 2, 3]" in message.split("Got:")[0]
    assert "values [1.0001, 2.0002, 3.0003]" in message.split("Got:")[1]


def excinfo_kind(actual, expected):
    with pytest.raises(CheckFailure) as excinfo:
        expect_close("check_x", actual, expected, what="the result")
    return excinfo.value.kind


@pytest.mark.parametrize("message, found", [
    ("[c] the result is wrong.\nHint: Check the dim.", []),
    ("[c] an nn.Parameter, a uint8 tensor, an hour, a one-element tensor.", []),
    ("[c] f(x) raised ValueError: the the shapes [2, (3] differ (at line 2: y = f(x[0]).\nHint: Run it.", []),
    ("[c] the the result.", ["doubled word 'the the'"]),
    ("[c] a error.", ["'a' before a vowel: 'a error'"]),
    ("[c] an tensor.", ["'an' before a consonant: 'an tensor'"]),
    ("[c] shape [2, 3.", ["unbalanced []: 2 against 1"]),
    ("[c] use `x.sum(0).", ["an odd number of backticks"]),
    ("[c] wrong. \nHint: Check it.", ["spaces at the end of line 1"]),
    ("[c] wrong.\nHint: Check it", ["line 2 does not end with a full stop: 'Hint: Check it'"]),
    ("[c] " + "x" * 7000, ["7004 characters, over 6000"]),
])
def test_slips_a_machine_can_see(message, found):
    assert slips(message) == found


def test_nan_where_the_reference_is_finite_is_its_own_kind():
    assert excinfo_kind(torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, 1.0]).double()) == "not finite: NaN"
    # which of NaN, +inf and -inf: 0 / 0, an overflow and log(0) are different mistakes; where the reference itself
    # is not finite, the result's value there is not what is wrong
    assert excinfo_kind(torch.tensor([float("inf"), float("-inf"), float("nan")]),
                        torch.tensor([0.0, 1.0, float("nan")]).double()) == "not finite: +inf, -inf"
    assert excinfo_kind(torch.tensor([2.0, 1.0]), torch.tensor([0.0, 1.0]).double()) == "wrong value"


def test_a_known_mistake_that_follows_from_the_reference_is_told_by_name():
    expected = torch.tensor([[4.0, 9.0], [0.0, 1.0]]).double()
    known = (("the plain distances", torch.sqrt, "Drop the square root."),)
    with pytest.raises(CheckFailure) as excinfo:
        expect_close("check_x", torch.tensor([[2.0, 3.0], [0.0, 1.0]]), expected, what="the result", known=known)
    assert "the result is the plain distances" in str(excinfo.value) and excinfo.value.hint == "Drop the square root."
    assert excinfo.value.kind == "known: the plain distances"    # the known mistake's name: another signature
    with pytest.raises(CheckFailure) as excinfo:      # off in another way: the plain difference, with its kind
        expect_close("check_x", torch.tensor([[2.0, 3.5], [0.0, 1.0]]), expected, what="the result", known=known)
    assert "plain distances" not in str(excinfo.value) and excinfo.value.kind == "wrong value"
    expect_close("check_x", expected.float(), expected, what="the result", known=known)    # right: no mistake


def test_a_result_two_known_mistakes_give_alike_is_told_as_a_difference():
    """An input on which two known mistakes give the same result cannot tell them apart: naming one could name the
    wrong one, so the failure is the plain difference (a later input may tell them apart)."""
    expected = torch.tensor([1.0, 4.0]).double()
    known = (("the square root", torch.sqrt, "a"), ("halved", lambda e: e / 2, "b"))
    with pytest.raises(CheckFailure) as excinfo:        # sqrt(4) = 4 / 2 and sqrt(1) != 1 / 2: one match
        expect_close("check_x", torch.tensor([1.0, 2.0]), expected, what="the result", known=known)
    assert "the result is the square root" in str(excinfo.value)
    known = (("the square root", torch.sqrt, "a"), ("the square root again", lambda e: e ** 0.5, "b"))
    with pytest.raises(CheckFailure) as excinfo:
        expect_close("check_x", torch.tensor([1.0, 2.0]), expected, what="the result", known=known)
    assert "square root" not in str(excinfo.value) and excinfo.value.kind == "wrong value"
