"""Runs of the student's ``train_amp``, built from a plan and recorded where ``train_amp`` lives.

With trusted grading ``train_amp`` is a proxy for a function in the student's worker, so the
model, the batches, the optimizer and the recorder it is handed must live there too. A check
describes a run as plain data, a *plan* (seed, device, batch count, optimizer, an overflowing
batch), and :func:`train` runs :func:`train_recorded` beside the student's function
(``autograder.seam.remote.beside``; in one process it simply runs here). That builds the
problem from the plan (:func:`build`), calls ``train_amp`` under the recorder and returns plain
data: for each call the recording, what ``train_amp`` returned and the given scaler's state, then
the model's and optimizer's final state. The check builds its own copy of the same problem
from the same plan for its reference loops, and judges.

Everything :func:`train_recorded` returns from a worker is reported by the student's process: a
hostile student could forge it (the recorded dtypes, autocast states, gradients, parameters,
scales). The verdicts are computed by the grader from that data.
"""

import torch

from autograder.checks.amp import problems
from autograder.checks.amp.recording import MalformedRecording, from_plain, recording, to_plain
from autograder.errors import CheckFailure
from autograder.seam.handle import handle
from autograder.seam.probes import probe
from autograder.seam.student import call_student

MALFORMED = "the record of the training run that came back from your notebook's process is malformed"


def plan(seed, device, count, *, optimizer="sgd", overflow=None):
    """A run as plain data: ``count`` batches from ``seed`` on ``device``; ``overflow`` = ``("insert", i)`` puts an
    overflowing batch before batch ``i``, ``("replace", i)`` puts it in batch ``i``'s place."""
    return {"seed": seed, "device": device, "count": count, "optimizer": optimizer, "overflow": overflow}


def build(plan):
    """``(model, batches, optimizer)`` of ``plan``: the same objects wherever it runs (all drawn from its seed)."""
    device = plan["device"]
    gen = torch.Generator().manual_seed(plan["seed"])
    model = problems.small_model(gen, device)
    batches = problems.regression_batches(gen, plan["count"], device)
    if plan["optimizer"] == "momentum":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    if plan.get("overflow"):
        how, where = plan["overflow"]
        bad = problems.overflow_batch(gen, device)
        if how == "insert":
            batches.insert(where, bad)
        else:
            batches[where] = bad
    return model, batches, optimizer


# ------------------------------------------------------------------ the student's side

@probe
@problems.single_threaded
def train_recorded(train_amp, check, plan, calls, scaler=None):
    """Build ``plan``'s problem; call ``train_amp`` once per entry of ``calls`` (``{"options": {...}, "batches":
    [start, stop]}``, one model and optimizer throughout) under the recorder, with a ``GradScaler(device,
    **scaler)`` made here and passed to every call when ``scaler`` is given; stop at the first call that fails.

    Returns ``{"calls": [{"out", "recording", "scaler"} or {"failure": [detail, hint]}], "final": final_state}``,
    plain data only. Runs where ``train_amp`` lives (see the module's docstring)."""
    model, batches, optimizer = build(plan)
    device = plan["device"]
    given = torch.amp.GradScaler(device, **scaler) if scaler else None
    results = []
    for call in calls:
        start, stop = call.get("batches") or (0, len(batches))
        part = batches[start:stop]
        options = dict(call["options"], **({"scaler": given} if given is not None else {}))
        with recording(model, optimizer, problems.mse, device) as (rec, loss_fn):
            try:
                out = call_student(check, lambda: train_amp(model, part, optimizer, loss_fn, device_type=device,
                                                            **options), what="train_amp")
            except CheckFailure as failure:
                results.append({"failure": [failure.detail, failure.hint, failure.kind]})
                break
        results.append({"out": _detached(out), "recording": to_plain(rec),
                        "scaler": None if given is None else dict(given.state_dict())})
    return {"calls": results, "final": final_state(model, optimizer)}


def _detached(value):
    """What ``train_amp`` returned, its tensors cut from their graphs (a result is data, not a graph to keep)."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if type(value) in (list, tuple):
        return type(value)(v.detach() if isinstance(v, torch.Tensor) else v for v in value)
    return value


def final_state(model, optimizer):
    """``{"params": [(name, value, grad or None)], "optimizer": [{key: tensor}]}``: copies, after training."""
    params = [(name, p.detach().clone(), None if p.grad is None else p.grad.detach().clone())
              for name, p in model.named_parameters()]
    states = [{str(k): v.detach().clone() for k, v in state.items() if isinstance(v, torch.Tensor)}
              for state in optimizer.state.values()]
    return {"params": params, "optimizer": states}


# ------------------------------------------------------------------ the grader's side

def train(check, train_amp, plan, calls, scaler=None):
    """:func:`train_recorded` beside ``train_amp``; returns ``(calls, final)``, each call's recording a
    :class:`~.recording.Recording` (a failed call keeps its ``{"failure": [detail, hint]}``)."""
    __tracebackhide__ = True
    answer = handle(train_amp).beside(train_recorded, check, plan, calls, scaler)
    try:
        entries, final = answer["calls"], answer["final"]
        if type(entries) is not list or not entries or len(entries) > len(calls) or (
                len(entries) < len(calls) and "failure" not in entries[-1]):
            raise MalformedRecording("not one entry per call")
        for entry in entries:
            if "failure" not in entry:
                entry["recording"] = from_plain(entry["recording"])
        _expect_final_state(final)
    except (MalformedRecording, TypeError, KeyError, ValueError):
        raise CheckFailure(check, MALFORMED + ".") from None
    return entries, final


def _expect_final_state(final):
    if type(final.get("params")) is not list or type(final.get("optimizer")) is not list:
        raise MalformedRecording("final state")
    for entry in final["params"]:
        name, value, grad = entry
        if not isinstance(value, torch.Tensor) or not (grad is None or isinstance(grad, torch.Tensor)):
            raise MalformedRecording("final parameters")
    for state in final["optimizer"]:
        if type(state) is not dict or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise MalformedRecording("optimizer state")


def outcome(check, entry, case):
    """``(returned value, recording)`` of one call; its failure (with ``case``) raised as a :class:`CheckFailure`."""
    __tracebackhide__ = True
    if "failure" in entry:
        detail, hint, *kind = entry["failure"]
        raise CheckFailure(check, f"{detail}\nCase: {case}", hint=hint, kind=str(kind[0]) if kind else None)
    rec = entry["recording"]
    if not rec.forwards:
        raise CheckFailure(check, "train_amp never called the model.", hint="Call `model(inputs)` for every batch.")
    return entry.get("out"), rec
