"""A second correct `train_amp`, written differently from the reference: a scaler only for float16
(plain backward and step otherwise), the loss divided after scaling, clipping over the optimizer's
parameter groups, `model.zero_grad`, and the losses kept on the device and read back once at the end."""

import torch


def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
              accumulate=1, max_grad_norm=None):
    scaler = torch.amp.GradScaler(device_type) if dtype == torch.float16 else None
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
        model.zero_grad(set_to_none=True)
    return torch.stack(kept).float().tolist() if kept else []
