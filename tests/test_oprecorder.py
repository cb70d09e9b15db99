"""The op recorder sees every spelling of an operation and counts calls without a clock."""

import pytest
import torch
import torch.nn.functional as F

from autograder.errors import CheckFailure
from autograder.measuring.oprecorder import expect_constant_op_count, expect_no_forbidden_ops
from autograder.seam.ops import normalise, record_ops

pytestmark = pytest.mark.quick


@pytest.mark.parametrize("spelling", [
    lambda x: torch.softmax(x, -1),
    lambda x: F.softmax(x, -1),
    lambda x: x.softmax(-1),
    lambda x: torch.special.softmax(x, -1),
    lambda x: torch.ops.aten._softmax(x, -1, False),
    lambda x: torch.log_softmax(x, -1).exp(),
    lambda x: (x - torch.logsumexp(x, -1, keepdim=True)).exp(),
    lambda x: torch.special.logsumexp(x, -1),
    lambda x: F.cross_entropy(x, torch.zeros(3, dtype=torch.long)),
    lambda x: torch.nn.CrossEntropyLoss()(x, torch.zeros(3, dtype=torch.long)),
    lambda x: F.nll_loss(x, torch.zeros(3, dtype=torch.long)),
])
def test_every_spelling_is_forbidden(spelling):
    with pytest.raises(CheckFailure) as excinfo:
        expect_no_forbidden_ops("c", spelling, torch.randn(3, 4),
                                forbidden=("softmax", "log_softmax", "logsumexp", "cross_entropy", "nll_loss"))
    assert "which this exercise forbids" in str(excinfo.value)


def test_elementary_operations_are_allowed():
    def manual(x):
        z = x - x.amax(-1, keepdim=True)
        return z.exp() / z.exp().sum(-1, keepdim=True)

    out, record = expect_no_forbidden_ops("c", manual, torch.randn(3, 4), forbidden=("softmax",))
    assert out.shape == (3, 4)
    assert record.names() == ["amax", "sub", "exp", "exp", "sum", "div"]


def test_normalise_meets_aliases():
    assert {normalise(n) for n in ("special_log_softmax", "_log_softmax", "log_softmax.int")} == {"log_softmax"}
    assert normalise("cross_entropy_loss") == "cross_entropy"
    assert normalise("add_") == "add"
    assert normalise("__getitem__") == "getitem"


def gather_loop(t, idx):
    return torch.stack([t[b, idx[b]] for b in range(t.shape[0])])


def gather_vectorized(t, idx):
    return t[torch.arange(t.shape[0]).unsqueeze(1), idx]


def make_args(batch):
    return torch.randn(batch, 5, 3), torch.randint(0, 5, (batch, 2))


def test_op_count_of_a_loop_grows_with_batch():
    with pytest.raises(CheckFailure) as excinfo:
        expect_constant_op_count("c", gather_loop, make_args, (4, 64))
    assert "size 4:" in str(excinfo.value) and "size 64:" in str(excinfo.value)
    assert excinfo.value.measurements["op_counts"][64] > excinfo.value.measurements["op_counts"][4]


def test_op_count_of_vectorized_code_is_constant():
    counts = expect_constant_op_count("c", gather_vectorized, make_args, (4, 64))
    assert counts[4] == counts[64] > 0


def test_record_ops_records_nothing_outside_the_block():
    with record_ops() as record:
        torch.ones(2) + 1
    torch.ones(2) * 3
    assert record.names() == ["ones", "add"]
