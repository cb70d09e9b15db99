"""The student's side of trusted grading: runs the notebook's code, answers calls with plain data.

Started by the grader inside the sandbox (``python -m autograder.seam.worker``), it
moves its pipes off file descriptors 0 and 1 before any student code runs, then serves
requests one at a time: run a cell, look up a name, call a function, read an attribute,
run a backward pass. Everything it sends back is plain data (``wire``); any other object
stays here and the grader gets a handle to it.

Nothing here is trusted by the grader: the student's code runs in this process and can
change any of it. The grader judges only the data that comes back, times calls with its
own clock, and kills this process when an answer is late.

Every call of a student function runs under the op recorder, so a call cannot tell
whether its ops are being counted: they always are.
"""

import builtins
import contextlib
import functools
import importlib
import os
import sys
import traceback

HANDLE_TYPES_SHOWN = 8          # the classes of a handle's MRO sent with it (for isinstance on the grader's side)
MAX_MESSAGE = 1 << 30


def _move_pipes():
    """The protocol's pipes, moved off fds 0 and 1; student output then goes nowhere that matters."""
    reader = os.fdopen(os.dup(0), "rb", buffering=0)
    writer = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return reader, writer


def probe_device(argv):
    """Start CUDA before any student code runs, when the grader expects it (``--cuda``), and say how it went: the
    grader reads this first (``op_device``), so a student's code cannot make the machine look broken, nor hide a
    machine that is. ``--gpu-memory-fraction=F`` bounds the share of each GPU's memory PyTorch gives this process."""
    if "--cuda" not in argv:
        return {"cuda": False, "expected": False}
    fraction = next((float(a.split("=", 1)[1]) for a in argv if a.startswith("--gpu-memory-fraction=")), 0.0)
    try:
        import torch

        torch.cuda.init()
        count = torch.cuda.device_count()
        for index in range(count):
            if fraction:
                torch.cuda.set_per_process_memory_fraction(fraction, index)
        torch.zeros(1, device="cuda").add_(1).item()     # a context, an allocation, a kernel, a copy back
        return {"cuda": True, "expected": True, "devices": count, "name": torch.cuda.get_device_name(0),
                "memory_fraction": fraction}
    except BaseException as error:  # noqa: BLE001 - whatever stops CUDA is the machine's, reported to the grader
        return {"cuda": False, "expected": True, "error": f"{type(error).__name__}: {error}"[:2000]}


class Worker:
    device = {"cuda": False, "expected": False}    # probe_device's answer, set by main() before any student code

    def __init__(self, reader, writer):
        import torch

        from autograder.seam import probes as probe_registry
        from autograder.seam import process_state, timed_inputs, wire
        from autograder.seam.ops import record_ops
        from autograder.seam.student import BoundedText

        self.torch, self.wire, self.record_ops, self.BoundedText = torch, wire, record_ops, BoundedText
        self.draw_input, self.flush_l2 = timed_inputs.draw_input, timed_inputs.flush_l2   # kept before student code
        self.draw_pools, self.pools = timed_inputs.draw_pools, (None, None)     # the timed inputs' pools, by seed
        self.reader, self.writer = reader, writer
        self.handles = {}
        self.graphs = {}
        self.next_id = 1
        self.namespace = {"__name__": "__main__", "__builtins__": builtins}
        self.shell = None
        self.probes = probe_registry.freeze()     # before any student code runs: what may run beside it
        self.process_state = process_state
        self.defaults = process_state.current()   # the grader's state, before any student code runs

    # ---------------------------------------------------------------- plain data and handles

    def keep(self, obj):
        handle = self.next_id
        self.next_id += 1
        self.handles[handle] = obj
        kind = type(obj)
        mro = [f"{c.__module__}.{c.__qualname__}" for c in getattr(kind, "__mro__", (kind,))][:HANDLE_TYPES_SHOWN]
        return {"h": handle, "type": kind.__qualname__, "mro": mro,
                "name": str(getattr(obj, "__qualname__", "") or "")[:200], "signature": _signature(obj)}

    def encode(self, value):
        return self.wire.encode(_plain(value, self.torch), self.keep)

    def from_reference(self, ref):
        if "h" in ref:
            return self.handles[ref["h"]]
        if "cb" in ref:
            return _Callback(self, ref["cb"], str(ref.get("name", "callback")))
        target = self._named(ref.get("name"))
        if "module" in ref:             # a torch module without parameters (an activation): rebuilt from its fields
            module = target.__new__(target)
            self.torch.nn.Module.__init__(module)
            module.__dict__.update(ref["module"])
            return module
        if "args" in ref:               # functools.partial of an autograder or torch function
            return functools.partial(target, *ref["args"], **ref.get("kwargs", {}))
        return target

    def _named(self, name):
        """A registered probe (frozen at start), or a function or class of torch, math or builtins (which only ever
        goes into the student's own code); any other name is refused."""
        if name in self.probes:
            return self.probes.get(name)
        if str(name).partition(":")[0].split(".")[0] in ("torch", "math", "builtins"):
            return _import(name)
        return self.probes.get(name)     # raises NotAProbe

    def callback(self, number, args, kwargs):
        """Call the grader's function ``number`` (one it passed as an argument) with plain data; wait for its answer."""
        self.writer.write(self.encode({"callback": number, "args": args, "kwargs": kwargs}))
        answer = self.wire.decode(self.wire.read_frame(self.reader, MAX_MESSAGE), self.from_reference)
        if "raised" in answer:
            raised = answer["raised"]
            raise RuntimeError(f"the grader's {raised.get('type')}: {raised.get('message')}")
        return answer.get("ok")

    # ---------------------------------------------------------------- requests

    def serve(self):
        while True:
            try:
                frame = self.wire.read_frame(self.reader, MAX_MESSAGE)
            except EOFError:
                return
            op = None
            try:
                op, *args = self.wire.decode(frame, self.from_reference)
                reply = {"ok": getattr(self, f"op_{op}")(*args)}
            except BaseException as error:  # noqa: BLE001 - every failure is the grader's to judge
                if isinstance(error, (SystemExit, KeyboardInterrupt)) and op not in ("call", "cell", "times"):
                    raise
                reply = {"raised": _described(error)}
            try:
                frame = self.encode(reply)
            except Exception as error:  # noqa: BLE001
                frame = self.encode({"raised": _described(error)})
            self.writer.write(frame)

    def op_device(self):
        return self.device

    def op_cell(self, source):
        """Run one code cell as a kernel would; return what it printed and the error, if any."""
        if self.shell is None:
            from IPython.core.interactiveshell import InteractiveShell
            from traitlets.config import Config

            config = Config()
            config.HistoryManager.enabled = False
            self.shell = InteractiveShell.instance(config=config, user_ns=self.namespace)
        sink = self.BoundedText(20_000)
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            result = self.shell.run_cell(source, store_history=False)
        error = result.error_before_exec or result.error_in_exec
        return {"output": sink.text(), "error": None if error is None else _described(error)}

    def op_lookup(self, name):
        if name not in self.namespace:
            raise NameError(f"name '{name}' is not defined")
        return self.namespace[name]

    def op_getattr(self, obj, name):
        return getattr(obj, name)

    def op_setattr(self, obj, name, value):
        setattr(obj, name, value)

    def op_len(self, obj):
        return len(obj)

    def op_getitem(self, obj, key):
        return obj[key]

    def op_iter(self, obj):
        return iter(obj)

    def op_next(self, iterator, count):
        items = []
        for _ in range(count):
            try:
                items.append(next(iterator))
            except StopIteration:
                return items, True
        return items, False

    def op_repr(self, obj):
        return repr(obj)[:2000]

    def op_release(self, handles, graphs):
        for h in handles:
            self.handles.pop(h, None)
        for g in graphs:
            self.graphs.pop(g, None)

    def op_call(self, fn, args, kwargs, send_ops=True):
        """``fn(*args, **kwargs)`` under the op recorder (always: ``send_ops`` only says whether the grader wants the
        record back); the graph is kept when the output needs a gradient."""
        torch = self.torch
        self.clean_state()
        sink = self.BoundedText(20_000)
        inputs = list(self.wire.tensors_in((args, kwargs)))
        with torch.no_grad():
            before = [(t.detach().clone(), t._version, tuple(t.shape)) for t in inputs]
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            with self.record_ops() as record:
                try:
                    value = fn(*args, **kwargs)
                except BaseException as error:  # noqa: BLE001
                    self.clean_state()
                    return {"raised": _described(error), "output": sink.text(), "ops": _ops(record, send_ops)}
        left = self.clean_state(told=getattr(fn, "__qualname__", None) or "the function")
        if left:
            return {"state": left, "output": sink.text(), "ops": _ops(record, send_ops)}
        changed = {i: t.detach() for i, (t, (copy, version, shape)) in enumerate(zip(inputs, before))
                   if t._version != version or tuple(t.shape) != shape or not _same_values(t, copy)}
        graph = None
        leaves = [t for t in self.wire.tensors_in((args, kwargs)) if t.requires_grad and t.is_leaf]
        outputs = [t for t in self.wire.tensors_in(value) if t.requires_grad]
        if outputs and torch.is_grad_enabled():
            graph = self.next_id
            self.next_id += 1
            self.graphs[graph] = (outputs, leaves)
        return {"value": value, "output": sink.text(), "ops": _ops(record, send_ops), "graph": graph,
                "changed": changed}

    def clean_state(self, told=None):
        """Put torch's process-wide state (``process_state``: grad mode, inference mode, default dtype, deterministic
        algorithms, threads) back to the grader's defaults before a graded call; ``told``: the name of the function
        that just ran, for the message when it had left the state changed (``{"name", "message", "hint"}``, or
        ``None``)."""
        before = self.process_state.current()
        changed = self.process_state.restore(self.defaults)
        if not changed or told is None:
            return None
        message, hint = self.process_state.left_changed(str(told)[:200], changed, self.defaults, before)
        return {"name": str(told)[:200], "message": message, "hint": hint}

    def op_backward(self, graph, grads):
        """Backward from the outputs of a kept call; the inputs' gradients come back (parameters keep theirs)."""
        outputs, leaves = self.graphs[graph]
        for leaf in leaves:
            leaf.grad = None
        pairs = [(o, g) for o, g in zip(outputs, grads) if g is not None]
        if pairs:
            self.torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs], retain_graph=True)
        return [leaf.grad for leaf in leaves]

    def op_flush(self, devices, flush_bytes):
        """On CUDA, flush the L2 cache of ``devices`` before a timed request (it carries no input: nothing to work
        on ahead of the clock)."""
        for device in devices:
            self.flush_l2(device, flush_bytes)

    def op_times(self, fn, specs, seeds, threads, pool_seed):
        """``fn`` on one input per seed, each made here (``timed_inputs.draw_input``: fresh rows of the pools drawn
        from ``pool_seed``, by the first request that names it) now that the request has arrived. The grader's clock
        runs from when the request leaves it until this answer is read: no input exists in this process before its
        clock starts. The grader checks the results it sends back. Not under the op recorder: its cost is per torch
        call, so it slowed the baseline's loop (1000 calls) 25-fold and a loop in plain Python over ``x.tolist()``
        (a few calls) not at all, which passed ``row_sum``'s 30x threshold under load (tests/adversarial:
        loop_in_python_lists). Timed, each function runs as it would in the student's own session."""
        torch = self.torch
        self.clean_state()
        previous = torch.get_num_threads()
        if threads:
            torch.set_num_threads(threads)
        results = []
        try:
            with torch.no_grad():
                if self.pools[0] != pool_seed:
                    self.pools = (pool_seed, self.draw_pools(specs, pool_seed))
                for seed in seeds:
                    results.append(fn(*self.draw_input(specs, seed, self.pools[1])))
                if any(s.get("device", "").startswith("cuda") for s in specs if type(s) is dict):
                    torch.cuda.synchronize()
        finally:
            torch.set_num_threads(previous)
        return results


class _Callback:
    """A function of the grader's, passed to student code: calling it asks the grader, over the pipe."""

    def __init__(self, worker, number, name):
        self._worker, self._number, self.__name__ = worker, number, name

    def __call__(self, *args, **kwargs):
        return self._worker.callback(self._number, args, kwargs)

    def __repr__(self):
        return f"<{self.__name__}>"


def _import(name):
    """``module:qualname`` -> the object (the module imported first)."""
    module, _, qualname = str(name).partition(":")
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _plain(value, torch, depth=0):
    """``value`` with every tensor subclass replaced by a plain tensor of its data (a subclass is code, not data)."""
    if isinstance(value, torch.Tensor) and type(value) not in (torch.Tensor, torch.nn.Parameter):
        with torch._C.DisableTorchFunctionSubclass():
            return value.as_subclass(torch.Tensor)
    if depth < 32 and type(value) in (list, tuple):
        return type(value)(_plain(v, torch, depth + 1) for v in value)
    if depth < 32 and type(value) is dict:
        return {k: _plain(v, torch, depth + 1) for k, v in value.items()}
    return value


def _signature(obj):
    """``[[name, kind, has_default]]`` of a callable's parameters (for the grader's messages), or ``None``."""
    import inspect

    try:
        parameters = inspect.signature(obj).parameters.values() if callable(obj) else None
    except (TypeError, ValueError):
        return None
    return None if parameters is None else [[p.name, int(p.kind), p.default is not p.empty] for p in parameters][:64]


def _same_values(a, b):
    import torch

    with torch.no_grad():
        return a.shape == b.shape and bool(torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                                                                 and torch.equal(a.nan_to_num(), b.nan_to_num())))


def _ops(record, send=True):
    if not send:
        return None
    return {"calls": [list(c) for c in record.calls[:100_000]], "kernels": record.kernels[:100_000]}


def _described(error):
    return {"type": type(error).__name__[:100], "message": str(error)[:4000],
            "traceback": "".join(traceback.format_exception(error)[-6:])[-4000:], "where": _student_line(error)}


def _student_line(error):
    """`` (at line N: text)``: the student's own line where the error surfaced (not the autograder, not a library)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        library = "site-packages" in frame.filename or "dist-packages" in frame.filename
        if not frame.filename.startswith(package) and not library and frame.line:
            return f" (at line {frame.lineno}: {frame.line})"
    return ""


def _no_import_from_scratch():
    """Drop the working directory (``python -m`` puts it first on ``sys.path``): the student's code may write files
    there, and a module it wrote must not be importable under a name the source analysis took for missing
    (``import matplotlib`` in ``try: ... except ImportError``: the lesson's own optional import)."""
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]


def main():
    _no_import_from_scratch()
    reader, writer = _move_pipes()
    Worker.device = probe_device(sys.argv[1:])
    sys.argv = ["worker"]
    Worker(reader, writer).serve()


if __name__ == "__main__":
    main()
