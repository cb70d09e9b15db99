"""Realistic mistakes in `train_amp` and in `save_checkpoint` / `load_checkpoint`, one each, with the checks that
must catch them.

``MUTANTS[name] = (replacement objects, checks that must fail)``. Every mutant is the
reference with one thing changed. ``GPU_MUTANTS`` are mistakes that only a machine with
CUDA can see (a host sync per batch costs nothing on the CPU, and is no error there).
Clearing the gradients with ``zero_grad(set_to_none=False)`` is not here: zeroed
gradients are correct (the second solution in tests/alternatives/amp.py zeroes them).
"""

import copy
import os

import torch


def float32_loop(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                 accumulate=1, max_grad_norm=None, scaler=None):
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
              step_every_batch=False, divide=True, half=False, use_scaler=True, to_none=True, report=None,
              given=None, ignore_given=False, item_each=False):
    """The reference loop with one switch flipped (each mutant below flips one)."""
    if half:
        model.half()
    grad_scaler = given
    if given is None or ignore_given:
        grad_scaler = torch.amp.GradScaler(device_type, enabled=use_scaler and dtype == torch.float16)
    losses = []
    for i, (inputs, targets) in enumerate(batches, start=1):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
            scaled = grad_scaler.scale(loss / accumulate if divide else loss)
            if backward_in_autocast:
                scaled.backward()
        if not backward_in_autocast:
            scaled.backward()
        losses.append(report(loss, scaled, accumulate) if report else loss.item() if item_each else loss.detach())
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
    return losses if report or item_each else torch.stack(losses).tolist() if losses else []


def _mutant(**switch):
    def train_amp(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                  accumulate=1, max_grad_norm=None, scaler=None):
        return _amp_loop(model, batches, optimizer, loss_fn, device_type, dtype, accumulate, max_grad_norm,
                         given=scaler, **switch)
    return train_amp


def zero_every_batch(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                     accumulate=1, max_grad_norm=None, scaler=None):
    """Accumulation that does not accumulate: the gradients are cleared before every batch."""
    scaler = scaler or torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
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
                          accumulate=1, max_grad_norm=None, scaler=None):
    scaler = scaler or torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
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


def item_every_batch(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                     accumulate=1, max_grad_norm=None, scaler=None):
    """Correct, but reads every loss back with `.item()` as it goes: a host sync per batch on a GPU."""
    return _amp_loop(model, batches, optimizer, loss_fn, device_type, dtype, accumulate, max_grad_norm, given=scaler,
                     item_each=True)


# ------------------------------------------------------------------ checkpoint and resume

def _save(path, model, optimizer, scaler, step, *, skip=(), model_state=None, whole=False):
    state = {"model": model_state(model) if model_state else model.state_dict(),
             "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(), "step": step}
    if whole:                                        # the objects themselves, pickled
        state.update(model=model, optimizer=optimizer, scaler=scaler)
    torch.save({k: v for k, v in state.items() if k not in skip}, path)


def _load(path, model, optimizer, scaler, *, skip=(), weights_only=True, new_scaler=False, step_offset=0,
          copy_params=False, whole=False):
    checkpoint = torch.load(path, weights_only=weights_only)
    if copy_params:                                  # a list of parameters: copied one by one
        with torch.no_grad():
            for p, saved in zip(model.parameters(), checkpoint["model"]):
                p.copy_(saved)
    else:
        model.load_state_dict(checkpoint["model"].state_dict() if whole else checkpoint["model"])
    if "optimizer" not in skip:
        optimizer.load_state_dict(checkpoint["optimizer"].state_dict() if whole else checkpoint["optimizer"])
    if "scaler" not in skip:
        if new_scaler:                               # binds a new scaler to the local name: the caller never sees it
            scaler = torch.amp.GradScaler("cpu")
        scaler.load_state_dict(checkpoint["scaler"].state_dict() if whole else checkpoint["scaler"])
    return checkpoint["step"] + step_offset


def _checkpoint(save=None, load=None):
    def save_checkpoint(path, model, optimizer, scaler, step):
        return _save(path, model, optimizer, scaler, step, **(save or {}))

    def load_checkpoint(path, model, optimizer, scaler):
        return _load(path, model, optimizer, scaler, **(load or {}))
    return {"save_checkpoint": save_checkpoint, "load_checkpoint": load_checkpoint}


def _save_state_dicts(path, model, optimizer, scaler, step):
    """A correct save (the mistake is in the load below)."""
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
                "step": step}, path)


def _load_unsafe(path, model, optimizer, scaler):
    """Loads with weights_only=False, as code written before torch 2.6 often did."""
    checkpoint = torch.load(os.fspath(path), weights_only=False)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scaler.load_state_dict(checkpoint["scaler"])
    return checkpoint["step"]


_KEPT_IN_MEMORY = {}    # path -> the state save_checkpoint kept instead of writing it


def _save_step_keep_state(path, model, optimizer, scaler, step):
    """Writes only the step; the state stays in this process, in a dict keyed by the path."""
    _KEPT_IN_MEMORY[os.fspath(path)] = copy.deepcopy(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()})
    torch.save({"step": step}, path)


def _load_kept_state(path, model, optimizer, scaler):
    kept = _KEPT_IN_MEMORY.get(os.fspath(path))
    if kept is not None:
        model.load_state_dict(kept["model"])
        optimizer.load_state_dict(kept["optimizer"])
        scaler.load_state_dict(kept["scaler"])
    return torch.load(path, weights_only=True)["step"]


RESUME = {"check_checkpoint_roundtrip", "check_checkpoint_resume_exact"}


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
    "float16 autocast without a scaler": (_replace(_mutant(use_scaler=False)), {"check_loss_scaling"}),
    "gradients never cleared": (_replace(_mutant(to_none=None)), {"check_accumulation", "check_convergence"}),
    "gradients cleared before every micro-batch": (_replace(zero_every_batch), {"check_accumulation"}),
    "loss computed outside autocast": (_replace(loss_outside_autocast), {"check_autocast_dtypes"}),
    "returning the scaled loss": (_replace(_mutant(report=lambda loss, scaled, accumulate: scaled.item())),
                                  {"check_convergence"}),
    "returning loss tensors": (_replace(_mutant(report=lambda loss, scaled, accumulate: loss.detach())),
                               {"check_convergence"}),
    "returning the loss divided by accumulate": (
        _replace(_mutant(report=lambda loss, scaled, accumulate: loss.item() / accumulate)), {"check_convergence"}),
    "a GradScaler of its own even when one is given": (_replace(_mutant(ignore_given=True)),
                                                       {"check_scaler_across_calls"}),
    "checkpoint without the scaler": (_checkpoint(save={"skip": ("scaler",)}, load={"skip": ("scaler",)}),
                                      RESUME),
    "checkpoint without the optimizer (Adam's state lost)": (
        _checkpoint(save={"skip": ("optimizer",)}, load={"skip": ("optimizer",)}), RESUME),
    "a new GradScaler bound in load_checkpoint instead of loading into the given one": (
        _checkpoint(load={"new_scaler": True}), RESUME),
    "load_checkpoint returns step + 1": (_checkpoint(load={"step_offset": 1}), RESUME),
    "model.parameters() saved as a list (BatchNorm's buffers lost)": (
        _checkpoint(save={"model_state": lambda model: list(model.parameters())}, load={"copy_params": True}),
        RESUME),
    "torch.save of the objects themselves, loaded with weights_only=False": (
        _checkpoint(save={"whole": True}, load={"whole": True, "weights_only": False}),
        {"check_checkpoint_weights_only"}),
    "checkpoint state kept in memory, keyed by path (the file holds the step only)": (
        {"save_checkpoint": _save_step_keep_state, "load_checkpoint": _load_kept_state}, RESUME),
    "load_checkpoint with weights_only=False": ({"save_checkpoint": _save_state_dicts,
                                                 "load_checkpoint": _load_unsafe}, {"check_checkpoint_weights_only"}),
}

GPU_MUTANTS = {
    "loss.item() every batch (a host sync per batch)": (_replace(item_every_batch), {"check_speed"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/amp/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "float32 loop (no autocast, no scaler)": "train_amp trains in float32: no autocast and no gradient scaler.",
    "backward inside autocast": "train_amp calls backward inside the autocast block.",
    "optimizer.step() instead of scaler.step()": "train_amp steps the optimizer directly instead of through the "
                                                 "scaler, so inf/NaN steps are not skipped.",
    "optimizer.step() and no scaler.update()": "train_amp steps the optimizer directly and never updates the "
                                               "scaler.",
    "clipping before unscale_": "train_amp clips the gradients while they are still scaled (before `unscale_`).",
    "stepping the scaler on every micro-batch": "train_amp steps on every micro-batch instead of once per "
                                                "`accumulate` micro-batches.",
    "loss not divided by accumulate": "train_amp does not divide the loss by `accumulate`, so accumulated gradients "
                                      "are too large.",
    "model cast with .half()": "train_amp casts the model to float16 with `.half()` instead of using autocast.",
    "scaler.update() before scaler.step()": "train_amp updates the scaler before stepping with it.",
    "no scaler.update()": "train_amp never calls `scaler.update()`, so the scale never changes.",
    "float16 autocast without a scaler": "train_amp runs float16 autocast without a gradient scaler.",
    "gradients never cleared": "train_amp never clears the gradients, so they add up across steps.",
    "gradients cleared before every micro-batch": "train_amp clears the gradients before every micro-batch, which "
                                                  "throws away the accumulated ones.",
    "loss computed outside autocast": "train_amp computes the loss outside the autocast block.",
    "returning the scaled loss": "train_amp returns the scaled loss instead of the real one.",
    "returning loss tensors": "train_amp returns tensors instead of Python floats for the losses.",
    "returning the loss divided by accumulate": "train_amp returns the loss divided by `accumulate` instead of the "
                                                "real loss.",
    "a GradScaler of its own even when one is given": "train_amp makes a new GradScaler even when it is given one, "
                                                      "so the scale starts over on every call.",
    "checkpoint without the scaler": "save_checkpoint leaves out the scaler's state.",
    "checkpoint without the optimizer (Adam's state lost)": "save_checkpoint leaves out the optimizer's state.",
    "a new GradScaler bound in load_checkpoint instead of loading into the given one": "load_checkpoint loads into "
        "a new GradScaler instead of the one it is given.",
    "load_checkpoint returns step + 1": "load_checkpoint returns the step after the saved one instead of the saved "
                                        "step.",
    "model.parameters() saved as a list (BatchNorm's buffers lost)": "save_checkpoint saves the model's parameters "
        "instead of its state_dict, so buffers such as BatchNorm's running statistics are lost.",
    "torch.save of the objects themselves, loaded with weights_only=False": "save_checkpoint pickles the objects "
        "themselves, which loading with `weights_only=True` refuses.",
    "checkpoint state kept in memory, keyed by path (the file holds the step only)": "save_checkpoint keeps the "
        "state in memory instead of in the file, so a new process cannot resume from it.",
    "load_checkpoint with weights_only=False": "load_checkpoint loads with `weights_only=False`, which can run "
                                               "arbitrary code from the file.",
}
