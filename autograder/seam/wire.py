"""Plain data across the pipe between the grader and the student's worker.

A message is one frame: an 8-byte length, a JSON header, then raw buffers. The header
describes the value as tagged JSON; tensors, arrays and bytes point into the buffers.
Nothing is unpickled and no class is looked up by a name the sender chose, except
the few torch types below, so a hostile sender can send only data: a decoded tensor
is always an exact ``torch.Tensor`` (``torch.frombuffer`` on the frame's private buffer), never a
subclass; a decoded array an exact ``numpy.ndarray`` of a numeric dtype.

Values the encoder cannot send by value are the caller's business: ``encode`` calls
``by_reference(value)`` for them, which returns a reference, a ``{str: plain data}`` dict
(a handle to an object the worker keeps, say), or raises :class:`WireError`; the other
side's ``from_reference`` turns the decoded dict back into an object.

A receiver bounds what a sender can cost it: :func:`frame_sizes` checks a frame's total and header sizes on its first
12 bytes, before anything is allocated for the rest (the grader's limits: ``settings.grading.max_reply_mb`` and
``max_reply_header_mb``); :func:`decode` counts the values in the header's bytes before parsing it, stops past
``MAX_NODES`` values or ``MAX_DEPTH`` levels, and past a deadline.
"""

import json
import math
import struct
import time

import numpy as np
import torch

HEADER = struct.Struct(">QI")      # frame length (after these 12 bytes), header length
MAX_DEPTH = 64
MAX_NODES = 200_000   # values in one message (every list, dict, number, string and tensor counts one): the largest
#   honest answer over every proof holds 2,469 (tests/trusted/test_trusted_proofs.py, 44,289 answers, 2026-11-24)

_DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.complex64, torch.complex128,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)}
_NUMPY_KINDS = "biufc"             # bool, int, uint, float, complex: never object, string or void


class WireError(ValueError):
    """A value that cannot cross, or a frame that is not well formed."""


class TooLarge(WireError):
    """A frame over a size limit, found from its first 12 bytes, before the rest is read or anything is parsed."""


class PastDeadline(WireError):
    """Decoding a frame ran past the request's deadline."""


MB = 1_000_000


def frame_sizes(head, *, max_bytes, max_header):
    """``(length, header length)`` of the frame whose first 12 bytes are ``head``, once they are within the limits:
    what follows may be read into a buffer of that size. Raises :class:`TooLarge` saying the size and the limit."""
    length, header_length = HEADER.unpack(head)
    if header_length > length:
        raise WireError("malformed frame")
    if length > max_bytes:
        raise TooLarge(f"the answer is {length / MB:.0f} MB; the limit is {max_bytes / MB:g} MB "
                       "(settings.grading.max_reply_mb)")
    if header_length > max_header:
        raise TooLarge(f"the answer's description (all but the raw bytes of its tensors and arrays: Python numbers, "
                       f"lists, strings) is {header_length / MB:.1f} MB; the limit is {max_header / MB:g} MB "
                       "(settings.grading.max_reply_header_mb)")
    return length, header_length


# ------------------------------------------------------------------ encoding

def encode(value, by_reference=None):
    """``bytes`` of one frame holding ``value``."""
    buffers = []
    header = json.dumps(_encode(value, buffers, by_reference, 0), allow_nan=True,
                        separators=(",", ":")).encode()
    header += b" " * (-(HEADER.size + len(header)) % ALIGN)    # JSON's trailing blanks: the body starts aligned
    body = b"".join(data + bytes(-len(data) % ALIGN) for data in buffers)
    return HEADER.pack(len(header) + len(body), len(header)) + header + body


ALIGN = 16   # every buffer starts at a multiple of 16 bytes of the frame: a tensor is made on the frame's own bytes


def _buffer(buffers, data):
    buffers.append(data)
    return len(buffers) - 1


def _tensor_bytes(t):
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous().reshape(-1)
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    return t.view(torch.uint8).numpy().tobytes() if t.numel() else b""


def _encode(value, buffers, by_reference, depth):
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"f": repr(value)}
    if kind in (list, tuple):
        return {"L" if kind is list else "T": [_encode(v, buffers, by_reference, depth + 1) for v in value]}
    if kind is dict:
        return {"D": [[_encode(k, buffers, by_reference, depth + 1), _encode(v, buffers, by_reference, depth + 1)]
                      for k, v in value.items()]}
    if isinstance(value, torch.Tensor) and (kind is torch.Tensor or kind is torch.nn.Parameter):
        if value.dtype not in _DTYPES.values() or value.is_sparse or value.is_quantized:
            raise WireError(f"a tensor of dtype {value.dtype} / layout {value.layout} cannot be sent")
        return {"t": _buffer(buffers, _tensor_bytes(value)), "dtype": str(value.dtype).removeprefix("torch."),
                "shape": list(value.shape), "grad": bool(value.requires_grad), "device": str(value.device)}
    if kind is torch.Size:
        return {"S": list(value)}
    if kind is torch.dtype:
        return {"dtype": str(value).removeprefix("torch.")}
    if kind is torch.device:
        return {"device": str(value)}
    if kind is bytes:
        return {"b": _buffer(buffers, value), "size": len(value)}
    if kind is complex:
        return {"c": [value.real, value.imag]}
    if kind is slice:
        return {"slice": [_encode(v, buffers, by_reference, depth + 1) for v in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"E": 1}
    if kind is np.ndarray and value.dtype.kind in _NUMPY_KINDS:
        data = value.copy(order="C")
        return {"a": _buffer(buffers, data.tobytes()), "dtype": data.dtype.str, "shape": list(data.shape)}
    if isinstance(value, np.generic) and value.dtype.kind in _NUMPY_KINDS:
        return {"n": value.dtype.str, "v": _encode(value.item(), buffers, by_reference, depth + 1)}
    if by_reference is None:
        raise WireError(f"a {kind.__name__} cannot be sent as plain data")
    ref = by_reference(value)
    return {"R": {str(k): _encode(v, buffers, None, depth + 1) for k, v in ref.items()}}


def tensors_in(value, depth=0):
    """The tensors in ``value`` and in the lists, tuples and dicts it holds (4 levels deep), in order: the order in
    which both sides of the pipe number a call's inputs and outputs."""
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 4 and isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v, depth + 1)


# ------------------------------------------------------------------ decoding

def read_frame(stream, max_bytes, max_header=None):
    """One frame's bytes from a binary stream; ``EOFError`` when the stream ends first."""
    head = _read_exactly(stream, HEADER.size)
    length, _ = frame_sizes(head, max_bytes=max_bytes, max_header=max_bytes if max_header is None else max_header)
    return head + _read_exactly(stream, length)


def _read_exactly(stream, n):
    parts, got = [], 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            raise EOFError("the other side closed the pipe")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def decode(frame, from_reference=None, deadline=None, max_nodes=MAX_NODES):
    """The value in one frame. ``from_reference(ref)`` turns a reference into an object (default: refused).

    ``frame`` may be a ``bytearray`` the caller hands over: tensors and arrays are then made on its bytes without a
    copy (``frombuffer``), so a frame costs its size once. ``deadline`` (``time.monotonic()``): decoding that runs
    past it stops with :class:`PastDeadline`. At most ``max_nodes`` values, counted in the header's bytes before it
    is parsed (every value but the first follows a comma, a bracket or a brace), so that parsing cannot build more.
    """
    length, header_length = HEADER.unpack_from(frame)
    if len(frame) != HEADER.size + length or header_length > length:
        raise WireError("malformed frame")
    start = HEADER.size
    text = bytes(frame[start:start + header_length])
    values = text.count(b",") + text.count(b"[") + text.count(b"{")
    if values > 8 * max_nodes:     # a value is at most 8 of them (a tensor's tag: {"t":0,"dtype":..,"shape":[..],..})
        raise TooLarge(f"the answer holds more than {max_nodes:,} values; the limit is {max_nodes:,}")
    try:
        header = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WireError(f"malformed header: {error}") from None
    except RecursionError:
        raise WireError("value nested too deeply") from None
    del text
    if type(frame) is bytearray:
        body = memoryview(frame)[start + header_length:]
    else:
        body = memoryview(bytearray(memoryview(frame)[start + header_length:]))   # a private copy
    return _Decoder(body, from_reference, deadline, max_nodes).value(header, 0)


class _Decoder:
    def __init__(self, body, from_reference, deadline=None, max_nodes=MAX_NODES):
        self.body = body
        self.offset = 0
        self.nodes = 0
        self.max_nodes = max_nodes
        self.deadline = deadline
        self.from_reference = from_reference
        self.seen = {}

    def chunk(self, index, size):
        """The bytes of buffer ``index``: buffers come in order, each once, so offsets follow from sizes."""
        if type(index) is not int or index != len(self.seen) or size < 0:
            raise WireError("buffers out of order")
        end = self.offset + size
        if end > len(self.body):
            raise WireError("a buffer runs past the end of the message")
        data = self.body[self.offset:end]     # a private buffer (decode's): nothing else writes it
        self.seen[index] = size
        self.offset = min(end + (-size % ALIGN), len(self.body))
        return data

    def value(self, node, depth):
        self.nodes += 1
        if depth > MAX_DEPTH or self.nodes > self.max_nodes:
            raise TooLarge(f"the answer holds more than {self.max_nodes:,} values or is nested more than "
                           f"{MAX_DEPTH} deep; the limit is {self.max_nodes:,} values, {MAX_DEPTH} levels")
        if self.deadline is not None and not self.nodes % 4096 and time.monotonic() > self.deadline:
            raise PastDeadline("reading the answer ran past the deadline")
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is not dict or not node:
            raise WireError(f"unexpected {type(node).__name__} in a message")
        if "L" in node:
            return [self.value(v, depth + 1) for v in _list(node["L"])]
        if "T" in node:
            return tuple(self.value(v, depth + 1) for v in _list(node["T"]))
        if "D" in node:
            out = {}
            for pair in _list(node["D"]):
                if type(pair) is not list or len(pair) != 2:
                    raise WireError("malformed dict entry")
                key = self.value(pair[0], depth + 1)
                if type(key) not in (str, int, float, bool, tuple) and key is not None:
                    raise WireError(f"a dict key may not be a {type(key).__name__}")
                out[key] = self.value(pair[1], depth + 1)
            return out
        if "t" in node:
            return self.tensor(node)
        if "a" in node:
            return self.array(node)
        if "f" in node:
            if node["f"] not in ("nan", "inf", "-inf"):
                raise WireError("malformed float")
            return float(node["f"])
        if "S" in node:
            return torch.Size(_ints(node["S"]))
        if "dtype" in node:
            return _dtype(node["dtype"])
        if "device" in node:
            return torch.device(_str(node["device"]))
        if "b" in node:
            size = _int(node.get("size", -1))
            return bytes(self.chunk(node["b"], size))
        if "c" in node:
            re_, im = _list(node["c"]) if len(node["c"]) == 2 else (None, None)
            if type(re_) not in (int, float) or type(im) not in (int, float):
                raise WireError("malformed complex")
            return complex(re_, im)
        if "slice" in node:
            parts = [self.value(v, depth + 1) for v in _list(node["slice"])]
            if len(parts) != 3 or any(p is not None and type(p) is not int for p in parts):
                raise WireError("malformed slice")
            return slice(*parts)
        if "E" in node:
            return Ellipsis
        if "n" in node:
            kind = np.dtype(_str(node["n"]))
            if kind.kind not in _NUMPY_KINDS:
                raise WireError("a numpy scalar of that dtype cannot be received")
            return kind.type(self.value(node["v"], depth + 1))
        if "R" in node:
            if self.from_reference is None:
                raise WireError("references are not accepted here")
            if type(node["R"]) is not dict:
                raise WireError("malformed reference")
            return self.from_reference({k: self.value(v, depth + 1) for k, v in node["R"].items()})
        raise WireError(f"unknown tag in a message: {sorted(node)[:3]}")

    def tensor(self, node):
        dtype = _dtype(node.get("dtype"))
        shape = _ints(node.get("shape"))
        numel = math.prod(shape)
        stored = torch.uint8 if dtype == torch.bool else dtype
        size = numel * torch.empty((), dtype=stored).element_size()
        data = self.chunk(node["t"], size)
        if numel == 0:
            out = torch.empty(shape, dtype=dtype)
        else:
            out = torch.frombuffer(data, dtype=stored).reshape(shape)
            if out.data_ptr() % ALIGN:     # not as our encoder sends it: a copy, aligned
                out = out.clone()
            if dtype == torch.bool:
                out = out.to(torch.bool)
        device = torch.device(_str(node.get("device", "cpu")))
        if device.type != "cpu":
            out = out.to(device)
        if node.get("grad") is True and (dtype.is_floating_point or dtype.is_complex):
            out.requires_grad_(True)
        return out

    def array(self, node):
        kind = np.dtype(_str(node.get("dtype")))
        if kind.kind not in _NUMPY_KINDS:
            raise WireError("an array of that dtype cannot be received")
        shape = _ints(node.get("shape"))
        data = self.chunk(node["a"], math.prod(shape) * kind.itemsize)
        out = np.frombuffer(data, dtype=kind).reshape(shape)
        return out.copy() if out.ctypes.data % ALIGN else out


def _list(value):
    if type(value) is not list:
        raise WireError("malformed message")
    return value


def _int(value):
    if type(value) is not int:
        raise WireError("malformed message")
    return value


def _ints(value):
    values = _list(value)
    if len(values) > 64 or any(type(v) is not int or v < 0 for v in values):
        raise WireError("malformed shape")
    return values


def _str(value):
    if type(value) is not str or len(value) > 64:
        raise WireError("malformed message")
    return value


def _dtype(name):
    try:
        return _DTYPES[name]
    except (KeyError, TypeError):
        raise WireError(f"unknown dtype {name!r}") from None
