"""What runs beside the student's functions (``handle(fn).beside(probe, ...)``): the rank bodies the grader's
launcher (``launcher.py``) runs, and what each rank records.

The probes build the plan's model and a recording dataset (``problems.Recorded``) in every rank, call the
student's function through ``call_student`` and send back plain data: the indices each rank's dataset gave out, and
the parameters after every optimizer step (a global optimizer hook). A student's call that fails in a rank raises its
``CheckFailure`` out of the body: the launcher then ends the whole launch at once with that rank's message, instead
of waiting for the other ranks, which may be blocked in a collective the failed rank never reaches. The all-reduce counts (a communication hook on
the student's ``DistributedDataParallel``, a ``TorchFunctionMode`` around ``average_gradients``) are measured in
the student's process: their word, which explains and may cost points, never earns one (docs/security.md).
"""

import inspect

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.overrides import TorchFunctionMode

from autograder.checks.distributed import problems
from autograder.checks.distributed.launcher import launch
from autograder.seam.probes import probe
from autograder.seam.student import call_student

# ---------------------------------------------------------------- what every rank records

def _params(model):
    return [p.detach().clone() for p in model.parameters()]


class StepRecorder:
    """After every optimizer step (any ``torch.optim`` optimizer, a global hook): the parameters of ``model`` and
    the indices its dataset gave out since the step before; with ``ddp_calls``, also the number of all-reduces a
    communication hook saw on the student's ``DistributedDataParallel`` since then."""

    def __init__(self, model, dataset):
        self.model, self.dataset, self.steps, self.allreduces = model, dataset, [], 0
        self._given, self._calls = 0, 0

    def _after_step(self, optimizer, args, kwargs):
        ids = self.dataset.seen[self._given:]
        self._given = len(self.dataset.seen)
        self.steps.append({"ids": ids, "params": _params(self.model), "allreduces": self.allreduces - self._calls})
        self._calls = self.allreduces

    def _count(self, state, bucket):
        self.allreduces += 1
        tensor = bucket.buffer().div_(dist.get_world_size())
        return dist.all_reduce(tensor, async_op=True).get_future().then(lambda f: f.value()[0])

    def _hook_ddp(self, module, args):
        if isinstance(module, DistributedDataParallel) and not getattr(module, "_grader_counts", False):
            module._grader_counts = True
            module.register_comm_hook(None, self._count)

    def __enter__(self):
        self._handles = [register_optimizer_step_post_hook(self._after_step),
                         torch.nn.modules.module.register_module_forward_pre_hook(self._hook_ddp)]
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()

    def answer(self):
        return {"steps": self.steps, "unstepped": self.dataset.seen[self._given:]}


def _train_rank(rank, world_size, fn, check, plan, what, keywords):
    model, x, y = problems.build(plan)
    dataset = problems.Recorded(x, y)
    with StepRecorder(model, dataset) as recorder:
        call_student(check, fn, rank, world_size, model, dataset, what=what, **keywords)   # a failure ends the launch
    return recorder.answer()


def _keywords(plan, accumulation=False):
    keywords = {"batch_size": plan["batch_size"], "epochs": plan["epochs"], "lr": plan["lr"],
                "seed": plan["sampler_seed"]}
    if accumulation:
        keywords["accumulation"] = plan["accumulation"]
    return keywords


def _unfit(fn, what, plan, keywords):
    """The failure of a call ``fn`` cannot take (its signature refuses these arguments), found before any rank is
    started: the same TypeError every rank would raise, without the launch (a screen of many wrong candidates, a
    stub with another signature)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):     # no signature to read (a builtin): the call decides
        return None
    try:
        signature.bind(0, plan["world_size"], None, None, **keywords)
    except TypeError as error:
        given = ", ".join(f"{k}={v!r}" for k, v in keywords.items())
        return {"failure": [f"{what}(rank, world_size, model, dataset, {given}) cannot be called: {error}.",
                            f"Keep the exercise's signature: def {what}(rank, world_size, model, dataset, *, "
                            f"{', '.join(keywords)})."]}
    return None


@probe
def ddp_run(train_ddp, check, plan):
    """``train_ddp(rank, world_size, model, dataset, batch_size=, epochs=, lr=, seed=)`` in every rank of a fresh
    gloo group; ``{"ranks": [{"steps": [{"ids", "params", "allreduces"}], "unstepped"}]}`` or ``{"failure"}``."""
    keywords = _keywords(plan)
    return _unfit(train_ddp, "train_ddp", plan, keywords) or launch(
        plan["world_size"], _train_rank, train_ddp, check, plan, "train_ddp", keywords)


@probe
def accumulate_run(train_accumulate, check, plan):
    """:func:`ddp_run` for ``train_accumulate(..., accumulation=)``."""
    keywords = _keywords(plan, accumulation=True)
    return _unfit(train_accumulate, "train_accumulate", plan, keywords) or launch(
        plan["world_size"], _train_rank, train_accumulate, check, plan, "train_accumulate", keywords)


class AllReduceCount(TorchFunctionMode):
    """Counts ``torch.distributed.all_reduce`` calls in its block, however the student imported it, and says what
    each reduced of ``model`` (``reduced``: "gradients", "parameters" or "other", by storage)."""

    def __init__(self, model=None):
        super().__init__()
        self.calls = 0
        self.reduced = set()
        params = list(model.parameters()) if model is not None else []
        self._grads = {p.grad.untyped_storage().data_ptr() for p in params if p.grad is not None}
        self._params = {p.untyped_storage().data_ptr() for p in params}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is dist.all_reduce:
            self.calls += 1
            tensor = args[0] if args else (kwargs or {}).get("tensor")
            if isinstance(tensor, torch.Tensor):
                ptr = tensor.untyped_storage().data_ptr()
                self.reduced.add("gradients" if ptr in self._grads else "parameters" if ptr in self._params
                                 else "other")
        return func(*args, **(kwargs or {}))


def _average_rank(rank, world_size, average_gradients, check, plan):
    """The grader's own data-parallel loop (its share of ``DistributedSampler``'s order, plain SGD, mean squared
    error) with the student's ``average_gradients(model)`` between backward and the optimizer step."""
    model, x, y = problems.build(plan)
    optimizer = torch.optim.SGD(model.parameters(), lr=plan["lr"])
    steps = []
    for ids in problems.expected_ids(plan):
        optimizer.zero_grad()
        mine = ids[rank]
        torch.nn.functional.mse_loss(model(x[mine]), y[mine]).backward()
        with AllReduceCount(model) as counted:
            call_student(check, average_gradients, model, what="average_gradients")   # a failure ends the launch
        optimizer.step()
        steps.append({"ids": mine, "params": _params(model), "allreduces": counted.calls,
                      "reduced": sorted(counted.reduced)})
    return {"steps": steps, "unstepped": []}


@probe
def average_run(average_gradients, check, plan):
    """The grader's loop with ``average_gradients`` in every rank; the answer as :func:`ddp_run`'s."""
    return launch(plan["world_size"], _average_rank, average_gradients, check, plan)
