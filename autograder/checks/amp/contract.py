"""The contracts of the amp exercises, clause by clause (``autograder.contracts``): the build writes them into the
notebook's lists and docs/amp.md's table; ``tests/checks/test_contracts.py`` proves that each clause's items send
its inputs."""

from autograder.contracts import Clause, Contract

DTYPES = ("bfloat16", "float16")
DEVICES = ("on_cpu", "on_cuda")

CONTRACTS = (
    Contract("train_amp", (
        Clause("for each batch, run the forward pass **and** the loss `loss_fn(outputs, targets)` under "
               "`torch.autocast(device_type, dtype=dtype)`; call backward outside it;",
               items=("autocast_dtypes",), inputs=(*DTYPES, *DEVICES)),
        Clause("scale the loss with `scaler` when one is given (the caller's scaler, kept across calls: use it and no "
               "other); without one, make a `torch.amp.GradScaler(device_type)` with its default settings for "
               "`dtype=torch.float16` (with `torch.bfloat16` no scaling is needed: a scaler made with `enabled=False` "
               "passes everything through);",
               items=("loss_scaling", "scaler_across_calls"),
               inputs=("no_scaler", "overflowing_batch", "given_scaler", "two_calls")),
        Clause("every `accumulate` batches form one optimizer step: divide each loss by `accumulate`, and step, update "
               "the scaler and clear the gradients (`optimizer.zero_grad()`) once per effective batch (the tests use "
               "a number of batches that is a multiple of `accumulate`);",
               items=("accumulation", "convergence"), inputs=("accumulate_1", "accumulate_2", "accumulate_3")),
        Clause("with `max_grad_norm`, unscale the gradients and clip their total norm to `max_grad_norm` before each "
               "step;",
               items=("clipping",), inputs=("max_grad_norm", *DTYPES)),
        Clause("never cast the model: parameters and optimizer state stay float32;",
               items=("autocast_dtypes",), inputs=("momentum_state", *DTYPES)),
        Clause("return one Python `float` per batch: that batch's `loss_fn` value, not scaled and not divided by "
               "`accumulate`, read back once at the end (no `.item()` per batch).",
               items=("convergence", "speed"), inputs=("loss_curve", "one_batch", "host_syncs_cuda")),
    )),
    Contract("checkpoint", (
        Clause("`save_checkpoint` writes one file at `path` (a `str` or a `pathlib.Path`) with the state of the model, "
               "of the optimizer and of the `GradScaler`, and `step`; `load_checkpoint` reads it back **into** the "
               "objects it is given (new ones, or the same ones after they trained on) and returns the step;",
               items=("checkpoint_roundtrip",), inputs=("str_path", "path_object", "new_objects", "same_objects",
                                                        *DEVICES)),
        Clause("the file holds only state dicts and numbers: it loads with `torch.load(path, weights_only=True)`;",
               items=("checkpoint_weights_only",), inputs=("saved_file",)),
        Clause("`load_checkpoint` loads with `weights_only=True`: given a file that holds a pickled object, it must "
               "refuse it, not run it;",
               items=("checkpoint_weights_only",), inputs=("pickled_object",)),
        Clause("a run interrupted after some steps and resumed from the checkpoint gives the uninterrupted run's "
               "losses bit for bit. The grader checks this on the CPU, with float16 autocast and a "
               "`GradScaler(\"cpu\")` whose scale backs off and grows during the run, Adam, and a model with "
               "BatchNorm.",
               items=("checkpoint_resume_exact",), inputs=("interrupted_and_resumed", "fresh_process")),
    )),
)
