"""Reference solutions for the `amp` assignment.

Generated from source/amp/amp.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell train_amp ---
import torch


def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
              accumulate=1, max_grad_norm=None, scaler=None):
    """Train `model` in place with automatic mixed precision; return the per-batch losses as floats.

    Pass the same `scaler` to every call (every epoch) of one run; without one, a new GradScaler is made.
    """
    if scaler is None:
        scaler = torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
    losses = []
    optimizer.zero_grad(set_to_none=True)
    for i, (inputs, targets) in enumerate(batches, start=1):
        with torch.autocast(device_type=device_type, dtype=dtype):
            outputs = model(inputs)
            loss = loss_fn(outputs, targets)
        scaler.scale(loss / accumulate).backward()
        losses.append(loss.detach())              # no .item() here: it would wait for the GPU every batch
        if i % accumulate == 0:
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    return torch.stack(losses).tolist() if losses else []


# --- cell checkpoint ---
import torch


def save_checkpoint(path, model, optimizer, scaler, step):
    """Write the state of a training run to `path`: state dicts and the step, nothing pickled."""
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(), "step": step}, path)


def load_checkpoint(path, model, optimizer, scaler):
    """Restore the state saved by `save_checkpoint` into the given objects; return the step."""
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scaler.load_state_dict(checkpoint["scaler"])
    return checkpoint["step"]
