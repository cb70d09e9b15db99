"""The known mistakes of the amp exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write amp`` from ``tests/mutants/amp.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "e014a3636a679f64"

MISTAKES = ({'id': 'float32 loop (no autocast, no scaler)',
  'says': 'train_amp trains in float32: no autocast and no gradient scaler.',
  'signature': {'autocast_dtypes': 'failed: batch #: the model ran with autocast off expected autocast with '
                                   'torch.bfloat#',
                'loss_scaling': 'failed: batch #: the gradient that reached the loss in backward was #',
                'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'},
  'visible': {'autocast_dtypes': 'failed: batch #: the model ran with autocast off expected autocast with '
                                 'torch.bfloat#',
              'loss_scaling': 'failed: batch #: the gradient that reached the loss in backward was #',
              'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'}},
 {'id': 'backward inside autocast',
  'says': 'train_amp calls backward inside the autocast block.',
  'signature': {'autocast_dtypes': 'failed: batch #: backward ran while autocast was still on'},
  'visible': {'autocast_dtypes': 'failed: batch #: backward ran while autocast was still on'}},
 {'id': 'optimizer.step() instead of scaler.step()',
  'says': 'train_amp steps the optimizer directly instead of through the scaler, so inf/NaN steps are not skipped.',
  'signature': {'autocast_dtypes': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                   'update',
                'loss_scaling': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                'update',
                'accumulation': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                'update',
                'convergence': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                               'update',
                'scaler_across_calls': 'failed: train_amp raised AssertionError: No inf checks were recorded prior '
                                       'to update'},
  'visible': {'autocast_dtypes': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                 'update',
              'loss_scaling': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                              'update',
              'accumulation': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                              'update',
              'convergence': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to update',
              'scaler_across_calls': 'failed: train_amp raised AssertionError: No inf checks were recorded prior '
                                     'to update'}},
 {'id': 'optimizer.step() and no scaler.update()',
  'says': 'train_amp steps the optimizer directly and never updates the scaler.',
  'signature': {'loss_scaling': 'failed: batch #: at optimizer.step the gradients were # times the true ones',
                'accumulation': 'failed: step #: the gradients were # times the mean gradient over the',
                'clipping': 'failed: train_amp raised RuntimeError: unscale_ has already been called on this '
                            'optimizer since',
                'convergence': "failed: batch #: the returned loss is inf but the float# run's loss",
                'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'},
  'visible': {'loss_scaling': 'failed: batch #: at optimizer.step the gradients were # times the true ones',
              'accumulation': 'failed: step #: the gradients were # times the mean gradient over the',
              'clipping': 'failed: train_amp raised RuntimeError: unscale_ has already been called on this '
                          'optimizer since',
              'convergence': "failed: batch #: the returned loss is inf but the float# run's loss",
              'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'}},
 {'id': 'clipping before unscale_',
  'says': 'train_amp clips the gradients while they are still scaled (before `unscale_`).',
  'signature': {'clipping': 'failed: step #: the gradients at optimizer.step have norm # the true gradient'},
  'visible': {'clipping': 'failed: step #: the gradients at optimizer.step have norm # the true gradient'}},
 {'id': 'stepping the scaler on every micro-batch',
  'says': 'train_amp steps on every micro-batch instead of once per `accumulate` micro-batches.',
  'signature': {'accumulation': 'failed: the optimizer stepped after batches expected once per # batches: after',
                'clipping': 'failed: expected # optimizer steps got #',
                'convergence': "failed: batch #: the returned loss is # but the float# run's loss",
                'scaler_across_calls': 'failed: after call # the scaler you passed has scale # and growth'},
  'visible': {'accumulation': 'failed: the optimizer stepped after batches expected once per # batches: after',
              'convergence': "failed: batch #: the returned loss is # but the float# run's loss"}},
 {'id': 'loss not divided by accumulate',
  'says': 'train_amp does not divide the loss by `accumulate`, so accumulated gradients are too large.',
  'signature': {'accumulation': 'failed: step #: the gradients were # times the mean gradient over the',
                'convergence': "failed: batch #: the returned loss is # but the float# run's loss"},
  'visible': {'accumulation': 'failed: step #: the gradients were # times the mean gradient over the',
              'convergence': "failed: batch #: the returned loss is # but the float# run's loss"}},
 {'id': 'model cast with .half()',
  'says': 'train_amp casts the model to float16 with `.half()` instead of using autocast.',
  'signature': {'autocast_dtypes': 'failed: after training parameter is torch.float# parameters stay torch.float# '
                                   'under mixed precision',
                'loss_scaling': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
                'accumulation': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
                'clipping': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
                'convergence': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
                'scaler_across_calls': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients'},
  'visible': {'autocast_dtypes': 'failed: after training parameter is torch.float# parameters stay torch.float# '
                                 'under mixed precision',
              'loss_scaling': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
              'accumulation': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
              'clipping': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
              'convergence': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients',
              'scaler_across_calls': 'failed: train_amp raised ValueError: Attempting to unscale FP# gradients'}},
 {'id': 'scaler.update() before scaler.step()',
  'says': 'train_amp updates the scaler before stepping with it.',
  'signature': {'autocast_dtypes': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                   'update',
                'loss_scaling': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                'update',
                'accumulation': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                'update',
                'clipping': 'failed: train_amp raised RuntimeError: unscale_ is being called after step',
                'convergence': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                               'update',
                'scaler_across_calls': 'failed: train_amp raised AssertionError: No inf checks were recorded prior '
                                       'to update'},
  'visible': {'autocast_dtypes': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                                 'update',
              'loss_scaling': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                              'update',
              'accumulation': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to '
                              'update',
              'clipping': 'failed: train_amp raised RuntimeError: unscale_ is being called after step',
              'convergence': 'failed: train_amp raised AssertionError: No inf checks were recorded prior to update',
              'scaler_across_calls': 'failed: train_amp raised AssertionError: No inf checks were recorded prior '
                                     'to update'}},
 {'id': 'no scaler.update()',
  'says': 'train_amp never calls `scaler.update()`, so the scale never changes.',
  'signature': {'autocast_dtypes': 'failed: train_amp raised RuntimeError: step has already been called since the '
                                   'last update',
                'loss_scaling': 'failed: train_amp raised RuntimeError: step has already been called since the '
                                'last update',
                'accumulation': 'failed: train_amp raised RuntimeError: step has already been called since the '
                                'last update',
                'clipping': 'failed: train_amp raised RuntimeError: unscale_ is being called after step',
                'convergence': 'failed: train_amp raised RuntimeError: step has already been called since the last '
                               'update',
                'scaler_across_calls': 'failed: train_amp raised RuntimeError: step has already been called since '
                                       'the last update'},
  'visible': {'autocast_dtypes': 'failed: train_amp raised RuntimeError: step has already been called since the '
                                 'last update',
              'loss_scaling': 'failed: train_amp raised RuntimeError: step has already been called since the last '
                              'update',
              'accumulation': 'failed: train_amp raised RuntimeError: step has already been called since the last '
                              'update',
              'clipping': 'failed: train_amp raised RuntimeError: unscale_ is being called after step',
              'convergence': 'failed: train_amp raised RuntimeError: step has already been called since the last '
                             'update',
              'scaler_across_calls': 'failed: train_amp raised RuntimeError: step has already been called since '
                                     'the last update'}},
 {'id': 'float16 autocast without a scaler',
  'says': 'train_amp runs float16 autocast without a gradient scaler.',
  'signature': {'loss_scaling': 'failed: batch #: the gradient that reached the loss in backward was #'},
  'visible': {'loss_scaling': 'failed: batch #: the gradient that reached the loss in backward was #'}},
 {'id': 'gradients never cleared',
  'says': 'train_amp never clears the gradients, so they add up across steps.',
  'signature': {'loss_scaling': 'failed: batch # expected one optimizer step after it got #',
                'accumulation': 'failed: when batch # began an effective batch the gradients still held the',
                'clipping': 'failed: step #: the gradients at optimizer.step have norm # the true gradient',
                'convergence': "failed: batch #: the returned loss is # but the float# run's loss",
                'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'},
  'visible': {'loss_scaling': 'failed: batch # expected one optimizer step after it got #',
              'accumulation': 'failed: when batch # began an effective batch the gradients still held the',
              'clipping': 'failed: step #: the gradients at optimizer.step have norm # the true gradient',
              'convergence': "failed: batch #: the returned loss is # but the float# run's loss",
              'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'}},
 {'id': 'gradients cleared before every micro-batch',
  'says': 'train_amp clears the gradients before every micro-batch, which throws away the accumulated ones.',
  'signature': {'accumulation': 'failed: step #: the gradients were # times the mean gradient over the',
                'clipping': 'failed: step #: the gradients at optimizer.step have norm # the true gradient',
                'convergence': "failed: batch #: the returned loss is # but the float# run's loss",
                'scaler_across_calls': 'failed: after call # the scaler you passed has scale # and growth'},
  'visible': {'accumulation': 'failed: step #: the gradients were # times the mean gradient over the',
              'convergence': "failed: batch #: the returned loss is # but the float# run's loss"}},
 {'id': 'loss computed outside autocast',
  'says': 'train_amp computes the loss outside the autocast block.',
  'signature': {'autocast_dtypes': 'failed: batch #: loss_fn was called with autocast off'},
  'visible': {'autocast_dtypes': 'failed: batch #: loss_fn was called with autocast off'}},
 {'id': 'returning the scaled loss',
  'says': 'train_amp returns the scaled loss instead of the real one.',
  'signature': {'convergence': "failed: batch #: the returned loss is # but the float# run's loss"},
  'visible': {'convergence': "failed: batch #: the returned loss is # but the float# run's loss"}},
 {'id': 'returning loss tensors',
  'says': 'train_amp returns tensors instead of Python floats for the losses.',
  'signature': {'convergence': 'failed: train_amp returned a list holding Tensor expected Python floats'},
  'visible': {'convergence': 'failed: train_amp returned a list holding Tensor expected Python floats'}},
 {'id': 'returning the loss divided by accumulate',
  'says': 'train_amp returns the loss divided by `accumulate` instead of the real loss.',
  'signature': {'convergence': "failed: batch #: the returned loss is # but the float# run's loss"},
  'visible': {'convergence': "failed: batch #: the returned loss is # but the float# run's loss"}},
 {'id': 'a GradScaler of its own even when one is given',
  'says': 'train_amp makes a new GradScaler even when it is given one, so the scale starts over on every call.',
  'signature': {'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'},
  'visible': {'scaler_across_calls': 'failed: call # batch #: the loss was multiplied by # before backward'}},
 {'id': 'checkpoint without the scaler',
  'says': "save_checkpoint leaves out the scaler's state.",
  'signature': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the scaler's state is not "
                                        'the saved',
                'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's "
                                           '#'},
  'visible': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the scaler's state is not "
                                      'the saved',
              'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's #"}},
 {'id': "checkpoint without the optimizer (Adam's state lost)",
  'says': "save_checkpoint leaves out the optimizer's state.",
  'signature': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the optimizer's state is "
                                        'not the saved',
                'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's "
                                           '#'},
  'visible': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the optimizer's state is not "
                                      'the saved',
              'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's #"}},
 {'id': 'a new GradScaler bound in load_checkpoint instead of loading into the given one',
  'says': 'load_checkpoint loads into a new GradScaler instead of the one it is given.',
  'signature': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the scaler's state is not "
                                        'the saved',
                'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's "
                                           '#'},
  'visible': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the scaler's state is not "
                                      'the saved',
              'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's #"}},
 {'id': 'load_checkpoint returns step + 1',
  'says': 'load_checkpoint returns the step after the saved one instead of the saved step.',
  'signature': {'checkpoint_roundtrip': 'failed: load_checkpoint returned step # but the checkpoint was saved with '
                                        'step #',
                'checkpoint_resume_exact': 'failed: load_checkpoint returned step # but the checkpoint was saved '
                                           'with step #'},
  'visible': {'checkpoint_roundtrip': 'failed: load_checkpoint returned step # but the checkpoint was saved with '
                                      'step #',
              'checkpoint_resume_exact': 'failed: load_checkpoint returned step # but the checkpoint was saved '
                                         'with step #'}},
 {'id': "model.parameters() saved as a list (BatchNorm's buffers lost)",
  'says': "save_checkpoint saves the model's parameters instead of its state_dict, so buffers such as BatchNorm's "
          'running statistics are lost.',
  'signature': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the model's state is not "
                                        'the saved',
                'checkpoint_resume_exact': "failed: at the end of the resumed run the model's state is not"},
  'visible': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the model's state is not the "
                                      'saved',
              'checkpoint_resume_exact': "failed: at the end of the resumed run the model's state is not"}},
 {'id': 'torch.save of the objects themselves, loaded with weights_only=False',
  'says': 'save_checkpoint pickles the objects themselves, which loading with `weights_only=True` refuses.',
  'signature': {'checkpoint_weights_only': 'failed: torch.load refuses the checkpoint: it pickles builtins.dict '
                                           'collections.defaultdict torch.amp.grad_scaler.GradScaler '
                                           'torch.amp.grad_scaler._refresh_per_optimizer_state '
                                           'torch.nn.modules.activation.ReLU '
                                           'torch.nn.modules.batchnorm.BatchNorm#d'},
  'visible': {'checkpoint_weights_only': 'failed: torch.load refuses the checkpoint: it pickles builtins.dict '
                                         'collections.defaultdict torch.amp.grad_scaler.GradScaler '
                                         'torch.amp.grad_scaler._refresh_per_optimizer_state '
                                         'torch.nn.modules.activation.ReLU '
                                         'torch.nn.modules.batchnorm.BatchNorm#d'}},
 {'id': 'checkpoint state kept in memory, keyed by path (the file holds the step only)',
  'says': 'save_checkpoint keeps the state in memory instead of in the file, so a new process cannot resume from '
          'it.',
  'signature': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the model's state is not "
                                        'the saved',
                'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's "
                                           '#'},
  'visible': {'checkpoint_roundtrip': "failed: after load_checkpoint into new objects the model's state is not the "
                                      'saved',
              'checkpoint_resume_exact': "failed: batch #: the resumed run's loss is # the uninterrupted run's #"}},
 {'id': 'load_checkpoint with weights_only=False',
  'says': 'load_checkpoint loads with `weights_only=False`, which can run arbitrary code from the file.',
  'signature': {'checkpoint_weights_only': 'failed: load_checkpoint ran code from the file: given a checkpoint '
                                           'that also holds'},
  'visible': {'checkpoint_weights_only': 'failed: load_checkpoint ran code from the file: given a checkpoint that '
                                         'also holds'}})
