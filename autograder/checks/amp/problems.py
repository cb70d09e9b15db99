"""The small, seeded training problems of the ``amp`` checks, and the grader's own reference loops.

Models are small (a few thousand parameters) so that every check runs in about a
second on a CPU. Magnitudes are chosen so that, with GradScaler's default initial
scale of 2**16, no gradient of an ordinary batch comes near float16's largest
value (65504), while a batch whose targets are 1e7 away overflows at any scale.
"""

import contextlib
import copy

import torch

from autograder.measuring.threads import one_thread  # noqa: F401 - the topic's modules use them as problems.*
from autograder.measuring.threads import single_threaded

SIZES = (16, 32, 32, 8)          # in, hidden, hidden, out
BATCH = 16
TARGET_SCALE = 0.2
OVERFLOW_TARGET = 1e7            # d(MSE)/d(output) ~ 1e6: infinite in float16 even before scaling



def small_model(gen, device="cpu", sizes=SIZES):
    """Linear-ReLU-Linear-ReLU-Linear in float32, initialised from ``gen``."""
    layers = []
    last = len(sizes) - 2
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        linear = torch.nn.Linear(fan_in, fan_out)
        gain = 0.3 if i == last else 1.0      # small initial outputs: small initial gradients
        with torch.no_grad():
            linear.weight.copy_(torch.randn(fan_out, fan_in, generator=gen) * gain / fan_in ** 0.5)
            linear.bias.copy_(torch.randn(fan_out, generator=gen) * 0.1 * gain)
        layers.append(linear)
        if i < last:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).to(device)


def describe_model(sizes=SIZES):
    parts = [f"Linear({a}, {b})" for a, b in zip(sizes[:-1], sizes[1:])]
    return ", ReLU, ".join(parts)


def regression_batches(gen, count, device="cpu", sizes=SIZES, batch=BATCH):
    """``count`` batches ``(inputs, targets)`` of one smooth teacher function, float32."""
    teacher = torch.randn(sizes[0], sizes[-1], generator=gen) / sizes[0] ** 0.5
    batches = []
    for _ in range(count):
        x = torch.randn(batch, sizes[0], generator=gen)
        y = torch.tanh(x @ teacher) * TARGET_SCALE
        batches.append((x.to(device), y.to(device)))
    return batches


def overflow_batch(gen, device="cpu", sizes=SIZES, batch=BATCH):
    """A batch whose loss is finite in float32 but whose gradients overflow float16 at any loss scale."""
    x = torch.randn(batch, sizes[0], generator=gen)
    return x.to(device), torch.full((batch, sizes[-1]), OVERFLOW_TARGET).to(device)


def mse(outputs, targets):
    return torch.nn.functional.mse_loss(outputs, targets)


def model_at(model, params):
    """A copy of ``model`` holding ``params`` (float32, no gradients)."""
    twin = copy.deepcopy(model)
    with torch.no_grad():
        for p, value in zip(twin.parameters(), params):
            p.copy_(value.float())
            p.grad = None
    return twin


def reference_grads(model, params, batches, loss_fn, device_type, dtype=None):
    """Mean over ``batches`` of the gradient of ``loss_fn`` at ``params``.

    With ``dtype`` the forward pass runs under ``torch.autocast(device_type, dtype)``
    (the gradient a correct mixed-precision loop computes, without scaling);
    without, in float32.
    """
    twin = model_at(model, params)
    for inputs, targets in batches:
        precision = torch.autocast(device_type, dtype=dtype) if dtype is not None else contextlib.nullcontext()
        with precision:
            loss = loss_fn(twin(inputs), targets)
        (loss.float() / len(batches)).backward()
    return [p.grad.detach().clone() for p in twin.parameters()]


def float32_training(model, batches, make_optimizer, loss_fn, accumulate=1):
    """The grader's float32 loop on a copy of ``model``: ``(per-batch losses, final parameters)``."""
    twin = copy.deepcopy(model)
    optimizer = make_optimizer(twin.parameters())
    losses = []
    for i, (inputs, targets) in enumerate(batches, start=1):
        loss = loss_fn(twin(inputs), targets)
        (loss / accumulate).backward()
        losses.append(float(loss.detach()))
        if i % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return losses, [p.detach().clone() for p in twin.parameters()]


def flat(tensors):
    return torch.cat([t.detach().double().flatten().cpu() for t in tensors])


def relative_error(actual, expected):
    """||actual - expected|| / ||expected|| over lists of tensors, in float64."""
    a, e = flat(actual), flat(expected)
    return float((a - e).norm() / e.norm().clamp_min(1e-30))


def gradient_mismatch(step, model, batches, device_type, dtype, tolerance):
    """``None`` when the gradients a recorded optimizer step saw are the mean autocast gradient over ``batches``
    (within ``tolerance``); else ``(relative error, norm ratio)`` for the message."""
    expected = reference_grads(model, step.params_before, batches, mse, device_type, dtype)
    error = relative_error(step.grads, expected)
    if error <= tolerance:
        return None
    return error, float(flat(step.grads).norm() / flat(expected).norm())
