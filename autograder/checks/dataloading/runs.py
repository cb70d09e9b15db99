"""Running a student's dataset through real ``DataLoader`` worker processes, safely.

Every pass has a time limit (``settings.dataloader_timeout_s``: the alarm in the main process, and the
DataLoader's own ``timeout`` for each batch from a worker), warnings about worker counts (and about
``pin_memory`` on a machine without an accelerator) are silenced, and any worker process still alive after the
pass, failed or not, is terminated.

Start method: workers start with ``settings.dataloading.start_method`` ("fork" by default, where the platform
has it), always passed to the DataLoader as ``multiprocessing_context``, so Python's own default (``fork`` on
Linux up to 3.13, ``forkserver`` from 3.14) never decides. Under "spawn" (or "forkserver") each worker unpickles
the dataset and the ``collate_fn``, which imports them by module and name: a class or function defined in a
notebook lives in ``__main__``, which a spawned worker cannot import, so the checks only grade such code with
"fork" and say so otherwise.
"""

import contextlib
import multiprocessing
import sys
import warnings

from torch.utils.data import DataLoader

from autograder.errors import CheckFailure
from autograder.seam.student import call_student
from autograder.settings import settings


def start_method():
    """The start method the loading checks use: the configured one, or "spawn" where "fork" does not exist."""
    wanted = settings.dataloading.start_method
    return wanted if wanted in multiprocessing.get_all_start_methods() else "spawn"


def _importable_by_workers(obj):
    """Whether a worker started with spawn or forkserver can import ``obj`` (a class or function) by name."""
    if getattr(obj, "__module__", None) != "__main__":
        return True
    return getattr(sys.modules.get("__main__"), "__file__", None) is not None


def describe_run(num_shards, num_workers, rank=None, world_size=None):
    """``3 shards, DataLoader(num_workers=2)``, then ``, rank 1 of world_size=2`` (or ``, on each rank of ...``)."""
    text = f"{num_shards} shard{'s' if num_shards != 1 else ''}, DataLoader(num_workers={num_workers})"
    if world_size is not None:
        text += f", {'on each rank' if rank is None else f'rank {rank}'} of world_size={world_size}"
    return text


@contextlib.contextmanager
def reaping_workers():
    """Terminate (then kill) every child process started inside the block that is still alive at its end."""
    before = {p.pid for p in multiprocessing.active_children()}
    try:
        yield
    finally:
        leftovers = [p for p in multiprocessing.active_children() if p.pid not in before]
        for process in leftovers:
            process.terminate()
        for process in leftovers:
            process.join(2.0)
            if process.is_alive():
                process.kill()
                process.join(2.0)


def load_all(check, dataset, num_workers, *, where, timeout=None, batch_size=None, collate_fn=None,
             sampler=None, pin_memory=False, method=None):
    """Every item (or batch) a ``DataLoader(dataset, batch_size, num_workers=..., ...)`` yields, as a list.

    The defaults give single samples (``batch_size=None``); ``batch_size``, ``collate_fn``, ``sampler`` and
    ``pin_memory`` are passed to the DataLoader as given; ``method`` is the start method (default:
    :func:`start_method`). A pass that raises, or lasts longer than ``timeout``
    seconds, becomes a :class:`CheckFailure` naming ``where`` (the configuration); worker processes never
    outlive the call. It runs where ``dataset`` lives, called by the probes ``load`` and ``collated_batches``
    (:mod:`.probes`) with the check's name as plain text, so the pass is ``call_student``'s guarded call made
    directly, as a probe makes it.
    """
    __tracebackhide__ = True
    timeout = settings.dataloader_timeout_s if timeout is None else timeout
    options = {}
    if num_workers:
        method = method or start_method()
        for code in (type(dataset), collate_fn):
            if code is not None and method != "fork" and not _importable_by_workers(code):
                name = getattr(code, "__name__", code)
                raise CheckFailure(check, f"with {where}: the grader starts DataLoader workers with '{method}', "
                                          f"which cannot import {name} because it is defined in the notebook.",
                                   hint="Ask your instructor: the loading checks grade notebook code with "
                                        "settings.dataloading.start_method = 'fork'.")
        options = {"multiprocessing_context": method, "timeout": timeout}
    if collate_fn is not None:
        options["collate_fn"] = collate_fn
    if sampler is not None:
        options["sampler"] = sampler
    state = {}

    def one_pass():
        try:
            loader = DataLoader(dataset, batch_size=batch_size, num_workers=num_workers, pin_memory=pin_memory,
                                **options)
            state["iterator"] = iterator = iter(loader)
            items = list(iterator)
            state["finished"] = True
            return items, None
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - the student's error becomes the message below
            return None, error

    with reaping_workers(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*worker processes in total.*")   # more workers than cores
        warnings.filterwarnings("ignore", message=".*pickle error when attempting to start a worker.*")
        warnings.filterwarnings("ignore", message=".*pin_memory.*no accelerator.*")   # pin_memory on a CPU machine
        try:
            limit = timeout + 5 if num_workers else timeout
            items, error = call_student(check, one_pass, timeout=limit, what="a full pass over a DataLoader")
        except CheckFailure as failure:
            if failure.kind != "timed out":
                raise
            raise CheckFailure(check, f"with {where}: a full pass did not finish within {limit:g} s.",
                               hint="Look for a loop that never ends in __iter__, or one that waits for "
                                    "something that never comes.") from None
        finally:
            _stop(state.get("iterator"), failed=not state.get("finished"))
    if error is not None:
        raise CheckFailure(check, f"with {where}: {_error_text(error, timeout)}", hint=_hint(error))
    return items


def _stop(iterator, *, failed):
    """Shut the iterator's workers down. After a failure, terminate them first: a hung worker ignores the
    DataLoader's request to stop, which then waits 5 s for it."""
    if iterator is None:
        return
    if failed and getattr(iterator, "_workers", None):
        _abandon(iterator)
    elif hasattr(iterator, "_shutdown_workers"):
        _ours(iterator._shutdown_workers, expected=failed)


def _abandon(iterator):
    """End a failed pass's workers without torch's graceful shutdown: it sets an event whose lock a terminated
    worker may hold, and then waits for it forever. The iterator is marked shut down, so its ``__del__`` does
    nothing either."""
    from torch.utils.data import _utils

    iterator._shutdown = True
    if getattr(iterator, "_worker_pids_set", False):     # no "killed by signal" for the workers ended here
        _utils.signal_handling._remove_worker_pids(id(iterator))
        iterator._worker_pids_set = False
    if hasattr(iterator, "_pin_memory_thread_done_event"):
        iterator._pin_memory_thread_done_event.set()
    for worker in iterator._workers:
        if worker.is_alive():
            worker.terminate()
    for worker in iterator._workers:
        worker.join(timeout=5)
        if worker.is_alive():
            worker.kill()
            worker.join(timeout=5)
    for queue in [*getattr(iterator, "_index_queues", []), getattr(iterator, "_worker_result_queue", None)]:
        if queue is not None:
            queue.cancel_join_thread()
            queue.close()


def _ours(step, expected=True):
    """``step()``, where torch's SIGCHLD handler may report a worker "killed by signal: Terminated": after a failure
    that is the worker this module terminated (seen in the suite, 2026-11-24), not the student's; the shutdown's own
    ``finally`` has cleaned up by then."""
    try:
        step()
    except RuntimeError as error:
        if not (expected and "killed by signal" in str(error)):
            raise


def _error_text(error, timeout):
    """What went wrong, short: a worker's exception as its type, message and the line that raised it."""
    text = str(error)
    if "timed out after" in text:
        return (f"a worker sent no sample for {timeout:g} s (the DataLoader's timeout): the pass never finished.")
    if "exited unexpectedly" in text:
        return f"a worker process died: {text[:500]}"
    if "Original Traceback" in text:
        lines = [line for line in text.splitlines() if line.strip()]
        where = ""
        frames = [i for i, line in enumerate(lines) if line.lstrip().startswith("File ")]
        if frames and frames[-1] + 1 < len(lines) - 1:
            where = f" (at {lines[frames[-1]].strip()[5:]}: {lines[frames[-1] + 1].strip()})"
        worker = lines[0].split(" in ", 1)[-1].rstrip(".")
        return f"{worker} raised {lines[-1].strip()[:600]}{where}"
    return f"the pass raised {type(error).__name__}: {text[:600]}"


def _hint(error):
    text = str(error)
    if "pickle" in text.lower():
        return ("Workers started with 'spawn' receive a pickled copy of the dataset: keep only paths and numbers "
                "in __init__, and open files inside __iter__.")
    if "timed out" in text:
        return "Look for a loop that never ends, or a worker that waits for something no other worker sends."
    return "Run the same DataLoader in the notebook to see the full traceback; num_workers=0 shows it most clearly."
