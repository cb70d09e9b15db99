"""What a training loop does, recorded from the outside: module hooks, tensor hooks, optimizer step hooks.

The ``amp`` checks never read a student's code. They hand ``train_amp`` a model, an
optimizer and a loss function wired with hooks, and read back what happened:

* every forward of the model: the autocast state, the dtype each ``nn.Linear`` returned,
  whether the gradients were cleared (``None``) and a copy of the parameters;
* every call of the loss function: the autocast state and the loss's dtype; during the
  backward pass, the gradient that reached the loss (1 for ``loss.backward()``, the
  scale for ``scaler.scale(loss).backward()``, divided by ``accumulate`` when the loss
  is) and whether autocast was still on;
* every optimizer step: the batches seen so far, the gradients and parameters before
  the step, the parameters after it.

A recording crosses from the student's worker to the grader as plain data (:func:`to_plain`,
:func:`from_plain`): numbers, strings, dtypes, tensors, lists, tuples and dicts.
"""

import contextlib
from dataclasses import asdict, dataclass, field, fields

import torch


def autocast_state(device_type):
    """``(enabled, dtype)`` of autocast for ``device_type`` on this thread (torch >= 2.4 API, with a fallback)."""
    try:
        return torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type)
    except TypeError:  # older torch: per-device functions
        if device_type == "cpu":
            return torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
        return torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()


def snapshot(tensors):
    return [t.detach().clone() for t in tensors]


@dataclass
class ForwardRecord:
    autocast: tuple                 # (enabled, dtype) when the model was called
    linear_dtypes: list             # dtype of each nn.Linear's output, in call order
    grads_cleared: bool             # every parameter's .grad was None when the forward began
    grads_zero: bool                # every existing .grad was all zeros (zero_grad(set_to_none=False))
    params: list                    # the parameters when the forward began


@dataclass
class LossRecord:
    batch: int                      # index of the forward this loss belongs to
    autocast: tuple                 # (enabled, dtype) when loss_fn was called
    dtype: torch.dtype              # the loss's dtype
    value: float                    # the loss's value
    grad: float | None = None       # d(what backward was called on) / d(loss): the scale / accumulate
    backward_autocast: bool | None = None   # autocast was on while the backward pass reached the loss


@dataclass
class StepRecord:
    batches_seen: int               # forwards of the model before this step
    grads: list                     # the parameters' .grad when optimizer.step() began (None kept as None)
    params_before: list
    params_after: list = field(default_factory=list)


@dataclass
class Recording:
    device_type: str
    forwards: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    steps: list = field(default_factory=list)

    def losses_of_batch(self, batch):
        return [r for r in self.losses if r.batch == batch]

    def steps_during_batch(self, batch):
        """Steps taken after forward ``batch`` and before forward ``batch + 1``."""
        return [s for s in self.steps if s.batches_seen == batch + 1]


@contextlib.contextmanager
def recording(model, optimizer, loss_fn, device_type):
    """Hook ``model`` and ``optimizer``; yield ``(recording, recorded_loss_fn)``; remove every hook on exit."""
    rec = Recording(device_type)
    params = list(model.parameters())
    handles = []

    def before_forward(module, args):
        grads = [p.grad for p in params]
        rec.forwards.append(ForwardRecord(
            autocast=autocast_state(device_type), linear_dtypes=[],
            grads_cleared=all(g is None for g in grads),
            grads_zero=all(g is None or not bool(g.any()) for g in grads), params=snapshot(params)))

    def after_linear(module, args, output):
        if rec.forwards and isinstance(output, torch.Tensor):
            rec.forwards[-1].linear_dtypes.append(output.dtype)

    def before_step(opt, args, kwargs):
        rec.steps.append(StepRecord(len(rec.forwards),
                                    [None if p.grad is None else p.grad.detach().clone() for p in params],
                                    snapshot(params)))

    def after_step(opt, args, kwargs):
        rec.steps[-1].params_after = snapshot(params)

    handles.append(model.register_forward_pre_hook(before_forward))
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            handles.append(module.register_forward_hook(after_linear))
    handles.append(optimizer.register_step_pre_hook(before_step))
    handles.append(optimizer.register_step_post_hook(after_step))

    def recorded_loss_fn(*args, **kwargs):
        loss = loss_fn(*args, **kwargs)
        record = LossRecord(batch=len(rec.forwards) - 1, autocast=autocast_state(device_type),
                            dtype=loss.dtype, value=float(loss.detach().float().sum()))
        rec.losses.append(record)
        if loss.requires_grad:
            def on_grad(grad, record=record):
                record.grad = float(grad.detach().float().sum())
                record.backward_autocast = autocast_state(device_type)[0]
            loss.register_hook(on_grad)
        return loss

    try:
        yield rec, recorded_loss_fn
    finally:
        for handle in handles:
            handle.remove()


# ------------------------------------------------------------------ as plain data

_DTYPES = {str(d): d for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16)}


def _plain_dtype(dtype):
    """A dtype the wire carries as itself; any other as its name (``'torch.float8_e4m3fn'``), for messages."""
    return dtype if str(dtype) in _DTYPES else str(dtype)


def to_plain(rec):
    """``rec`` as nested dicts, lists, tuples, numbers, dtypes and tensors (what ``autograder.seam.wire`` sends)."""
    data = asdict(rec)
    for forward in data["forwards"]:
        forward["autocast"] = (bool(forward["autocast"][0]), _plain_dtype(forward["autocast"][1]))
        forward["linear_dtypes"] = [_plain_dtype(d) for d in forward["linear_dtypes"]]
    for loss in data["losses"]:
        loss["autocast"] = (bool(loss["autocast"][0]), _plain_dtype(loss["autocast"][1]))
        loss["dtype"] = _plain_dtype(loss["dtype"])
    return data


class MalformedRecording(ValueError):
    """What came back as a recording is not one (a worker that sent something else)."""


def _record(kind, data):
    if type(data) is not dict or set(data) - {f.name for f in fields(kind)}:
        raise MalformedRecording(f"a {kind.__name__} that is not one")
    return kind(**data)


def from_plain(data):
    """The :class:`Recording` that :func:`to_plain` made; :class:`MalformedRecording` for anything else."""
    try:
        rec = Recording(str(data["device_type"]),
                        [_record(ForwardRecord, f) for f in data["forwards"]],
                        [_record(LossRecord, r) for r in data["losses"]],
                        [_record(StepRecord, s) for s in data["steps"]])
        for forward in rec.forwards:
            forward.autocast = tuple(forward.autocast)
        for loss in rec.losses:
            loss.autocast = tuple(loss.autocast)
        return rec
    except (TypeError, KeyError, ValueError) as error:
        raise MalformedRecording(str(error)) from None
