"""The known mistakes of the memory exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write memory`` from ``tests/mutants/memory.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "f9c6cc4eca71d544"

MISTAKES = ({'id': 'saved_bytes counts elements, not bytes',
  'says': 'saved_bytes counts elements, not bytes.',
  'signature': {'saved_bytes_count': 'failed: saved_bytes returned #: the number of elements of the tensors '
                                     'autograd saved'},
  'visible': {'saved_bytes_count': 'failed: saved_bytes returned #: the number of elements of the tensors autograd '
                                   'saved'}},
 {'id': 'saved_bytes assumes 4 bytes per element',
  'says': 'saved_bytes assumes 4 bytes per element whatever the dtype.',
  'signature': {'saved_bytes_count': 'failed: saved_bytes returned #: # bytes for every element saved but float# '
                                     'elements'},
  'visible': {'saved_bytes_count': 'failed: saved_bytes returned #: # bytes for every element saved but float# '
                                   'elements'}},
 {'id': "saved_bytes counts a view's whole storage",
  'says': 'saved_bytes counts the whole storage behind a view instead of the saved tensor itself.',
  'signature': {'saved_bytes_count': 'failed: saved_bytes returned #: the bytes of the whole storages behind the '
                                     'saved'},
  'visible': {'saved_bytes_count': 'failed: saved_bytes returned #: the bytes of the whole storages behind the '
                                   'saved'}},
 {'id': 'saved_bytes counts a tensor saved twice once',
  'says': 'saved_bytes counts a tensor that autograd saves twice only once.',
  'signature': {'saved_bytes_count': 'failed: saved_bytes returned #: each saved tensor counted once but autograd '
                                     'packed some'},
  'visible': {'saved_bytes_count': 'failed: saved_bytes returned #: each saved tensor counted once but autograd '
                                   'packed some'}},
 {'id': "saved_bytes runs the model after the hooks' block",
  'says': "saved_bytes runs the model after the hooks' `with` block has ended, so nothing is counted.",
  'signature': {'saved_bytes_count': 'failed: saved_bytes returned #: nothing: no tensor was packed through your '
                                     'hooks autograd'},
  'visible': {'saved_bytes_count': 'failed: saved_bytes returned #: nothing: no tensor was packed through your '
                                   'hooks autograd'}},
 {'id': "saved_bytes's unpack returns None",
  'says': "saved_bytes's unpack hook returns None instead of the saved tensor, so backward fails.",
  'signature': {'saved_bytes_backward': 'failed: backward through the output raised TypeError: Output of saved '
                                        'tensor unpack_hook expected'},
  'visible': {'saved_bytes_backward': 'failed: backward through the output raised TypeError: Output of saved '
                                      'tensor unpack_hook expected'}},
 {'id': 'checkpointed_forward does not checkpoint',
  'says': 'checkpointed_forward runs the blocks without checkpointing them.',
  'signature': {'checkpoint_trades_memory': 'failed: no block was recomputed in backward: each block should run '
                                            'twice once'},
  'visible': {'checkpoint_trades_memory': 'failed: no block was recomputed in backward: each block should run '
                                          'twice once'}},
 {'id': 'checkpointed_forward uses the reentrant checkpoint',
  'says': 'checkpointed_forward uses the reentrant checkpoint (`use_reentrant=True`).',
  'signature': {'checkpoint_gradients': "failed: checkpointed_forward should return the last block's output a "
                                        'tensor of shape connected',
                'checkpoint_trades_memory': "failed: checkpointed_forward should return the last block's output a "
                                            'tensor of shape connected'},
  'visible': {'checkpoint_gradients': "failed: checkpointed_forward should return the last block's output a tensor "
                                      'of shape connected',
              'checkpoint_trades_memory': "failed: checkpointed_forward should return the last block's output a "
                                          'tensor of shape connected'}},
 {'id': 'checkpointed_forward checkpoints the first block only',
  'says': 'checkpointed_forward checkpoints the first block only.',
  'signature': {'checkpoint_trades_memory': 'failed: only the first block was recomputed in backward each block '
                                            'should run'},
  'visible': {'checkpoint_trades_memory': 'failed: only the first block was recomputed in backward each block '
                                          'should run'}},
 {'id': 'checkpointed_forward checkpoints every layer on its own',
  'says': 'checkpointed_forward checkpoints every layer on its own, which keeps more than the plain run.',
  'signature': {'checkpoint_trades_memory': 'failed: no block was recomputed in backward and more activations were '
                                            'kept than'},
  'visible': {'checkpoint_trades_memory': 'failed: no block was recomputed in backward and more activations were '
                                          'kept than'}},
 {'id': 'checkpointed_forward drops the RNG state (dropout differs)',
  'says': 'checkpointed_forward does not preserve the RNG state, so dropout differs in the recomputation.',
  'signature': {'checkpoint_gradients': 'failed: the gradient of parameter #weight in blocks with dropout differs '
                                        'from the'},
  'visible': {'checkpoint_gradients': 'failed: the gradient of parameter #weight in blocks with dropout differs '
                                      'from the'}},
 {'id': 'most_expensive_op sorts by total CPU time',
  'says': 'most_expensive_op ranks operators by total CPU time (children included), not by self time.',
  'signature': {'top_op': 'failed: most_expensive_op returned the operator first by total CPU time which counts '
                          'the'},
  'visible': {'top_op': 'failed: most_expensive_op returned the operator first by total CPU time which counts '
                        'the'}},
 {'id': 'most_expensive_op returns the most called operator',
  'says': 'most_expensive_op returns the most called operator, not the most expensive one.',
  'signature': {'top_op': 'failed: most_expensive_op returned the operator the one called most often in the '
                          "grader's"},
  'visible': {'top_op': 'failed: most_expensive_op returned the operator the one called most often in the '
                        "grader's"}},
 {'id': "most_expensive_op returns the profile's row, not its name",
  'says': "most_expensive_op returns the profile's row (an event) instead of its name, the event's `key`.",
  'signature': {'top_op': "failed: most_expensive_op should return the operator's name a str such as got "
                          'FunctionEventAvg'},
  'visible': {'top_op': "failed: most_expensive_op should return the operator's name a str such as got "
                        'FunctionEventAvg'}},
 {'id': 'most_expensive_op profiles the first call, without warm-up',
  'says': 'most_expensive_op profiles the first call of the step, with no call to warm it up before.',
  'signature': {'top_op': 'failed: most_expensive_op profiled the first call of step with no call to warm'},
  'visible': {'top_op': 'failed: most_expensive_op profiled the first call of step with no call to warm'}},
 {'id': "residual_relu adds x in place into relu's saved output",
  'says': 'residual_relu adds the residual in place into a tensor that relu saved for backward.',
  'signature': {'residual_backward': 'failed: backward through residual_relu raised RuntimeError: one of the '
                                     'variables needed for gradient'},
  'visible': {'residual_backward': 'failed: backward through residual_relu raised RuntimeError: one of the '
                                   'variables needed for gradient'}},
 {'id': 'residual_relu applies relu after the residual',
  'says': 'residual_relu applies relu after adding the residual instead of before.',
  'signature': {'residual_values': 'failed: residual_relu is relu with relu applied after adding the residual not '
                                   'what',
                'residual_backward': 'wrong value'},
  'visible': {'residual_values': 'failed: residual_relu is relu with relu applied after adding the residual not '
                                 'what',
              'residual_backward': 'wrong value'}},
 {'id': 'predict detaches the result instead of no_grad',
  'says': 'predict detaches the result instead of running without grad, so the graph is still built during the '
          'call.',
  'signature': {'predict_no_graph': 'failed: predict built a graph: autograd kept # bytes for backward during the'},
  'visible': {'predict_no_graph': 'failed: predict built a graph: autograd kept # bytes for backward during the'}},
 {'id': 'predict switches to eval mode instead of no_grad',
  'says': 'predict switches the model to eval mode instead of running without grad.',
  'signature': {'predict_no_graph': 'failed: predict switched the model to eval mode which does not switch '
                                    'autograd'},
  'visible': {'predict_no_graph': 'failed: predict switched the model to eval mode which does not switch '
                                  'autograd'}})
