"""Realistic mistakes in `train_amp`, one function each, with the checks that must catch them.

``MUTANTS[name] = (replacement objects, checks that must fail)``. Every mutant is the
reference loop with one thing changed.
"""

import torch


def float32_loop(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                 accumulate=1, max_grad_norm=None):
    losses = []
    for i, (inputs, targets) in enumerate(batches, start=1):
        loss = loss_fn(model(inputs), targets)
        (loss / accumulate).backward()
        losses.append(loss.item())
        if i % accumulate == 0:
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return losses


def _amp_loop(model, batches, optimizer, loss_fn, device_type, dtype, accumulate, max_grad_norm, *,
              backward_in_autocast=False, plain_step=False, update=True, update_first=False, clip_scaled=False,
              step_every_batch=False, divide=True, half=False, scaler=True, to_none=True, report=None):
    """The reference loop with one switch flipped (each mutant below flips one)."""
    if half:
        model.half()
    grad_scaler = torch.amp.GradScaler(device_type, enabled=scaler and dtype == torch.float16)
    losses = []
    for i, (inputs, targets) in enumerate(batches, start=1):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
            scaled = grad_scaler.scale(loss / accumulate if divide else loss)
            if backward_in_autocast:
                scaled.backward()
        if not backward_in_autocast:
            scaled.backward()
        losses.append(report(loss, scaled, accumulate) if report else loss.item())
        if i % accumulate == 0 or step_every_batch:
            if max_grad_norm is not None:
                if clip_scaled:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                grad_scaler.unscale_(optimizer)
                if not clip_scaled:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            if update_first:
                grad_scaler.update()
            if plain_step:
                optimizer.step()
            else:
                grad_scaler.step(optimizer)
            if update and not update_first:
                grad_scaler.update()
        if i % accumulate == 0 and to_none is not None:
            optimizer.zero_grad(set_to_none=to_none)
    return losses


def _mutant(**switch):
    def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                  accumulate=1, max_grad_norm=None):
        return _amp_loop(model, batches, optimizer, loss_fn, device_type, dtype, accumulate, max_grad_norm,
                         **switch)
    return train_amp


def zero_every_batch(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                     accumulate=1, max_grad_norm=None):
    """Accumulation that does not accumulate: the gradients are cleared before every batch."""
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
    losses = []
    for i, (inputs, targets) in enumerate(batches, start=1):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss / accumulate).backward()
        losses.append(loss.item())
        if i % accumulate == 0:
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
    return losses


def loss_outside_autocast(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                          accumulate=1, max_grad_norm=None):
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
    losses = []
    for i, (inputs, targets) in enumerate(batches, start=1):
        with torch.autocast(device_type=device_type, dtype=dtype):
            outputs = model(inputs)
        loss = loss_fn(outputs.float(), targets)
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


def _replace(fn):
    return {"train_amp": fn}


MUTANTS = {
    "float32 loop (no autocast, no scaler)": (_replace(float32_loop),
                                              {"check_autocast_dtypes", "check_loss_scaling"}),
    "backward inside autocast": (_replace(_mutant(backward_in_autocast=True)), {"check_autocast_dtypes"}),
    "optimizer.step() instead of scaler.step()": (_replace(_mutant(plain_step=True)), {"check_loss_scaling"}),
    "optimizer.step() and no scaler.update()": (_replace(_mutant(plain_step=True, update=False)),
                                                {"check_loss_scaling"}),
    "clipping before unscale_": (_replace(_mutant(clip_scaled=True)), {"check_clipping"}),
    "stepping the scaler on every micro-batch": (_replace(_mutant(step_every_batch=True)), {"check_accumulation"}),
    "loss not divided by accumulate": (_replace(_mutant(divide=False)), {"check_accumulation"}),
    "model cast with .half()": (_replace(_mutant(half=True)), {"check_autocast_dtypes"}),
    "scaler.update() before scaler.step()": (_replace(_mutant(update_first=True)), {"check_loss_scaling"}),
    "no scaler.update()": (_replace(_mutant(update=False)), {"check_loss_scaling"}),
    "float16 autocast without a scaler": (_replace(_mutant(scaler=False)), {"check_loss_scaling"}),
    "zero_grad(set_to_none=False)": (_replace(_mutant(to_none=False)), {"check_accumulation"}),
    "gradients never cleared": (_replace(_mutant(to_none=None)), {"check_accumulation", "check_convergence"}),
    "gradients cleared before every micro-batch": (_replace(zero_every_batch), {"check_accumulation"}),
    "loss computed outside autocast": (_replace(loss_outside_autocast), {"check_autocast_dtypes"}),
    "returning the scaled loss": (_replace(_mutant(report=lambda loss, scaled, accumulate: scaled.item())),
                                  {"check_convergence"}),
    "returning loss tensors": (_replace(_mutant(report=lambda loss, scaled, accumulate: loss.detach())), {"check_convergence"}),
    "returning the loss divided by accumulate": (
        _replace(_mutant(report=lambda loss, scaled, accumulate: loss.item() / accumulate)), {"check_convergence"}),
}
