"""Checks for the ``vectorization`` assignment: ``batch_gather``, ``per_sample_grads`` (``torch.func.vmap`` over
``torch.func.grad``: see ``per_sample.py``), and ``masked_batch_mean`` (vectorized, and compiled by ``torch.compile``
into one graph for every size: see ``compiling.py``).

The oracle is a plain loop over the batch (``tensor[b][indices[b]]``), run here on
the same inputs. Vectorization is graded twice: without a clock (the number of torch
calls and ATen kernels must not grow with the batch size, the same verdict on every
machine) and with one (a speedup over the loop, per device, from the settings; on
CUDA also no host synchronisation per row).
"""

import re

import torch

from autograder.checks.vectorization import masked_mean, per_sample
from autograder.checks.vectorization.contract import gather_labels, mean_labels
from autograder.checks.vectorization.probes import compiling, worker_facts
from autograder.checks.vectorization.probes.worker_facts import loop_gather
from autograder.checks.vectorization.rules import no_value_branch
from autograder.contracts import exercised, exercised_as
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_meta
from autograder.measuring.gradients import expect_grad_close, expect_gradcheck
from autograder.measuring.oprecorder import expect_constant_work
from autograder.measuring.timing import expect_speedup
from autograder.seam.student import describe
from autograder.source_evidence.source_rules import no_call, no_loop, uses
from autograder.spec import graded

NO_GRAPH_BREAK = ("item", "tolist", "nonzero", "jit", "compile")   # read from the source: each breaks or
# specializes the graph (.item(), .tolist(), nonzero's data-dependent shape), or compiles it themselves

VALUE_DTYPES = (torch.float32, torch.int64, torch.float64, torch.float16, torch.int32, torch.bfloat16,
                torch.bool, torch.uint8)
SPEED_SHAPE = (4096, 16, 4)          # [B, N, F] timed against the loop, with indices of shape [B]
COUNT_BATCHES = (4, 64)              # batch sizes whose op counts must agree
LOOP_HINT = ("Index all rows at once: with offsets `b * N` into `tensor.reshape(B * N, *F)`, or with "
             "`torch.gather` along dim 1 and indices expanded over the trailing dimensions.")


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _values(gen, shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    return torch.randint(0, 100, shape, generator=gen).to(dtype)


def _dims(gen, max_rank, low=1, high=4):
    rank = int(torch.randint(0, max_rank + 1, (1,), generator=gen))
    return [int(s) for s in torch.randint(low, high, (rank,), generator=gen)]


# Shapes every seed sees: (B, N, K, F); then random ones.
_FIXED_CASES = [(3, 5, [], [2]), (1, 4, [3], [2]), (4, 1, [2], [3]), (2, 6, [2, 3], [4, 2]), (3, 4, [5], []),
                (2, 3, [0], [2]), (2, 5, [2, 1, 2], [1, 3, 2])]


def _case(gen, i):
    """``(tensor, indices)`` for case ``i``: fixed edge shapes first, then random ones."""
    if i < len(_FIXED_CASES):
        b, n, k, f = _FIXED_CASES[i]
    else:
        b = int(torch.randint(1, 6, (1,), generator=gen))
        n = int(torch.randint(1, 7, (1,), generator=gen))
        k, f = _dims(gen, 3, low=0 if i % 5 == 0 else 1), _dims(gen, 2)
    dtype = VALUE_DTYPES[i % len(VALUE_DTYPES)]
    device = _devices()[i % len(_devices())]
    tensor = _values(gen, [b, n, *f], dtype)
    if i % 4 == 3 and len(f) >= 1:      # a non-contiguous view with the same values
        tensor = tensor.transpose(0, -1).contiguous().transpose(0, -1)
    index_dtype = torch.int32 if i % 3 == 2 else torch.int64
    indices = torch.randint(0, n, [b, *k], generator=gen).to(index_dtype)
    return tensor.to(device), indices.to(device)


def _expect_matches_loop(check, fn, tensor, indices, *, what):
    __tracebackhide__ = True
    inputs = {"tensor": tensor, "indices": indices}
    exercised_as(gather_labels, tensor, indices)
    out = check.student(fn, what)(tensor, indices)
    expected = loop_gather(tensor, indices)
    expect_meta(check, out, what=f"{what}'s result", shape=expected.shape, dtype=tensor.dtype,
                device=tensor.device.type, inputs=inputs)
    expect_close(check, out, expected, what=f"{what}'s result", inputs=inputs, rtol=0, atol=0,
                 hint="out[b, k...] = tensor[b, indices[b, k...]]: the result has shape [B, *K, *F], "
                      "for indices of any rank and any number of trailing dimensions F.")
    return out


# ------------------------------------------------------------------ batch_gather

@graded(3, hidden=[{"cases": 60}])
def check_batch_gather_values(check, batch_gather, *, seed=0, cases=30):
    """Equal to the loop ``tensor[b][indices[b]]`` on random shapes ``[B, N, *F]`` / ``[B, *K]``
    (no K, several K and F dimensions, an empty K, N = 1, B = 1), integer, boolean and float values,
    int64 and int32 indices, non-contiguous tensors; result in the tensor's dtype and on its device
    (CUDA too when present)."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        tensor, indices = _case(gen, i)
        _expect_matches_loop(check, batch_gather, tensor, indices, what="batch_gather")


@graded(2, hidden=[{"cases": 12}])
def check_batch_gather_gradient(check, batch_gather, *, seed=0, cases=6):
    """The gradient with respect to ``tensor`` equals the loop's: a row picked several times
    accumulates the upstream gradient of every pick, a row never picked gets zero."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        b = int(torch.randint(1, 5, (1,), generator=gen))
        n = int(torch.randint(1, 4, (1,), generator=gen))           # few rows, many picks: repeats
        k, f = [int(torch.randint(3, 7, (1,), generator=gen))] + _dims(gen, 1), _dims(gen, 2)
        device = _devices()[i % len(_devices())]
        dtype = torch.float64 if device == "cpu" else torch.float32
        tensor = _values(gen, [b, n, *f], dtype).to(device)
        indices = torch.randint(0, n, [b, *k], generator=gen).to(device)
        exercised("repeated_indices")     # n < 4 rows, at least 3 picks per sample

        def loop_vjp(grad_output, tensor=tensor, indices=indices):
            leaf = tensor.detach().clone().requires_grad_(True)
            (grad,) = torch.autograd.grad(loop_gather(leaf, indices), leaf, grad_output)
            return grad

        expect_grad_close(check, lambda t, indices=indices: batch_gather(t, indices), [tensor], loop_vjp,
                          what="batch_gather", rtol=1e-6 if dtype == torch.float32 else 1e-12, atol=1e-6,
                          shape=[b, *k, *f],
                          hint="Gather with differentiable torch indexing (`tensor.reshape(...)[index]` or "
                               "`torch.gather`); no `.detach()`, `.numpy()` or `.tolist()` on the way.")


@graded(2, hidden=[{"cases": 8}])
def check_batch_gather_errors(check, batch_gather, *, seed=0, cases=4):
    """An index outside ``[0, N)`` raises an error instead of returning values from another row
    (tested on the CPU: on CUDA it would be a device-side assert); indices whose batch size differs
    from the tensor's (larger or smaller) raise a ``ValueError`` whose message says so: it names the batch (or the
    first dimension) or gives both sizes (:func:`says_batch_sizes_differ`)."""
    __tracebackhide__ = True
    gen = check.generator()
    batch_gather = check.student(worker_facts.jit_errors_restored(batch_gather.target), "batch_gather")    # a remote TorchScript function's errors
    for i in range(cases):
        b, n = int(torch.randint(2, 5, (1,), generator=gen)), int(torch.randint(2, 6, (1,), generator=gen))
        f, k = _dims(gen, 2), _dims(gen, 2)
        tensor = _values(gen, [b, n, *f], torch.float32)
        for bad in (n, n + 3, -n - 1):
            indices = torch.randint(0, n, [b, *k], generator=gen)
            indices.view(b, -1)[0, 0] = bad    # in row 0: a flat offset would read row 1
            exercised({n: "index_n", n + 3: "index_past_n"}.get(bad, "index_below_minus_n"))
            try:
                batch_gather.raises(tensor, indices, expected=Exception)
            except CheckFailure as failure:
                if failure.kind == "not implemented":
                    raise
                raise CheckFailure(check, f"index {bad} is out of range for N = {n} rows, but no error was raised: "
                                          f"{failure.detail}",
                                   hint="Check `0 <= indices < N` before gathering and raise an IndexError; "
                                        "with a flat `b * N + i` offset an index N silently reads the next "
                                        "row.") from None
        for other in (b + 1, b - 1):
            indices = torch.randint(0, n, [other, *k], generator=gen)
            exercised("batch_larger" if other > b else "batch_smaller")
            # A scripted function's ValueError arrives as a torch.jit.Error that names it.
            error = batch_gather.raises(tensor, indices, expected=(ValueError, torch.jit.Error))
            if isinstance(error, torch.jit.Error) and "ValueError" not in str(error):
                raise CheckFailure(check, f"batch_gather({describe(tensor)}, {describe(indices)}) raised "
                                          f"{str(error)[-300:]}, but it should raise ValueError.")
            text = _value_error_text(error)
            if not says_batch_sizes_differ(text, b, other):
                raise CheckFailure(check, f"batch_gather({describe(tensor)}, {describe(indices)}) raised "
                                          f"ValueError({text!r}), whose message does not say that the batch "
                                          f"sizes differ: it names neither the batch (or the first dimension) nor "
                                          f"both sizes, {other} and {b}.",
                                   hint="Say it, e.g. `ValueError(f\"batch size of indices ({indices.shape[0]}) "
                                        "differs from the tensor's ({tensor.shape[0]})\")`.")


# What "says that the batch sizes differ" accepts, besides both sizes as numbers: the dimension named in words.
FIRST_DIMENSION_WORDS = ("batch", "first dim", "leading dim", "dim 0", "dimension 0", "dim=0", "axis 0", "shape[0]",
                         "size(0)", "len(")


def says_batch_sizes_differ(message, *sizes):
    """The lesson asks for "a ValueError that says so" and shows no wording: the message says so when it names
    the dimension (the batch, the first or leading dimension, ``dim 0``, ``shape[0]``, ...) or gives both sizes
    as numbers ("indices has 5 rows but tensor has 4"); "bad shapes" or an empty message does not."""
    text = message.lower()
    if any(word in text for word in FIRST_DIMENSION_WORDS):
        return True
    numbers = set(re.findall(r"\d+", text))
    return all(str(size) in numbers for size in sizes)


def _value_error_text(error):
    """The ValueError's own message: a scripted function's ``torch.jit.Error`` carries TorchScript's traceback (the
    function's source, line numbers) before ``ValueError: <message>``; only the message is read."""
    text = str(error)
    if isinstance(error, torch.jit.Error):
        found = re.findall(r"ValueError: (.*)", text)
        return found[-1].strip() if found else ""
    return text


def _gather_count_args(batch, gen=None):
    """``(tensor [batch, 16, 4], indices [batch])`` for the op counts, drawn from ``gen``: a check's stream for that
    batch size (:func:`_gather_counted`). Without one (a test of the counting, which has no check), a fixed draw:
    the counts depend on the batch size alone, never on the values."""
    gen = gen or torch.Generator().manual_seed(batch)
    return _values(gen, [batch, 16, 4], torch.float32), torch.randint(0, 16, (batch,), generator=gen)


def _gather_counted(check):
    """``make_args(batch)`` for the op counts: :func:`_gather_count_args` drawn from the check's stream for each
    batch size (the same inputs each time a size is asked for, other inputs for each seed)."""
    return lambda batch: _gather_count_args(batch, check.generator(f"count inputs {batch}"))


@graded(2, source=[no_loop("batch_gather")], worker_facts="op counts at batch 4 and 64", facts_only_cost=True)
def check_batch_gather_vectorized(check, batch_gather, *, seed=0):
    """No loop over the batch, measured without a clock: the numbers of torch calls and of ATen kernels
    are the same for a batch of 4 and a batch of 64 (a loop's grow with the batch)."""
    __tracebackhide__ = True
    counted = _gather_counted(check)
    tensor, indices = counted(3 + seed)
    _expect_matches_loop(check, batch_gather, tensor, indices, what="batch_gather")
    exercised("batches_4_and_64")
    expect_constant_work(check, batch_gather, counted, COUNT_BATCHES, what="batch_gather",
                         hint=LOOP_HINT)


def speed_args(device, gen=None):
    """The timed input: ``(tensor [4096, 16, 4], indices [4096])`` on ``device``, drawn from ``gen`` (the check's
    generator). Without one, a fixed draw: for speed calibration (``benchmarks/speed.py``) and tests, which time the
    reference and the loops, not a student's code, and have no check."""
    gen = gen or torch.Generator().manual_seed(0)
    b, n, f = SPEED_SHAPE
    return (torch.randn(b, n, f, generator=gen).to(device), torch.randint(0, n, (b,), generator=gen).to(device))


@graded(2, hidden=[{}], evidence=("data", "clock"), worker_facts="host syncs per row", facts_only_cost=True)
def check_batch_gather_speed(check, batch_gather, *, seed=0):
    """On the best device here (CUDA when present), at least ``settings.speed.thresholds["batch_gather"]``
    times faster than the loop on a ``[4096, 16, 4]`` tensor with indices ``[4096]``, timed interleaved in one
    process; on CUDA, also no host synchronisation per row."""
    __tracebackhide__ = True
    device = _devices()[-1]
    tensor, indices = speed_args(device, check.generator())
    _expect_matches_loop(check, batch_gather, tensor, indices, what="batch_gather")
    if device == "cuda":    # counted where the student's code runs
        worker_facts.expect_no_per_row_sync_facts(check, batch_gather, tensor, indices, COUNT_BATCHES,
                                                  what="batch_gather")
    exercised("timed_4096x16x4")
    return expect_speedup(check, "batch_gather", batch_gather, loop_gather, (tensor, indices), what="batch_gather",
                          reference="speed.batch_gather",
                          hint=LOOP_HINT)


# ------------------------------------------------- per_sample_grads: torch.func's vmap over grad

@graded(2, hidden=[{"cases": 16}])
def check_per_sample_grads_values(check, per_sample_grads, *, seed=0, cases=8):
    """``per_sample_grads(model, params, x, y)`` returns ``{name: [B, *shape]}`` for every name of ``params``, row
    ``i`` the gradient of ``cross_entropy(model(x[i:i+1]), y[i:i+1])`` with respect to ``params`` (the model's own
    parameters hold other values), equal to the grader's loop over the samples in float64: MLPs of 1 to 3 Linear
    layers of sizes the check draws, 1 to 9 samples, float32 and float64, in params' dtype and on their device."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        sizes, dtype, b, device = per_sample.draw_case(gen, i)
        params, decoy, x, y = per_sample.draw(gen, sizes, dtype, b, device)
        exercised(f"layers_{len(sizes) - 1}", str(dtype).removeprefix("torch."), f"on_{device}", "decoy_parameters",
                  *(["batch_1"] if b == 1 else []))
        per_sample.expect_per_sample_grads(check, per_sample_grads, sizes, params, decoy, x, y)


@graded(1, hidden=[{}], source=[uses("per_sample_grads", *per_sample.VMAP_NAMES), no_loop("per_sample_grads")],
        worker_facts="op counts at batch 4 and 64", facts_only_cost=True)
def check_per_sample_grads_vmapped(check, per_sample_grads, *, seed=0):
    """Written with ``torch.func.vmap`` and without a Python loop over the samples (read from the source), right on
    a batch of 16 (the hidden variant's drawn at grading time: no table of the visible answer passes it); the
    numbers of torch calls and of ATen kernels are the same for 4 samples and 64."""
    __tracebackhide__ = True
    gen = check.generator()
    params, decoy, x, y = per_sample.draw(gen, [4, 6, 3], torch.float32, 16)
    exercised("batch_16", "decoy_parameters")
    per_sample.expect_per_sample_grads(check, per_sample_grads, [4, 6, 3], params, decoy, x, y)
    exercised("batches_4_and_64")
    expect_constant_work(check, per_sample_grads, per_sample.count_args(check, per_sample_grads), COUNT_BATCHES,
                         what="per_sample_grads", hint=per_sample.HINT)


# ------------------------------------------------------------ masked_batch_mean: the compiler today

MAX_GRAPHS = 2            # graphs allowed over a sweep: 1 for the reference; 1 more for a guard on a size range
SWEEP_SHAPES = 8          # distinct (B, T, F) of the recompilation sweep; a loop over T recompiles at the 2nd
COUNT_SIZES = (4, 64)     # T (and B) whose op counts must agree
COMPILE_HINT = ("Keep every value inside tensors: no `.item()`, `int(t)`, `bool(t)`, `.tolist()`, and no `if` or "
                "`for` that depends on a tensor's values or on a size (`for t in range(T)` is unrolled once per T); "
                "`torch.where` and a mask replace the branch.")
COMPILED = f"torch.compile(masked_batch_mean, {compiling.COMPILE_OPTIONS})"


def _expect_mean(check, fn, x, lengths, *, what="masked_batch_mean", out=None):
    __tracebackhide__ = True
    inputs = {"x": x, "lengths": lengths}
    exercised_as(mean_labels, x, lengths)
    if out is None:
        out = check.student(fn, what)(x, lengths)
    expect_meta(check, out, what=f"{what}'s result", shape=(x.shape[0], x.shape[2]), dtype=x.dtype,
                device=x.device.type, inputs=inputs, hint="The result is [B, F]: one mean over T per row and feature.")
    rtol, atol = masked_mean.tolerance(x, lengths)
    expect_close(check, out, masked_mean.oracle(x, lengths), what=f"{what}'s result", inputs=inputs, rtol=rtol,
                 atol=atol, hint=masked_mean.hint_for(check, fn, x, lengths, out),
                 known=masked_mean.mistaken(x, lengths))
    return out


@graded(2, hidden=[{"cases": 60}])
def check_masked_mean_values(check, masked_batch_mean, *, seed=0, cases=30):
    """Equal to the float64 loop ``x[b, :lengths[b]].mean(0)`` (0 for an empty row) on x ``[B, T, F]`` in float32,
    float64, float16 and bfloat16: rows of length 0 and of full length in every batch, B = 1, T = 1, T = 0, B = 0, odd shapes,
    values of magnitude 1e30 and 1e-30, non-contiguous x, and padding (the steps past ``lengths[b]``) holding
    random values, NaN or inf, which must not change the result; the result in x's dtype and on its device."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        x, lengths = masked_mean.value_case(gen, i, _devices())
        _expect_mean(check, masked_batch_mean, x, lengths)


@graded(1, hidden=[{"cases": 12}])
def check_masked_mean_gradient(check, masked_batch_mean, *, seed=0, cases=6):
    """The gradient with respect to x: step ``t < lengths[b]`` of row b gets ``grad_out[b] / lengths[b]``, padding
    and empty rows get 0 (against the analytic gradient in float64, and ``torch.autograd.gradcheck``)."""
    __tracebackhide__ = True
    gen = check.generator()
    hint = ("Use differentiable torch operations on x end to end (`torch.where`, `sum`, division); no `.detach()`, "
            "`.numpy()`, `.item()` or in-place writes into x.")
    for i in range(cases):
        b, t, f = (int(torch.randint(2, high, (1,), generator=gen)) for high in (6, 9, 5))
        device = _devices()[i % len(_devices())]
        dtype = torch.float64 if device == "cpu" else torch.float32
        x, lengths = masked_mean.make_input(gen, b, t, f, dtype=dtype, device=device)
        exercised("analytic_gradient", *(["empty_row"] if bool((lengths == 0).any()) else []))
        expect_grad_close(check, lambda x, lengths=lengths: masked_batch_mean(x, lengths), [x],
                          lambda g, x=x, lengths=lengths: masked_mean.oracle_vjp(x, lengths, g),
                          what="masked_batch_mean", shape=[b, f], rtol=1e-6 if dtype == torch.float32 else 1e-12,
                          atol=1e-6 if dtype == torch.float32 else 1e-12, hint=hint)
    x, lengths = masked_mean.make_input(gen, 3, 4, 2, [0, 4, 2], dtype=torch.float64)
    _expect_mean(check, masked_batch_mean, x, lengths)      # finite differences of a NaN say nothing
    exercised("gradcheck_float64")
    expect_gradcheck(check, lambda x, lengths=lengths: masked_batch_mean(x, lengths), [x], what="masked_batch_mean")


def _mean_count_args(check, dimension):
    """``make_args(size)`` for the op counts as ``dimension`` ("T" or "B") grows: ``(x, lengths)`` drawn from the
    check's stream for that dimension and size (the same inputs each time a size is asked for)."""
    def make(size):
        b, t = (size, 6) if dimension == "B" else (3, size)
        gen = check.generator(f"count inputs {dimension} {size}")
        return masked_mean.make_input(gen, b, t, 5, empty_rows=False)
    return make


@graded(1, source=[no_loop("masked_batch_mean")], worker_facts="op counts at T and B of 4 and 64",
        facts_only_cost=True)
def check_masked_mean_vectorized(check, masked_batch_mean, *, seed=0):
    """No Python loop over the steps or the batch, without a clock: the numbers of torch calls and of ATen kernels
    are the same for T = 4 and T = 64, and for B = 4 and B = 64 (lengths from 1: empty rows are graded by
    ``check_masked_mean_values``)."""
    __tracebackhide__ = True
    x, lengths = masked_mean.make_input(check.generator(), 4, 7, 3, empty_rows=False)
    _expect_mean(check, masked_batch_mean, x, lengths)
    exercised("t_4_and_64", "b_4_and_64")
    for dimension in ("T", "B"):
        expect_constant_work(check, masked_batch_mean, _mean_count_args(check, dimension), COUNT_SIZES,
                             what=f"masked_batch_mean (growing {dimension})",
                             hint=f"Replace the loop over {dimension} with one masked operation. "
                                  + masked_mean.MEAN_HINT)


def _compile_failure(check, failure, x, lengths):
    __tracebackhide__ = True
    raise CheckFailure(check, f"{COMPILED} fails on {_shapes(x, lengths)}: {failure['message']}", hint=COMPILE_HINT)


def _shapes(x, lengths):
    return f"x of shape {list(x.shape)} ({x.dtype}), lengths = {lengths.tolist()}"


@graded(2, hidden=[{}], source=[no_loop("masked_batch_mean"), no_call("masked_batch_mean", *NO_GRAPH_BREAK),
                                no_value_branch("masked_batch_mean")],
        worker_facts="graph and graph-break counts of torch.compile and torch._dynamo.explain", facts_only_cost=True)
def check_masked_mean_one_graph(check, masked_batch_mean, *, seed=0):
    """``torch.compile(masked_batch_mean, fullgraph=True, dynamic=True)`` (backend ``aot_eager``) compiles it
    into one graph whose result equals the float64 loop's, and ``torch._dynamo.explain`` (fullgraph off) finds
    no graph break in it either: no ``.item()``, ``int(t)``, ``bool(t)``, no ``if`` on a tensor's value. (Lengths
    from 1: empty rows are graded by ``check_masked_mean_values``.)"""
    __tracebackhide__ = True
    gen = check.generator()
    (b, t, f), = masked_mean.sweep_sizes(gen, 1)
    x, lengths = masked_mean.make_input(gen, b, t, f, empty_rows=False)
    _expect_mean(check, masked_batch_mean, x, lengths)      # eager first: the stub says "not implemented"
    session = masked_batch_mean.beside(compiling.open_compiled)    # compiled where the student's code runs
    exercised("compiled_fullgraph_dynamic")
    try:
        out, failure = check.student(session, COMPILED)(x, lengths)
        if failure:
            _compile_failure(check, failure, x, lengths)
        _expect_mean(check, masked_batch_mean, x, lengths, what=COMPILED, out=out)
    finally:
        compiling.close_compiled(session)
    exercised("explained")
    explain = check.student(compiling.explain_breaks, "torch._dynamo.explain(masked_batch_mean)")
    breaks = explain(masked_batch_mean, x, lengths)
    if breaks:
        shown = "; ".join(f"{reason} (at {where})" if where else reason for reason, where in breaks)
        raise CheckFailure(check, f"torch._dynamo.explain(masked_batch_mean)(x, lengths) finds {len(breaks)} graph "
                                  f"break(s) on {_shapes(x, lengths)}: {shown}. "
                                  "(With fullgraph=True, recent torch (2.13) traces `.item()` as a data-dependent "
                                  "number instead of breaking, but it still waits for the device, and any branch "
                                  "on it fails to compile.)",
                           hint=COMPILE_HINT)


@graded(2, hidden=[{}], source=[no_loop("masked_batch_mean"), no_call("masked_batch_mean", *NO_GRAPH_BREAK),
                                no_value_branch("masked_batch_mean")],
        worker_facts="the number of compilations across sizes", facts_only_cost=True)
def check_masked_mean_no_recompiles(check, masked_batch_mean, *, seed=0, shapes=SWEEP_SHAPES):
    """Compiled once with ``torch.compile(masked_batch_mean, fullgraph=True, dynamic=True)`` (backend
    ``aot_eager``), it serves a sweep of ``shapes`` different (B, T, F) and random lengths (from 1) with at most
    ``MAX_GRAPHS`` graphs, each result equal to the float64 loop's. Sizes run from 2 to 17, B, T and F differ in
    every shape (dynamo specializes sizes 0 and 1, and gives equal sizes one symbol), and no size repeats in a
    dimension: code whose graph depends on a size's value (a Python loop over T or B) recompiles at every call.
    The first three shapes have sizes up to 9, so that an unrolled loop fails before it costs much to compile."""
    __tracebackhide__ = True
    gen = check.generator()
    sizes = masked_mean.sweep_sizes(gen, shapes)
    inputs = [masked_mean.make_input(gen, *shape, empty_rows=False) for shape in sizes]
    _expect_mean(check, masked_batch_mean, *inputs[0])      # eager first: the stub says "not implemented"
    session = masked_batch_mean.beside(compiling.open_compiled, MAX_GRAPHS)   # where the student's code runs
    exercised(f"sweep_{len(sizes)}_shapes", "compiled_fullgraph_dynamic")
    try:
        for done, (x, lengths) in enumerate(inputs):
            out, failure = check.student(session, COMPILED)(x, lengths)
            if failure and not failure["recompile_limit"]:
                _compile_failure(check, failure, x, lengths)
            graphs = session.graphs
            if failure or graphs > MAX_GRAPHS:
                seen = ", ".join(f"[{b}, {t}, {f}]" for b, t, f in sizes[:done + 1])
                reasons = "; ".join(dict.fromkeys(masked_mean.explain_guard(str(reason))
                                                  for reason in session.reasons()))
                raise CheckFailure(check, f"{COMPILED} compiled more than {MAX_GRAPHS} graphs for x of shapes {seen} "
                                          f"(float32, random lengths): it recompiles when a size changes. Dynamo "
                                          f"recompiled because: {reasons or 'no reason recorded'}.",
                                   hint=COMPILE_HINT, measurements={"graphs": graphs, "shapes": done + 1})
            _expect_mean(check, masked_batch_mean, x, lengths, what=COMPILED, out=out)
    finally:
        compiling.close_compiled(session)
