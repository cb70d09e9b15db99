"""Running a student's dataset through real ``DataLoader`` worker processes, safely.

Every pass has a time limit (``settings.dataloader_timeout_s``: the alarm in the main process, and the
DataLoader's own ``timeout`` for each batch from a worker), warnings about worker counts are silenced, and any
worker process still alive after the pass, failed or not, is terminated.

Start method: workers start with ``settings.dataloading.start_method`` ("fork" by default, where the platform
has it). Under "spawn" (or "forkserver") each worker unpickles the dataset, which imports its class by module
and name: a class defined in a notebook lives in ``__main__``, which a spawned worker cannot import, so the
checks only grade such a class with "fork" and say so otherwise.
"""

import contextlib
import multiprocessing
import sys
import warnings

from torch.utils.data import DataLoader

from ..errors import CheckFailure
from ..settings import settings
from ..student import call_student


def start_method():
    """The start method the loading checks use: the configured one, or "spawn" where "fork" does not exist."""
    wanted = settings.dataloading.start_method
    return wanted if wanted in multiprocessing.get_all_start_methods() else "spawn"


def _importable_by_workers(dataset):
    cls = type(dataset)
    if cls.__module__ != "__main__":
        return True
    return getattr(sys.modules.get("__main__"), "__file__", None) is not None


def describe_run(num_shards, num_workers, rank=None, world_size=None):
    text = f"{num_shards} shard{'s' if num_shards != 1 else ''}, DataLoader(num_workers={num_workers})"
    if world_size is not None:
        text += f", rank {rank} of world_size={world_size}"
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


def load_all(check, dataset, num_workers, *, where, timeout=None):
    """Every item a ``DataLoader(dataset, batch_size=None, num_workers=...)`` yields, as a list.

    A pass that raises, or lasts longer than ``timeout`` seconds, becomes a :class:`CheckFailure` naming
    ``where`` (the configuration); worker processes never outlive the call.
    """
    __tracebackhide__ = True
    timeout = settings.dataloader_timeout_s if timeout is None else timeout
    options = {}
    if num_workers:
        method = start_method()
        if method != "fork" and not _importable_by_workers(dataset):
            raise CheckFailure(check, f"with {where}: the grader starts DataLoader workers with '{method}', which "
                                      f"cannot import {type(dataset).__name__} because it is defined in the notebook.",
                               hint="Ask your instructor: the loading checks grade notebook classes with "
                                    "settings.dataloading.start_method = 'fork'.")
        options = {"multiprocessing_context": method, "timeout": timeout}
    state = {}

    def one_pass():
        loader = DataLoader(dataset, batch_size=None, num_workers=num_workers, **options)
        state["iterator"] = iterator = iter(loader)
        return list(iterator)

    with reaping_workers(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*worker processes in total.*")   # more workers than cores
        try:
            return call_student(check, one_pass, timeout=timeout + 5 if num_workers else timeout,
                                what=f"a full pass over DataLoader with {where}")
        except CheckFailure as failure:
            raise CheckFailure(check, _worker_message(failure.detail, where, timeout), hint=_hint(failure.detail)) \
                from None
        finally:
            iterator = state.pop("iterator", None)
            if iterator is not None and hasattr(iterator, "_shutdown_workers"):
                iterator._shutdown_workers()


def _worker_message(detail, where, timeout):
    if "timed out after" in detail or "did not return within" in detail:
        return (f"with {where}: a full pass did not finish within {timeout:g} s (the DataLoader waited for a "
                f"sample that never came).")
    if "exited unexpectedly" in detail:
        return f"with {where}: a worker process died: {_first_lines(detail)}"
    return f"with {where}: {_first_lines(detail)}"


def _first_lines(text, limit=1500):
    return text if len(text) <= limit else text[:limit] + " ..."


def _hint(detail):
    if "pickle" in detail.lower():
        return ("Workers started with 'spawn' receive a pickled copy of the dataset: keep only paths and numbers "
                "in __init__, and open files inside __iter__.")
    if "did not return within" in detail or "timed out" in detail:
        return "Look for a loop that never ends, or a worker that waits for something no other worker sends."
    return "Run the same DataLoader in the notebook to see the full traceback; num_workers=0 shows it most clearly."
