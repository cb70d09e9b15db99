"""The known mistakes of the vectorization exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write vectorization`` from ``tests/mutants/vectorization.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "94279f3dd534fb1c"

MISTAKES = ({'id': 'batch_gather as a Python loop',
  'says': 'batch_gather loops over the batch in Python.',
  'signature': {'batch_gather_vectorized': 'grows with size', 'batch_gather_speed': 'too slow'},
  'visible': {'batch_gather_vectorized': 'grows with size', 'batch_gather_speed': 'too slow'}},
 {'id': 'batch_gather as a loop over unbind',
  'says': 'batch_gather loops over the batch in Python.',
  'signature': {'batch_gather_vectorized': 'grows with size', 'batch_gather_speed': 'too slow'},
  'visible': {'batch_gather_vectorized': 'grows with size', 'batch_gather_speed': 'too slow'}},
 {'id': 'batch_gather for 1-D indices only',
  'says': 'batch_gather handles one index per batch row only, not several.',
  'signature': {'batch_gather_values': 'raised: IndexError', 'batch_gather_gradient': 'raised: IndexError'},
  'visible': {'batch_gather_values': 'raised: IndexError', 'batch_gather_gradient': 'raised: IndexError'}},
 {'id': 'batch_gather hard-coding .cuda()',
  'says': "batch_gather hard-codes a device instead of using the input's.",
  'signature': {'batch_gather_values': 'raised: AssertionError',
                'batch_gather_gradient': 'raised: AssertionError',
                'batch_gather_vectorized': 'raised: AssertionError',
                'batch_gather_speed': 'raised: AssertionError'},
  'visible': {'batch_gather_values': 'raised: AssertionError',
              'batch_gather_gradient': 'raised: AssertionError',
              'batch_gather_vectorized': 'raised: AssertionError',
              'batch_gather_speed': 'raised: AssertionError'}},
 {'id': 'batch_gather with detached input',
  'says': 'batch_gather detaches its input, so no gradient flows back.',
  'signature': {'batch_gather_gradient': 'no gradient'},
  'visible': {'batch_gather_gradient': 'no gradient'}},
 {'id': 'batch_gather through NumPy',
  'says': 'batch_gather goes through NumPy, so no gradient flows back.',
  'signature': {'batch_gather_values': 'raised: TypeError', 'batch_gather_gradient': 'no gradient'},
  'visible': {'batch_gather_values': 'raised: TypeError', 'batch_gather_gradient': 'no gradient'}},
 {'id': 'batch_gather ignoring trailing dims',
  'says': "batch_gather ignores the input's trailing dimensions.",
  'signature': {'batch_gather_values': 'raised: RuntimeError',
                'batch_gather_gradient': 'raised: RuntimeError',
                'batch_gather_vectorized': 'raised: RuntimeError',
                'batch_gather_speed': 'raised: RuntimeError'},
  'visible': {'batch_gather_values': 'raised: RuntimeError',
              'batch_gather_gradient': 'raised: RuntimeError',
              'batch_gather_vectorized': 'raised: RuntimeError',
              'batch_gather_speed': 'raised: RuntimeError'}},
 {'id': 'batch_gather without a bounds check',
  'says': 'batch_gather does not raise for an index out of range.',
  'signature': {'batch_gather_errors': 'failed: index # is out of range for N = # rows but'},
  'visible': {'batch_gather_errors': 'failed: index # is out of range for N = # rows but'}},
 {'id': 'batch_gather clamping indices',
  'says': 'batch_gather does not raise for an index out of range.',
  'signature': {'batch_gather_errors': 'failed: index # is out of range for N = # rows but'},
  'visible': {'batch_gather_errors': 'failed: index # is out of range for N = # rows but'}},
 {'id': 'batch_gather without a batch check',
  'says': 'batch_gather does not refuse inputs whose batch sizes differ.',
  'signature': {'batch_gather_errors': 'raised: RuntimeError'},
  'visible': {'batch_gather_errors': 'raised: RuntimeError'}},
 {'id': 'batch_gather with a silent ValueError',
  'says': 'batch_gather raises ValueError with a message that does not say what is wrong.',
  'signature': {'batch_gather_errors': 'failed: batch_gather raised ValueError whose message does not say that the '
                                       'batch sizes'},
  'visible': {'batch_gather_errors': 'failed: batch_gather raised ValueError whose message does not say that the '
                                     'batch sizes'}},
 {'id': 'batch_gather changing the dtype',
  'says': "batch_gather returns another dtype than its input's.",
  'signature': {'batch_gather_values': 'wrong dtype: float32 for int64'},
  'visible': {'batch_gather_values': 'wrong dtype: float32 for int64'}},
 {'id': 'per_sample_grads as a Python loop over samples',
  'says': 'per_sample_grads handles one sample at a time in a Python loop.',
  'signature': {'per_sample_grads_vmapped': 'grows with size'},
  'visible': {'per_sample_grads_vmapped': 'grows with size'}},
 {'id': 'per_sample_grads calling vmap one sample at a time',
  'says': 'per_sample_grads handles one sample at a time in a Python loop.',
  'signature': {'per_sample_grads_vmapped': 'grows with size'},
  'visible': {'per_sample_grads_vmapped': 'grows with size'}},
 {'id': "per_sample_grads of the batch's summed loss",
  'says': "per_sample_grads differentiates the loss of the whole batch instead of each sample's.",
  'signature': {'per_sample_grads_values': "failed: per_sample_grads is the gradient of the whole batch's loss not "
                                           'one gradient',
                'per_sample_grads_vmapped': "failed: per_sample_grads is the gradient of the whole batch's loss "
                                            'not one gradient'},
  'visible': {'per_sample_grads_values': "failed: per_sample_grads is the gradient of the whole batch's loss not "
                                         'one gradient',
              'per_sample_grads_vmapped': "failed: per_sample_grads is the gradient of the whole batch's loss not "
                                          'one gradient'}},
 {'id': 'per_sample_grads divided by the batch size',
  'says': "per_sample_grads divides each sample's gradient by the batch size.",
  'signature': {'per_sample_grads_values': 'failed: per_sample_grads is the right gradients divided by the batch '
                                           'size B not',
                'per_sample_grads_vmapped': 'failed: per_sample_grads is the right gradients divided by the batch '
                                            'size B not'},
  'visible': {'per_sample_grads_values': 'failed: per_sample_grads is the right gradients divided by the batch '
                                         'size B not',
              'per_sample_grads_vmapped': 'failed: per_sample_grads is the right gradients divided by the batch '
                                          'size B not'}},
 {'id': 'per_sample_grads with in_dims (None, 0, None)',
  'says': 'per_sample_grads maps over the wrong arguments (`in_dims`).',
  'signature': {'per_sample_grads_values': 'raised: AssertionError',
                'per_sample_grads_vmapped': 'raised: AssertionError'},
  'visible': {'per_sample_grads_values': 'raised: AssertionError',
              'per_sample_grads_vmapped': 'raised: AssertionError'}},
 {'id': 'per_sample_grads of model.named_parameters() (not params, not detached)',
  'says': "per_sample_grads differentiates with respect to the model's own parameters instead of the `params` it "
          'is given.',
  'signature': {'per_sample_grads_values': "failed: per_sample_grads is the gradients at the model's own "
                                           'parameters not at the',
                'per_sample_grads_vmapped': "failed: per_sample_grads is the gradients at the model's own "
                                            'parameters not at the'},
  'visible': {'per_sample_grads_values': "failed: per_sample_grads is the gradients at the model's own parameters "
                                         'not at the',
              'per_sample_grads_vmapped': "failed: per_sample_grads is the gradients at the model's own parameters "
                                          'not at the'}},
 {'id': 'per_sample_grads calling model(x) instead of functional_call',
  'says': 'per_sample_grads calls the model directly instead of through `functional_call` with the given `params`.',
  'signature': {'per_sample_grads_values': 'failed: per_sample_grads is all zeros: the loss you differentiate does '
                                           'not depend on',
                'per_sample_grads_vmapped': 'failed: per_sample_grads is all zeros: the loss you differentiate '
                                            'does not depend on'},
  'visible': {'per_sample_grads_values': 'failed: per_sample_grads is all zeros: the loss you differentiate does '
                                         'not depend on',
              'per_sample_grads_vmapped': 'failed: per_sample_grads is all zeros: the loss you differentiate does '
                                          'not depend on'}},
 {'id': 'per_sample_grads detaching params inside the loss',
  'says': 'per_sample_grads detaches the parameters inside the loss, so the gradients are zero.',
  'signature': {'per_sample_grads_values': 'failed: per_sample_grads is all zeros: the loss you differentiate does '
                                           'not depend on',
                'per_sample_grads_vmapped': 'failed: per_sample_grads is all zeros: the loss you differentiate '
                                            'does not depend on'},
  'visible': {'per_sample_grads_values': 'failed: per_sample_grads is all zeros: the loss you differentiate does '
                                         'not depend on',
              'per_sample_grads_vmapped': 'failed: per_sample_grads is all zeros: the loss you differentiate does '
                                          'not depend on'}},
 {'id': 'masked_batch_mean as a Python loop over T',
  'says': 'masked_batch_mean loops in Python over the batch or the time steps.',
  'signature': {'masked_mean_vectorized': 'grows with size',
                'masked_mean_one_graph': 'forbidden source',
                'masked_mean_no_recompiles': 'failed: torch.compile compiled more than # graphs for x of shapes it '
                                             'recompiles'},
  'visible': {'masked_mean_vectorized': 'grows with size',
              'masked_mean_one_graph': 'forbidden source',
              'masked_mean_no_recompiles': 'failed: torch.compile compiled more than # graphs for x of shapes it '
                                           'recompiles'}},
 {'id': 'masked_batch_mean as a Python loop over B',
  'says': 'masked_batch_mean loops in Python over the batch or the time steps.',
  'signature': {'masked_mean_vectorized': 'grows with size',
                'masked_mean_one_graph': 'forbidden source',
                'masked_mean_no_recompiles': 'failed: torch.compile compiled more than # graphs for x of shapes it '
                                             'recompiles'},
  'visible': {'masked_mean_vectorized': 'grows with size',
              'masked_mean_one_graph': 'forbidden source',
              'masked_mean_no_recompiles': 'failed: torch.compile compiled more than # graphs for x of shapes it '
                                           'recompiles'}},
 {'id': 'masked_batch_mean calling .item() on lengths',
  'says': 'masked_batch_mean calls `.item()` on the lengths, which breaks the compiled graph.',
  'signature': {'masked_mean_one_graph': 'failed: torch._dynamo.explain finds # graph break on x of shape lengths '
                                         '= Unsupported',
                'masked_mean_no_recompiles': 'forbidden source'},
  'visible': {'masked_mean_one_graph': 'failed: torch._dynamo.explain finds # graph break on x of shape lengths = '
                                       'Unsupported',
              'masked_mean_no_recompiles': 'forbidden source'}},
 {'id': 'masked_batch_mean dividing 0 by 0 for empty rows',
  'says': 'masked_batch_mean divides by a length that can be 0, giving NaN for an empty row.',
  'signature': {'masked_mean_values': 'not finite: NaN', 'masked_mean_gradient': 'not finite: NaN'},
  'visible': {'masked_mean_values': 'not finite: NaN', 'masked_mean_gradient': 'not finite: NaN'}},
 {'id': 'masked_batch_mean averaging over all of T',
  'says': 'masked_batch_mean averages over every time step instead of the valid ones.',
  'signature': {'masked_mean_values': "failed: masked_batch_mean's result is the mean over all T steps padding "
                                      'included not',
                'masked_mean_gradient': 'wrong value',
                'masked_mean_vectorized': "failed: masked_batch_mean's result is the mean over all T steps padding "
                                          'included not',
                'masked_mean_one_graph': "failed: masked_batch_mean's result is the mean over all T steps padding "
                                         'included not',
                'masked_mean_no_recompiles': "failed: masked_batch_mean's result is the mean over all T steps "
                                             'padding included not'},
  'visible': {'masked_mean_values': "failed: masked_batch_mean's result is the mean over all T steps padding "
                                    'included not',
              'masked_mean_gradient': 'wrong value',
              'masked_mean_vectorized': "failed: masked_batch_mean's result is the mean over all T steps padding "
                                        'included not',
              'masked_mean_one_graph': "failed: masked_batch_mean's result is the mean over all T steps padding "
                                       'included not',
              'masked_mean_no_recompiles': "failed: masked_batch_mean's result is the mean over all T steps "
                                           'padding included not'}},
 {'id': 'masked_batch_mean off by one (<=)',
  'says': "masked_batch_mean's mask is off by one (it counts the step at the length too).",
  'signature': {'masked_mean_values': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                      'including',
                'masked_mean_gradient': 'wrong value',
                'masked_mean_vectorized': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                          'including',
                'masked_mean_one_graph': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                         'including',
                'masked_mean_no_recompiles': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                             'including'},
  'visible': {'masked_mean_values': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                    'including',
              'masked_mean_gradient': 'wrong value',
              'masked_mean_vectorized': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                        'including',
              'masked_mean_one_graph': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                       'including',
              'masked_mean_no_recompiles': "failed: masked_batch_mean's result is the sum of the steps up to and "
                                           'including'}},
 {'id': 'masked_batch_mean returning float64',
  'says': "masked_batch_mean returns float64 whatever the input's dtype.",
  'signature': {'masked_mean_values': 'wrong dtype: float64 for float32',
                'masked_mean_vectorized': 'wrong dtype: float64 for float32',
                'masked_mean_one_graph': 'wrong dtype: float64 for float32',
                'masked_mean_no_recompiles': 'wrong dtype: float64 for float32'},
  'visible': {'masked_mean_values': 'wrong dtype: float64 for float32',
              'masked_mean_vectorized': 'wrong dtype: float64 for float32',
              'masked_mean_one_graph': 'wrong dtype: float64 for float32',
              'masked_mean_no_recompiles': 'wrong dtype: float64 for float32'}},
 {'id': 'masked_batch_mean dividing by a float32 count',
  'says': 'masked_batch_mean divides by a float32 count, which turns a float16 or bfloat16 result into float32.',
  'signature': {'masked_mean_values': 'wrong dtype: float32 for float16'},
  'visible': {'masked_mean_values': 'wrong dtype: float32 for float16'}},
 {'id': "masked_batch_mean branching on lengths' values",
  'says': 'masked_batch_mean branches in Python on the values of `lengths`, which recompiles for new values.',
  'signature': {'masked_mean_one_graph': 'failed: torch.compile fails on x of shape lengths = Unsupported: '
                                         'Data-dependent branching',
                'masked_mean_no_recompiles': 'failed: torch.compile fails on x of shape lengths = Unsupported: '
                                             'Data-dependent branching'},
  'visible': {'masked_mean_one_graph': 'failed: torch.compile fails on x of shape lengths = Unsupported: '
                                       'Data-dependent branching',
              'masked_mean_no_recompiles': 'failed: torch.compile fails on x of shape lengths = Unsupported: '
                                           'Data-dependent branching'}},
 {'id': 'masked_batch_mean multiplying by the mask',
  'says': 'masked_batch_mean multiplies by the mask, so a NaN or an infinity in the padding still reaches the sum.',
  'signature': {'masked_mean_values': 'not finite: NaN'},
  'visible': {'masked_mean_values': 'not finite: NaN'}},
 {'id': 'masked_batch_mean zeroing the padding in place',
  'says': 'masked_batch_mean zeroes the padding in place in its input.',
  'signature': {'masked_mean_values': 'changed its input',
                'masked_mean_gradient': 'raised: RuntimeError',
                'masked_mean_vectorized': 'changed its input',
                'masked_mean_one_graph': 'changed its input',
                'masked_mean_no_recompiles': 'changed its input'},
  'visible': {'masked_mean_values': 'changed its input',
              'masked_mean_gradient': 'raised: RuntimeError',
              'masked_mean_vectorized': 'changed its input',
              'masked_mean_one_graph': 'changed its input',
              'masked_mean_no_recompiles': 'changed its input'}},
 {'id': 'masked_batch_mean through NumPy',
  'says': 'masked_batch_mean goes through NumPy, so no gradient flows back.',
  'signature': {'masked_mean_values': 'raised: TypeError',
                'masked_mean_gradient': 'no gradient',
                'masked_mean_one_graph': 'forbidden source',
                'masked_mean_no_recompiles': 'forbidden source'},
  'visible': {'masked_mean_values': 'raised: TypeError',
              'masked_mean_gradient': 'no gradient',
              'masked_mean_one_graph': 'forbidden source',
              'masked_mean_no_recompiles': 'forbidden source'}})
