"""Answers the checks compare against, without the kit holding the code that computes them.

A check calls ``oracle("operators.masked_mean", x, low, high)``. With the instructor's grader installed, that runs
``autograder.oracles.operators.masked_mean`` (grader-only: it computes an exercise's answer). In the student kit,
which has no ``autograder.oracles``, it looks the value up in a table the kit build recorded by running every topic's
visible checks with the reference solution (``recording``): the key is a digest of the arguments (values on the
CPU, dtype, shape, in order), and a tensor comes back on the device of the first tensor argument. An input that
was not recorded (a hidden variant, an input of the student's own) fails with a message that says so.
"""

import contextlib
import copy
import functools
import hashlib
import importlib
import importlib.util
import pickle
from pathlib import Path

import numpy as np
import torch

from autograder.errors import CheckFailure
from autograder.spec import current_check

PACKAGE = "autograder"
TABLES = Path(__file__).resolve().parents[1] / "expected"   # <topic>.pkl, written into the kit only
_recording = None   # {topic: {digest: value}} while a kit build records


class ExpectedOutputMissing(CheckFailure):
    """The student kit has no expected output for this input (only the instructor's grader computes it)."""


def have_oracles():
    """Whether this installation is the instructor's grader (it computes every answer) rather than the kit."""
    return importlib.util.find_spec(f"{PACKAGE}.oracles") is not None


def oracle(name, *args):
    """The value of the grader-only oracle ``"<topic>.<function>"`` at ``args``; see the module's docstring."""
    __tracebackhide__ = True
    topic, _, function = name.partition(".")
    try:
        module = importlib.import_module(f"{PACKAGE}.oracles.{topic}")
    except ModuleNotFoundError as missing:
        if missing.name not in (f"{PACKAGE}.oracles", f"{PACKAGE}.oracles.{topic}"):
            raise
        return _looked_up(name, topic, args)
    value = getattr(module, function)(*args)
    if _recording is not None:
        _recording.setdefault(topic, {})[digest(name, args)] = _on_cpu(value)
    return value


@contextlib.contextmanager
def recording():
    """Record every oracle call made inside the block: yields ``{topic: {digest: value}}`` (values on the CPU)."""
    global _recording
    previous, _recording = _recording, {}
    try:
        yield _recording
    finally:
        _recording = previous


def is_recording():
    """Whether a kit build is recording: a check then also asks the oracle for what it would need only to explain a
    mistake (the reference makes none), so that the kit explains it as the grader does."""
    return _recording is not None


def table_bytes(table):
    """The bytes of ``TABLES/<topic>.pkl`` for ``{digest: value}`` (sorted: the same bytes every build)."""
    return pickle.dumps(dict(sorted(table.items())), protocol=4)


def digest(name, args):
    """A SHA-256 of the oracle's name and of its arguments' types, dtypes, shapes and values."""
    hasher = hashlib.sha256(name.encode())
    _feed(hasher, args)
    return hasher.hexdigest()


def _feed(hasher, value):
    if isinstance(value, torch.Tensor):
        value = value.detach().to("cpu")
        hasher.update(f"tensor{value.dtype}{tuple(value.shape)}".encode())
        # bfloat16 has no NumPy dtype: hash its bits (same size) instead.
        bits = value.contiguous().view(torch.int16) if value.dtype == torch.bfloat16 else value.contiguous()
        hasher.update(bits.numpy().tobytes())
    elif isinstance(value, np.ndarray):
        hasher.update(f"ndarray{value.dtype}{value.shape}".encode())
        hasher.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        hasher.update(f"{type(value).__name__}{len(value)}(".encode())
        for part in value:
            _feed(hasher, part)
        hasher.update(b")")
    elif isinstance(value, dict):
        hasher.update(f"dict{len(value)}(".encode())
        for key in sorted(value, key=repr):
            _feed(hasher, key)
            _feed(hasher, value[key])
        hasher.update(b")")
    elif value is None or isinstance(value, (bool, int, float, str, torch.dtype)):
        hasher.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, torch.nn.Module):   # its architecture and its parameters and buffers
        hasher.update(f"module{value!r}".encode())
        _feed(hasher, dict(value.state_dict()))
    elif isinstance(value, functools.partial):
        hasher.update(f"partial{value.func.__module__}.{value.func.__qualname__}".encode())
        _feed(hasher, (value.args, value.keywords))
    elif type(value).__module__.startswith(f"{PACKAGE}."):   # the checks' own objects (a test function)
        hasher.update(f"object{type(value).__module__}.{type(value).__qualname__}".encode())
        _feed(hasher, vars(value))
    else:
        raise TypeError(f"an oracle's argument of type {type(value).__name__} cannot be recorded")


def _on_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu").clone()
    if isinstance(value, torch.nn.Module):
        return copy.deepcopy(value).to("cpu")
    if isinstance(value, (list, tuple)):
        return type(value)(_on_cpu(part) for part in value)
    return value


def _to_device(value, device):
    if isinstance(value, (torch.Tensor, torch.nn.Module)):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(part, device) for part in value)
    return value


def _first_device(args):
    for arg in args:
        if isinstance(arg, torch.Tensor):
            return arg.device
        if isinstance(arg, (list, tuple)):
            found = _first_device(arg)
            if found is not None:
                return found
    return None


_tables = {}


def _table(topic):
    if topic not in _tables:
        path = TABLES / f"{topic}.pkl"
        _tables[topic] = pickle.loads(path.read_bytes()) if path.is_file() else {}   # the kit's own file
    return _tables[topic]


def _looked_up(name, topic, args):
    __tracebackhide__ = True
    key = digest(name, args)
    table = _table(topic)
    if key not in table:
        raise ExpectedOutputMissing(
            current_check() or name,
            "the student kit has no expected output for this input: it carries the answers of the visible test "
            "cells' own inputs only. Hidden variants and other inputs are graded by your instructor's grader.",
            hint="Run the notebook's test cells as they are (with the inputs they make); they need nothing else.")
    device = _first_device(args)
    value = table[key]
    return _to_device(value, device) if device is not None else value
