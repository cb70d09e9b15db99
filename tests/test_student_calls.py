"""The seam a check is handed (``autograder.seam.student_calls``): its name, its generator, and the student's objects as
guarded handles; the check's public call stays the student's objects and the keywords."""

import inspect
import pickle

import pytest
import torch

from autograder.checks import stability
from autograder.checks.basics.probes import seeded_call
from autograder.errors import CheckFailure
from autograder.seam.handle import handle
from autograder.seam.student_calls import Seam, Student
from autograder.spec import hidden_seed

pytestmark = pytest.mark.quick

ITEM = stability.check_softmax_forward.item


def test_the_public_call_is_the_students_objects_and_the_keywords():
    assert list(inspect.signature(stability.check_softmax_forward).parameters) == ["stable_softmax", "seed", "cases"]
    assert ITEM.targets == ["stable_softmax"]
    assert stability.check_softplus_custom_backward.item.targets == ["Softplus", "softplus"]


def test_each_variant_draws_its_own_inputs_reproducibly():
    def draw(item, seed, stream=0):
        return torch.randn(5, generator=Seam(item, seed).generator(stream))

    other = stability.check_softmax_extremes.item
    hidden = hidden_seed(f"{ITEM.topic}.{ITEM.id}", 1, 1234)
    assert torch.equal(draw(ITEM, 0), draw(ITEM, 0)) and torch.equal(draw(ITEM, hidden), draw(ITEM, hidden))
    assert not torch.equal(draw(ITEM, 0), draw(ITEM, hidden))       # the visible variant is not the hidden one
    assert not torch.equal(draw(ITEM, 0), draw(other, 0))           # nor one item's inputs another's
    assert not torch.equal(draw(ITEM, 0), draw(ITEM, 0, "second"))  # nor one stream another's
    assert Seam(ITEM, 3).seed_for("x") == Seam(ITEM, 3).seed_for("x") != Seam(ITEM, 4).seed_for("x")


def test_the_seam_is_the_checks_name_and_travels_as_it():
    seam = Seam(ITEM, 0)
    assert seam == "check_softmax_forward" and f"[{seam}]" == "[check_softmax_forward]"
    assert type(pickle.loads(pickle.dumps(seam))) is str
    seen = []
    handle(seen.append).beside(seeded_call, 0, seam)     # what crosses to the student's process is the plain name
    assert seen == ["check_softmax_forward"] and type(seen[0]) is str


def test_a_handle_call_carries_call_students_guards():
    def in_place(x):
        x -= 1
        return x

    def broken(x):
        raise ValueError("bad input")

    x = torch.ones(3)
    with pytest.raises(CheckFailure, match=r"in_place changed its input"):
        Student(in_place, "check_x", "in_place")(x)
    with pytest.raises(CheckFailure, match=r"\[check_x\] broken\(tensor of shape \[3\].*raised ValueError: bad input"):
        Student(broken, "check_x", "broken")(x)
    error = Student(broken, "check_x", "broken").raises(x, expected=ValueError)
    assert str(error) == "bad input"
    with pytest.raises(CheckFailure, match=r"broken\(.*\) returned .*, but it should raise ValueError"):
        Student(lambda x: x, "check_x", "broken").raises(x, expected=ValueError)


def test_an_attribute_is_a_handle_named_after_it():
    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            raise NotImplementedError

    with pytest.raises(CheckFailure, match=r"Softplus.apply is not implemented yet"):
        Student(Softplus, "check_x", "Softplus").apply(torch.ones(2))


def test_a_handle_passed_to_the_student_is_the_object_it_holds():
    model = torch.nn.Linear(2, 1)
    got = Student(lambda m: m, "check_x", "fit")(Student(model, "check_x", "model"))
    assert got is model


def test_a_handle_called_inside_a_guarded_call_is_the_plain_call():
    """A check's closure handed to a guarded call (``attempt`` catching the student's ``ValueError``) sees the
    student's own exception: the guards of the call around it hold, once."""
    def write_shards(paths, out_dir, num_shards):
        raise ValueError("num_shards must be at least 1")

    handle_ = Student(write_shards, "check_write_shards", "write_shards")

    def attempt():
        try:
            handle_([], "out", 0)
        except ValueError:
            return ValueError
        return None

    assert Student(attempt, "check_write_shards", "write_shards")() is ValueError
    with pytest.raises(CheckFailure, match="write_shards"):
        handle_([], "out", 0)          # outside, the same call is guarded
