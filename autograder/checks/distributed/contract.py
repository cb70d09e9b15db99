"""The contracts of the distributed exercises, clause by clause (``autograder.contracts``): the build writes them into
the notebook's bullet lists and docs/distributed.md's table; ``tests/checks/test_contracts.py`` proves that each
clause's items send its inputs."""

from autograder.contracts import Clause, Contract

RANKS = ("world_size_2", "world_size_3")

CONTRACTS = (
    Contract("train_ddp", (
        Clause("wrap `model` in `DistributedDataParallel` (the grader reads it in your source): after every step, "
               "every rank's parameters equal rank 0's;",
               items=("ddp_replicas_agree",), inputs=RANKS),
        Clause("load `dataset` (pairs `(x, y)`) with a `DataLoader` of `batch_size` per rank and a "
               "`DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)`; for each "
               "of `epochs` epochs call `set_epoch(epoch)`;",
               items=("ddp_data_split", "ddp_matches_single"), inputs=(*RANKS, "two_epochs")),
        Clause("for every batch: `zero_grad`, the mean squared error (`torch.nn.functional.mse_loss(ddp(x), y)`), "
               "`backward`, one step of `torch.optim.SGD(..., lr=lr)`;",
               items=("ddp_matches_single",), inputs=RANKS),
        Clause("keep the DataLoader's default `num_workers=0`, and let only the DataLoader read `dataset`: the "
               "grader's dataset records every sample it gives out, in each rank.",
               items=("ddp_data_split",), inputs=("recording_dataset",)),
    )),
    Contract("train_accumulate", (
        Clause("as `train_ddp`, but each optimizer step takes `accumulation` consecutive micro-batches of "
               "`batch_size`: divide each micro-batch's loss by `accumulation`, then step and zero the gradients;",
               items=("accumulate_matches_single", "accumulate_no_sync"), inputs=(*RANKS, "accumulation_3")),
        Clause("run the forward and backward of all micro-batches but the last inside `ddp.no_sync()` (the grader "
               "reads it in your source, counts what the ranks send on the sandbox's network, and counts the "
               "all-reduces of each step in your process).",
               items=("accumulate_no_sync",), inputs=("allreduces_counted",)),
    )),
    Contract("average_gradients", (
        Clause("replace every parameter's gradient by its average over the ranks (`dist.get_world_size()` gives "
               "their number): in the grader's own data-parallel loop (no DDP), every rank's parameters after every "
               "step equal one process's on all the samples;",
               items=("average_matches_single",), inputs=RANKS),
        Clause("skip parameters without a gradient (`p.grad is None`: a frozen one, or a trainable one that the "
               "forward did not use);",
               items=("average_matches_single", "average_calls"), inputs=("frozen_parameter", "unused_parameter")),
        Clause("all-reduce the gradients only, at most once per parameter per step: the parameters themselves need "
               "none.",
               items=("average_calls",), inputs=("allreduces_counted",)),
    )),
)
