"""The grader's side of the pipe: a worker session and proxies for the student's objects.

A :class:`Remote` stands for an object that lives in the worker (the student's function,
class, module instance). Calling it, reading an attribute or iterating sends a request and
waits for plain data; what comes back that is not plain data is another ``Remote``. The
checks take ``Remote`` objects where they took the student's own, through the same seam
(``call_student``), so that a verdict is always computed here, on data.

* **Autograd crosses the pipe.** When a call's output needs a gradient (an input requires
  grad, or the output depends on the module's parameters), the output comes back wrapped in
  a :class:`_RemoteGraph` node: ``backward`` here sends the upstream gradient to the worker,
  which runs its own backward (the module's parameters accumulate ``.grad`` there) and sends
  the inputs' gradients back. ``torch.autograd.gradcheck`` works across it.
* **Op counts** come with every call (the worker records every call the same way); inside
  ``record_ops`` here they are added to the open record.
* **Deadlines are ours.** Every request has a deadline, never past the notebook's budget
  (``Session.budget``, ``budget.Budget``); a late answer kills the worker, and the call fails
  with :class:`WorkerLost`. An answer's sizes are checked on its first 12 bytes, before the
  rest is read (:func:`reply_limits`), and it is read and parsed within the same deadline.
"""

import builtins
import functools
import inspect
import os
import select
import sys
import time
import weakref

import torch
from torch.utils._python_dispatch import _disable_current_modes

from autograder.errors import WorkerLost
from autograder.seam import probes as probe_registry
from autograder.seam import process_state, wire
from autograder.seam.ops import open_record

_READ = 1 << 20


def reply_limits():
    """``(bytes, header bytes, values)`` one answer of a worker may hold (``settings.grading.max_reply_mb``,
    ``max_reply_header_mb``; ``wire.MAX_NODES``): checked on its first 12 bytes, before the rest is read."""
    from autograder.settings import settings

    return (int(settings.grading.max_reply_mb * wire.MB), int(settings.grading.max_reply_header_mb * wire.MB),
            wire.MAX_NODES)


class RemoteError(Exception):
    """An exception raised in the worker by a type that is not a Python builtin."""

    remote_type = "Exception"


def rebuilt_exception(described):
    """The worker's exception as one raised here: a builtin exception type by name, else a ``RemoteError``."""
    name = str(described.get("type", "Exception"))[:100]
    message = str(described.get("message", ""))
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and not issubclass(kind, (OSError, UnicodeError)):
        try:
            error = kind(message)
        except Exception:  # noqa: BLE001 - a builtin that takes other arguments
            error = RemoteError(message)
    else:
        safe = "".join(c for c in name if c.isalnum() or c == "_") or "Error"
        error = type(safe, (RemoteError,), {"remote_type": safe})(message)
    error.remote_traceback = str(described.get("traceback", ""))
    error.student_line = str(described.get("where", ""))[:500]
    return error


class Session:
    """One worker process: requests go down its stdin, answers come up its stdout."""

    def __init__(self, proc, *, stop, spawn=None, fresh=None):
        self.proc = proc
        self._stop = stop
        self._spawn = spawn       # the clean twin that times baselines: a worker started the same way, no student code
        self._fresh = fresh       # a worker that ran the notebook's cells and no check's call (in_fresh_process)
        self._callbacks = {}      # the grader's functions passed to student code, by number
        self._fd_in = proc.stdin.fileno()
        self._fd_out = proc.stdout.fileno()
        self._released = ([], [])
        self.lost = None          # why the worker is gone, once it is
        self.timed_out = False    # whether it was stopped after a deadline
        self.budget = None        # the notebook's wall-clock budget (budget.Budget), which every request honours

    # ------------------------------------------------------------ transport

    def request(self, op, *args, timeout, sent=None):
        """Send one request; return the worker's answer (plain data and ``Remote`` objects). ``sent``: a list that
        gets the grader's clock (``time.perf_counter``) when the request, encoded, starts to leave."""
        if self.lost:
            raise WorkerLost(self.lost, timed_out=self.timed_out)
        if self.budget is not None and self.budget.spent():
            self.close(self.budget.why(), timed_out=True)
            raise WorkerLost(self.lost, timed_out=True)
        handles, graphs = self._released
        if handles or graphs:
            self._released = ([], [])
            self._exchange(("release", handles, graphs), timeout)
        return self._exchange((op, *args), timeout, sent)

    def _exchange(self, message, timeout, sent=None):
        with _disable_current_modes(), torch._C.DisableTorchFunction():
            frame = wire.encode(message, self._reference)
        if sent is not None:
            sent.append(time.perf_counter())
        deadline, by_budget = (time.monotonic() + timeout, False) if self.budget is None else \
            self.budget.deadline(timeout)
        try:
            self._write(frame, deadline)
            answer = self._answer(deadline)
        except (TimeoutError, wire.PastDeadline):
            if by_budget or (self.budget is not None and self.budget.spent()):
                self.close(self.budget.why(), timed_out=True)
            else:
                self.close(f"it did not answer within {timeout:g} s and was stopped", timed_out=True)
            raise WorkerLost(self.lost, timed_out=True) from None
        except (EOFError, OSError):
            self.close("it ended (a crash, os._exit, or running out of memory)")
            raise WorkerLost(self.lost) from None
        except wire.TooLarge as error:
            self.close(f"it was stopped: {error}")
            raise WorkerLost(self.lost) from None
        except MemoryError:     # the grader's own limit (settings.grading.grader_memory_gb): a grader error
            self.close("the grader ran out of memory while reading its answer")
            raise
        except wire.WireError as error:
            self.close(f"it sent a malformed answer ({error})")
            raise WorkerLost(self.lost) from None
        except BaseException:
            # interrupted while the worker works (a time limit's alarm, Ctrl-C): its answer would come late and be
            # taken for the next request's, so the worker is stopped
            self.close("the grader stopped waiting for it", timed_out=True)
            raise
        if type(answer) is not dict:
            self.close("it sent something that is not an answer")
            raise WorkerLost(self.lost)
        return answer

    def _write(self, data, deadline):
        view = memoryview(data)
        while view:
            _wait(self._fd_in, deadline, write=True)
            written = os.write(self._fd_in, view[:_READ])
            view = view[written:]

    def _read_into(self, view, deadline):
        """Fill ``view`` from the worker's pipe, each wait bounded by ``deadline`` (a trickle cannot hold it past)."""
        got = 0
        while got < len(view):
            _wait(self._fd_out, deadline)
            count = os.readv(self._fd_out, [view[got:got + _READ]])
            if not count:
                raise EOFError("the worker ended")
            got += count

    def _answer(self, deadline):
        """The next answer; the grader's functions that student code calls meanwhile (callbacks) are served."""
        while True:
            frame = self._read_frame(deadline)
            with _disable_current_modes(), torch._C.DisableTorchFunction():
                message = wire.decode(frame, self._remote, deadline=deadline, max_nodes=reply_limits()[2])
            del frame
            if type(message) is not dict or "callback" not in message:
                return message
            started = time.monotonic()
            reply = self._serve_callback(message)
            with _disable_current_modes(), torch._C.DisableTorchFunction():
                frame = wire.encode(reply, self._reference)
            deadline += time.monotonic() - started    # the grader's own time does not count against the student
            if self.budget is not None:              # but it does against the notebook's budget
                deadline = min(deadline, self.budget.ends)
            self._write(frame, deadline)

    def _serve_callback(self, message):
        fn = self._callbacks.get(message.get("callback"))
        args, kwargs = message.get("args"), message.get("kwargs")
        if fn is None or type(args) is not tuple or type(kwargs) is not dict:
            return {"raised": {"type": "TypeError", "message": "no such function of the grader"}}
        try:
            return {"ok": fn(*args, **kwargs)}
        except Exception as error:  # noqa: BLE001 - reported to the student's code as an exception
            return {"raised": {"type": type(error).__name__, "message": str(error)[:2000]}}

    def _read_frame(self, deadline):
        """One frame, as a ``bytearray`` that ``wire.decode`` makes tensors on: its sizes are checked against
        :func:`reply_limits` on its first 12 bytes, before anything is allocated for the rest."""
        head = bytearray(wire.HEADER.size)
        self._read_into(memoryview(head), deadline)
        max_bytes, max_header, _ = reply_limits()
        length, _ = wire.frame_sizes(bytes(head), max_bytes=max_bytes, max_header=max_header)
        frame = bytearray(wire.HEADER.size + length)
        frame[:wire.HEADER.size] = head
        self._read_into(memoryview(frame)[wire.HEADER.size:], deadline)
        return frame

    def close(self, why="it was closed", timed_out=False):
        if self.lost is None:
            self.lost, self.timed_out = why, timed_out
        self._stop(self.proc)

    def twin(self):
        """A worker started like this one in which no student code ever ran (``spawn`` keeps it and starts it
        again when it is lost)."""
        if self._spawn is None:
            raise WorkerLost("this session cannot start a clean worker to time the baseline")
        return self._spawn()

    def fresh(self):
        """A worker that ran the same notebook's cells and nothing that a check asked of this one (the
        ``fresh`` factory it was made with: the engine's ``NotebookWorker.fresh_process``)."""
        if self._fresh is None:
            raise WorkerLost("this session cannot start a fresh worker for the notebook")
        return self._fresh()

    def timed(self, target, specs, seeds, *, pool_seed, threads, flush=None, timeout):
        """``target`` (a ``Remote`` here, or a probe sent by name) on one input per seed, made in the worker from
        ``specs`` and the pools of ``pool_seed`` once the request has arrived (``timed_inputs``). Returns
        ``(results, seconds)``, the seconds by the grader's clock from when the request, encoded, starts to leave
        until its answer is read: no input reaches the worker before its clock starts. ``flush``: ``(devices,
        bytes)`` of L2 cache to flush first, untimed (a request without inputs)."""
        with torch.no_grad():
            if flush and flush[1]:
                answer = self.request("flush", list(flush[0]), int(flush[1]), timeout=timeout)
                if "raised" in answer:
                    raise rebuilt_exception(answer["raised"])
            sent = []
            answer = self.request("times", target, specs, list(seeds), threads, pool_seed, timeout=timeout,
                                  sent=sent)
            seconds = time.perf_counter() - sent[0]
        if "raised" in answer:
            raise rebuilt_exception(answer["raised"])
        results = answer.get("ok")
        if type(results) is not list or len(results) != len(seeds):
            raise WorkerLost("the worker's timed results do not match the request")
        return results, seconds

    # ------------------------------------------------------------ references both ways

    def _reference(self, obj):
        if isinstance(obj, Remote):
            if obj._session is not self:
                raise wire.WireError("an object of another worker cannot be sent")
            return {"h": obj._handle}
        if isinstance(obj, _Named):
            return {"name": obj.name}
        if isinstance(obj, Callback):
            self._callbacks[id(obj)] = obj
            return {"cb": id(obj), "name": obj.__name__}
        if type(obj) is functools.partial and probe_registry.is_probe(obj.func):
            return {"name": probe_registry.key_of(obj.func), "args": tuple(obj.args), "kwargs": dict(obj.keywords)}
        if isinstance(obj, torch.nn.Module) and _stateless_torch_module(obj):
            return {"name": _importable_name(type(obj)), "module": {
                k: v for k, v in vars(obj).items() if not k.startswith("_") and type(v) in (bool, int, float, str)}}
        name = _importable_name(obj)
        if name and name.split(":")[0].split(".")[0] in ("torch", "math", "builtins") and isinstance(obj, (type, _FUNCTION_TYPES)):
            return {"name": name}
        raise wire.WireError(f"{type(obj).__name__} {obj!r:.60} cannot be sent to the student's code")

    def _remote(self, ref):
        if type(ref) is not dict or type(ref.get("h")) is not int:
            raise wire.WireError("malformed handle")
        mro = ref.get("mro") if type(ref.get("mro")) is list else []
        type_name = str(ref.get("type", "object"))[:200]
        remote = remote_class(type_name, str(mro[0]) if mro else "")(self, ref["h"], type_name, [str(m)[:200] for m in mro[:8]])
        object.__setattr__(remote, "_name", str(ref.get("name") or "")[:200])
        object.__setattr__(remote, "_signature", _rebuilt_signature(ref.get("signature")))
        return remote

    def release(self, handle=None, graph=None):
        if handle is not None:
            self._released[0].append(handle)
        if graph is not None:
            self._released[1].append(graph)


_FUNCTION_TYPES = (type(len), type(lambda: 0), type(torch.add))


def _importable_name(obj):
    """``module:qualname`` under which the worker finds ``obj`` (``torch:relu``), or ``None``."""
    module = getattr(obj, "__module__", None) or ""
    for qualname in (getattr(obj, "__qualname__", None), getattr(obj, "__name__", None)):
        if qualname and "<" not in qualname and _same(_resolve(module, qualname), obj):
            return f"{module}:{qualname}"
    return None


def _same(a, b):
    try:
        return a is b or (a is not None and bool(a == b))
    except Exception:  # noqa: BLE001
        return False


class _Named:
    """A registered probe (``autograder.seam.probes``), sent by its key: the worker uses the one it froze."""

    def __init__(self, name):
        self.name = name


class Callback:
    """A function of the grader's that student code may call (a data source, say): called here, it runs; passed to
    a student function in a worker, each call there comes back over the pipe with plain data, runs here, and its
    plain result goes back. Its state (a call count) stays here, where the check reads it."""

    def __init__(self, fn, name=None):
        self.fn = fn
        self.__name__ = name or getattr(fn, "__name__", "callback")

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return repr(self.fn)


def _stateless_torch_module(module):
    """A torch.nn module of torch's own (an activation) with no parameters, buffers, submodules or hooks."""
    return (type(module).__module__.startswith("torch.nn.") and _importable_name(type(module)) is not None
            and not module._parameters and not module._buffers and not module._modules
            and not module._forward_hooks and not module._forward_pre_hooks)


def by_name(obj):
    """Send ``obj`` (a registered probe: ``@probe``) by its registry key: the worker runs the one it froze at start
    (``NotAProbe`` for anything else)."""
    return _Named(probe_registry.key_of(obj))


def _wait(fd, deadline, write=False):
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the worker did not answer in time and was stopped")
    ready = select.select([], [fd], [], left) if write else select.select([fd], [], [], left)
    if not any(ready):
        raise TimeoutError("the worker did not answer in time and was stopped")


# ------------------------------------------------------------------ proxies

def _rebuilt_signature(described):
    """An ``inspect.Signature`` from the worker's ``[[name, kind, has_default]]`` (names only: for messages)."""
    if type(described) is not list:
        return None
    try:
        return inspect.Signature([inspect.Parameter(str(name), inspect._ParameterKind(kind),
                                                    default=None if has_default else inspect.Parameter.empty)
                                  for name, kind, has_default in described])
    except (TypeError, ValueError):
        return None


def _local_class(mro):
    """The first class of the remote MRO that exists here by name in torch (never a tensor class)."""
    for name in mro:
        module, _, qualname = name.rpartition(".")
        if not module.startswith("torch.") or "<" in name:
            continue
        target = _resolve(module, qualname)
        if isinstance(target, type) and not issubclass(target, torch.Tensor):
            return target
    return None


def _resolve(module, qualname):
    target = sys.modules.get(module)
    if target is None:
        return None
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target


class Remote:
    """An object in the worker. Attribute reads, calls, ``len``, indexing and iteration go over the pipe."""

    __slots__ = ("_session", "_handle", "_type", "_mro", "_name", "_signature", "_source", "__weakref__")

    def __init__(self, session, handle, type_name, mro, source=None):
        object.__setattr__(self, "_source", source)     # the notebook name it was looked up under, if it was
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_mro", mro)
        weakref.finalize(self, session.release, handle)

    @property
    def __class__(self):       # isinstance(remote_module, torch.nn.Module) holds when the worker says so
        return _local_class(self._mro) or type(self)

    def _ask(self, op, *args, timeout=None):
        from autograder.settings import settings

        answer = self._session.request(op, self, *args, timeout=timeout or settings.call_timeout_s)
        if "raised" in answer:
            raise rebuilt_exception(answer["raised"])
        return answer.get("ok")

    def __getattr__(self, name):
        if name in ("__name__", "__qualname__"):
            return self._name or self._type
        if name == "__signature__":
            if self._signature is None:
                raise AttributeError(name)
            return self._signature
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._ask("getattr", name)

    def __setattr__(self, name, value):
        self._ask("setattr", name, value)

    def __len__(self):
        return self._ask("len")

    def __getitem__(self, key):
        return self._ask("getitem", key)

    def __iter__(self):
        iterator = self._ask("iter")
        while True:
            items, done = iterator._ask("next", 64)
            yield from items
            if done:
                return

    def __repr__(self):
        try:
            return self._ask("repr", timeout=10)
        except Exception:  # noqa: BLE001
            return f"<{self._type} in the student's worker>"

    def __call__(self, *args, **kwargs):
        return _call(self._session, self, args, kwargs)



_REMOTE_CLASSES = {}
_MAX_REMOTE_CLASSES = 512


def remote_class(type_name, full_name=""):
    """The proxy class for objects whose class is ``type_name`` in the worker: a subclass of :class:`Remote` named
    as the student's class, so that ``type(value).__name__`` in a message names the student's object (``str``,
    ``FunctionEventAvg``), never the proxy."""
    found = _REMOTE_CLASSES.get((type_name, full_name))
    if found is None:
        name = type_name.rpartition(".")[2] or "object"
        module = full_name[:-len(type_name) - 1] if full_name.endswith("." + type_name) else "__main__"
        found = type(name, (Remote,), {"__slots__": (), "__qualname__": type_name, "__module__": module})
        if len(_REMOTE_CLASSES) < _MAX_REMOTE_CLASSES:
            _REMOTE_CLASSES[(type_name, full_name)] = found
    return found


def is_remote(obj):
    """Whether ``obj`` is a proxy for an object in the worker (its class is one of :func:`remote_class`'s)."""
    return issubclass(type(obj), Remote)


def _call(session, target, args, kwargs, timeout=None):
    from autograder.settings import settings

    answer = session.request("call", target, args, kwargs, open_record() is not None,
                             timeout=settings.call_timeout_s if timeout is None else timeout)
    call = answer.get("ok")
    if "raised" in answer or type(call) is not dict:
        raise rebuilt_exception(answer.get("raised", {"type": "RuntimeError", "message": "malformed answer"}))
    _add_ops(call.get("ops"))
    if "raised" in call:
        raise rebuilt_exception(call["raised"])
    left = call.get("state")
    if type(left) is dict:          # the call left the worker's state changed; the worker has put it back
        raise process_state.StateLeftChanged(str(left.get("name")), str(left.get("message")), str(left.get("hint")))
    _write_back(call.get("changed"), (args, kwargs))
    value = call.get("value")
    graph = call.get("graph")
    if type(graph) is int:
        with _disable_current_modes(), torch._C.DisableTorchFunction():
            value = _attach_graph(session, graph, value, (args, kwargs))
    return value


def _write_back(changed, inputs):
    """The worker changed some input tensors in place: change the grader's too, so that the caller sees it
    (``call_student`` tells the student their function modified its input)."""
    if type(changed) is not dict or not changed:
        return
    tensors = list(wire.tensors_in(inputs))
    with torch.no_grad(), _disable_current_modes(), torch._C.DisableTorchFunction():
        for index, value in changed.items():
            if type(index) is int and 0 <= index < len(tensors) and type(value) is torch.Tensor:
                target = tensors[index]
                if target.shape == value.shape and target.dtype == value.dtype:
                    target.copy_(value)
                else:
                    target.data = value.to(target.device)


def beside(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run where the student's objects among ``args`` live: in their worker when they are
    :class:`Remote` (``fn``, a module-level function of the autograder, is imported there by name), else here.

    For facts that only the student's process can see (the type of an autograd node, say). What comes back is
    plain data reported by the student's process: a student who rewrites it can forge it (docs/security.md).
    """
    return beside_within(None, fn, *args, **kwargs)


def beside_within(seconds, fn, *args, **kwargs):
    """:func:`beside`, giving the worker ``seconds`` to answer instead of ``settings.call_timeout_s`` (``None``):
    for a probe that keeps its own time limits in the worker (a DataLoader pass, whose hang it names), longer
    than one call's."""
    probe_registry.key_of(fn)       # only a registered probe runs beside the student's code, here too
    session = next((a._session for a in (*args, *kwargs.values()) if is_remote(a)), None)
    if session is None:
        return fn(*args, **kwargs)
    return _call(session, by_name(fn), args, kwargs, timeout=seconds)


def in_fresh_process(obj):
    """``obj`` (a student's object) as a process that never ran any of the checks' calls has it: under trusted
    grading the same notebook name looked up in a fresh worker that ran the notebook's cells only (one per
    notebook, kept for such calls and never used for anything else); in one process, ``obj`` itself (there is no
    other process: the check says what that leaves unproved)."""
    if not is_remote(obj):
        return obj
    if not obj._source:
        raise WorkerLost("the object was not looked up by name, so a fresh worker cannot find it")
    answer = obj._session.fresh().request("lookup", obj._source, timeout=_call_timeout())
    if "raised" in answer:
        raise rebuilt_exception(answer["raised"])
    found = answer.get("ok")
    if is_remote(found):
        object.__setattr__(found, "_source", obj._source)
    return found


def _call_timeout():
    from autograder.settings import settings

    return settings.call_timeout_s


def _add_ops(ops):
    record = open_record()
    if record is None or type(ops) is not dict:
        return
    for call in ops.get("calls", [])[:100_000]:
        if type(call) is list and len(call) == 2:
            record.calls.append((str(call[0]), str(call[1])))
    record.kernels.extend(str(k) for k in ops.get("kernels", [])[:100_000])


# ------------------------------------------------------------------ autograd across the pipe

class _Link:
    def __init__(self, session, graph, outputs):
        self.session, self.graph, self.outputs = session, graph, outputs
        weakref.finalize(self, session.release, None, graph)


class _RemoteGraph(torch.autograd.Function):
    @staticmethod
    def forward(ctx, link, _anchor, *inputs):
        ctx.link = link
        ctx.count = len(inputs)
        return tuple(o.detach() for o in link.outputs)

    @staticmethod
    def backward(ctx, *grads):
        from autograder.settings import settings

        link = ctx.link
        answer = link.session.request("backward", link.graph, list(grads), timeout=settings.call_timeout_s)
        if "raised" in answer:
            raise rebuilt_exception(answer["raised"])
        received = answer.get("ok")
        if type(received) is not list or len(received) != ctx.count:
            raise WorkerLost("the worker sent gradients that do not match the inputs")
        return (None, None, *received)


def _attach_graph(session, graph, value, inputs):
    """``value`` with its gradient-carrying tensors replaced by outputs of a node whose backward is remote."""
    outputs = [t for t in wire.tensors_in(value) if t.requires_grad]
    for t in outputs:
        t.requires_grad_(False)     # the gradient comes through the node below, or not at all
    if not outputs or not torch.is_grad_enabled():
        session.release(graph=graph)
        return value
    grad_inputs = [t for t in wire.tensors_in(inputs) if t.requires_grad]
    anchor = torch.empty(0, requires_grad=True)
    link = _Link(session, graph, outputs)
    linked = _RemoteGraph.apply(link, anchor, *grad_inputs)
    swap = {id(o): n for o, n in zip(outputs, linked)}
    return _swap(value, swap)


def _swap(value, swap, depth=0):
    if isinstance(value, torch.Tensor):
        return swap.get(id(value), value)
    if depth < 4 and type(value) in (list, tuple):
        return type(value)(_swap(v, swap, depth + 1) for v in value)
    if depth < 4 and type(value) is dict:
        return {k: _swap(v, swap, depth + 1) for k, v in value.items()}
    return value
