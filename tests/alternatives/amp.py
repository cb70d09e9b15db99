"""A second correct solution of every `amp` exercise, written differently from the reference.

`train_amp`: a scaler only for float16 when none is given (plain backward and step otherwise), the loss divided
after scaling, clipping over the optimizer's parameter groups, gradients zeroed in place
(`zero_grad(set_to_none=False)`: correct, if slower than freeing them), and the losses kept on the device and read
back once at the end.

`save_checkpoint` / `load_checkpoint`: other key names, the step stored as a tensor, an atomic write (a temporary
file beside the target, then `os.replace`), and a load mapped to the CPU first.
"""

import os

import torch


def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
              accumulate=1, max_grad_norm=None, scaler=None):
    if scaler is None and dtype == torch.float16:
        scaler = torch.amp.GradScaler(device_type)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    kept = []
    pending = 0
    for inputs, targets in batches:
        with torch.autocast(device_type, dtype=dtype, enabled=True):
            loss = loss_fn(model(inputs), targets)
        kept.append(loss.detach())
        (scaler.scale(loss) / accumulate if scaler else loss / accumulate).backward()
        pending += 1
        if pending < accumulate:
            continue
        pending = 0
        if scaler is None:
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(params, max_norm=max_grad_norm)
            optimizer.step()
        else:
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(params, max_norm=max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
        optimizer.zero_grad(set_to_none=False)
    return torch.stack(kept).float().tolist() if kept else []


def save_checkpoint(path, model, optimizer, scaler, step):
    state = {"weights": model.state_dict(), "optim": optimizer.state_dict(), "grad_scaler": scaler.state_dict(),
             "step": torch.tensor(step, dtype=torch.int64)}
    partial = os.fspath(path) + ".partial"
    torch.save(state, partial)
    os.replace(partial, path)


def load_checkpoint(path, model, optimizer, scaler):
    state = torch.load(os.fspath(path), map_location="cpu", weights_only=True)
    model.load_state_dict(state["weights"], strict=True)
    optimizer.load_state_dict(state["optim"])
    scaler.load_state_dict(state["grad_scaler"])
    return int(state["step"])
