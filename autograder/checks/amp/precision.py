"""What ``check_autocast_dtypes`` expects of a recorded training loop: the precision of each part.

The forward pass and the loss under autocast with the requested dtype, the loss in
float32, the backward pass outside autocast, and float32 parameters, gradients and
optimizer state afterwards.
"""

import torch

from autograder.errors import CheckFailure

AUTOCAST_HINT = ("Run the forward pass and the loss inside `with torch.autocast(device_type=device_type, "
                 "dtype=dtype):`, and call backward after the `with` block.")


def expect_forward_precision(check, rec, dtype, case):
    __tracebackhide__ = True
    for number, forward in enumerate(rec.forwards):
        if forward.autocast != (True, dtype):
            enabled, active = forward.autocast
            state = f"autocast enabled for {active}" if enabled else "autocast off"
            raise CheckFailure(check, f"batch {number}: the model ran with {state}, expected autocast with "
                                      f"{dtype}.\nCase: {case}", hint=AUTOCAST_HINT)
        wrong = [d for d in forward.linear_dtypes if d != dtype]
        if wrong or not forward.linear_dtypes:
            raise CheckFailure(check, f"batch {number}: the nn.Linear layers returned {forward.linear_dtypes}, "
                                      f"expected {dtype}.\nCase: {case}", hint=AUTOCAST_HINT)
    if not rec.losses:
        raise CheckFailure(check, f"train_amp never called loss_fn.\nCase: {case}",
                           hint="Compute the loss with the `loss_fn` argument.")
    for loss in rec.losses:
        if not loss.autocast[0]:
            raise CheckFailure(check, f"batch {loss.batch}: loss_fn was called with autocast off.\nCase: {case}",
                               hint="Compute the loss inside the autocast block too: autocast runs the loss in "
                                    "float32 for you.")
        if loss.dtype != torch.float32:
            raise CheckFailure(check, f"batch {loss.batch}: the loss has dtype {loss.dtype}, expected "
                                      f"torch.float32.\nCase: {case}",
                               hint="Do not cast the outputs or the loss yourself; under autocast, MSE runs in "
                                    "float32.")


def expect_backward_outside_autocast(check, rec, case):
    __tracebackhide__ = True
    reached = [loss for loss in rec.losses if loss.grad is not None]
    if not reached:
        raise CheckFailure(check, f"the backward pass never reached the loss returned by loss_fn.\nCase: {case}",
                           hint="Call backward on (the scaled) loss of every batch.")
    for loss in reached:
        if loss.backward_autocast:
            raise CheckFailure(check, f"batch {loss.batch}: backward ran while autocast was still on.\nCase: {case}",
                               hint="Leave the `with torch.autocast(...)` block before calling backward: the "
                                    "backward ops already run in the dtypes autocast chose for the forward ones.")


def expect_float32_state(check, final, case):
    """The parameters, their gradients and the optimizer's state after training are float32 (``final``: what
    ``runs.final_state`` reports)."""
    __tracebackhide__ = True
    for name, p, grad in final["params"]:
        if p.dtype != torch.float32 or (grad is not None and grad.dtype != torch.float32):
            got = p.dtype if p.dtype != torch.float32 else f"gradient {grad.dtype}"
            raise CheckFailure(check, f"after training, parameter {name!r} is {got}; parameters stay "
                                      f"torch.float32 under mixed precision.\nCase: {case}",
                               hint="Do not call model.half() or .to(dtype): autocast casts copies of the "
                                    "weights for each op and keeps the float32 master weights.")
    for state in final["optimizer"]:
        for key, value in state.items():
            if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() > 1 \
                    and value.dtype != torch.float32:
                raise CheckFailure(check, f"the optimizer's state {key!r} is {value.dtype}, expected "
                                          f"torch.float32.\nCase: {case}", hint="Keep the model in float32.")
