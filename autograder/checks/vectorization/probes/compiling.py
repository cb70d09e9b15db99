"""Running student code under ``torch.compile`` for a check, and reading what the compiler did.

Every check that compiles runs inside :func:`fresh_dynamo`: dynamo's caches are reset before
and after (``torch._dynamo.reset()``), so one check's compiled code, guards and recompile
reasons do not leak into the next check or into the student's kernel; the settings that
change the verdict are pinned for the block and restored after; and dynamo's own warnings
(logged at WARNING level) are silenced, since the check's message reports what matters.

The backend is ``aot_eager``: dynamo's graph capture and AOTAutograd, then the captured ATen
graph run eagerly. It needs no C++ compiler (inductor's CPU backend does), so it works on
any machine and in any Jupyter kernel; graph breaks and recompilations are dynamo's decisions
and are the same with every backend. Graphs are counted by wrapping the backend (each graph
dynamo hands over is one compilation) and the reasons for recompiling come from
``torch._dynamo.utils.guard_failures`` (the guard that failed for each recompilation).
Checked on torch 2.13.0 (CPU).

In trusted grading the student's function lives in a worker process, and so must its compilation:
:func:`open_compiled` and :func:`explain_breaks` run there through ``autograder.seam.remote.beside``
(here, in-process) and answer with plain data (results, counts, dynamo's messages). Those facts are
reported by the student's process, so a hostile student can forge them; the results' values are
judged here against the oracle all the same.
"""

import contextlib
import logging
import re

import torch

from autograder.errors import WorkerLost
from autograder.seam.handle import handle
from autograder.seam.probes import probe

COMPILE_OPTIONS = "fullgraph=True, dynamic=True"


class DynamoFailure:
    """What a compiled call raised because of torch.compile (a graph break, a guard it could not
    make, the recompile limit), with dynamo's message shortened for a student. Returned, not
    raised, so that the check words the message (errors of the student's own code still raise)."""

    def __init__(self, error):
        self.error = error
        self.message = short_message(error)
        self.recompile_limit = isinstance(error, _recompile_limit_type())


@contextlib.contextmanager
def fresh_dynamo(*, recompile_limit=8):
    """Dynamo reset before and after the block, settings pinned, its warnings silenced.

    ``recompile_limit`` bounds the graphs dynamo compiles for one function in the block; with
    ``fullgraph=True`` one more is a hard error (``FailOnRecompileLimitHit``), which keeps the cost
    of a function that recompiles for every size bounded.
    """
    import torch._dynamo  # noqa: F401 - imported here: the other checks do not need it

    logger = logging.getLogger("torch._dynamo")
    level = logger.level
    torch._dynamo.reset()
    try:
        logger.setLevel(logging.ERROR)
        # capture_scalar_outputs=False: `.item()` is a graph break where fullgraph is off (explain), whatever
        # the environment says (TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS); with fullgraph=True torch 2.13 captures it as
        # a data-dependent symbol anyway (pytorch/pytorch#163121).
        limit = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
        with torch._dynamo.config.patch(**{limit: recompile_limit}, capture_scalar_outputs=False,
                                        error_on_recompile=False, suppress_errors=False):
            yield
    finally:
        torch._dynamo.reset()
        logger.setLevel(level)


class CountingCompiler:
    """A ``torch.compile`` backend: ``aot_eager``, counting the graphs it is handed."""

    def __init__(self):
        from torch._dynamo import lookup_backend
        self.backend = lookup_backend("aot_eager")
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.backend(gm, example_inputs)


def compiled(fn, backend):
    """``torch.compile(fn, fullgraph=True, dynamic=True, backend=backend)`` whose dynamo errors are returned
    as a :class:`DynamoFailure`."""
    compiled_fn = torch.compile(fn, fullgraph=True, dynamic=True, backend=backend)

    def call(*args):
        from torch._dynamo.exc import TorchDynamoException
        try:
            return compiled_fn(*args)
        except (TorchDynamoException, *_recompile_limit_type()) as error:
            return DynamoFailure(error)

    return call


class CompiledSession:
    """``torch.compile(fn, fullgraph=True, dynamic=True)`` with a :class:`CountingCompiler`, inside
    :func:`fresh_dynamo` from its opening until :meth:`close`. Made by :func:`open_compiled` where ``fn`` lives;
    a call answers with plain data: ``(result, None)``, or ``(None, {"message", "recompile_limit"})`` when dynamo
    failed (a :class:`DynamoFailure`)."""

    def __init__(self, fn, recompile_limit):
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(fresh_dynamo(recompile_limit=recompile_limit))
        self._compiler = CountingCompiler()
        self._call = compiled(fn, self._compiler)

    def __call__(self, *args):
        with outside_recorder():
            out = self._call(*args)
        if isinstance(out, DynamoFailure):
            return None, {"message": out.message, "recompile_limit": out.recompile_limit}
        return out, None

    @property
    def graphs(self):
        """The graphs compiled so far."""
        return self._compiler.graphs

    def reasons(self):
        """Why dynamo recompiled so far (:func:`recompile_reasons`)."""
        return recompile_reasons()

    def close(self):
        self._stack.close()


@probe
def open_compiled(fn, recompile_limit=8):
    """A :class:`CompiledSession` of ``fn`` (open it with ``beside``, close it with :func:`close_compiled`)."""
    return CompiledSession(fn, recompile_limit)


def close_compiled(session):
    """``session.close()``; a worker that is gone (stopped after a hang, say) has nothing left to close."""
    try:
        session.close()
    except WorkerLost:
        pass


@contextlib.contextmanager
def outside_recorder():
    """The block runs outside any torch function or dispatch mode (the trusted worker records every call under
    both, and ``torch.compile`` refuses a user dispatch mode); the modes are back after it. Without modes (in
    the grader's own process), nothing changes."""
    from torch.utils._python_dispatch import _disable_current_modes

    popped = []
    with _disable_current_modes():
        while torch._C._len_torch_function_stack():
            popped.append(torch._C._pop_torch_function_stack())
        try:
            yield
        finally:
            for mode in reversed(popped):
                torch._C._push_on_torch_function_stack(mode)


def recompile_reasons():
    """Why dynamo recompiled since the last reset: the failed guard of each recompilation."""
    from torch._dynamo.utils import guard_failures
    return [reason for reasons in guard_failures.values() for reason in reasons]


def graph_breaks(fn, *args):
    """``[(reason, "line N: code")]``: the graph breaks ``torch._dynamo.explain`` finds in ``fn(*args)``
    (fullgraph off, so dynamo splits the function where it cannot trace and says why)."""
    explanation = torch._dynamo.explain(fn)(*args)
    found = []
    for broken in explanation.break_reasons:
        where = ""
        if broken.user_stack:
            frame = broken.user_stack[-1]
            where = f"line {frame.lineno}: {(frame.line or '').strip()}"
        found.append((first_line(str(broken.reason)), where))
    return found


def explain_breaks(fn, *args):
    """:func:`graph_breaks` of ``fn(*args)`` in a fresh dynamo, computed where ``fn`` lives (``beside``)."""
    return handle(fn).beside(_fresh_graph_breaks, *args)


@probe
def _fresh_graph_breaks(fn, *args):
    with fresh_dynamo(), outside_recorder():
        return graph_breaks(fn, *args)


def first_line(text):
    return text.strip().splitlines()[0].strip() if text.strip() else text


def short_message(error):
    """Dynamo's message cut to what a student acts on: its first line and the user code it points at."""
    text = str(error)
    head = first_line(text)
    if isinstance(error, _recompile_limit_type()):
        head = "it compiled more graphs than allowed (the recompile limit)"
    located = re.findall(r'File "[^"]*", line (\d+), in (\S+)\n\s+(.+)', text)
    where = f" (at line {located[-1][0]}, in {located[-1][1]}: {located[-1][2].strip()})" if located else ""
    head = head if len(head) <= 300 else head[:297] + "..."
    return f"{type(error).__name__}: {head}{where}"


def _recompile_limit_type():
    """Dynamo's hard error at the recompile limit under fullgraph (``FailOnCacheLimitHit`` before its rename)."""
    from torch._dynamo import exc
    names = ("FailOnRecompileLimitHit", "FailOnCacheLimitHit")
    return tuple(getattr(exc, name) for name in names if hasattr(exc, name))
