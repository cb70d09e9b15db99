"""The broadcasting checks pass correct solutions and catch each realistic mistake."""

import pytest
import torch

from autograder.checks import broadcasting
from autograder.checks.broadcasting.tiling import expect_no_tiling
from autograder.errors import CheckFailure
from tests.mutants.broadcasting import MUTANTS, distances_loop, mse_no_check
from tests.proving import check_names, failing, reference, with_replacements

TOPIC = "broadcasting"


# ------------------------------------------------------------------ the tiling detector

def _layers(in1=5, in2=6, out=10):
    torch.manual_seed(0)
    return torch.nn.Linear(in1, out), torch.nn.Linear(in2, out), torch.nn.Linear(in1 + in2, out)


A, B = torch.randn(5, 3, 5), torch.randn(5, 1, 6)


def _tiling_message(fn):
    with pytest.raises(CheckFailure) as excinfo:
        expect_no_tiling("check_x", fn, A, B, what="forward")
    return str(excinfo.value)


def test_split_layers_pass_even_with_a_broadcast_view():
    linear1, linear2, _ = _layers()
    out = expect_no_tiling("check_x", lambda a, b: linear1(a) + linear2(b).expand(5, 3, 10), A, B)
    assert out.shape == (5, 3, 10)


@pytest.mark.parametrize("tile, named", [
    (lambda b: b.repeat(1, 3, 1), "Tensor.repeat"),
    (lambda b: torch.tile(b, (1, 3, 1)), "torch.tile"),
    (lambda b: b.repeat_interleave(3, dim=1), "Tensor.repeat_interleave"),
])
def test_tiling_ops_are_named(tile, named):
    *_, linear = _layers()
    message = _tiling_message(lambda a, b: linear(torch.cat([a, tile(b)], -1)))
    assert named in message and "Input: a = tensor of shape [5, 3, 5]" in message


@pytest.mark.parametrize("view, join, named", [
    (lambda b: b.expand(5, 3, 6), lambda t: torch.cat(t, -1), ("Tensor.expand", "torch.cat")),
    (lambda b: b.expand_as(torch.empty(5, 3, 6)), lambda t: torch.concat(t, -1), ("Tensor.expand_as", "torch.concat")),
    (lambda b: torch.broadcast_to(b, (5, 3, 6)), lambda t: torch.dstack(t), ("torch.broadcast_to", "torch.dstack")),
    (lambda b: torch.broadcast_tensors(b, torch.empty(5, 3, 1))[0], lambda t: torch.cat(t, 2),
     ("broadcast_tensors", "torch.cat")),
])
def test_a_broadcast_view_then_a_join_is_caught_in_any_spelling(view, join, named):
    *_, linear = _layers()
    message = _tiling_message(lambda a, b: linear(join([a, view(b)])))
    assert all(name in message for name in named), message


@pytest.mark.parametrize("materialise", [
    lambda b: b.expand(5, 3, 6).contiguous(),
    lambda b: b + torch.zeros(5, 3, 1),
    lambda b: torch.zeros(5, 3, 6).copy_(b),
    lambda b: b.expand(5, 3, 6).reshape(15, 6),
])
def test_a_materialised_tiled_input_is_caught_without_any_tiling_op(materialise):
    linear1, linear2, _ = _layers()
    message = _tiling_message(lambda a, b: linear1(a) + linear2(materialise(b)).reshape(5, 3, 10))
    assert "materialises a tensor of shape" in message and "`b` tiled to the batch shape [5, 3]" in message


# -------------------------------------------------------------------------- messages

def test_negative_distances_message_says_clamp():
    replacements, _ = MUTANTS["distances from the expanded square without clamping"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_pairwise_nonnegative"]
    assert "negative" in message and "clamp" in message and "Input: x = tensor of shape" in message


def test_loop_reports_growing_op_counts():
    with pytest.raises(CheckFailure) as excinfo:
        broadcasting.check_pairwise_vectorized(distances_loop)
    counts = excinfo.value.measurements["op_counts"]
    assert counts[2] < counts[5] < counts[13]


def test_the_twelve_not_six_trap_is_refused():
    with pytest.raises(CheckFailure) as excinfo:
        broadcasting.check_strict_mse_refuses_broadcast(mse_no_check)
    assert "returned" in str(excinfo.value) and "should raise ValueError" in str(excinfo.value)


def _mse_saying(say):
    """The reference ``strict_mse_loss``, whose ValueError for two shapes says ``say(prediction shape, target
    shape)`` (each a list of ints)."""
    loss = reference(TOPIC)["strict_mse_loss"]

    def strict_mse_loss(prediction, target):
        if prediction.shape != target.shape:
            raise ValueError(say(list(prediction.shape), list(target.shape)))
        return loss(prediction, target)
    return strict_mse_loss


def _times(shape):
    return "x".join(map(str, shape)) if shape else "scalar"


# Ways to name both shapes: the lesson's `[4, 1]` is an example, not the only format.
NAMES_BOTH = [
    lambda p, t: f"prediction has shape {p} but target has shape {t}",
    lambda p, t: f"shapes {tuple(p)} and {tuple(t)} differ",
    lambda p, t: f"{torch.Size(p)} != {torch.Size(t)}",
    lambda p, t: f"prediction is {_times(p)}, target is {_times(t)}",
    lambda p, t: f"expected equal shapes, got {' x '.join(map(str, p)) or '()'} and {' x '.join(map(str, t)) or '()'}",
]
# Messages that name one shape or none.
NAMES_ONE = [lambda p, t: "shapes differ", lambda p, t: f"target should have shape {p}",
             lambda p, t: f"prediction has {len(p)} dims, target has {len(t)}"]


@pytest.mark.parametrize("say", NAMES_BOTH, ids=[say([4, 1], [4]) for say in NAMES_BOTH])
def test_both_shapes_named_in_any_notation(say):
    broadcasting.check_strict_mse_refuses_broadcast(_mse_saying(say))


@pytest.mark.parametrize("say", NAMES_ONE, ids=[say([4, 1], [4]) for say in NAMES_ONE])
def test_a_message_naming_fewer_shapes_fails(say):
    with pytest.raises(CheckFailure) as excinfo:
        broadcasting.check_strict_mse_refuses_broadcast(_mse_saying(say))
    assert "should name both shapes" in excinfo.value.detail


def test_raising_function_costs_only_its_checks():
    def broken(x, y):
        raise RuntimeError("boom")

    failed = failing(TOPIC, with_replacements(TOPIC, {"pairwise_sq_distances": broken}))
    assert set(failed) == {c for c in check_names(TOPIC) if "pairwise" in c}
    assert "raised RuntimeError: boom" in failed["check_pairwise_values"]


def test_merge_that_is_not_a_module_gets_a_clear_message():
    def merge_function(in1, in2, out, activation=None):
        return lambda a, b: a

    failed = failing(TOPIC, with_replacements(TOPIC, {"Merge": merge_function}))
    assert {c for c in check_names(TOPIC) if "merge" in c} == set(failed)
    assert "not a torch.nn.Module" in failed["check_merge_structure"]
