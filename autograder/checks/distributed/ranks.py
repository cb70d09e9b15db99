"""What runs beside the student's functions: the grader's own launcher, the rank processes it starts, and what each
rank records (``handle(fn).beside(probe, ...)``).

:func:`launch` forks ``world_size`` rank processes from the process the student's function lives in (their worker
under trusted grading), joins them in a gloo process group over 127.0.0.1 (a ``TCPStore`` the launcher hosts on a
free port: the sandbox's own network namespace has ``lo`` and nothing else), runs a rank body in each and collects
what each sends back. It is bounded: the process group times out, a rank that lags ``STRAGGLER_S`` behind a
finished one is stopped as hung, the whole run has ``LAUNCH_DEADLINE_S``, and every rank (its own process group,
with whatever it started) is killed and reaped before :func:`launch` returns.

The probes build the plan's model and a recording dataset (``problems.Recorded``) in every rank, call the
student's function through ``call_student`` and send back plain data: the indices each rank's dataset gave out, and
the parameters after every optimizer step (a global optimizer hook). The all-reduce counts (a communication hook on
the student's ``DistributedDataParallel``, a ``TorchFunctionMode`` around ``average_gradients``) are measured in
the student's process: their word, which explains and may cost points, never earns one (docs/security.md).
"""

import contextlib
import datetime
import importlib
import inspect
import io
import os
import pickle
import signal
import socket
import time
from multiprocessing import connection, get_context

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.overrides import TorchFunctionMode

from ...errors import CheckFailure
from ...probe_registry import probe
from ...student import CallTimeout, call_student, time_limit
from . import problems


# ---------------------------------------------------------------- the grader's launcher

def _rank_main(rank, world_size, port, body, args, conn):
    """A rank process: its own process group (so that stopping it stops what it started), stdin and stdout away
    from the worker's pipe, one thread, the gloo group, ``body(rank, world_size, *args)``; the answer goes back
    pickled: ``("ok", value)``, ``("raised", text)`` (the body raised), ``("setup", text)`` (the group could not be
    formed: the grader's failure, which :func:`launch` tries again).

    A rank never leaves while others may still need it: gloo closes a leaving rank's connections, and a rank still
    connecting its mesh or waiting in a collective then fails too ("Connection closed by peer"; 5 of 150 launches
    of 3 ranks with an empty body did, measured 2026-11-24 under load 5), sometimes before the first error is read.
    So every rank passes a barrier once the group is formed, waits in another after its answer, and a rank whose
    body raised waits to be stopped."""
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    try:
        torch.set_num_threads(1)
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
        timeout = datetime.timedelta(seconds=problems.GROUP_TIMEOUT_S)
        store = dist.TCPStore("127.0.0.1", port, world_size, rank == 0, timeout=timeout)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size, timeout=timeout)
        dist.barrier()
    except BaseException as error:  # noqa: BLE001 - reported, never raised here
        answer, hold = ("setup", f"{type(error).__name__}: {str(error)[:1000]}"), 0
    else:
        try:
            answer, hold = ("ok", body(rank, world_size, *args)), None
        except BaseException as error:  # noqa: BLE001 - any failure of the body is reported, never raised here
            answer, hold = ("raised", f"{type(error).__name__}: {str(error)[:1000]}"), problems.LAUNCH_DEADLINE_S
    try:
        conn.send_bytes(pickle.dumps(answer))
        if hold is None:
            dist.barrier()
        else:
            time.sleep(hold)
    finally:
        os._exit(0)      # no atexit handler of the parent's (a test runner's, a kernel's) runs in a rank


def _stop(procs):
    for proc in procs:
        if proc.pid is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    for proc in procs:
        proc.join()


def launch(world_size, body, *args):
    """Run ``body(rank, world_size, *args)`` in ``world_size`` gloo ranks; returns ``{"ranks": [value, ...]}`` in
    rank order, or ``{"failure": [detail, hint]}`` (a rank raised, hung or died). No rank outlives the call. A group
    that could not be formed is the grader's failure, not the student's: tried ``SETUP_TRIES`` times, then raised
    (a grader error, never a 0).

    ``torch._dynamo`` is imported here, once, before the fork: ``DistributedDataParallel`` imports it when it is
    built, which took 3.1 s in every rank (2 ranks on 2 cores, measured 2026-11-24) against 0.02 s once imported."""
    importlib.import_module("torch._dynamo")     # see the docstring
    for _ in range(SETUP_TRIES):
        answer = _launch_once(world_size, body, args)
        if "setup" not in answer:
            return answer
    raise RuntimeError(f"the grader could not form a gloo group of {world_size} ranks on 127.0.0.1 "
                       f"{SETUP_TRIES} times: {answer['setup']}")


SETUP_TRIES = 3


def _launch_once(world_size, body, args):
    ctx = get_context("fork")
    port = _free_port()
    procs, conns = [], []
    try:
        for rank in range(world_size):
            mine, theirs = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_rank_main, args=(rank, world_size, port, body, args, theirs),
                               daemon=True)
            proc.start()
            theirs.close()
            procs.append(proc)
            conns.append(mine)
        return _collect(procs, conns)
    finally:
        _stop(procs)
        for conn in conns:
            conn.close()


def _free_port():
    """A port free on 127.0.0.1 now, for rank 0's store. Under trusted grading the sandbox's network namespace is
    the worker's alone, so no other process can take it in between; elsewhere a taken port fails the setup, which
    :func:`launch` tries again."""
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return probe_socket.getsockname()[1]


def _collect(procs, conns):
    answers, waiting = {}, dict(enumerate(conns))
    start = time.monotonic()
    first_done = None
    while waiting:
        now = time.monotonic()
        limit = start + problems.LAUNCH_DEADLINE_S
        if first_done is not None:
            limit = min(limit, first_done + problems.STRAGGLER_S)
        if now >= limit:
            late = sorted(waiting)
            if first_done is None:
                return {"failure": [f"no rank finished within {problems.LAUNCH_DEADLINE_S} s.",
                                    "Look for an infinite loop, or a collective call that no rank reaches."]}
            done = sorted(answers)
            return {"failure": [f"rank {late[0]} was still running {problems.STRAGGLER_S} s after rank {done[0]} "
                                f"finished, and was stopped (ranks {late} hung).",
                                "A collective call (all_reduce, DDP's backward) that only some ranks make waits "
                                "forever for the others: make every rank run the same collectives in the same "
                                "order."]}
        for conn in connection.wait(list(waiting.values()), timeout=min(0.5, limit - now)):
            rank = next(r for r, c in waiting.items() if c is conn)
            del waiting[rank]
            try:
                answers[rank] = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                answers[rank] = ("raised", f"the rank's process ended without an answer (exit code "
                                           f"{procs[rank].exitcode})")
            if answers[rank][0] == "setup":
                return {"setup": f"rank {rank}: {answers[rank][1]}"}
            if answers[rank][0] != "ok":
                return {"failure": [f"rank {rank} failed: {answers[rank][1]}",
                                    "Run the same call in the notebook (the lesson's launcher shows every rank's "
                                    "error)."], "rank": rank}
            if first_done is None:
                first_done = time.monotonic()
    return {"ranks": [answers[rank][1] for rank in range(len(procs))]}


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


def _failure(failure):
    return {"failure": [failure.detail, failure.hint]}


def _train_rank(rank, world_size, fn, check, plan, what, keywords):
    model, x, y = problems.build(plan)
    dataset = problems.Recorded(x, y)
    with StepRecorder(model, dataset) as recorder:
        try:
            call_student(check, fn, rank, world_size, model, dataset, what=what, **keywords)
        except CheckFailure as failure:
            return _failure(failure)
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


def _ranks_or_failure(result):
    if "failure" in result:
        return result
    for rank, entry in enumerate(result["ranks"]):
        if "failure" in entry:
            return {"failure": [f"rank {rank}: {entry['failure'][0]}", entry["failure"][1]]}
    return result


@probe
def ddp_run(train_ddp, check, plan):
    """``train_ddp(rank, world_size, model, dataset, batch_size=, epochs=, lr=, seed=)`` in every rank of a fresh
    gloo group; ``{"ranks": [{"steps": [{"ids", "params", "allreduces"}], "unstepped"}]}`` or ``{"failure"}``."""
    keywords = _keywords(plan)
    return _unfit(train_ddp, "train_ddp", plan, keywords) or _ranks_or_failure(
        launch(plan["world_size"], _train_rank, train_ddp, check, plan, "train_ddp", keywords))


@probe
def accumulate_run(train_accumulate, check, plan):
    """:func:`ddp_run` for ``train_accumulate(..., accumulation=)``."""
    keywords = _keywords(plan, accumulation=True)
    return _unfit(train_accumulate, "train_accumulate", plan, keywords) or _ranks_or_failure(
        launch(plan["world_size"], _train_rank, train_accumulate, check, plan, "train_accumulate", keywords))


class AllReduceCount(TorchFunctionMode):
    """Counts ``torch.distributed.all_reduce`` calls in its block, however the student imported it."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is dist.all_reduce:
            self.calls += 1
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
        try:
            with AllReduceCount() as counted:
                call_student(check, average_gradients, model, what="average_gradients")
        except CheckFailure as failure:
            return _failure(failure)
        optimizer.step()
        steps.append({"ids": mine, "params": _params(model), "allreduces": counted.calls})
    return {"steps": steps, "unstepped": []}


@probe
def average_run(average_gradients, check, plan):
    """The grader's loop with ``average_gradients`` in every rank; the answer as :func:`ddp_run`'s."""
    return _ranks_or_failure(launch(plan["world_size"], _average_rank, average_gradients, check, plan))


# ---------------------------------------------------------------- what the grader hands to the student's launcher

def rank_sum(rank, world_size, token):
    """A rank body for ``run_ranks``: all-reduces ``token + rank`` and returns ``(rank, world_size, the sum)``: only
    a real process group of ``world_size`` ranks gives the sum."""
    torch.set_num_threads(1)
    value = torch.tensor([float(token + rank)], dtype=torch.float64)
    dist.all_reduce(value)
    return rank, world_size, float(value.item())


def rank_raises(rank, world_size, bad_rank, message):
    """A rank body for ``run_ranks``: ``bad_rank`` raises ``RuntimeError(message)``, the others wait in a barrier
    for it (forever, unless the launcher stops them or the group times out)."""
    torch.set_num_threads(1)
    if rank == bad_rank:
        raise RuntimeError(message)
    dist.barrier()
    return rank


HELPERS = (b"multiprocessing.resource_tracker", b"multiprocessing.forkserver")   # a launcher's long-lived helpers


def _children():
    """This process's live child processes (their pids), read from /proc: the ranks a launcher left behind. The
    helpers ``multiprocessing`` keeps for the process's lifetime (its resource tracker, started by a ``spawn``
    context's queue; a forkserver) are not ranks."""
    me, found = str(os.getpid()), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                if fields[1] != me or fields[0] == "Z":
                    continue
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    command = cmdline.read()
            except OSError:
                continue
            if not any(helper in command for helper in HELPERS):
                found.append(int(entry))
    return found


@probe
def launcher_results(run_ranks, check, world_size, token):
    """``run_ranks(rank_sum, world_size, token)``: ``{"returned": value, "left": pids}`` or ``{"failure"}``."""
    before = set(_children())
    try:
        value = call_student(check, run_ranks, rank_sum, world_size, token, what="run_ranks",
                             timeout=problems.LAUNCH_DEADLINE_S)
    except CheckFailure as failure:
        return _failure(failure)
    if isinstance(value, tuple):
        value = list(value)
    return {"returned": value if isinstance(value, list) else type(value).__name__,
            "left": sorted(set(_children()) - before)}


@probe
def launcher_failure(run_ranks, check, world_size, bad_rank, message):
    """``run_ranks(rank_raises, world_size, bad_rank, message)``, which must raise: ``{"raised": "Type",
    "message": text, "left": pids}``; ``{"returned": type name}`` when it returned, ``{"late": seconds}`` when it
    had not finished after ``LAUNCH_DEADLINE_S``. What it prints is dropped."""
    before = set(_children())
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                time_limit(problems.LAUNCH_DEADLINE_S):
            value = run_ranks(rank_raises, world_size, bad_rank, message)
    except CallTimeout:
        return {"late": problems.LAUNCH_DEADLINE_S, "left": sorted(set(_children()) - before)}
    except BaseException as error:  # noqa: BLE001 - the failure the launcher must raise, whatever its type
        return {"raised": type(error).__name__, "message": str(error)[:4000],
                "left": sorted(set(_children()) - before)}
    return {"returned": type(value).__name__, "left": sorted(set(_children()) - before)}
