"""The demo's plausible buggy student for `amp`: clips the still-scaled gradients, and forgets to divide
the loss by `accumulate` (loses the clipping, accumulation and convergence checks, keeps the others).

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

CELLS = {
    "train_amp": '''import torch


def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
              accumulate=1, max_grad_norm=None):
    """Train `model` in place with automatic mixed precision; return the per-batch losses as floats."""
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
    losses = []
    for step, (inputs, targets) in enumerate(batches):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss).backward()          # forgot: loss / accumulate
        losses.append(loss.item())
        if (step + 1) % accumulate == 0:
            if max_grad_norm is not None:      # clips the scaled gradients
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return losses
''',
}
