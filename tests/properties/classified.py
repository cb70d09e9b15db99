"""The mutants the value search does not separate, each with the reason; both tables are checked to be exact.

``OUT_OF_SEARCH``: mutants of exercises whose grade is not a value of tensors, by why (the items they must lose).
``KNOWN_GAPS``: mutants of searched exercises that no drawn input separates from the reference. Each is either
*not a value mistake* (the contract forbids how the answer is written, and the items it must lose read the source,
the op recorder or the clock: values cannot show it) or a *real gap* (a value the contract fixes that the checks do
not reach), with the input that would separate it and the check that should.
"""

FIT_LOOP = ("fit loop: graded by training runs compared with the grader's own run and by convergence "
            "(check_fit_*, check_convergence, check_accumulation, check_loss_scaling, check_clipping, "
            "check_autocast_dtypes, check_scaler_across_calls), not by a value of drawn tensors")
CHECKPOINT_FILE = ("checkpoint file: graded by a save in one process and a resume in a fresh one "
                   "(check_checkpoint_roundtrip, check_checkpoint_resume_exact, check_checkpoint_weights_only)")
LOADING = "loading: graded on generated image files and tar shards through DataLoader workers (check_tar_dataset_*, " \
          "check_image_directory_dataset, check_write_shards, check_collate_images_*)"
LAUNCH = "launch: graded by a multi-process launch (check_ddp_*, check_accumulate_*, check_average_*)"
PROFILE = "profile: graded on a profiler's record of one step (check_top_op)"
CUDA = "cuda: a GPU-only mistake (GPU_MUTANTS); the CPU search cannot reach a device"

OUT_OF_SEARCH = {
    FIT_LOOP: {
        "basics": ("fit_quadratic with SGD", "fit_quadratic on one sample",
                   "fit_quadratic returning the tutorial's [3, 1] weights",
                   "fit_quadratic with features in the order 1, x, x^2", "fit_quadratic always running 1000 steps",
                   "fit_quadratic ignoring lr"),
        "modules": ("fit without zero_grad", "fit on the sum of squares", "fit with momentum",
                    "fit with a squeezed prediction", "fit returning the first loss", "fit stepping before backward",
                    "fit training a copy", "fit ignoring lr", "fit returning a tensor",
                    "fit returning the loss after training"),
        "amp": ("float32 loop (no autocast, no scaler)", "backward inside autocast",
                "optimizer.step() instead of scaler.step()", "optimizer.step() and no scaler.update()",
                "clipping before unscale_", "stepping the scaler on every micro-batch", "loss not divided by accumulate",
                "model cast with .half()", "scaler.update() before scaler.step()", "no scaler.update()",
                "float16 autocast without a scaler", "gradients never cleared",
                "gradients cleared before every micro-batch", "loss computed outside autocast",
                "returning the scaled loss", "returning loss tensors", "returning the loss divided by accumulate",
                "a GradScaler of its own even when one is given"),
    },
    CHECKPOINT_FILE: {
        "amp": ("checkpoint without the scaler", "checkpoint without the optimizer (Adam's state lost)",
                "a new GradScaler bound in load_checkpoint instead of loading into the given one",
                "load_checkpoint returns step + 1", "model.parameters() saved as a list (BatchNorm's buffers lost)",
                "torch.save of the objects themselves, loaded with weights_only=False",
                "checkpoint state kept in memory, keyed by path (the file holds the step only)",
                "load_checkpoint with weights_only=False"),
    },
    LOADING: {
        "dataloading": (
            "tutorial's naive tar dataset (duplicates with workers)", "one worker per shard, or raise",
            "drops the remainder when shards don't divide evenly", "ignores rank", "returns RGB",
            "leaks open files (never closes a shard)", "keeps shards open on the dataset",
            "keeps every member (getmembers)", "decodes non-image members", "reads with IMREAD_UNCHANGED",
            "skips corrupt images and missing shards", "finds a missing shard only after yielding",
            "folder: random.choice ignores the index", "folder: unsorted paths", "folder: wraps the index around",
            "folder: returns RGB", "folder: ignores the pattern", "folder: natural sort", "folder: reads subfolders too",
            "shards: ceil-sized chunks",
            "shards: drops the remainder", "shards: full paths as member names", "shards: unseeded shuffle",
            "shards: no ValueError", "collate: channels last", "collate: centred (padding on top and left too)",
            "collate: resizes instead of padding", "collate: int32 sizes", "collate: sizes as (W, H)",
            "collate: stacks (only equal sizes work)", "collate: float output", "collate: pads with 114",
            "collate: a list of tensors", "collate: drops the names", "collate: sorts images by size, not the names",
            "collate: a view of the input for one image"),
    },
    LAUNCH: {
        "distributed": (
            "train_ddp never calls set_epoch (every epoch the same order)",
            "train_ddp gives every rank the whole dataset (no DistributedSampler)",
            "train_ddp wraps the model but calls model(x), not ddp(x)", "train_ddp trains each rank on its own (no DDP)",
            "train_ddp sums the loss instead of its mean", "train_accumulate puts only the backward inside no_sync",
            "train_accumulate never uses no_sync", "train_accumulate does not divide the loss by accumulation",
            "average_gradients sums the gradients without dividing",
            "average_gradients all-reduces on rank 0 only (rank 0 hangs)",
            "average_gradients all-reduces the parameters too",
            "average_gradients does not skip a parameter without a gradient",
            "average_gradients averages the parameters, not the gradients",
            "average_gradients filters on requires_grad, not on a gradient"),
    },
    PROFILE: {
        "memory": ("most_expensive_op sorts by total CPU time", "most_expensive_op returns the most called operator",
                   "most_expensive_op profiles the first call, without warm-up",
                   "most_expensive_op returns the profile's row, not its name"),
    },
    CUDA: {
        "basics": ("to_numpy without .cpu()",),
        "vectorization": ("batch_gather hard-coding the CPU",),
        "dataloading": ("collate: moves the batch to the GPU in the worker",),
        "amp": ("loss.item() every batch (a host sync per batch)",),
    },
}

SOURCE = "not a value mistake: the same values by construction; the items it must lose read the source " \
         "(source rules) or the op recorder"
SPEED = "not a value mistake: the same values, written as a loop; graded by the clock, op counts and the source " \
        "(no_loop)"
TILING = "not a value mistake: the same values through a tiled copy; graded by the op recorder (check_merge_no_tiling)"
ONE_GRAPH = "not a value mistake: right values in eager mode; graded by compiling it (check_masked_mean_one_graph)"
MEMORY = "not a value mistake: the same values and gradients; graded by the memory autograd keeps " \
         "(check_checkpoint_trades_memory, check_predict_no_graph), measured in the process"

KNOWN_GAPS = {
    ("broadcasting", "Merge via repeat and cat"): TILING,
    ("broadcasting", "Merge via expand and cat"): TILING,
    ("broadcasting", "Merge via broadcast_tensors and cat"): TILING,
    ("broadcasting", "Merge tiling by adding zeros"): TILING,
    ("broadcasting", "distances with a loop over rows"): SPEED,
    ("stability", "softmax calling F.softmax"): SOURCE,
    ("stability", "cross-entropy calling torch.logsumexp"): SOURCE,
    ("stability", "softplus calling F.softplus"): SOURCE,
    ("stability", "softplus calling torch.logaddexp"): SOURCE,
    ("vectorization", "batch_gather as a Python loop"): SPEED,
    ("vectorization", "batch_gather as a loop over unbind"): SPEED,
    ("vectorization", "per_sample_grads as a Python loop over samples"): SPEED,
    ("vectorization", "per_sample_grads calling vmap one sample at a time"): SPEED,
    ("vectorization", "masked_batch_mean as a Python loop over T"): SPEED,
    ("vectorization", "masked_batch_mean as a Python loop over B"): SPEED,
    ("vectorization", "masked_batch_mean calling .item() on lengths"): ONE_GRAPH,
    ("vectorization", "masked_batch_mean branching on lengths' values"): ONE_GRAPH,
    ("modules", "Normalizer calling F.batch_norm"): SOURCE,
    ("memory", "checkpointed_forward does not checkpoint"): MEMORY,
    ("memory", "checkpointed_forward checkpoints the first block only"): MEMORY,
    ("memory", "checkpointed_forward checkpoints every layer on its own"): MEMORY,
    ("memory", "predict detaches the result instead of no_grad"): MEMORY,
}
