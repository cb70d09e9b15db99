"""The seam between the grader and student code: every call goes through here.

A student function may raise, print without end, or never return. ``call_student``
turns each of these into a :class:`CheckFailure` whose message names the problem,
so that one bad function costs one check and nothing more.
"""

import contextlib
import contextvars
import inspect
import io
import signal
import threading
import traceback

import torch
from torch.utils._python_dispatch import _disable_current_modes

from autograder.errors import CheckFailure, WorkerLost
from autograder.seam import process_state
from autograder.settings import settings


def describe(value, max_values=None, digits=4):
    """A short, student-readable description of an argument or a result (floats to ``digits`` significant digits)."""
    if max_values is None:
        max_values = settings.max_examples_in_message
    if isinstance(value, torch.Tensor):
        text = f"tensor of shape {list(value.shape)}, {value.dtype}, on {value.device}"
        if value.numel():
            text += f", values {shown_values(value, max_values, digits)}"
        return text
    if isinstance(value, (list, tuple)) and len(value) <= max_values:
        inner = ", ".join(describe(v, max_values) for v in value)
        return f"{type(value).__name__} ({inner})"
    if isinstance(value, dict) and all(isinstance(k, (str, int)) for k in value):
        inner = ", ".join(f"{k!r}: {describe(v, max_values)}" for k, v in list(value.items())[:max_values])
        return f"dict of {len(value)} ({inner}{', ...' if len(value) > max_values else ''})"
    text = " ".join(repr(value).split())        # a module's repr spans lines
    if len(text) <= 80:
        return text
    if isinstance(value, torch.nn.Module):
        return f"{type(value).__name__}(...)"     # cut where its brackets still balance
    return text[:77] + "..."


def shown_values(tensor, max_values=None, digits=4):
    """The first ``max_values`` values of ``tensor`` as text: ``[1.5, 2, ...]``."""
    if max_values is None:
        max_values = settings.max_examples_in_message
    flat = tensor.detach().reshape(-1)[:max_values].cpu().tolist()
    more = ", ..." if tensor.numel() > max_values else ""
    return f"[{', '.join(_short(v, digits) for v in flat)}{more}]"


def _short(v, digits=4):
    return f"{v:.{digits}g}" if isinstance(v, float) else repr(v)


class BoundedText(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit):
        self.limit = limit
        self.parts = []
        self.kept = 0
        self.dropped = 0

    def writable(self):
        return True

    def write(self, text):
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self):
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n... ({self.dropped} more characters of output dropped)"
        return out


_GUARDED = contextvars.ContextVar("autograder_inside_call_student", default=False)


def inside_a_guarded_call():
    """Whether this runs inside :func:`call_student`'s call: a handle called there is the plain call (the guards of
    the call around it apply; an exception reaches the code that called it, as the check's closure expects)."""
    return _GUARDED.get()


class CallTimeout(BaseException):
    """Raised inside student code by the alarm; BaseException so `except Exception` can't swallow it."""


@contextlib.contextmanager
def time_limit(seconds):
    use_alarm = (seconds and seconds > 0 and hasattr(signal, "setitimer")
                 and threading.current_thread() is threading.main_thread())
    if not use_alarm:
        yield
        return

    def on_alarm(signum, frame):
        raise CallTimeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call_student(check, fn, *args, timeout=None, what=None, **kwargs):
    """Call ``fn(*args, **kwargs)`` on behalf of ``check``; return its result.

    Output is captured (bounded by ``settings.max_output_chars``) and dropped when the
    call succeeds; a failure's message includes what was printed.
    """
    __tracebackhide__ = True
    if timeout is None:
        timeout = settings.call_timeout_s
    fn, what = _held(fn, what)
    name = what or getattr(fn, "__qualname__", None) or repr(fn)
    sink = BoundedText(settings.max_output_chars)
    before = snapshot_inputs(fn, args, kwargs)
    state = process_state.current()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), time_limit(timeout):
            guarded = _GUARDED.set(True)
            try:
                result = fn(*args, **kwargs)
            finally:
                _GUARDED.reset(guarded)
                after = process_state.current()
                changed = process_state.restore(state)
        expect_state_kept(check, name, changed, state, after)
        expect_inputs_unchanged(check, name, before)
        return result
    except CheckFailure:
        raise
    except process_state.StateLeftChanged as left:        # a call in a grading worker left it changed there
        raise CheckFailure(check, left.message.replace(left.name, name, 1), hint=left.hint,
                           kind=f"failed: {name} left the process's state changed") from None
    except CallTimeout:
        inputs = _describe_call(args, kwargs)
        raise CheckFailure(check, f"{name}({inputs}) did not return within {timeout:g} s.",
                           hint="Look for an infinite loop, or work that grows much faster than the input.",
                           kind="timed out") from None
    except WorkerLost as lost:
        inputs = _describe_call(args, kwargs)
        if lost.timed_out:
            raise CheckFailure(check, f"{name}({inputs}) did not return within {timeout:g} s; the process running "
                                      "your code was stopped.",
                               hint="Look for an infinite loop, or work that grows much faster than the input.",
                               kind="timed out") from None
        raise CheckFailure(check, f"{name}({inputs}) could not be completed: the process running your code stopped "
                                  f"answering ({lost}).",
                           hint="Run that call yourself in the notebook: a crash, os._exit or huge memory use stops "
                                "the process.", kind="crashed") from None
    except NotImplementedError:
        raise CheckFailure(check, f"{name} is not implemented yet (it raised NotImplementedError).",
                           hint="Replace the `raise NotImplementedError()` line with your code.",
                           kind="not implemented", cause=f"{name} is not implemented yet") from None
    except Exception as error:  # noqa: BLE001 - any student error becomes a message
        inputs = _describe_call(args, kwargs)
        where = _student_frame(error)
        printed = sink.text()
        message = f"{name}({inputs}) raised {type(error).__name__}: {error}{where}"
        if printed:
            message += f"\nIt printed:\n{printed}"
        raise CheckFailure(check, message, hint="Run that call yourself in the notebook to see the full traceback.",
                           kind=f"raised: {type(error).__name__}",
                           cause=f"{name} raised {type(error).__name__}: {error}{where}") from None


def _held(fn, what):
    """``(object, name)``: a handle (``trusted.handle.Handle``, ``student_calls.Student``) gives the object it holds
    and its name (asked of its class: a proxy answers any attribute over the pipe)."""
    if getattr(type(fn), "holds_target", False):
        return fn.target, what or getattr(fn, "what", None)
    return fn, what


def expect_state_kept(check, name, changed, before, after):
    """The call left torch's process-wide state as it found it (``process_state``); it has been put back already."""
    __tracebackhide__ = True
    if changed:
        message, hint = process_state.left_changed(name, changed, before, after)
        raise CheckFailure(check, message, hint=hint, kind=f"failed: {name} left the process's state changed")


def _argument_names(fn, args, kwargs):
    """``[(name, value)]``: each argument under its parameter's name in ``fn`` where it can be bound."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        names = [(f"`{k}`", v) for k, v in bound.arguments.items()]
        if sum(1 for _ in names) == len(args) + len(kwargs):
            return names
    except (TypeError, ValueError):
        pass
    return [(f"argument {i + 1}", a) for i, a in enumerate(args)] + [(f"`{k}`", v) for k, v in kwargs.items()]


def _tensor_arguments(fn, args, kwargs):
    """``(label, tensor)`` for every tensor passed directly, or inside a list, tuple or dict argument."""
    named = _argument_names(fn, args, kwargs)
    for label, value in named:
        if isinstance(value, torch.Tensor):
            yield label, value
        elif isinstance(value, (list, tuple)):
            yield from ((f"{label}[{i}]", v) for i, v in enumerate(value) if isinstance(v, torch.Tensor))
        elif isinstance(value, dict):
            yield from ((f"{label}[{k!r}]", v) for k, v in value.items() if isinstance(v, torch.Tensor))


@contextlib.contextmanager
def _unrecorded():
    """No torch function or dispatch mode sees what runs here: the grader's bookkeeping is not the student's op."""
    with _disable_current_modes(), torch._C.DisableTorchFunction():
        yield


def snapshot_inputs(fn, args, kwargs):
    """What the caller's tensors are before a call: ``(label, tensor, version, shape, dtype, copy)``."""
    with _unrecorded():
        return [(label, t, _version(t), tuple(t.shape), t.dtype, t.detach().clone())
                for label, t in _tensor_arguments(fn, args, kwargs)]


def _version(tensor):
    try:
        return tensor._version
    except RuntimeError:   # inference tensors have no version counter
        return None


def expect_inputs_unchanged(check, name, before):
    """The tensors a student function was given are the caller's: same values, shape and dtype, not written to."""
    __tracebackhide__ = True
    for label, tensor, version, shape, dtype, copy in before:
        with _unrecorded():
            changed = _what_changed(tensor, version, shape, dtype, copy)
        if changed:
            raise CheckFailure(check, f"{name} changed its input ({label}, a tensor of shape {list(shape)}): "
                                      f"{changed}. The caller's tensors must stay as they were.",
                               hint="Work on new tensors: `x = x - m` instead of `x -= m`, `x.clone()` before an "
                                    "in-place operation, no `out=` into an input.", kind="changed its input")


def _what_changed(tensor, version, shape, dtype, copy):
    """Why ``tensor`` is no longer what was snapshotted, or ``None``."""
    if tuple(tensor.shape) != shape or tensor.dtype != dtype:
        return f"its shape or dtype changed (from {list(shape)}, {dtype} to {list(tensor.shape)}, {tensor.dtype})"
    now = tensor.detach()
    if _version(tensor) != version or not torch.equal(now.isnan(), copy.isnan()) or not torch.equal(
            now.nan_to_num(), copy.nan_to_num()):
        return "it was modified in place"
    return None


def _describe_call(args, kwargs):
    """The arguments as text; computed only on failure, so it adds no torch calls to a recording."""
    parts = [describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _student_frame(error):
    """The student's own line where the error surfaced: not in the grader, not inside an installed library."""
    if getattr(error, "student_line", None):
        return error.student_line          # an error raised in a grading worker, which found the line there
    package = __file__.rsplit("/", 2)[0]   # .../autograder
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        library = "site-packages" in frame.filename or "dist-packages" in frame.filename
        if not frame.filename.startswith(package) and not library and frame.line:
            return f" (at line {frame.lineno}: {frame.line})"
    return ""


def raises_from_student(check, fn, *args, expected=Exception, what=None, **kwargs):
    """Call ``fn`` expecting it to raise ``expected``; return the exception.

    A different exception, or none, is a :class:`CheckFailure`.
    """
    __tracebackhide__ = True
    fn, what = _held(fn, what)
    name = what or getattr(fn, "__qualname__", None) or repr(fn)
    inputs = _describe_call(args, kwargs)
    sink = BoundedText(settings.max_output_chars)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), time_limit(settings.call_timeout_s):
            result = fn(*args, **kwargs)
    except CallTimeout:
        raise CheckFailure(check, f"{name}({inputs}) did not return within {settings.call_timeout_s:g} s.",
                           kind="timed out") from None
    except NotImplementedError:
        raise CheckFailure(check, f"{name} is not implemented yet (it raised NotImplementedError).",
                           kind="not implemented") from None
    except expected as error:
        return error
    except Exception as error:  # noqa: BLE001
        raise CheckFailure(check, f"{name}({inputs}) raised {type(error).__name__}: {error}, "
                                  f"but it should raise {_names(expected)}.",
                           kind=f"raised: {type(error).__name__}") from None
    raise CheckFailure(check, f"{name}({inputs}) returned {describe(result)}, but it should raise {_names(expected)}.",
                       kind="did not raise")


def _names(expected):
    if isinstance(expected, tuple):
        return " or ".join(e.__name__ for e in expected)
    return expected.__name__

