"""Resources a dataset holds: open files after a pass, and memory that grows with the number of members.

Open files are seen two ways: the descriptors this process still holds on the shards after a full pass
(``/proc/self/fd``, or psutil where there is no /proc), and the ``ResourceWarning`` Python gives when the garbage
collector, rather than the dataset, closes a file. Memory is the peak that ``tracemalloc`` traces during a pass
over a shard of few members and one of many: a dataset that keeps every member it read grows with the shard.

Both run where the dataset lives, called only by the probes ``open_files`` and ``traced_peak`` (:mod:`.probes`),
which get the check's name as plain text (a seam crosses to a worker as its name): their passes are
``call_student``'s guarded calls made directly, as a probe makes them.
"""

import contextlib
import gc
import os
import tracemalloc
import warnings

import torch
from torch.utils._python_dispatch import _disable_current_modes

from autograder.seam.student import call_student


@contextlib.contextmanager
def no_torch_modes():
    """No torch function or dispatch mode (an op recorder: the trusted worker records every call of student code)
    sees the block, as none does in the grader's own process; tensor subclasses keep working."""
    with contextlib.ExitStack() as stack:
        while torch._C._len_torch_function_stack():
            stack.enter_context(torch.overrides._pop_mode_temporarily())
        stack.enter_context(_disable_current_modes())
        yield


def open_paths_under(directory):
    """The paths under ``directory`` that this process holds open, or None where that cannot be seen."""
    directory = os.path.realpath(directory)
    if os.path.isdir("/proc/self/fd"):
        paths = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                paths.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                continue
    else:
        try:
            import psutil
        except ImportError:
            return None
        paths = [f.path for f in psutil.Process().open_files()]
    return sorted(p for p in paths if os.path.realpath(p).startswith(directory + os.sep))


def pass_and_files(check, dataset, directory, *, what, timeout=None):
    """A full single-process pass; returns (items yielded, files under ``directory`` still open while the
    dataset lives, messages of ResourceWarnings about files closed by the garbage collector)."""
    __tracebackhide__ = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        count = call_student(check, lambda: sum(1 for _ in dataset), what=what, timeout=timeout)
        still_open = open_paths_under(directory)
        gc.collect()
    unclosed = [str(w.message) for w in caught
                if issubclass(w.category, ResourceWarning) and os.path.realpath(directory) in str(w.message)]
    return count, still_open, unclosed


def peak_traced_bytes(check, dataset, *, what, timeout=None, warm_up=False):
    """(items, peak bytes traced by ``tracemalloc`` above the start) during a full single-process pass.

    No torch mode sees the pass (:func:`no_torch_modes`): an op recorder would otherwise add its own bytes for
    every torch call the dataset makes, per member. With
    ``warm_up``, an untraced pass first does what a first pass does once (lazy imports, caches)."""
    __tracebackhide__ = True
    if warm_up:
        with no_torch_modes():
            call_student(check, lambda: sum(1 for _ in dataset), what=what, timeout=timeout)
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        gc.collect()
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        with no_torch_modes():
            count = call_student(check, lambda: sum(1 for _ in dataset), what=what, timeout=timeout)
        return count, tracemalloc.get_traced_memory()[1] - start
    finally:
        if not was_tracing:
            tracemalloc.stop()
