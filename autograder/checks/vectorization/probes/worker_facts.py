"""Facts about the student's objects that only the process they live in can see, for trusted grading.

Each ``*_facts`` function runs where the student's objects live (``autograder.seam.remote.beside``: in the
student's worker when they are remote, here otherwise) and returns plain data. A hostile student can rewrite
that process and forge these facts: the number of host synchronisations on CUDA. (An input changed in place
shows in the grader: the worker reports it and the grader's own tensor is changed the same way, so
``call_student`` names it.) The check judges them here, next to the values it computes from the results.
The model that ``per_sample_grads`` receives is built there too (:func:`model_for`), from values the grader draws.
"""


import torch

from autograder.errors import CheckFailure
from autograder.measuring.timing import count_host_syncs, expect_constant_syncs
from autograder.seam.handle import handle
from autograder.seam.probes import probe
from autograder.seam.remote import RemoteError


def mlp(sizes):
    """``nn.Sequential(Linear(sizes[0], sizes[1]), Tanh(), Linear(sizes[1], sizes[2]), ...)``."""
    layers = []
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if k:
            layers.append(torch.nn.Tanh())
        layers.append(torch.nn.Linear(n_in, n_out))
    return torch.nn.Sequential(*layers)


@probe
def model_for(fn, sizes, decoy):
    """The MLP of ``sizes`` holding the values ``decoy`` (their dtype and device), built where ``fn`` lives, for
    ``per_sample_grads(model, ...)``: from a worker, a handle to it comes back. Its values are the grader's, and
    the per-sample gradients are judged against the grader's own loop: a model changed there gives other data."""
    first = next(iter(decoy.values()))
    model = mlp(list(sizes)).to(first.device, first.dtype)
    model.load_state_dict(decoy)
    return model


@probe
def host_sync_facts(fn, check, tensor, indices, sizes):
    """``{"counts": {size: host synchronisations of fn(tensor[:size], indices[:size])} or None off CUDA}``, or
    ``{"failure": [detail, hint]}`` when a call failed (``timing.count_host_syncs``)."""
    counts = {}
    try:
        for size in sizes:
            _, count = count_host_syncs(check, fn, tensor[:size], indices[:size], what="batch_gather")
            if count is None:
                return {"counts": None}
            counts[size] = count
    except CheckFailure as failure:
        return {"failure": [failure.detail, failure.hint, failure.kind]}
    return {"counts": counts}


def expect_no_per_row_sync_facts(check, fn, tensor, indices, sizes, *, what, hint=None):
    """``timing.expect_no_per_row_sync`` for ``fn`` wherever it lives: counted in its process
    (:func:`host_sync_facts`, beside it), judged here with the same message."""
    __tracebackhide__ = True
    facts = handle(fn).beside(host_sync_facts, check, tensor, indices, tuple(sizes))
    if facts.get("failure"):
        detail, failure_hint, *kind = facts["failure"]
        raise CheckFailure(check, str(detail), hint=failure_hint, kind=str(kind[0]) if kind else None)
    counts = facts.get("counts")
    if counts is None:
        return None
    return expect_constant_syncs(check, counts, what=what, hint=hint)


def jit_errors_restored(fn):
    """``fn``, where a remote ``fn``'s ``torch.jit.Error`` (rebuilt here as a ``RemoteError`` named ``Error``)
    raises as a ``torch.jit.Error`` again, with its message; a local ``fn`` as it is."""
    if not handle(fn).in_worker:
        return fn

    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RemoteError as error:
            if error.remote_type != "Error":
                raise
            raise torch.jit.Error(str(error)) from None

    return call


@probe
def loop_gather(tensor, indices):
    """The oracle: one row at a time, as the tutorial's slow version does."""
    return torch.stack([tensor[b][indices[b]] for b in range(tensor.shape[0])])
