"""The known mistakes of the operators exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write operators`` from ``tests/mutants/operators.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "20e7a4fb2a1089b2"

MISTAKES = ({'id': 'row_sum as a slicing loop',
  'says': 'row_sum adds the rows one at a time in a Python loop.',
  'signature': {'row_sum': 'raised: IndexError',
                'row_sum_vectorized': 'grows with size',
                'row_sum_speed': 'too slow'},
  'visible': {'row_sum': 'raised: IndexError',
              'row_sum_vectorized': 'grows with size',
              'row_sum_speed': 'too slow'}},
 {'id': 'row_sum as an unbind loop',
  'says': 'row_sum adds the rows one at a time in a Python loop.',
  'signature': {'row_sum': 'raised: IndexError',
                'row_sum_vectorized': 'grows with size',
                'row_sum_speed': 'too slow'},
  'visible': {'row_sum': 'raised: IndexError',
              'row_sum_vectorized': 'grows with size',
              'row_sum_speed': 'too slow'}},
 {'id': "row_sum with Python's sum",
  'says': "row_sum uses Python's built-in `sum`, which loops over the rows in Python.",
  'signature': {'row_sum': 'wrong type', 'row_sum_vectorized': 'grows with size', 'row_sum_speed': 'too slow'},
  'visible': {'row_sum': 'wrong type', 'row_sum_vectorized': 'grows with size', 'row_sum_speed': 'too slow'}},
 {'id': 'row_sum over the last dim',
  'says': 'row_sum reduces over the last dimension instead of the first one (the rows).',
  'signature': {'row_sum': 'known: a sum over the last dimension',
                'row_sum_vectorized': 'known: a sum over the last dimension',
                'row_sum_speed': 'known: a sum over the last dimension'},
  'visible': {'row_sum': 'known: a sum over the last dimension',
              'row_sum_vectorized': 'known: a sum over the last dimension',
              'row_sum_speed': 'known: a sum over the last dimension'}},
 {'id': 'row_sum for matrices only',
  'says': 'row_sum flattens the trailing dimensions, so it is right for 2-D input only.',
  'signature': {'row_sum': 'raised: RuntimeError'},
  'visible': {'row_sum': 'raised: RuntimeError'}},
 {'id': 'row_sum always in float32',
  'says': "row_sum converts its input to float32 whatever the input's dtype.",
  'signature': {'row_sum': 'wrong dtype: float32 for int64'},
  'visible': {'row_sum': 'wrong dtype: float32 for int64'}},
 {'id': 'row_sum keeping the dim',
  'says': 'row_sum keeps the reduced dimension, so the result has an extra dimension of size 1.',
  'signature': {'row_sum': 'known: a sum over dimension # that keeps it (keepdim=True)',
                'row_sum_vectorized': 'known: a sum over dimension # that keeps it (keepdim=True)',
                'row_sum_speed': 'known: a sum over dimension # that keeps it (keepdim=True)'},
  'visible': {'row_sum': 'known: a sum over dimension # that keeps it (keepdim=True)',
              'row_sum_vectorized': 'known: a sum over dimension # that keeps it (keepdim=True)',
              'row_sum_speed': 'known: a sum over dimension # that keeps it (keepdim=True)'}},
 {'id': 'row_sum through NumPy',
  'says': "row_sum goes through NumPy, which loses the input's dtype rules, device and graph.",
  'signature': {'row_sum': 'raised: TypeError'},
  'visible': {'row_sum': 'raised: TypeError'}},
 {'id': 'row_sum skipping NaN',
  'says': 'row_sum skips NaN (as `nansum` does), but a column holding NaN sums to NaN.',
  'signature': {'row_sum': 'failed at checks.operators._expect_row_sum:1'},
  'visible': {'row_sum': 'failed at checks.operators._expect_row_sum:1'}},
 {'id': 'masked_mean excluding the bounds',
  'says': 'masked_mean leaves out the values equal to `low` or `high`: the bounds belong to the range.',
  'signature': {'masked_mean': 'known: the mean without the values that sit exactly on a bound (the bounds are '
                               'included)',
                'masked_mean_special_values': 'known: the mean without the values that sit exactly on a bound (the '
                                              'bounds are included)'},
  'visible': {'masked_mean': 'known: the mean without the values that sit exactly on a bound (the bounds are '
                             'included)',
              'masked_mean_special_values': 'known: the mean without the values that sit exactly on a bound (the '
                                            'bounds are included)'}},
 {'id': 'masked_mean clipping infinite bounds',
  'says': 'masked_mean clips an infinite bound to the largest finite value, so x = inf falls outside `high = inf` '
          '(and -inf outside `low = -inf`).',
  'signature': {'masked_mean_special_values': 'wrong value'},
  'visible': {'masked_mean_special_values': 'wrong value'}},
 {'id': 'masked_mean multiplying by the mask',
  'says': 'masked_mean multiplies by the mask, so a NaN or an infinity outside the range still reaches the sum (0 '
          '* inf is NaN).',
  'signature': {'masked_mean_special_values': 'known: NaN where x times the #/# mask keeps a NaN or an infinity '
                                              'from outside the range (# * inf is NaN)'},
  'visible': {'masked_mean_special_values': 'known: NaN where x times the #/# mask keeps a NaN or an infinity from '
                                            'outside the range (# * inf is NaN)'}},
 {'id': 'masked_mean counting NaN',
  'says': 'masked_mean counts NaN as inside the range ("not below and not above" is true for NaN).',
  'signature': {'masked_mean_special_values': 'known: NaN where a NaN of x was counted as in range: NaN is neither '
                                              'below nor above a bound, and in no range'},
  'visible': {'masked_mean_special_values': 'known: NaN where a NaN of x was counted as in range: NaN is neither '
                                            'below nor above a bound, and in no range'}},
 {'id': 'masked_mean dividing 0 by 0',
  'says': 'masked_mean divides by a count that can be 0, giving NaN for a column with no value in the range.',
  'signature': {'masked_mean': 'known: NaN where nothing is in range: # / # (a position with no entry in range '
                               'gives #)',
                'masked_mean_special_values': 'not finite: NaN'},
  'visible': {'masked_mean': 'known: NaN where nothing is in range: # / # (a position with no entry in range gives '
                             '#)',
              'masked_mean_special_values': 'not finite: NaN'}},
 {'id': "masked_mean with Python's and",
  'says': "masked_mean combines the two comparisons with Python's `and` (a chained comparison `low <= x <= high` "
          'is one too), which does not work element by element on tensors.',
  'signature': {'masked_mean': 'raised: RuntimeError', 'masked_mean_special_values': 'raised: RuntimeError'},
  'visible': {'masked_mean': 'raised: RuntimeError', 'masked_mean_special_values': 'raised: RuntimeError'}},
 {'id': 'masked_mean with a chained comparison',
  'says': "masked_mean combines the two comparisons with Python's `and` (a chained comparison `low <= x <= high` "
          'is one too), which does not work element by element on tensors.',
  'signature': {'masked_mean': 'raised: RuntimeError', 'masked_mean_special_values': 'raised: RuntimeError'},
  'visible': {'masked_mean': 'raised: RuntimeError', 'masked_mean_special_values': 'raised: RuntimeError'}},
 {'id': 'masked_mean dividing by N',
  'says': 'masked_mean divides by the number of rows instead of the number of values in the range.',
  'signature': {'masked_mean': 'known: the sum of the entries in range divided by N, the number of rows, not by '
                               'how many are in range',
                'masked_mean_special_values': 'known: the sum of the entries in range divided by N, the number of '
                                              'rows, not by how many are in range'},
  'visible': {'masked_mean': 'known: the sum of the entries in range divided by N, the number of rows, not by how '
                             'many are in range',
              'masked_mean_special_values': 'known: the sum of the entries in range divided by N, the number of '
                                            'rows, not by how many are in range'}},
 {'id': 'masked_mean in float64',
  'says': "masked_mean computes and returns float64 whatever the input's dtype.",
  'signature': {'masked_mean': 'wrong dtype: float64 for float16',
                'masked_mean_special_values': 'wrong dtype: float64 for float16'},
  'visible': {'masked_mean': 'wrong dtype: float64 for float16',
              'masked_mean_special_values': 'wrong dtype: float64 for float16'}})
