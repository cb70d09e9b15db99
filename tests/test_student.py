"""The seam to student code turns raises, hangs and output floods into messages."""

import time

import pytest
import torch

from autograder.errors import CheckFailure
from autograder.seam.student import call_student, describe, raises_from_student
from autograder.settings import override

pytestmark = pytest.mark.quick


def test_returns_the_result_and_hides_output(capsys):
    def noisy(x):
        print("hello")
        return x + 1

    assert call_student("c", noisy, 1) == 2
    assert capsys.readouterr().out == ""


def test_a_raise_names_function_input_and_error():
    def broken(x):
        raise ValueError("bad value")

    with pytest.raises(CheckFailure) as excinfo:
        call_student("check_x", broken, torch.zeros(2, 3))
    message = str(excinfo.value)
    assert message.startswith("[check_x] ")
    assert "broken(tensor of shape [2, 3], torch.float32" in message
    assert "raised ValueError: bad value" in message
    assert 'raise ValueError("bad value")' in message     # the student's own line


def test_not_implemented_says_so():
    def stub():
        raise NotImplementedError()

    with pytest.raises(CheckFailure) as excinfo:
        call_student("c", stub)
    assert "not implemented yet" in str(excinfo.value)


def test_a_hang_is_stopped_with_a_message():
    def hang():
        while True:
            time.sleep(0.01)

    started = time.perf_counter()
    with pytest.raises(CheckFailure) as excinfo:
        call_student("c", hang, timeout=0.3)
    assert time.perf_counter() - started < 5
    assert "did not return within 0.3 s" in str(excinfo.value)


def test_a_hang_cannot_be_swallowed_by_except_exception():
    def stubborn():
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # noqa: BLE001 - what a student might write
                pass

    with pytest.raises(CheckFailure):
        call_student("c", stubborn, timeout=0.3)


def test_output_flood_is_bounded():
    def flood():
        for _ in range(10_000):
            print("x" * 100)
        raise RuntimeError("done")

    with override({"max_output_chars": 500}):
        with pytest.raises(CheckFailure) as excinfo:
            call_student("c", flood)
    message = str(excinfo.value)
    assert "1009500 more characters of output dropped" in message
    assert len(message) < 2000


def test_raises_from_student_wants_the_right_exception():
    assert isinstance(raises_from_student("c", lambda: int("x"), expected=ValueError), ValueError)
    with pytest.raises(CheckFailure) as excinfo:
        raises_from_student("c", lambda: 3, expected=ValueError)
    assert "returned 3, but it should raise ValueError" in str(excinfo.value)
    with pytest.raises(CheckFailure) as excinfo:
        raises_from_student("c", lambda: [][1], expected=ValueError)
    assert "raised IndexError" in str(excinfo.value)


def test_describe_is_short():
    text = describe(torch.arange(100.0).reshape(10, 10))
    assert text.startswith("tensor of shape [10, 10], torch.float32, on cpu, values [0, 1, 2")
    assert text.endswith("...]")
    assert len(describe("y" * 500)) <= 80


def test_the_line_shown_is_the_students_not_the_librarys():
    def misuse(x):
        return torch.cat(x, dim=5)   # torch raises deep inside its own code

    with pytest.raises(CheckFailure) as excinfo:
        call_student("c", misuse, [torch.zeros(2)])
    assert "return torch.cat(x, dim=5)" in str(excinfo.value)


def softmax_shifting_the_callers_logits(logits, dim=-1):
    logits -= logits.amax(dim=dim, keepdim=True)   # right values, but the caller's tensor is changed
    exp = logits.exp()
    return exp / exp.sum(dim=dim, keepdim=True)


def test_a_function_that_changes_its_input_in_place_is_named_and_loses_points():
    from autograder.engine.results import grade_items
    from tests.proving import with_replacements

    results = grade_items("stability", with_replacements("stability", {
        "stable_softmax": softmax_shifting_the_callers_logits}), only={"softmax_forward"})
    assert results[0].status == "failed"
    assert "changed its input (`logits`" in results[0].message and "modified in place" in results[0].message


def test_inputs_left_alone_pass_and_nan_inputs_compare_equal():
    x = torch.tensor([1.0, float("nan"), 3.0])
    assert torch.equal(call_student("c", lambda t: t * 2, x)[::2], torch.tensor([2.0, 6.0]))
    with pytest.raises(CheckFailure, match=r"changed its input \(`pair`\[0\]"):
        call_student("c", lambda pair: pair[0].mul_(2), [torch.ones(2), torch.ones(2)])
