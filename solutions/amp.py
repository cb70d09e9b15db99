"""Reference solutions for the `amp` assignment.

Generated from source/amp/amp.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell train_amp ---
import torch


def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
              accumulate=1, max_grad_norm=None):
    """Train `model` in place with automatic mixed precision; return the per-batch losses as floats."""
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
    losses = []
    optimizer.zero_grad(set_to_none=True)
    for i, (inputs, targets) in enumerate(batches, start=1):
        with torch.autocast(device_type=device_type, dtype=dtype):
            outputs = model(inputs)
            loss = loss_fn(outputs, targets)
        scaler.scale(loss / accumulate).backward()
        losses.append(loss.item())
        if i % accumulate == 0:
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    return losses
