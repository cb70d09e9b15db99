"""The grader's own launcher: ``world_size`` gloo ranks forked from the process the student's function lives in
(their worker under trusted grading), bounded, none outliving the call. ``probes.py`` runs the probes in them.

:func:`launch` forks the ranks, rank 0 hosts a ``TCPStore`` on 127.0.0.1 (a port found free: the sandbox's own
network namespace has ``lo`` and nothing else, and no other process), every rank joins the gloo group, runs a body
and sends back what it returned, pickled. It is bounded: the process group times out, a rank that lags
``STRAGGLER_S`` behind a finished one is stopped as hung, the whole run has ``LAUNCH_DEADLINE_S``, and every rank
(its own process group, with whatever it started) is killed and reaped before :func:`launch` returns.
"""

import datetime
import importlib
import os
import pickle
import signal
import socket
import time
from multiprocessing import connection, get_context

import torch
import torch.distributed as dist

from autograder.checks.distributed import problems
from autograder.errors import CheckFailure


def _rank_main(rank, world_size, port, body, args, conn):
    """A rank process: its own process group (so that stopping it stops what it started), stdin and stdout away
    from the worker's pipe, one thread, the gloo group, ``body(rank, world_size, *args)``; the answer goes back
    pickled: ``("ok", value)``, ``("failed", [detail, hint])`` (the body raised a ``CheckFailure``: the student's
    call failed in this rank, with its message), ``("raised", text)`` (the body raised anything else),
    ``("setup", text)`` (the group could not be formed: the grader's failure, which :func:`launch` tries again).

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
        except CheckFailure as failure:
            answer, hold = ("failed", [failure.detail, failure.hint, failure.kind]), problems.LAUNCH_DEADLINE_S
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
    rank order, or ``{"failure": [detail, hint]}`` (a rank raised, hung or died). A rank whose call fails ends
    the launch within ``FAILED_GRACE_S``, with its message: the others may wait for it in a collective it never
    reaches. No rank outlives the call. A group
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
FAILED_GRACE_S = 1.0    # after a rank's call failed, how long the others may take to answer (see _collect)


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
    """Every rank's answer, in rank order, or the launch's failure. When a student's call fails in a rank, the
    others may be waiting for it in a collective, so the launch ends ``FAILED_GRACE_S`` later at most (at once when
    every rank has answered), with the failure of the lowest rank that failed by then: a mistake every rank makes
    (the stub's ``NotImplementedError``) then gives the same message in every run, whichever rank answered first."""
    answers, waiting = {}, dict(enumerate(conns))
    start = time.monotonic()
    first_done = first_failed = None
    while waiting:
        now = time.monotonic()
        if first_failed is not None:
            limit = first_failed + FAILED_GRACE_S
            if now >= limit:
                break
        else:
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
            if answers[rank][0] == "failed":
                if first_failed is None:
                    first_failed = time.monotonic()
                continue
            if answers[rank][0] != "ok":
                return {"failure": [f"rank {rank} failed: {answers[rank][1]}",
                                    "Run the same call in the notebook (the lesson's launcher shows every rank's "
                                    "error)."], "rank": rank}
            if first_done is None:
                first_done = time.monotonic()
    failed = sorted(rank for rank, answer in answers.items() if answer[0] == "failed")
    if failed:
        detail, hint, *kind = answers[failed[0]][1]
        return {"failure": [f"rank {failed[0]}: {detail}", hint, *kind], "rank": failed[0]}
    return {"ranks": [answers[rank][1] for rank in range(len(procs))]}
