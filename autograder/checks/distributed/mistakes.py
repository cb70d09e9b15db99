"""The known mistakes of the distributed exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write distributed`` from ``tests/mutants/distributed.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "e86198bbed996d5b"

MISTAKES = ({'id': 'train_ddp never calls set_epoch (every epoch the same order)',
  'says': "train_ddp never calls the sampler's `set_epoch`, so every epoch shuffles the samples in the same order.",
  'signature': {'ddp_data_split': 'failed at checks.distributed.check_ddp_data_split:3',
                'ddp_matches_single': "failed: a rank trained on epoch 0's samples again"},
  'visible': {'ddp_data_split': 'failed at checks.distributed.check_ddp_data_split:3',
              'ddp_matches_single': "failed: a rank trained on epoch 0's samples again"}},
 {'id': 'train_ddp gives every rank the whole dataset (no DistributedSampler)',
  'says': 'train_ddp gives every rank the whole dataset instead of its share (no `DistributedSampler`).',
  'signature': {'ddp_data_split': 'failed at checks.distributed.check_ddp_data_split:1',
                'ddp_replicas_agree': 'failed at checks.distributed._expect_steps:1',
                'ddp_matches_single': 'failed at checks.distributed._expect_steps:1'},
  'visible': {'ddp_data_split': 'failed at checks.distributed.check_ddp_data_split:1',
              'ddp_replicas_agree': 'failed at checks.distributed._expect_steps:1',
              'ddp_matches_single': 'failed at checks.distributed._expect_steps:1'}},
 {'id': 'train_ddp wraps the model but calls model(x), not ddp(x)',
  'says': 'train_ddp wraps the model in DDP but calls the unwrapped model, so no gradient is all-reduced.',
  'signature': {'ddp_replicas_agree': 'wrong value',
                'ddp_matches_single': "failed: the step is one process's step on this rank's samples alone"},
  'visible': {'ddp_replicas_agree': 'wrong value',
              'ddp_matches_single': "failed: the step is one process's step on this rank's samples alone"}},
 {'id': 'train_ddp trains each rank on its own (no DDP)',
  'says': "train_ddp trains each rank's model on its own, without `DistributedDataParallel`.",
  'signature': {'ddp_replicas_agree': 'wrong value',
                'ddp_matches_single': "failed: the step is one process's step on this rank's samples alone"},
  'visible': {'ddp_replicas_agree': 'wrong value',
              'ddp_matches_single': "failed: the step is one process's step on this rank's samples alone"}},
 {'id': 'train_ddp sums the loss instead of its mean',
  'says': 'train_ddp sums the loss over the batch instead of taking its mean.',
  'signature': {'ddp_matches_single': "failed: the step is one process's step times batch_size"},
  'visible': {'ddp_matches_single': "failed: the step is one process's step times batch_size"}},
 {'id': 'train_accumulate puts only the backward inside no_sync',
  'says': 'train_accumulate puts only the backward inside `no_sync()`, so the all-reduce also runs on every '
          'accumulation step.',
  'signature': {'accumulate_no_sync': 'failed at checks.distributed.check_accumulate_no_sync:1'},
  'visible': {'accumulate_no_sync': 'failed at checks.distributed.check_accumulate_no_sync:1'}},
 {'id': 'train_accumulate never uses no_sync',
  'says': "train_accumulate never uses `no_sync()`, so every micro-batch's backward all-reduces the gradients.",
  'signature': {'accumulate_no_sync': 'failed at checks.distributed.check_accumulate_no_sync:1'},
  'visible': {'accumulate_no_sync': 'failed at checks.distributed.check_accumulate_no_sync:1'}},
 {'id': 'train_accumulate does not divide the loss by accumulation',
  'says': "train_accumulate does not divide each micro-batch's loss by the number of accumulation steps.",
  'signature': {'accumulate_matches_single': "failed: the step is one process's step times accumulation",
                'accumulate_no_sync': "failed: the step is one process's step times accumulation"},
  'visible': {'accumulate_matches_single': "failed: the step is one process's step times accumulation",
              'accumulate_no_sync': "failed: the step is one process's step times accumulation"}},
 {'id': 'average_gradients sums the gradients without dividing',
  'says': 'average_gradients all-reduces the gradients but does not divide the sum by the world size.',
  'signature': {'average_matches_single': "failed: the step is one process's step times world_size",
                'average_calls': "failed: the step is one process's step times world_size"},
  'visible': {'average_matches_single': "failed: the step is one process's step times world_size",
              'average_calls': "failed: the step is one process's step times world_size"}},
 {'id': 'average_gradients all-reduces on rank 0 only (rank 0 hangs)',
  'says': 'average_gradients calls `all_reduce` on one rank only, so that rank waits for the others forever.',
  'signature': {'average_matches_single': 'failed at checks.distributed._entries:2',
                'average_calls': 'failed at checks.distributed._entries:2'},
  'visible': {'average_matches_single': 'failed at checks.distributed._entries:2',
              'average_calls': 'failed at checks.distributed._entries:2'}},
 {'id': 'average_gradients all-reduces the parameters too',
  'says': 'average_gradients all-reduces the parameters as well as their gradients.',
  'signature': {'average_calls': 'failed at checks.distributed.check_average_calls:1'},
  'visible': {'average_calls': 'failed at checks.distributed.check_average_calls:1'}},
 {'id': 'average_gradients does not skip a parameter without a gradient',
  'says': "average_gradients all-reduces every parameter's `.grad`, also one that is None (a frozen parameter).",
  'signature': {'average_matches_single': 'raised: TypeError', 'average_calls': 'raised: TypeError'},
  'visible': {'average_matches_single': 'raised: TypeError', 'average_calls': 'raised: TypeError'}},
 {'id': 'average_gradients filters on requires_grad, not on a gradient',
  'says': 'average_gradients skips frozen parameters but not a trainable one without a gradient (`p.grad is None`: '
          'the forward did not use it).',
  'signature': {'average_calls': 'raised: TypeError'},
  'visible': {'average_calls': 'raised: TypeError'}},
 {'id': 'average_gradients averages the parameters, not the gradients',
  'says': 'average_gradients averages the parameters instead of their gradients.',
  'signature': {'average_matches_single': "failed: the step is one process's step on this rank's samples alone, "
                                          'the parameters all-reduced',
                'average_calls': "failed: the step is one process's step on this rank's samples alone, the "
                                 'parameters all-reduced'},
  'visible': {'average_matches_single': "failed: the step is one process's step on this rank's samples alone, the "
                                        'parameters all-reduced',
              'average_calls': "failed: the step is one process's step on this rank's samples alone, the "
                               'parameters all-reduced'}})
