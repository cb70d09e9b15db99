"""Checks for the ``distributed`` assignment: data-parallel training on 2 and 3 CPU processes with gloo.

``train_ddp`` (``DistributedDataParallel`` and ``DistributedSampler`` with ``set_epoch``), ``train_accumulate``
(gradient accumulation with ``no_sync()``) and ``average_gradients`` (DDP's all-reduce written by hand). The grader
starts the ranks itself, from the process the student's function lives in (``launcher.py``, ``probes.py``); every rank
sends back the samples its dataset gave out and its parameters after every optimizer step, and the grader compares
them with its own single-process run of the same plan (``autograder/oracles/distributed.py``). A rank whose call
raises ends the whole launch at once, and the item fails with that rank's message.

The lesson's launcher, ``run_ranks``, is given code, not an exercise: the grader's own launcher ships in the kit
(the checks need it in the student's process), so it cannot also be an answer the student is graded on.

Which evidence earns which point (docs/distributed.md): samples and parameters are data; that ``train_ddp`` wraps
the model in ``DistributedDataParallel`` and that ``train_accumulate`` enters ``no_sync()`` are read from the
submitted source; that the gradients were all-reduced once per step (and the parameters not) is read from the traffic
the ranks sent on the sandbox's own network, counted by the grader outside the student's process (``traffic.py``).
The all-reduce counts are measured in the student's process: they explain and cost, never earn.
"""

import contextlib

from autograder.checks.distributed import known_steps, probes, problems, traffic
from autograder.checks.distributed.rules import uses_method
from autograder.contracts import exercised
from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close
from autograder.measuring.expected_outputs import is_recording, oracle
from autograder.source_evidence.source_rules import uses
from autograder.spec import graded

DDP_NAMES = ("torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel")
SPLIT_HINT = ("Give the DataLoader `sampler=DistributedSampler(dataset, num_replicas=world_size, rank=rank, "
              "shuffle=True, seed=seed)` (and no `shuffle=`), and call `sampler.set_epoch(epoch)` at the start of "
              "every epoch.")
STEP_HINT = ("Build the optimizer with `torch.optim.SGD(ddp_model.parameters(), lr=lr)` and call `optimizer.step()` "
             "once per batch; the grader reads the parameters after every step.")
SAME_TOL = {"rtol": 1e-6, "atol": 1e-7}       # replicas: DDP gives every rank the same averaged gradient
SINGLE_TOL = {"rtol": 1e-4, "atol": 1e-5}     # float32 ranks against the grader's float64 run, at most 9 steps
BESIDE_S = problems.LAUNCH_DEADLINE_S + 20    # a launch keeps its own limits inside (launcher.launch)


def _entries(check, fn, probe, plan, call, reading=None):
    """Every rank's record of ``probe``'s run of ``fn`` on ``plan``; a failure raised with the case. With
    ``reading`` (a ``traffic.Reading`` of ``fn``), the grader reads the sandbox's loopback around the run."""
    __tracebackhide__ = True
    case = problems.describe(plan, call)
    exercised(f"world_size_{plan['world_size']}", *([f"accumulation_{plan['accumulation']}"]
                                                     if plan["accumulation"] > 1 else []),
              *(["frozen_parameter"] if plan.get("frozen") else []),
              *(["unused_parameter"] if plan.get("unused") else []))
    with reading or contextlib.nullcontext():
        answer = fn.beside_within(BESIDE_S, probe, check, plan)
    if type(answer) is not dict:
        raise CheckFailure(check, "the answer that came back from your notebook's process is malformed.")
    if "failure" in answer:
        detail, hint, *kind = answer["failure"]
        raise CheckFailure(check, f"{detail}\nCase: {case}", hint=hint, kind=str(kind[0]) if kind else None)
    entries = answer.get("ranks")
    if type(entries) is not list or len(entries) != plan["world_size"] or any(
            type(e) is not dict or type(e.get("steps")) is not list for e in entries):
        raise CheckFailure(check, "the ranks' records that came back are malformed.")
    return entries, case


def _expect_steps(check, entries, plan, case):
    """Every rank made the plan's number of optimizer steps."""
    __tracebackhide__ = True
    want = problems.steps_per_epoch(plan) * plan["epochs"]
    counts = [len(e["steps"]) for e in entries]
    if counts != [want] * len(entries):
        per = plan["batch_size"] * plan["accumulation"]
        raise CheckFailure(check, f"the ranks made {counts} optimizer steps; with {plan['samples']} samples split "
                                  f"over {plan['world_size']} ranks, {per} samples a step, and {plan['epochs']} "
                                  f"epochs, each rank makes {want}.\nCase: {case}", hint=STEP_HINT)


def _expect_ids(check, entries, plan, case):
    """Every rank trained, in every step, on the samples ``DistributedSampler`` gives it."""
    __tracebackhide__ = True
    _expect_steps(check, entries, plan, case)
    per_epoch = problems.steps_per_epoch(plan)
    for s, expected in enumerate(problems.expected_ids(plan)):
        for rank, entry in enumerate(entries):
            got = entry["steps"][s].get("ids")
            if got != expected[rank]:
                known = known_steps.known_order(plan, rank, s, got)
                raise CheckFailure(check, f"in step {s % per_epoch} of epoch {s // per_epoch}, rank {rank} trained on "
                                          f"samples {got}{known[0] if known else ''}; DistributedSampler(dataset, "
                                          f"num_replicas={plan['world_size']}, rank={rank}, shuffle=True, "
                                          f"seed={plan['sampler_seed']}) after set_epoch({s // per_epoch}) gives "
                                          f"{expected[rank]}.\nCase: {case}", hint=known[1] if known else SPLIT_HINT,
                                   kind=known[2] if known else "failed: a rank's samples differ from the reference")


def _expect_params(check, got, want, *, what, case, hint, tol):
    __tracebackhide__ = True
    if type(got) is not list or len(got) != len(want):
        raise CheckFailure(check, f"{what}: the parameters that came back are malformed.\nCase: {case}")
    for index, (g, w) in enumerate(zip(got, want)):
        try:
            expect_close(check, g, w, what=f"{what}, parameter {index} (shape {list(w.shape)})", hint=hint, **tol)
        except CheckFailure as failure:
            raise CheckFailure(check, f"{failure.detail}\nCase: {case}", hint=failure.hint, kind=failure.kind,
                               measurements=failure.measurements) from None


def _expect_single(check, entries, plan, case, hint):
    """Every rank's parameters after every step equal the grader's one process on all the ranks' samples."""
    __tracebackhide__ = True
    steps = problems.expected_ids(plan)
    model, x, y = problems.build(plan)
    history = oracle("distributed.single_process", model, x, y, steps, plan["lr"])
    per_epoch = problems.steps_per_epoch(plan)
    before = [p.detach().double() for p in model.parameters()]
    for s, want in enumerate(history):
        if is_recording():       # the kit tells a rank's own step as the grader does (known_steps)
            for rank in range(len(entries)):
                known_steps.own_step(plan, before, steps[s][rank])
        for rank, entry in enumerate(entries):
            what = (f"rank {rank}'s parameters after step {s % per_epoch} of epoch {s // per_epoch}, against one "
                    f"process training on every rank's samples of that step")
            got = entry["steps"][s].get("params")
            try:
                _expect_params(check, got, want, case=case, hint=hint, tol=SINGLE_TOL, what=what)
            except CheckFailure:
                # the parameters before this step were one process's: a step off by a factor the problem names
                # is told as the mistake that factor means (known_steps)
                known_steps.expect_no_known_step(check, plan, before, got, want, what=what.partition(",")[0],
                                                 case=case, ids=steps[s][rank],
                                                 reduced=entry["steps"][s].get("reduced"))
                raise
        before = want


def _plans(gen, world_size, accumulation=1, frozen=False, unused=False, wide=False):
    return [problems.training_plan(gen, world_size=world_size, accumulation=accumulation, frozen=frozen,
                                   unused=unused, wide=wide)]


# ---------------------------------------------------------------- train_ddp

@graded(2, hidden=[{"world_size": 3}])
def check_ddp_data_split(check, train_ddp, *, seed=0, world_size=2):
    """In every epoch the ranks' samples (what each rank's dataset gave out) are disjoint and together the whole
    dataset, every sample once; the order changes from one epoch to the next (``set_epoch``)."""
    __tracebackhide__ = True
    for plan in _plans(check.generator(), world_size):
        entries, case = _entries(check, train_ddp, probes.ddp_run, plan, "train_ddp")
        share = plan["samples"] // plan["world_size"]
        exercised("recording_dataset", *(["two_epochs"] if plan["epochs"] == 2 else []))
        seen = [[i for step in e["steps"] for i in step.get("ids", [])] + list(e.get("unstepped", []))
                for e in entries]
        orders = []
        for epoch in range(plan["epochs"]):
            parts = [ids[epoch * share:(epoch + 1) * share] for ids in seen]
            owners = {}
            for rank, part in enumerate(parts):
                for i in part:
                    owners.setdefault(i, []).append(rank)
            twice = {i: r for i, r in owners.items() if len(r) > 1}
            if twice:
                i, r = next(iter(sorted(twice.items())))
                raise CheckFailure(check, f"in epoch {epoch}, sample {i} was given out {len(r)} times (ranks {r}); "
                                          f"{len(twice)} samples were seen more than once.\nCase: {case}",
                                   hint=SPLIT_HINT)
            missing = sorted(set(range(plan["samples"])) - set(owners))
            if missing:
                raise CheckFailure(check, f"in epoch {epoch}, samples {missing[:12]} were seen by no rank "
                                          f"({len(missing)} of {plan['samples']}).\nCase: {case}", hint=SPLIT_HINT)
            orders.append(parts)
        if len(orders) > 1 and orders[1] == orders[0]:
            raise CheckFailure(check, f"every rank saw its samples in the same order in epoch 1 as in epoch 0 "
                                      f"(rank 0: {orders[0][0]}).\nCase: {case}",
                               hint="Call `sampler.set_epoch(epoch)` at the start of every epoch: the sampler "
                                    "shuffles with seed + epoch.")


@graded(2, hidden=[{"world_size": 3}], source=[uses("train_ddp", *DDP_NAMES)])
def check_ddp_replicas_agree(check, train_ddp, *, seed=0, world_size=2):
    """The model is wrapped in ``DistributedDataParallel`` (read from the source), and after every optimizer step
    every rank's parameters equal rank 0's."""
    __tracebackhide__ = True
    for plan in _plans(check.generator(), world_size):
        entries, case = _entries(check, train_ddp, probes.ddp_run, plan, "train_ddp")
        _expect_steps(check, entries, plan, case)
        for s in range(len(entries[0]["steps"])):
            for rank in range(1, len(entries)):
                _expect_params(check, entries[rank]["steps"][s].get("params"), entries[0]["steps"][s].get("params"),
                               what=f"rank {rank}'s parameters after step {s}, against rank 0's", case=case,
                               tol=SAME_TOL, hint="Wrap the model, `ddp = DistributedDataParallel(model)`, and "
                                                  "call `ddp(x)` (not `model(x)`): backward then averages the "
                                                  "gradients over the probes.")


@graded(3, hidden=[{"world_size": 3}])
def check_ddp_matches_single(check, train_ddp, *, seed=0, world_size=2):
    """Every rank trains on ``DistributedSampler``'s samples for it, and after every step its parameters equal
    (float32 tolerance) those of one process taking an SGD step on all the ranks' samples of that step."""
    __tracebackhide__ = True
    for plan in _plans(check.generator(), world_size):
        entries, case = _entries(check, train_ddp, probes.ddp_run, plan, "train_ddp")
        exercised(*(["two_epochs"] if plan["epochs"] == 2 else []))
        _expect_ids(check, entries, plan, case)
        _expect_single(check, entries, plan, case,
                       hint="Use `torch.nn.functional.mse_loss(ddp(x), y)` (a mean), `SGD(lr=lr)` with no momentum, "
                            "`optimizer.zero_grad()` before every backward, and the DDP-wrapped model.")


# ---------------------------------------------------------------- train_accumulate

ACCUMULATE_HINT = ("Divide every micro-batch's loss by `accumulation`, call `backward` on each, and step (then "
                   "zero the gradients) once every `accumulation` micro-batches.")


@graded(3, hidden=[{"world_size": 3}])
def check_accumulate_matches_single(check, train_accumulate, *, seed=0, world_size=2):
    """Every optimizer step takes ``accumulation`` micro-batches of ``DistributedSampler``'s samples on every rank,
    and the parameters after it equal one process's SGD step on all those samples together."""
    __tracebackhide__ = True
    for plan in _plans(check.generator(), world_size, accumulation=3):
        entries, case = _entries(check, train_accumulate, probes.accumulate_run, plan, "train_accumulate")
        _expect_ids(check, entries, plan, case)
        _expect_single(check, entries, plan, case, hint=ACCUMULATE_HINT)


NO_SYNC_HINT = ("Run the backward of every micro-batch but the last inside `with ddp.no_sync():` (its forward "
                "too: DDP arms the all-reduce in the forward); the last one's backward all-reduces the accumulated "
                "sum.")


@graded(2, source=[uses_method("train_accumulate", "no_sync")], evidence=("data", "traffic"), facts_only_cost=True,
        worker_facts="the all-reduces DDP made in each optimizer step (a communication hook in the student's process)")
def check_accumulate_no_sync(check, train_accumulate, *, seed=0):
    """``no_sync()`` is entered (read from the source), the parameters are right after every step, and the ranks
    averaged the gradients once per optimizer step, not once per micro-batch: what they sent on the sandbox's
    network, read by the grader from outside the student's process, is what one all-reduce a step needs
    (``traffic.py``). The all-reduces counted in the student's process explain a failure and can only cost; where
    the worker shares the grader's network (the fallback sandbox, one process) they are all there is, and a worker
    that forges them keeps the point there (docs/security.md)."""
    __tracebackhide__ = True
    for plan in _plans(check.generator(), 2, accumulation=3, wide=True):
        reading = traffic.Reading(train_accumulate)
        entries, case = _entries(check, train_accumulate, probes.accumulate_run, plan, "train_accumulate", reading)
        _expect_ids(check, entries, plan, case)
        _expect_single(check, entries, plan, case, hint=ACCUMULATE_HINT)
        counts = [[step.get("allreduces") for step in e["steps"]] for e in entries]
        exercised("allreduces_counted")
        if any(c != 1 for per_rank in counts for c in per_rank):
            raise CheckFailure(check, f"DDP all-reduced the gradients {counts[0]} times in rank 0's optimizer steps "
                                      f"(one bucket: once per synchronized backward); with "
                                      f"accumulation={plan['accumulation']}, it should all-reduce once per step, "
                                      f"on the last micro-batch.\nCase: {case}",
                               hint=NO_SYNC_HINT, measurements={"allreduces": counts[0]})
        traffic.expect_traffic(check, plan, reading, ddp=True, what="train_accumulate", case=case,
                               hint=NO_SYNC_HINT)


# ---------------------------------------------------------------- average_gradients

AVERAGE_HINT = ("For every parameter with a gradient: `dist.all_reduce(p.grad)` (a sum over the ranks), then "
                "`p.grad /= dist.get_world_size()`, on every rank.")


@graded(3, hidden=[{"world_size": 3}])
def check_average_matches_single(check, average_gradients, *, seed=0, world_size=2):
    """In the grader's data-parallel loop (each rank its share of the samples, no DDP), calling
    ``average_gradients(model)`` between backward and the step makes every rank's parameters, after every step,
    those of one process on all the samples; the first layer's bias is frozen (its ``.grad`` stays None)."""
    __tracebackhide__ = True
    for plan in _plans(check.generator(), world_size, frozen=True):
        entries, case = _entries(check, average_gradients, probes.average_run, plan, "average_gradients(model)")
        _expect_steps(check, entries, plan, case)
        _expect_single(check, entries, plan, case, hint=AVERAGE_HINT)


PARAMS_TOO_HINT = ("All-reduce the gradients only, once each: the parameters are already equal on every rank "
                   "(same start, same averaged gradient).")


@graded(1, evidence=("data", "traffic"), facts_only_cost=True,
        worker_facts="the torch.distributed.all_reduce calls per step (a TorchFunctionMode in the student's process)")
def check_average_calls(check, average_gradients, *, seed=0):
    """The parameters are right after every step, with a frozen parameter and a trainable one that the forward does
    not use (both without a gradient), and only the gradients were averaged: what the ranks sent on the sandbox's
    network, read by the grader from outside the student's process, is what one all-reduce of the gradients a step
    needs (``traffic.py``). The ``all_reduce`` calls counted in the student's process (at least one, at most one per
    parameter, a flattened buffer counting once) explain a failure and can only cost; where the worker shares the
    grader's network they are all there is (docs/security.md)."""
    __tracebackhide__ = True
    for plan in _plans(check.generator(), 2, frozen=True, unused=True, wide=True):
        reading = traffic.Reading(average_gradients)
        entries, case = _entries(check, average_gradients, probes.average_run, plan, "average_gradients(model)",
                                 reading)
        _expect_steps(check, entries, plan, case)
        _expect_single(check, entries, plan, case, hint=AVERAGE_HINT)
        parameters = len(entries[0]["steps"][0]["params"])
        counts = [[step.get("allreduces") for step in e["steps"]] for e in entries]
        exercised("allreduces_counted")
        if any(type(c) is not int or not 1 <= c <= parameters for per_rank in counts for c in per_rank):
            raise CheckFailure(check, f"average_gradients called all_reduce {counts[0]} times in rank 0's steps; "
                                      f"the model has {parameters} parameters, so one step needs at most "
                                      f"{parameters} (one per gradient).\nCase: {case}",
                               hint=PARAMS_TOO_HINT, measurements={"allreduces": counts[0]})
        traffic.expect_traffic(check, plan, reading, ddp=False, what="average_gradients", case=case,
                               hint=PARAMS_TOO_HINT)
