"""The demo's plausible buggy student for `amp`: clips the still-scaled gradients and forgets to divide the loss by
`accumulate` (loses the clipping, accumulation and convergence checks), and leaves the GradScaler out of the
checkpoint (loses the roundtrip and resume checks; keeps weights_only, since the file holds only state dicts).

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('accumulation', 'checkpoint_resume_exact', 'checkpoint_roundtrip', 'clipping', 'convergence')

CELLS = {
    "train_amp": '''import torch


def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
              accumulate=1, max_grad_norm=None, scaler=None):
    """Train `model` in place with automatic mixed precision; return the per-batch losses as floats."""
    if scaler is None:
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
    "checkpoint": '''import torch


def save_checkpoint(path, model, optimizer, scaler, step):
    """Write the state of a training run to `path`: state dicts and the step, nothing pickled."""
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, path)


def load_checkpoint(path, model, optimizer, scaler):
    """Restore the state saved by `save_checkpoint` into the given objects; return the step."""
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]       # forgot the scaler: a new one starts again at its initial scale
''',
}
