"""Checks for the ``memory`` assignment: what a training step keeps for backward and how to trade it for compute.

``saved_bytes`` (a counter written with ``torch.autograd.graph.saved_tensors_hooks``), ``checkpointed_forward``
(``torch.utils.checkpoint`` on every block), ``most_expensive_op`` (a ``torch.profiler`` profile read), and
``residual_relu`` / ``predict`` (in-place operations and ``torch.no_grad``). The models and steps are built from
plans where the student's function lives (``probes.py``); the grader builds its own copy from the same plan and
judges what comes back against its oracles (``autograder/oracles/memory.py``): the bytes autograd saved, the plain
run's output and gradients, the top operator of its own profile, float64 values and gradients.

Which evidence earns which point (docs/memory.md): the counts, values, gradients and profile answers are data; that
``checkpointed_forward`` checkpoints and that ``predict`` runs without a graph are read from the submitted source.
The activation bytes and forward calls measured in the student's process explain and can cost, never earn.
"""

import math

import torch

from autograder.checks.memory import probes, problems
from autograder.checks.memory.contract import blocks_labels, model_labels
from autograder.checks.memory.rules import calls_with, runs_without_grad
from autograder.contracts import exercised, exercised_as, tensor_labels
from autograder.errors import CheckFailure, named_kind
from autograder.measuring.compare import expect_close, known_kind
from autograder.measuring.expected_outputs import oracle
from autograder.seam.remote import Callback
from autograder.seam.student_calls import stream_seed
from autograder.source_evidence.source_rules import uses
from autograder.spec import graded

SAVED_HINT = ("`pack` runs once for every tensor autograd saves for backward: add `t.numel() * t.element_size()` "
              "there (parameters and views count too, each time they are saved; `element_size()` is 4 for float32, "
              "8 for float64), and return the tensor itself from `pack` and from `unpack`.")
CHECKPOINT_HINT = ("Wrap every block: `h = checkpoint(block, h, use_reentrant=False)` "
                   "(`from torch.utils.checkpoint import checkpoint`).")
# The activation bytes kept for backward with every block checkpointed, over those of the plain run (distinct
# storages, parameters left out): structural, the same for every plan of 4 two-layer blocks. Measured 2026-11-24
# (2-core x86_64, torch 2.13.0, benchmarks/memory.py, 40 plans): the reference 0.44 (4 block inputs of the plain
# run's 9 storages), checkpointing the first block only 0.89, every layer on its own 1.78, none 1.0.
KEPT_RATIO = 0.65
NONE_RECOMPUTED = "failed: no block recomputed"     # the kind of a checkpointed run that recomputed nothing
NO_GRAD_NAMES = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.inference_mode",
                 "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode",
                 "torch.set_grad_enabled", "torch.autograd.set_grad_enabled")


def _outcome(check, entry, call):
    """``entry`` from a probe, its failure raised with the call that failed (``call``) as the case."""
    __tracebackhide__ = True
    if type(entry) is not dict:
        raise CheckFailure(check, "the answer that came back from your notebook's process is malformed.")
    if "failure" in entry:
        detail, hint, *kind = entry["failure"]
        raise CheckFailure(check, f"{detail}\nCase: {call}", hint=hint, kind=str(kind[0]) if kind else None)
    return entry


def _expect_close(check, got, want, *, what, case, hint, kind=None):
    """``expect_close``, its failure carrying the case (the model or blocks, described) it happened on; ``kind``:
    the failure's, when the case tells it apart from ``expect_close``'s own."""
    __tracebackhide__ = True
    try:
        expect_close(check, got, want, what=what, hint=hint)
    except CheckFailure as failure:
        raise CheckFailure(check, f"{failure.detail}\nCase: {case}", hint=failure.hint,
                           measurements=failure.measurements, kind=kind or failure.kind) from None


def _expect_grads(check, entry, expected, case, hint, *, where=""):
    """The input's and every parameter's gradient equal the plain run's. ``where``: words after a gradient's name
    that say what sets this case apart ("in blocks with dropout"), so that the kind of a failure says it too (a
    wrong gradient there is a kind of its own, not "wrong value")."""
    __tracebackhide__ = True
    if "backward" in entry:
        raise CheckFailure(check, f"backward through the output raised {entry['backward']}\nCase: {case}", hint=hint)
    if (entry.get("x_grad") is None) != (expected["x_grad"] is None):
        raise CheckFailure(check, f"x.grad is {'missing' if entry.get('x_grad') is None else 'set'} after "
                                  f"backward, but x {'requires' if expected['x_grad'] is not None else 'needs no'} "
                                  f"grad.\nCase: {case}", hint=hint)
    if expected["x_grad"] is not None:
        _expect_close(check, entry["x_grad"], expected["x_grad"], what="x.grad after backward", case=case, hint=hint)
    grads = entry.get("grads")
    if type(grads) is not list or [g[0] for g in grads] != [name for name, _ in expected["grads"]]:
        raise CheckFailure(check, "the parameters' gradients that came back are malformed.")
    for (name, got), (_, want) in zip(grads, expected["grads"]):
        if got is None:
            raise CheckFailure(check, f"parameter {name} got no gradient from backward.\nCase: {case}", hint=hint)
        _expect_close(check, got, want, what=f"the gradient of parameter {name}{where}", case=case, hint=hint,
                      kind=known_kind(f"a wrong gradient of parameter {name}{where}") if where else None)


# ---------------------------------------------------------------- saved_bytes

def _saved_bytes_entry(check, saved_bytes, plan):
    __tracebackhide__ = True
    case = f"saved_bytes(model, x) with {problems.describe_model(plan)}"
    exercised_as(model_labels, plan)
    entry = _outcome(check, saved_bytes.beside(probes.saved_bytes_run, check, plan), case)
    if "returned" in entry:
        raise CheckFailure(check, f"saved_bytes should return a pair (output, bytes), got {entry['returned']}."
                                  f"\nCase: {case}", hint="End with `return out, total`.")
    return entry, case


def _model_plans(gen, cases):
    first = [problems.model_plan(gen, dtype="float32", acts=("gate", "relu")),
             problems.model_plan(gen, dtype="float64", acts=("tanh",))]
    return (first + [problems.model_plan(gen, dtype=("float32", "float64")[i % 2]) for i in range(cases)])[:cases]


@graded(3, hidden=[{"cases": 10}])
@problems.single_threaded
def check_saved_bytes_count(check, saved_bytes, *, seed=0, cases=5):
    """The bytes ``saved_bytes(model, x)`` returns equal the grader's count of what autograd packs for backward
    while ``model(x)`` runs, on models of 2 to 4 Linear layers with relu, tanh, sigmoid, gelu or a gate that saves
    views, in float32 and float64, with and without an input that requires grad."""
    __tracebackhide__ = True
    first, candidates = None, None
    for plan in _model_plans(check.generator(), cases):
        entry, case = _saved_bytes_entry(check, saved_bytes, plan)
        model, x, _ = problems.build_model(plan)
        expected = oracle("memory.saved_bytes", model, x, plan["x_grad"])
        count = entry.get("count")
        if type(count) is not int:
            raise CheckFailure(check, f"saved_bytes should return the number of bytes as an int, got "
                                      f"{type(count).__name__} ({count!r}).\nCase: {case}",
                               hint="Keep a Python int: `total += t.numel() * t.element_size()`.")
        if count == expected["bytes"]:
            continue
        # a count two known mistakes give alike on this model says which only on a later model: the first model
        # that tells them apart names the one it is, else the first wrong count is told as a plain difference
        matched = [m for m in _known_counts(count, expected) if candidates is None or m[0] in candidates]
        if len(matched) == 1:
            (words, hint), = matched
            raise CheckFailure(check, f"saved_bytes returned {count}: {words}; autograd saved "
                                      f"{len(expected['tensors'])} tensors, {expected['bytes']} bytes in all."
                                      f"\nCase: {case}", hint=hint, kind=known_kind(words),
                               measurements={"returned": count, "expected": expected["bytes"]})
        shown = ", ".join(f"{shape} {dtype}" for shape, dtype in expected["tensors"][:8])
        more = ", ..." if len(expected["tensors"]) > 8 else ""
        first = first or CheckFailure(check, f"saved_bytes returned {count} bytes; autograd saved "
                                             f"{len(expected['tensors'])} tensors for backward, {expected['bytes']} "
                                             f"bytes in all ({shown}{more}).\nCase: {case}", hint=SAVED_HINT,
                                      measurements={"returned": count, "expected": expected["bytes"]})
        if not matched:
            raise first
        candidates = {words for words, _ in matched}
    if first is not None:
        raise first


def _known_counts(count, expected):
    """``[(words, hint)]`` of the known mistakes whose count of the same tensors is ``count``: their elements
    (``numel()`` without ``element_size()``), 4 bytes for every element whatever the dtype, nothing at all, the
    storages behind them, each tensor counted once however often autograd packed it, or the parameters left out
    (the grader oracle's ``mistaken``)."""
    elements = sum(math.prod(shape) for shape, _ in expected["tensors"])
    mistaken = expected["mistaken"]
    known = (
        ((elements,), "the number of elements of the tensors autograd saved, not their bytes",
         "Multiply each tensor's `numel()` by its `element_size()` (4 for float32, 8 for float64)."),
        ((4 * elements,), "4 bytes for every element saved, but float64 elements take 8",
         "Ask each tensor for its size: `t.element_size()`, not a fixed 4."),
        ((0,), "nothing: no tensor was packed through your hooks",
         "Run `model(x)` inside the `with torch.autograd.graph.saved_tensors_hooks(pack, unpack):` block: the "
         "hooks see only what autograd saves while the block is open."),
        ((mistaken["storage"],), "the bytes of the whole storages behind the saved tensors, not of the tensors",
         "Count the saved tensor itself, `t.numel() * t.element_size()`: a view's storage is shared, and it is "
         "bigger than the view."),
        (tuple(mistaken["once"]), "each saved tensor counted once, but autograd packed some of them twice",
         "Add every tensor `pack` receives, each time it receives it: the question is what autograd keeps for "
         "backward, and a tensor saved by two operations is packed twice."),
        ((mistaken["no parameters"],), "the bytes of the saved tensors without the parameters autograd saved",
         "Count every tensor `pack` receives, the weights a layer saves for its backward included: they are "
         "part of what autograd keeps (here they cost no new memory, but the exercise counts them)."))
    return [(words, hint) for counted, words, hint in known if count in counted]


@graded(1, hidden=[{"cases": 4}])
@problems.single_threaded
def check_saved_bytes_backward(check, saved_bytes, *, seed=0, cases=2):
    """The output ``saved_bytes`` returns is ``model(x)``, and backward through it (which unpacks every tensor
    through the student's hooks) gives the plain run's gradients."""
    __tracebackhide__ = True
    for plan in _model_plans(check.generator(), cases):
        entry, case = _saved_bytes_entry(check, saved_bytes, plan)
        model, x, upstream = problems.build_model(plan)
        expected = oracle("memory.plain_run", model, x, plan["x_grad"], upstream, 0)
        out = entry.get("out")
        if out is None:
            raise CheckFailure(check, f"the output saved_bytes returned is not a tensor.\nCase: {case}",
                               hint="Return `model(x)`'s output, computed inside the hooks' `with` block.")
        _expect_close(check, out, expected["out"], what="the output saved_bytes returned", case=case,
                      hint="Return `out = model(x)` itself.")
        exercised("backward_through_output")
        _expect_grads(check, entry, expected, case,
                      hint="`unpack` must give back the tensor `pack` kept: `return t` from both hooks.")


# ---------------------------------------------------------------- checkpointed_forward

def _checkpoint_entry(check, checkpointed_forward, plan):
    __tracebackhide__ = True
    case = f"checkpointed_forward(blocks, x) with {problems.describe_blocks(plan)}"
    exercised_as(blocks_labels, plan)
    entry = _outcome(check, checkpointed_forward.beside(probes.checkpoint_run, check, plan), case)
    hint = ("With `use_reentrant=False` checkpoint gives the parameters their gradients even when x needs none "
            "(the reentrant variant returns a result with no grad_fn then), and it replays the dropout mask of the "
            "forward pass (keep `preserve_rng_state` True). " + CHECKPOINT_HINT)
    if "returned" in entry:
        raise CheckFailure(check, f"checkpointed_forward should return the last block's output, a tensor of shape "
                                  f"[{plan['batch']}, {plan['width']}] connected to the graph, got "
                                  f"{entry['returned']}.\nCase: {case}", hint=hint)
    blocks, x, upstream = problems.build_blocks(plan)
    expected = oracle("memory.plain_run", torch.nn.Sequential(*blocks), x, plan["x_grad"], upstream, plan["seed"])
    _expect_close(check, entry["out"], expected["out"], what="checkpointed_forward's output", case=case,
                  hint="Apply the blocks in order, each block's output the next one's input.")
    # dropout or not in the first line: a recomputation that replays another mask fails only with dropout, one
    # that recomputes the wrong thing fails without it too (two mistakes, two kinds)
    _expect_grads(check, entry, expected, case, hint,
                  where=" in blocks with dropout" if plan["dropout"] else " in blocks without dropout")
    return entry, case


@graded(3, hidden=[{"cases": 5}])
@problems.single_threaded
def check_checkpoint_gradients(check, checkpointed_forward, *, seed=0, cases=3):
    """The output and the gradients of x and of every parameter equal those of the plain forward (the grader's own
    run of the same blocks, dropout with the same seed), with an input that requires grad and one that does not."""
    __tracebackhide__ = True
    gen = check.generator()
    plans = [problems.blocks_plan(gen, dropout=True, x_grad=False), problems.blocks_plan(gen, dropout=False,
                                                                                         x_grad=True)]
    plans += [problems.blocks_plan(gen) for _ in range(cases - 2)]
    # drawn in that order, graded without dropout first: what fails there is not a matter of the dropout mask
    for plan in [plans[1], plans[0], *plans[2:]]:
        _checkpoint_entry(check, checkpointed_forward, plan)


@graded(2, source=[calls_with("checkpointed_forward", "torch.utils.checkpoint.checkpoint", use_reentrant=False)],
        facts_only_cost=True,
        worker_facts="the activation bytes kept for backward and each Linear layer's forward calls, measured in "
                     "the student's process")
@problems.single_threaded
def check_checkpoint_trades_memory(check, checkpointed_forward, *, seed=0):
    """Every block is checkpointed with ``use_reentrant=False`` (read from the source) and recomputed in backward:
    blocks with a shift the grader hands out on every call (``problems.Shift``) give the gradients of the grader's
    own run in which each block's saved activations are recomputed with the second shift it was handed (data
    judged here). Then, as measured in the student's process (only costs): backward runs each Linear layer a second
    time and the activations kept for backward are at most ``KEPT_RATIO`` of the plain run's."""
    __tracebackhide__ = True
    gen = check.generator()
    plan = problems.blocks_plan(gen, dropout=False, x_grad=False)
    plan["blocks"], plan["acts"] = 4, (plan["acts"] * 4)[:4]
    try:
        _expect_recomputed(check, checkpointed_forward, plan)
    except CheckFailure as failure:
        _expect_not_layer_by_layer(check, failure, checkpointed_forward, plan)
        raise
    entry, case = _checkpoint_entry(check, checkpointed_forward, plan)
    calls = entry.get("forward_calls")
    if type(calls) is not list or any(c != 2 for c in calls):
        # what ran again first: none of the blocks recomputed, and some of them, are two mistakes (two kinds)
        counts = set(calls) if type(calls) is list else None
        kind = ("failed: no Linear layer ran twice" if counts == {1} else
                named_kind(_recomputed_blocks(plan, calls)) if counts == {1, 2} else None)
        ran = ("no Linear layer ran a second time in backward: no block was recomputed. " if counts == {1} else
               f"{_recomputed_blocks(plan, calls)} in backward. " if counts == {1, 2} else "")
        raise CheckFailure(check, f"{ran}Each Linear layer should run twice, once in the forward pass and once when "
                                  f"backward recomputes its block; they ran {calls} times.\nCase: {case}",
                           hint=CHECKPOINT_HINT + " Checkpoint every block, each in a call of its own.", kind=kind)
    kept = entry.get("kept_bytes")
    plain = plain_activation_bytes(plan)
    if type(kept) is not int or kept > KEPT_RATIO * plain:
        ratio = f"{kept / plain:.2f}" if type(kept) is int else "?"
        raise CheckFailure(check, f"the activations kept for backward are {kept} bytes, {ratio} of the plain run's "
                                  f"{plain} bytes; checkpointing every block keeps 0.44 of them here (at most "
                                  f"{KEPT_RATIO} passes).\nCase: {case}", hint=CHECKPOINT_HINT,
                           measurements={"kept_bytes": kept, "plain_bytes": plain})


def _expect_not_layer_by_layer(check, failure, checkpointed_forward, plan):
    """When no block was recomputed (no shift asked for twice), tell a checkpoint around each layer apart from no
    checkpoint at all: neither recomputes a block (a checkpointed layer's saved tensors are its own inputs), but
    each layer's checkpoint keeps that input, more than the plain run keeps, where a run with no checkpoint keeps
    what the plain run does. The bytes kept are measured in the student's process: they only explain a failure
    that the shifts already gave."""
    __tracebackhide__ = True
    if failure.kind != NONE_RECOMPUTED:
        return
    try:
        entry, case = _checkpoint_entry(check, checkpointed_forward, plan)
    except CheckFailure:
        return
    kept, plain = entry.get("kept_bytes"), plain_activation_bytes(plan)
    if type(kept) is int and kept > LAYER_BY_LAYER_RATIO * plain:
        raise CheckFailure(check, f"no block was recomputed in backward, and more activations were kept than without "
                                  f"any checkpoint: {kept} bytes, {kept / plain:.2f} of the plain run's {plain}. A "
                                  f"checkpoint around each layer keeps every layer's input and recomputes nothing."
                                  f"\nCase: {case}",
                           hint=CHECKPOINT_HINT + " Checkpoint every block as a whole, each in a call of its own.",
                           measurements={"kept_bytes": kept, "plain_bytes": plain}) from None


LAYER_BY_LAYER_RATIO = 1.2   # checkpoints around layers kept 1.44 to 1.78 of the plain run's bytes here; none, 1.0


SHIFTS_PER_BLOCK = 3        # a block asked more often than forward + one recomputation fails at once


def _expect_recomputed(check, checkpointed_forward, plan):
    """The data of the trade: ``checkpointed_forward`` on blocks whose shifts the grader hands out here, one new
    shift per call (``Shift``); every block must be handed two (forward, recomputation in backward) and the
    gradients must be those of the grader's run with every block recomputed from the second one. A block whose
    activations were kept is asked once, and its gradients are those of the first shift; asking twice without
    recomputing leaves the gradients of the first."""
    __tracebackhide__ = True
    case = f"checkpointed_forward(blocks, x) with {problems.describe_blocks(plan)}, a shift after each first Linear"
    gen = torch.Generator().manual_seed(stream_seed(plan["seed"], "shifts"))     # the shifts' own stream
    handed = [[] for _ in range(plan["blocks"])]

    def shift(index):
        if type(index) is not int or not 0 <= index < len(handed) or len(handed[index]) >= SHIFTS_PER_BLOCK:
            raise ValueError("a block asked for its shift more often than a forward pass and one recomputation do")
        handed[index].append(torch.randn(plan["width"], generator=gen, dtype=torch.float64).to(torch.float32))
        return handed[index][-1].clone()

    entry = _outcome(check, checkpointed_forward.beside(probes.recompute_run, check, plan, Callback(shift)),
                     case)
    if "returned" in entry:
        raise CheckFailure(check, f"checkpointed_forward should return the last block's output, a tensor of shape "
                                  f"[{plan['batch']}, {plan['width']}] connected to the graph, got "
                                  f"{entry['returned']}.\nCase: {case}", hint=CHECKPOINT_HINT)
    once = [str(k + 1) for k, values in enumerate(handed) if len(values) < 2]
    if once:
        if len(once) == len(handed):
            kind, which = NONE_RECOMPUTED, "no block was recomputed in backward"
        else:
            recomputed = _which_blocks([len(values) >= 2 for values in handed])
            kind = named_kind(f"{recomputed} recomputed")
            which = f"{recomputed} recomputed in backward (not block {', '.join(once)} of {len(handed)})"
        raise CheckFailure(check, f"{which}: each block should run twice, once in the forward pass and once when "
                                  f"backward recomputes it from its checkpointed input.\nCase: {case}",
                           hint=CHECKPOINT_HINT + " Checkpoint every block, not the first one only, and not every "
                                                  "layer on its own.", kind=kind,
                           measurements={"runs per block": [len(values) for values in handed]})
    blocks, x, upstream = problems.shifted_blocks(plan, None)      # the oracle hands them the shifts
    expected = oracle("memory.recomputed_run", blocks, x, upstream, plan["seed"], handed)
    _expect_close(check, entry["out"], expected["out"], what="checkpointed_forward's output", case=case,
                  hint="Apply the blocks in order, once each in the forward pass: each block's output the next one's "
                       "input.")
    _expect_grads(check, entry, expected, case, CHECKPOINT_HINT + " The gradients are those of activations kept from "
                  "the forward pass, not recomputed in backward.", where=" (blocks recomputed in backward)")


def _recomputed_blocks(plan, calls):
    """Which blocks backward recomputed, from each Linear layer's forward calls (``calls``), in words."""
    blocks, _, _ = problems.build_blocks(plan)
    sizes = [sum(isinstance(m, torch.nn.Linear) for m in block.modules()) for block in blocks]
    if sum(sizes) != len(calls):
        return "only some Linear layers were recomputed"
    again, start = [], 0
    for size in sizes:
        again.append(all(c == 2 for c in calls[start:start + size]))
        start += size
    return f"{_which_blocks(again)} recomputed"


def _which_blocks(again):
    """Which blocks were recomputed (``again``: one flag per block), in words that tell the patterns apart: only the
    first, every one but the last (``checkpoint_sequential`` leaves its last segment plain), only the last, or some."""
    n = len(again)
    if again == [True] + [False] * (n - 1):
        return "only the first block was"
    if again == [True] * (n - 1) + [False]:
        return "every block but the last was"
    if again == [False] * (n - 1) + [True]:
        return "only the last block was"
    return "only some blocks were"


def plain_activation_bytes(plan):
    """What the plain forward of ``plan``'s blocks keeps for backward (parameters left out), measured here."""
    blocks, x, _ = problems.build_blocks(plan)
    with torch.random.fork_rng(devices=[]), probes.ActivationMemory(blocks.parameters()) as memory:
        torch.manual_seed(plan["seed"])
        for block in blocks:
            x = block(x)
    return memory.bytes


# ---------------------------------------------------------------- most_expensive_op

def _op_name(answer):
    return answer.removeprefix("aten::") if isinstance(answer, str) else answer


STEP_WORDS = {"matmul": "multiplies two [{n}, {n}] matrices", "topk": "takes the top 2000 of {m} values",
              "conv": "convolves 8 images of 16 channels, {h}x128 pixels, with 32 filters of 3x3"}


@graded(3, hidden=[{"kinds": ("conv", "topk", "matmul")}],
        source=[uses("most_expensive_op", "torch.profiler.profile", "torch.autograd.profiler.profile")])
@problems.single_threaded
def check_top_op(check, most_expensive_op, *, seed=0, kinds=("matmul", "topk")):
    """``most_expensive_op(step)`` profiles the step (``torch.profiler.profile``, read from the source) and names the
    operator that the grader's own profile of the same step puts first by self CPU time, for steps that one
    operator dominates (a matrix product, a top-k, a convolution). A mismatch is asked twice more (a busy machine
    can slow any operator once): two more wrong answers fail."""
    __tracebackhide__ = True
    gen = check.generator()
    for kind in kinds:
        plan = problems.step_plan(gen, kind)
        exercised(f"{kind}_step")
        words = STEP_WORDS[kind].format(n=int(problems.MATMUL_SIZE * plan["scale"]),
                                        m=int(problems.TOPK_VALUES * plan["scale"]),
                                        h=int(problems.CONV_HEIGHT * plan["scale"]))
        case = (f"most_expensive_op(step) for a step that {words}, then adds 16 of the results "
                f"{problems.STEP_ADDS} times and takes their max")
        answers, profiles = [], []
        while len(answers) < 3:
            entry = _outcome(check, most_expensive_op.beside(probes.top_op_answer, check, plan), case)
            answers.append(entry.get("answer"))
            if not isinstance(answers[-1], str):
                raise CheckFailure(check, f"most_expensive_op should return the operator's name, a str such as "
                                          f"'aten::add', got {type(answers[-1]).__name__}.\nCase: {case}",
                                   hint="Return the `key` of the event with the largest `self_cpu_time_total`.")
            _expect_warmed_up(check, entry.get("profiled"), case)
            # The grader's own profile, once the answer is a name to compare with it; on a mismatch, up to three
            # (a busy machine can slow a cheap operator in the grader's profile too), the most common one kept.
            profiles.append(oracle("memory.top_op", problems.Step(plan)))
            firsts = [p["self"] for p in profiles]
            expected = max(firsts, key=firsts.count)
            if _op_name(answers[0]) == _op_name(firsts[0]):
                break
        if _votes(answers, expected) * 2 < len(answers):
            _expect_not_another_ranking(check, answers, next(p for p in profiles if p["self"] == expected), case,
                                        plan)
            raise CheckFailure(check, f"most_expensive_op returned {answers}; the grader's profile of the same step "
                                      f"puts {expected!r} first by self CPU time.\nCase: {case}", hint=TOP_OP_HINT)


def _expect_warmed_up(check, profiled, case):
    """The step ran once before the profiled call (the contract's warm-up): the first call of the step must not be
    under a profile. ``profiled``: for each call, whether a profiler was recording, as the student's process
    reports it (it can only cost: a correct answer calls the step outside any profile first)."""
    __tracebackhide__ = True
    if type(profiled) is list and profiled and profiled[0] is True:
        raise CheckFailure(check, f"most_expensive_op profiled the first call of step, with no call to warm it up "
                                  f"before the profile: the first call pays one-time costs (allocations, lazy "
                                  f"initialization) that the step does not have afterwards. It called step "
                                  f"{len(profiled)} times, {sum(p is True for p in profiled)} under a profiler."
                                  f"\nCase: {case}",
                           hint="Call `step()` once before `with torch.profiler.profile(...) as prof:`, then profile "
                                "one more call inside the block.", measurements={"profiled": profiled[:20]})


def _first_by_self_memory(plan):
    """The operator that allocates the most memory itself in a profile of ``plan``'s step (after a warm-up): a
    ranking some answers use, which may name the same operator as another ranking."""
    step = problems.Step(plan)
    step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    return max(prof.key_averages(), key=lambda e: e.self_cpu_memory_usage).key


def _expect_not_another_ranking(check, answers, profile, case, plan):
    """Tell a wrong answer by the ranking it comes from, when most answers name the operator that the grader's
    profile puts first by another ranking than self CPU time (total CPU time, or the number of calls), and no other
    ranking a student might use (self memory) puts that operator first too: then the answer cannot tell them
    apart, and naming one could name the wrong one."""
    __tracebackhide__ = True
    for ranking, words in (("total", "first by total CPU time, which counts the time of the operators it calls"),
                           ("called", "the one called most often")):
        if profile[ranking] != profile["self"] and _votes(answers, profile[ranking]) * 2 > len(answers) and (
                _op_name(_first_by_self_memory(plan)) != _op_name(profile[ranking])):
            raise CheckFailure(check, f"most_expensive_op returned {answers}, the operator {words} in the grader's "
                                      f"profile of the same step; the most expensive by self CPU time is "
                                      f"{profile['self']!r}.\nCase: {case}", hint=TOP_OP_HINT,
                               kind=f"failed: the operator first by another ranking ({ranking})")


def _votes(answers, name):
    """How many of ``answers`` name the operator ``name`` (with or without its namespace)."""
    return sum(_op_name(a) == _op_name(name) for a in answers)


TOP_OP_HINT = ("Sort `prof.key_averages()` by `self_cpu_time_total`: the total time of an operator includes the "
              "operators it calls (aten::matmul calls aten::mm), and run the step once before profiling it.")


# ---------------------------------------------------------------- residual_relu and predict

INPLACE_HINT = ("An in-place operation (`h += x`, `h.add_(x)`, `relu_`) changed a tensor that autograd saved for "
                "backward: relu saves its output. Write `h = torch.relu(x @ w) + x`, or do the in-place operation "
                "on a tensor that no operation saved (the product `x @ w`).")


def _residual_inputs(gen, i):
    dtype = (torch.float32, torch.float64)[i % 2]
    batch, width = int(torch.randint(1, 9, (1,), generator=gen)), int(torch.randint(2, 12, (1,), generator=gen))
    x = torch.randn(batch, width, generator=gen, dtype=torch.float64).to(dtype)
    w = (torch.randn(width, width, generator=gen, dtype=torch.float64) / width ** 0.5).to(dtype)
    upstream = torch.randn(batch, width, generator=gen, dtype=torch.float64).to(dtype)
    return x, w, upstream


@graded(1, hidden=[{"cases": 12}])
@problems.single_threaded
def check_residual_values(check, residual_relu, *, seed=0, cases=6):
    """``residual_relu(x, w)`` equals ``relu(x @ w) + x`` (float64 reference) in x's dtype, and leaves x and w
    as they were."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        x, w, upstream = _residual_inputs(gen, i)
        exercised_as(tensor_labels, x)
        out = residual_relu(x, w)
        expected = oracle("memory.residual_relu", x, w, upstream)
        expect_close(check, out, expected["out"], what="residual_relu(x, w)", inputs={"x": x, "w": w},
                     hint="Return relu(x @ w) + x.",
                     known=(("relu(x @ w + x), with relu applied after adding the residual",
                             lambda _: expected["relu last"], "Apply relu to x @ w, then add x: relu(x @ w) + x."),))


@graded(2, hidden=[{"cases": 12}])
@problems.single_threaded
def check_residual_backward(check, residual_relu, *, seed=0, cases=6):
    """Backward through ``residual_relu(x, w)`` runs (no in-place change of a tensor saved for backward) and gives
    the float64 reference's gradients for x and w, on inputs that require grad."""
    __tracebackhide__ = True
    gen = check.generator()
    for i in range(cases):
        x, w, upstream = _residual_inputs(gen, i)
        x_leaf, w_leaf = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        exercised_as(tensor_labels, x)
        exercised("leaves_requiring_grad")
        inputs = {"x": x, "w": w}
        out = residual_relu(x_leaf, w_leaf)
        if not isinstance(out, torch.Tensor) or out.grad_fn is None or out.shape != upstream.shape:
            raise CheckFailure(check, "residual_relu(x, w) with x and w requiring grad should return a tensor of "
                                      f"x's shape connected to the graph, got {type(out).__name__}.",
                               hint="Use torch operations only; no `.detach()`.")
        try:
            gx, gw = torch.autograd.grad(out, (x_leaf, w_leaf), upstream, allow_unused=True)
        except Exception as error:  # noqa: BLE001 - the version-counter error, raised by the student's graph
            raise CheckFailure(check, f"backward through residual_relu(x, w) raised {type(error).__name__}: "
                                      f"{str(error)[:300]}\nInputs: x of shape {list(x.shape)}, w of shape "
                                      f"{list(w.shape)}, {x.dtype}, both requiring grad.", hint=INPLACE_HINT) from None
        expected = oracle("memory.residual_relu", x, w, upstream)
        for got, want, name in ((gx, expected["x_grad"], "x"), (gw, expected["w_grad"], "w")):
            if got is None:
                raise CheckFailure(check, f"backward gave no gradient for {name}.", hint=INPLACE_HINT)
            expect_close(check, got, want, what=f"the gradient of {name}", inputs=inputs, hint=INPLACE_HINT)


@graded(2, hidden=[{"cases": 6}], source=[runs_without_grad("predict")], facts_only_cost=True,
        worker_facts="whether the result requires grad, the bytes autograd kept and the parameters' gradients after "
                     "the call, in the student's process")
@problems.single_threaded
def check_predict_no_graph(check, predict, *, seed=0, cases=3):
    """``predict(model, x)`` returns ``model(x)``'s values (data), and runs the model only inside ``torch.no_grad()``
    / ``torch.inference_mode()`` / ``set_grad_enabled(False)`` (read from the source: ``rules.RunsWithoutGrad``).
    In the student's process (only costs), the result needs no gradient, autograd kept nothing for backward during
    the call, and no parameter got a gradient."""
    __tracebackhide__ = True
    gen = check.generator()
    hint = "Run the model inside `with torch.no_grad():` (or `torch.inference_mode()`) and return its output."
    for i in range(cases):
        plan = problems.model_plan(gen, dtype=("float32", "float64")[i % 2])
        case = f"predict(model, x) with {problems.describe_model(plan)}"
        exercised(plan["dtype"])
        entry = _outcome(check, predict.beside(probes.predict_run, check, plan), case)
        if "returned" in entry:
            raise CheckFailure(check, f"predict should return a tensor, got {entry['returned']}.\nCase: {case}",
                               hint=hint)
        model, x, _ = problems.build_model(plan)
        _expect_close(check, entry["out"], oracle("memory.predictions", model, x), what="predict(model, x)",
                      case=case, hint=hint)
        facts = [(label, text) for present, label, text in (
            (entry.get("requires_grad"), "result requires grad", "its result requires grad"),
            (entry.get("kept_bytes"), "bytes kept",
             f"autograd kept {entry.get('kept_bytes')} bytes for backward during the call"),
            (entry.get("param_grads"), "parameters got a gradient",
             f"{entry.get('param_grads')} parameters got a gradient")) if present]
        found = [text for _, text in facts]
        if found:
            # the model left in eval mode is told first: eval() changes dropout and batch norm, not autograd
            evaluated = ("predict switched the model to eval mode, which does not switch autograd off, and "
                         if entry.get("training") is False else "")
            raise CheckFailure(check, f"{evaluated}predict built a graph: {'; '.join(found)}.\nCase: {case}",
                               kind=named_kind(f"built a graph{' in eval mode' if evaluated else ''}: "
                                               + "; ".join(label for label, _ in facts)),
                               hint=hint + " `.detach()` on the result comes too late: the graph was built and its "
                                           "activations kept during the forward pass.")
