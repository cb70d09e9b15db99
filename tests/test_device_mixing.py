"""The comparison helpers with the student's tensors on another device than the grader's reference.

On a GPU the student's result, and every tensor a check builds from the case's inputs, lives on CUDA while the
reference is often made on the CPU; an operation that takes both raises "Expected all tensors to be on the same
device" in the grader (a grader error, issue 34: ``expect_close``'s search for a known mistake). A machine without a
GPU cannot make a CUDA tensor, so ``OnOtherDevice`` plays one: a tensor whose ``device`` says ``meta``, whose values
live on the CPU, and whose every operation refuses a tensor of another device as CUDA does (a 0-dim CPU tensor is
allowed, as CUDA allows it). ``.cpu()`` gives the plain CPU tensor back.
"""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from autograder.errors import CheckFailure
from autograder.measuring.compare import expect_close, expect_finite, expect_meta
from autograder.measuring.gradients import expect_grad_close

pytestmark = pytest.mark.quick

OTHER = torch.device("meta")


class OnOtherDevice(torch.Tensor):
    """A CPU tensor that says it lives on ``cuda:0`` and refuses to meet a tensor of another device."""

    @staticmethod
    def __new__(cls, data):
        wrapper = torch.Tensor._make_wrapper_subclass(cls, data.shape, strides=data.stride(), dtype=data.dtype,
                                                      device=OTHER, requires_grad=data.requires_grad)
        wrapper.values = data
        return wrapper

    def __repr__(self):
        return f"OnOtherDevice({self.values!r})"

    def tolist(self):                                # as a CUDA tensor's, which copies to the host
        return self.values.tolist()

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _run(func, args, kwargs or {})


def _run(func, args, kwargs):
    """``func`` on the values, refusing two devices; a result on the other device unless asked for the CPU."""
    flat, _ = tree_flatten((args, kwargs))
    devices = {str(t.device) for t in flat if isinstance(t, torch.Tensor)
               and not (t.dim() == 0 and t.device.type == "cpu")}
    if len(devices) > 1:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{', '.join(sorted(devices))} ({func})")
    target = kwargs.get("device")
    call_args, call_kwargs = tree_map(lambda t: t.values if isinstance(t, OnOtherDevice) else t, (args, kwargs))
    if target is not None:
        call_kwargs = {**call_kwargs, "device": torch.device("cpu")}
    out = func(*call_args, **call_kwargs)
    on_other = torch.device(target).type == OTHER.type if target is not None else str(OTHER) in devices
    if not on_other:
        return out                                   # .cpu(), .to("cpu"), work on plain tensors
    return tree_map(lambda t: OnOtherDevice(t) if isinstance(t, torch.Tensor) else t, out)


class OtherDeviceMode(TorchDispatchMode):
    """Tensors a composite operation makes on the other device (``torch.isfinite``'s scalars) are made on the CPU
    and wrapped, as every other operation: a machine without CUDA never starts it."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return _run(func, args, kwargs or {})


@pytest.fixture(autouse=True)
def other_device_mode():
    with OtherDeviceMode():
        yield


def other(t):
    return OnOtherDevice(t)


def test_the_stand_in_refuses_to_mix_devices_as_cuda_does():
    x = other(torch.arange(6.0).reshape(2, 3))
    assert x.device == OTHER and torch.equal((x * 2).cpu(), torch.arange(6.0).reshape(2, 3) * 2)
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="same device"):
        torch.allclose(x, torch.ones(2, 3))
    assert (x + torch.tensor(1.0)).device == OTHER     # a 0-dim CPU tensor is allowed, as on CUDA


def test_a_result_on_the_students_device_is_compared_with_a_cpu_reference():
    ref = torch.rand(3, 4, dtype=torch.float64)
    expect_close("c", other(ref.float()), ref, what="r")
    with pytest.raises(CheckFailure, match="differs from the reference"):
        expect_close("c", other(ref.float() + 1), ref, what="r")


def test_a_known_mistake_built_from_inputs_on_the_students_device_is_named():
    """Issue 34's grader error: masked_mean's known mistakes are computed from x on CUDA, the comparison is made on
    the CPU."""
    x = other(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    reference = x.double().mean(0)
    mistaken = x.double().sum(0) / 4
    known = (("the sum divided by four", lambda _: mistaken, "divide by the count"),)
    with pytest.raises(CheckFailure, match="the sum divided by four") as caught:
        expect_close("c", mistaken.float(), reference, what="r", known=known)
    assert "Hint: divide by the count" in str(caught.value)
    with pytest.raises(CheckFailure, match="differs from the reference"):      # not the mistake: told as a difference
        expect_close("c", reference.float() + 1, reference.cpu(), what="r", known=known)


def test_a_known_mistake_of_the_expected_values_runs_on_the_cpu_copy():
    ref = torch.rand(2, 3, dtype=torch.float64)
    with pytest.raises(CheckFailure, match="reversed"):
        expect_close("c", other(ref.flip(-1).float()), other(ref), what="r",
                     known=(("reversed", lambda e: e.flip(-1), "mind the order"),))


def test_meta_finite_and_the_mistakes_kind_on_the_students_device():
    value = other(torch.tensor([1.0, float("nan"), float("inf")]))
    expect_meta("c", value, what="r", shape=(3,), dtype=torch.float32, device="meta")
    with pytest.raises(CheckFailure, match="is on meta, expected cpu"):
        expect_meta("c", value, what="r", device="cpu")
    with pytest.raises(CheckFailure, match="1 NaN and 1 infinite"):
        expect_finite("c", value, what="r")
    with pytest.raises(CheckFailure) as caught:
        expect_close("c", value, torch.ones(3, dtype=torch.float64), what="r")
    assert caught.value.kind.startswith("not finite")


def test_gradients_on_the_students_device_and_their_known_mistakes():
    x = other(torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64))

    def expected_vjp(g):
        return g * torch.sigmoid(x)

    known = (("sigmoid(-x)", lambda g: g * torch.sigmoid(-x), "mind the sign"),)
    expect_grad_close("c", torch.nn.functional.softplus, [x], expected_vjp, known=known)
    with pytest.raises(CheckFailure, match="sigmoid\\(-x\\)"):
        expect_grad_close("c", lambda t: torch.nn.functional.softplus(-t) * -1, [x], expected_vjp, known=known)


def _masked_mean(x, low, high, *, bounds_included=True):
    inside = (x >= low) & (x <= high) if bounds_included else (x > low) & (x < high)
    return torch.where(inside, x, 0).sum(0) / inside.sum(0).clamp(min=1)


def test_masked_mean_with_its_case_on_the_students_device():
    """The check of issue 34's grader error, whole: the case, the student's result and the oracle's known mistakes on
    the student's device; the right answer passes, the mistake is named, nothing raises in the grader."""
    from autograder.checks.operators import _expect_masked_mean

    x = other(torch.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 3.0]]))
    _expect_masked_mean("check_masked_mean", _masked_mean, x, 1.0, 2.0)
    with pytest.raises(CheckFailure, match="without the values that sit exactly on a bound"):
        _expect_masked_mean("check_masked_mean", lambda *a: _masked_mean(*a, bounds_included=False), x, 1.0, 2.0)
