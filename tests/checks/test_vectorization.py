"""The vectorization checks pass correct solutions and catch each realistic mistake."""

import warnings

import pytest
import torch

from autograder.checks import vectorization
from autograder.errors import CheckFailure
from autograder.timing import count_host_syncs, expect_no_per_row_sync
from tests.mutants.vectorization import MUTANTS
from tests.proving import failing, reference, with_replacements

TOPIC = "vectorization"


def test_scripted_loop_is_caught_without_a_clock():
    replacements, _ = MUTANTS["batch_gather as a TorchScript loop"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_batch_gather_vectorized"]
    assert "grows with the input size" in message and "size 64" in message


def test_batch_mismatch_must_be_named():
    replacements, _ = MUTANTS["batch_gather with a silent ValueError"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_batch_gather_errors"]
    assert "ValueError('bad shapes')" in message and "batch sizes differ" in message


def test_out_of_range_message_names_the_index():
    replacements, _ = MUTANTS["batch_gather without a bounds check"]
    message = failing(TOPIC, with_replacements(TOPIC, replacements))["check_batch_gather_errors"]
    assert "is out of range for N =" in message and "next row" in message


def test_plain_function_is_not_accepted_as_scripted():
    message = failing(TOPIC, with_replacements(TOPIC, {"scripted_batch_gather": vectorization.loop_gather}))
    assert "not a TorchScript function" in message["check_scripted_gather"]


def test_scripted_value_error_counts_as_value_error():
    """TorchScript re-raises a ValueError as a torch.jit.Error that names it; out-of-range rows raise too."""
    def loop(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        if indices.shape[0] != tensor.shape[0]:
            raise ValueError("batch sizes differ")
        return torch.stack([tensor[b][indices[b]] for b in range(tensor.shape[0])])

    def silent(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        if indices.shape[0] != tensor.shape[0]:
            raise ValueError("wrong shapes")
        return torch.stack([tensor[b][indices[b]] for b in range(tensor.shape[0])])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted, scripted_silent = torch.jit.script(loop), torch.jit.script(silent)
    vectorization.check_batch_gather_errors(scripted)
    with pytest.raises(CheckFailure) as excinfo:
        vectorization.check_batch_gather_errors(scripted_silent)
    assert "does not say that the batch sizes differ" in excinfo.value.detail


def test_deprecation_warnings_as_errors_do_not_break_the_scripted_check():
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # even a grader run with -W error
        namespace = reference(TOPIC)                   # the cell scripts under catch_warnings
        vectorization.check_scripted_gather(namespace["scripted_batch_gather"], cases=4)


def test_op_counts_are_reported():
    calls, kernels = vectorization.expect_constant_work(
        "demo", reference(TOPIC)["batch_gather"], vectorization._gather_count_args, (4, 64), what="batch_gather",
        hint="")
    assert len(set(calls.values())) == 1 and len(set(kernels.values())) == 1
    assert calls[4] > 0 and kernels[4] > 0


def test_host_syncs_are_not_counted_on_the_cpu():
    tensor, indices = vectorization.speed_args("cpu")
    result, count = count_host_syncs("demo", vectorization.loop_gather, tensor[:4], indices[:4])
    assert count is None and result.shape == (4, 4)


@pytest.mark.gpu
def test_loop_synchronises_once_per_row_and_reference_does_not():
    tensor, indices = vectorization.speed_args("cuda")
    previous = torch.cuda.get_sync_debug_mode()
    with pytest.raises(CheckFailure) as excinfo:
        expect_no_per_row_sync("demo", vectorization.loop_gather, lambda b: (tensor[:b], indices[:b]), (4, 64))
    assert excinfo.value.measurements["host_syncs"][64] >= 64
    counts = expect_no_per_row_sync("demo", reference(TOPIC)["batch_gather"],
                                    lambda b: (tensor[:b], indices[:b]), (4, 64))
    assert counts[4] == counts[64]
    assert torch.cuda.get_sync_debug_mode() == previous
