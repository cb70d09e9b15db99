"""One CPU thread for a block: what the grader's own small computations run on."""

import contextlib
import functools

import torch


@contextlib.contextmanager
def one_thread():
    """Run the block on one CPU thread (the previous count restored after).

    The grader's problems and oracles are small, so nothing is lost, and two things are gained:

    * the grader's process and the student's worker compute the same ops in the same order whatever thread counts
      they start with (the amp resume check compares their losses bit for bit);
    * a busy machine does not make each tiny op wait for OpenMP threads that wait for a core. Measured under load
      on 2 cores: ``check_convergence`` took 20 s of wall time for 6 s of CPU time with 2 threads (load 10), and
      one BatchNorm1d call on a [20, 5] batch, whose CPU kernel opens a parallel region even for that, took 1 to
      90 ms with 2 threads against 15 us on one (load 4, 2026-11-22).

    Student code runs with its process's own setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def single_threaded(fn):
    """``fn`` (a check, or a probe run beside the student's code) inside :func:`one_thread`: the small models of the
    amp and memory checks, whose every op would otherwise wait for OpenMP threads on a busy machine (a [32, 48]
    Linear took 14 ms under load 6 with two threads, 2026-11-24), and the grader's run and the student's then
    compute alike."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        __tracebackhide__ = True
        with one_thread():
            return fn(*args, **kwargs)
    return run
