"""The vectorization checks pass correct solutions and catch each realistic mistake."""

import warnings

import pytest
import torch

from autograder.checks import vectorization
from autograder.checks.vectorization import masked_mean, per_sample
from autograder.checks.vectorization.probes import compiling, worker_facts
from autograder.errors import CheckFailure
from autograder.measuring.timing import count_host_syncs, expect_no_per_row_sync
from tests.mutants.vectorization import MUTANTS
from tests.proving import failing_among, reference, with_replacements

TOPIC = "vectorization"


def _message(mistake, check):
    """What ``check`` says to the mistake ``mistake`` of the mutants (that check alone is graded)."""
    replacements, _ = MUTANTS[mistake]
    return failing_among(TOPIC, with_replacements(TOPIC, replacements), {check})[check]


def test_unbind_loop_is_caught_without_a_clock():
    message = _message("batch_gather as a loop over unbind", "check_batch_gather_vectorized")
    assert "grows with the input size" in message and "size 64" in message


def test_batch_mismatch_must_be_named():
    message = _message("batch_gather with a silent ValueError", "check_batch_gather_errors")
    assert "ValueError('bad shapes')" in message and "batch sizes differ" in message


def _gather_saying(say):
    """The reference ``batch_gather``, whose ValueError for a batch mismatch says ``say(indices_rows, tensor_rows)``."""
    gather = reference(TOPIC)["batch_gather"]

    def batch_gather(tensor, indices):
        if indices.shape[0] != tensor.shape[0]:
            raise ValueError(say(indices.shape[0], tensor.shape[0]))
        return gather(tensor, indices)
    return batch_gather


# Honest ways to say that the batch sizes differ: the lesson shows no wording ("a ValueError that says so").
SAYS_SO = [
    lambda i, t: f"the first dimensions differ ({i} vs {t})",
    lambda i, t: f"indices has {i} rows but tensor has {t}",
    lambda i, t: "indices.shape[0] must equal tensor.shape[0]",
    lambda i, t: "leading dimensions of tensor and indices do not match",
    lambda i, t: f"size mismatch at dim 0: {i} != {t}",
    lambda i, t: f"{t} samples in tensor, {i} index rows",
    lambda i, t: "Batch mismatch.",
]
# Messages that do not say it: nothing, a word with no content, the wrong complaint.
SAYS_NOTHING = [lambda i, t: "", lambda i, t: "bad shapes", lambda i, t: "indices out of range",
                lambda i, t: f"cannot gather with indices of {i} rows"]


@pytest.mark.parametrize("say", SAYS_SO, ids=[say(5, 4) for say in SAYS_SO])
def test_batch_mismatch_in_any_honest_words(say):
    vectorization.check_batch_gather_errors(_gather_saying(say))


@pytest.mark.parametrize("say", SAYS_NOTHING, ids=[repr(say(5, 4)) for say in SAYS_NOTHING])
def test_batch_mismatch_not_said(say):
    with pytest.raises(CheckFailure) as excinfo:
        vectorization.check_batch_gather_errors(_gather_saying(say))
    assert "does not say that the batch sizes differ" in excinfo.value.detail


def test_out_of_range_message_names_the_index():
    message = _message("batch_gather without a bounds check", "check_batch_gather_errors")
    assert "is out of range for N =" in message and "next row" in message


def test_scripted_value_error_counts_as_value_error():
    """A student who scripts batch_gather anyway (TorchScript is no longer taught: deprecated on 2.13): TorchScript
    re-raises a ValueError as a torch.jit.Error that names it; out-of-range rows raise too."""
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


# ------------------------------------------------------------------ per_sample_grads with torch.func

def test_per_sample_oracle_sums_to_the_batch_gradient():
    """The grader's loop (grader-only oracle) agrees with autograd on the batch's summed loss, and the model's own
    parameters hold other values than params (an answer that differentiates them gets other numbers)."""
    from autograder.oracles.vectorization import per_sample_grads as oracle

    gen = torch.Generator().manual_seed(0)
    for i in range(6):
        sizes, dtype, b, _ = per_sample.draw_case(gen, i)
        params, decoy, x, y = per_sample.draw(gen, sizes, dtype, b)
        model = worker_facts.mlp(sizes).double()
        expected = oracle(sizes, params, x, y)
        leaves = {name: p.detach().double().requires_grad_(True) for name, p in params.items()}
        total = torch.nn.functional.cross_entropy(torch.func.functional_call(model, leaves, (x.double(),)), y,
                                                  reduction="sum")
        summed = dict(zip(leaves, torch.autograd.grad(total, list(leaves.values()))))
        for name in params:
            assert expected[name].shape == (b, *params[name].shape)
            torch.testing.assert_close(expected[name].sum(0), summed[name], rtol=1e-10, atol=1e-12)
            assert not torch.equal(params[name], decoy[name])


def _source_findings(mistake):
    """What the vmapped item's source rules find in the mistake's source (read after its data passed)."""
    from autograder.source_evidence.source_rules import rule_findings
    from autograder.source_evidence.submitted_source import Submission

    submission = Submission.of_objects({"per_sample_grads": MUTANTS[mistake][0]["per_sample_grads"]})
    rules = vectorization.check_per_sample_grads_vmapped.item.source
    return " ".join(finding.text() for rule in rules for finding in rule_findings(rule, submission))


def test_per_sample_loop_is_caught_by_its_source_and_its_op_counts():
    found = _source_findings("per_sample_grads as a Python loop over samples")
    assert "does not use `torch.func.vmap`" in found and "uses a `for` loop" in found
    message = _message("per_sample_grads as a Python loop over samples", "check_per_sample_grads_vmapped")
    assert "grows with the input size" in message      # what the student's own kernel says too (no source there)


def test_vmap_inside_a_loop_is_still_a_loop():
    found = _source_findings("per_sample_grads calling vmap one sample at a time")
    assert "a list comprehension" in found and "does not use" not in found
    assert _source_findings("per_sample_grads with in_dims (None, 0, None)") == ""


def test_wrong_per_sample_gradients_get_the_hint_for_their_cause():
    assert "the shape of the parameter itself" in _message("per_sample_grads of the batch's summed loss",
                                                           "check_per_sample_grads_values")
    assert "divided by the batch size" in _message("per_sample_grads divided by the batch size",
                                                   "check_per_sample_grads_values")
    for mistake in ("per_sample_grads calling model(x) instead of functional_call",
                    "per_sample_grads detaching params inside the loss"):
        assert "all zeros" in _message(mistake, "check_per_sample_grads_values")
    assert "the model's own parameters (they hold other values here)" in _message(
        "per_sample_grads of model.named_parameters() (not params, not detached)", "check_per_sample_grads_values")


# ------------------------------------------------------------------ torch.gather's index dtype (lesson claim)

def test_gather_accepts_int32_indices():
    """The lesson says int32 indices work in torch.gather (checked on torch 2.13; since 2.8 per
    pytorch/pytorch#162711), with the same values and gradient as int64; int16 does not."""
    tensor = torch.randn(3, 5, 2, dtype=torch.float64, requires_grad=True)
    index = torch.randint(0, 5, (3, 4, 1)).expand(-1, -1, 2)
    as_int64 = torch.gather(tensor, 1, index)
    as_int32 = torch.gather(tensor, 1, index.to(torch.int32))
    assert torch.equal(as_int32, as_int64)
    grad = torch.randn_like(as_int64)
    assert torch.equal(torch.autograd.grad(as_int32, tensor, grad)[0], torch.autograd.grad(as_int64, tensor, grad)[0])
    with pytest.raises(RuntimeError, match="int32/int64"):
        torch.gather(tensor, 1, index.to(torch.int16))


# ------------------------------------------------------------------ masked_batch_mean under torch.compile

def test_loop_over_steps_is_reported_with_the_guard_that_failed():
    message = _message("masked_batch_mean as a Python loop over T", "check_masked_mean_no_recompiles")
    assert f"compiled more than {vectorization.MAX_GRAPHS} graphs" in message
    assert "size mismatch at index 1 (T)" in message


def test_item_is_a_graph_break_with_its_line():
    message = _message("masked_batch_mean calling .item() on lengths", "check_masked_mean_one_graph")
    assert "graph break" in message and "Tensor.item()" in message
    assert "longest = int(lengths.max().item())" in message


def test_branch_on_values_fails_to_compile_with_a_short_message():
    message = _message("masked_batch_mean branching on lengths' values", "check_masked_mean_one_graph")
    assert "Data-dependent branching" in message and "lengths.min() == x.shape[1]" in message
    assert "Developer debug context" not in message and len(message) < 1500


def test_wrong_means_get_the_hint_for_their_cause():
    assert "0 / 0" in _message("masked_batch_mean dividing 0 by 0 for empty rows", "check_masked_mean_values")
    assert "padding leaks" in _message("masked_batch_mean multiplying by the mask", "check_masked_mean_values")
    assert "changed its input" in _message("masked_batch_mean zeroing the padding in place",
                                           "check_masked_mean_values")


def test_compile_checks_leave_no_dynamo_state_behind():
    """Each compile check resets dynamo before and after, and restores what it pinned."""
    import logging

    import torch._dynamo
    from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

    fn = reference(TOPIC)["masked_batch_mean"]
    before = (torch._dynamo.config.recompile_limit, torch._dynamo.config.capture_scalar_outputs,
              logging.getLogger("torch._dynamo").level)
    vectorization.check_masked_mean_one_graph(fn)
    vectorization.check_masked_mean_no_recompiles(fn, shapes=3)
    with pytest.raises(CheckFailure):
        vectorization.check_masked_mean_no_recompiles(MUTANTS["masked_batch_mean as a Python loop over B"][0][
            "masked_batch_mean"], shapes=4)
    assert _debug_get_cache_entry_list(fn.__code__) == []
    assert not torch._dynamo.utils.guard_failures
    assert (torch._dynamo.config.recompile_limit, torch._dynamo.config.capture_scalar_outputs,
            logging.getLogger("torch._dynamo").level) == before


def test_sweep_avoids_the_sizes_dynamo_specializes():
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        shapes = masked_mean.sweep_sizes(gen, vectorization.SWEEP_SHAPES)
        assert len(shapes) == vectorization.SWEEP_SHAPES
        assert all(min(shape) >= 2 and len(set(shape)) == 3 for shape in shapes)
        assert max(max(shape) for shape in shapes[:3]) <= 9 and max(max(shape) for shape in shapes) <= 17
        for dimension in range(3):
            assert len({shape[dimension] for shape in shapes}) == len(shapes)


def test_correct_code_recompiles_for_size_one_and_equal_sizes():
    """Why the sweep avoids them (measured on torch 2.13): even the reference gets a second graph after a call
    with T = 1, or after one whose B and F were equal (duck sizing), but not over sizes that avoid both."""
    import torch._dynamo

    fn = reference(TOPIC)["masked_batch_mean"]

    def graphs_for(shapes):
        with compiling.fresh_dynamo():
            compiler = compiling.CountingCompiler()
            call = compiling.compiled(fn, compiler)
            for b, t, f in shapes:
                call(torch.randn(b, t, f), torch.randint(0, t + 1, (b,)))
            return compiler.graphs

    assert graphs_for([(3, 1, 2), (4, 5, 6)]) == 2          # T = 1 specialized
    assert graphs_for([(3, 5, 3), (4, 6, 2)]) == 2          # B == F shared one symbol
    assert graphs_for([(3, 5, 2), (4, 6, 7), (9, 2, 5)]) == 1
    assert _debug_cache_is_empty(fn)


def _debug_cache_is_empty(fn):
    from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list
    return _debug_get_cache_entry_list(fn.__code__) == []


# ------------------------------------------------------------------ trusted grading: facts from the student's worker

def test_compile_facts_are_gathered_under_the_workers_recorder():
    """The trusted worker runs every call under the op recorder's modes, which torch.compile refuses; the compile
    probes step outside them and put them back."""
    from autograder.seam.ops import open_record, record_ops

    x, lengths = masked_mean.make_input(torch.Generator().manual_seed(0), 3, 5, 2, empty_rows=False)
    item = MUTANTS["masked_batch_mean calling .item() on lengths"][0]["masked_batch_mean"]
    with record_ops() as record:
        session = compiling.open_compiled(reference(TOPIC)["masked_batch_mean"])
        try:
            out, failure = session(x, lengths)
            assert failure is None and session.graphs == 1 and session.reasons() == []
        finally:
            compiling.close_compiled(session)
        assert compiling.explain_breaks(reference(TOPIC)["masked_batch_mean"], x, lengths) == []
        assert "Tensor.item()" in compiling.explain_breaks(item, x, lengths)[0][0]
        assert open_record() is record
    torch.testing.assert_close(out.double(), masked_mean.oracle(x, lengths))


def test_host_syncs_counted_in_a_worker_are_judged_here(monkeypatch):
    from autograder.checks.vectorization.probes import worker_facts

    tensor, indices = vectorization.speed_args("cpu")
    assert worker_facts.expect_no_per_row_sync_facts("demo", vectorization.loop_gather, tensor, indices, (4, 64),
                                                     what="batch_gather") is None      # not on CUDA: nothing
    monkeypatch.setattr(worker_facts, "count_host_syncs", lambda check, fn, t, i, what: (None, 2 * len(t)))
    with pytest.raises(CheckFailure) as excinfo:
        worker_facts.expect_no_per_row_sync_facts("demo", vectorization.loop_gather, tensor, indices, (4, 64),
                                                  what="batch_gather")
    assert "grows with the batch (batch 4: 8, batch 64: 128 host synchronisations)" in excinfo.value.detail
    assert excinfo.value.measurements == {"host_syncs": {4: 8, 64: 128}}


def test_a_remote_submission_is_graded_like_a_local_one(tmp_path):
    """In a worker (trusted grading): a TorchScript function's errors count as torch.jit.Error, an in-place write
    into an input is seen although the grader's inputs are copies, and per_sample_grads gets a model built in the
    worker (a handle here) holding the grader's decoy values."""
    from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher

    cell = '''
import torch
from typing import List

def loop(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError("batch sizes differ")
    if indices.numel() > 0 and (bool(indices.min() < 0) or bool(indices.max() >= tensor.shape[1])):
        raise IndexError("out of range")
    rows: List[torch.Tensor] = []
    for b in range(tensor.shape[0]):
        rows.append(tensor[b][indices[b]])
    return torch.stack(rows)

def silent(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if indices.shape[0] != tensor.shape[0]:
        raise ValueError("wrong shapes")
    return loop(tensor, indices)

scripted, scripted_silent = torch.jit.script(loop), torch.jit.script(silent)

from torch.func import functional_call, grad, vmap

def per_sample(model, params, x, y):
    def loss(params, xi, yi):
        return torch.nn.functional.cross_entropy(functional_call(model, params, (xi[None],)), yi[None])
    return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)

def own_parameters(model, params, x, y):
    return per_sample(model, {k: v.detach() for k, v in model.named_parameters()}, x, y)

def zeroing(x, lengths):
    x.masked_fill_(~(torch.arange(x.shape[1]) < lengths[:, None])[:, :, None], 0)
    return x.sum(1) / lengths.clamp(min=1)[:, None].to(x.dtype)
'''
    worker = NotebookWorker([("cell", cell)], plain_launcher, str(tmp_path))
    try:
        remote = RemoteNamespace(worker)
        vectorization.check_batch_gather_errors(remote["scripted"])
        vectorization.check_per_sample_grads_values(remote["per_sample"])
        vectorization.check_per_sample_grads_vmapped(remote["per_sample"])
        with pytest.raises(CheckFailure, match="the gradients at the model's own parameters, not at the `params`"):
            vectorization.check_per_sample_grads_values(remote["own_parameters"], cases=2)
        with pytest.raises(CheckFailure, match="does not say that the batch sizes differ"):
            vectorization.check_batch_gather_errors(remote["scripted_silent"])
        with pytest.raises(CheckFailure, match="changed its input \\(`x`"):
            vectorization.check_masked_mean_values(remote["zeroing"], cases=4)
    finally:
        worker.close()
