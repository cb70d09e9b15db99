"""The known mistakes of the basics exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write basics`` from ``tests/mutants/basics.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "bcff701d3dd153db"

MISTAKES = ({'id': 'grad_of leaving requires_grad set on x',
  'says': "grad_of leaves `requires_grad` switched on for the caller's tensor.",
  'signature': {'grad_of_values': 'failed: after grad_of x has requires_grad=True it was False before the call'},
  'visible': {'grad_of_values': 'failed: after grad_of x has requires_grad=True it was False before the call'}},
 {'id': 'grad_of with .backward() on x',
  'says': "grad_of calls `.backward()` and reads `x.grad`, which accumulates into the caller's tensor.",
  'signature': {'grad_of_values': 'failed: after grad_of x has a .grad it had none before the call'},
  'visible': {'grad_of_values': 'failed: after grad_of x has a .grad it had none before the call'}},
 {'id': 'grad_of with create_graph=True',
  'says': 'grad_of keeps the graph of the gradient (`create_graph=True`), so the result still requires grad.',
  'signature': {'grad_of_values': "failed: grad_of's result is still attached to an autograd graph"},
  'visible': {'grad_of_values': "failed: grad_of's result is still attached to an autograd graph"}},
 {'id': "grad_of returning autograd.grad's tuple",
  'says': 'grad_of returns the tuple that `torch.autograd.grad` gives instead of the gradient tensor in it.',
  'signature': {'grad_of_values': 'wrong type'},
  'visible': {'grad_of_values': 'wrong type'}},
 {'id': 'grad_of by finite differences',
  'says': 'grad_of estimates the gradient by finite differences instead of autograd.',
  'signature': {'grad_of_values': "failed: grad_of's result is close to the gradient but not exact as an"},
  'visible': {'grad_of_values': "failed: grad_of's result is close to the gradient but not exact as an"}},
 {'id': 'to_numpy without detach',
  'says': 'to_numpy converts a tensor that requires grad without detaching it first.',
  'signature': {'to_numpy_requires_grad': 'raised: RuntimeError', 'to_numpy_views': 'raised: RuntimeError'},
  'visible': {'to_numpy_requires_grad': 'raised: RuntimeError', 'to_numpy_views': 'raised: RuntimeError'}},
 {'id': 'to_numpy clearing requires_grad of its argument',
  'says': "to_numpy switches off `requires_grad` on the caller's tensor.",
  'signature': {'to_numpy_requires_grad': 'failed: to_numpy switched off requires_grad of its argument',
                'to_numpy_views': 'raised: RuntimeError'},
  'visible': {'to_numpy_requires_grad': 'failed: to_numpy switched off requires_grad of its argument',
              'to_numpy_views': 'raised: RuntimeError'}},
 {'id': 'to_numpy through tolist',
  'says': 'to_numpy goes through `tolist()`, which loses the dtype.',
  'signature': {'to_numpy_values': 'failed: to_numpy has dtype float# expected float#',
                'to_numpy_requires_grad': 'failed: to_numpy has dtype float# expected float#',
                'to_numpy_views': 'failed: to_numpy has dtype float# expected float#'},
  'visible': {'to_numpy_values': 'failed: to_numpy has dtype float# expected float#',
              'to_numpy_requires_grad': 'failed: to_numpy has dtype float# expected float#',
              'to_numpy_views': 'failed: to_numpy has dtype float# expected float#'}},
 {'id': 'to_numpy always float32',
  'says': "to_numpy converts to float32 whatever the tensor's dtype.",
  'signature': {'to_numpy_values': 'failed: to_numpy has dtype float# expected float#',
                'to_numpy_requires_grad': 'failed: to_numpy has dtype float# expected float#',
                'to_numpy_views': 'failed: to_numpy has dtype float# expected int#'},
  'visible': {'to_numpy_values': 'failed: to_numpy has dtype float# expected float#',
              'to_numpy_requires_grad': 'failed: to_numpy has dtype float# expected float#',
              'to_numpy_views': 'failed: to_numpy has dtype float# expected int#'}},
 {'id': 'to_numpy through a flat view',
  'says': 'to_numpy flattens the tensor, so the array has the wrong shape or is not a view.',
  'signature': {'to_numpy_views': 'raised: RuntimeError'},
  'visible': {'to_numpy_views': 'raised: RuntimeError'}},
 {'id': 'fit_quadratic with SGD',
  'says': 'fit_quadratic trains with plain SGD instead of the optimizer the lesson uses, and does not reach the '
          'fit in the given steps.',
  'signature': {'fit_quadratic': 'not finite: NaN'},
  'visible': {'fit_quadratic': 'not finite: NaN'}},
 {'id': 'fit_quadratic on one sample',
  'says': 'fit_quadratic does not draw one fresh sample from generate_data() per step.',
  'signature': {'fit_quadratic_fresh_samples': 'failed: fit_quadratic called generate_data # times expected one '
                                               'call per step'},
  'visible': {'fit_quadratic_fresh_samples': 'failed: fit_quadratic called generate_data # times expected one call '
                                             'per step'}},
 {'id': "fit_quadratic returning the tutorial's [3, 1] weights",
  'says': "fit_quadratic returns the weights with the tutorial's [3, 1] shape instead of the shape the exercise "
          'asks for.',
  'signature': {'fit_quadratic': 'wrong shape', 'fit_quadratic_fresh_samples': 'wrong shape'},
  'visible': {'fit_quadratic': 'wrong shape', 'fit_quadratic_fresh_samples': 'wrong shape'}},
 {'id': 'fit_quadratic with features in the order 1, x, x^2',
  'says': 'fit_quadratic orders the features 1, x, x^2, so the coefficients come back reversed.',
  'signature': {'fit_quadratic': "failed: fit_quadratic's result is the coefficients in the order # x x^# not"},
  'visible': {'fit_quadratic': "failed: fit_quadratic's result is the coefficients in the order # x x^# not"}},
 {'id': 'fit_quadratic always running 1000 steps',
  'says': 'fit_quadratic does not draw one fresh sample from generate_data() per step.',
  'signature': {'fit_quadratic_fresh_samples': 'failed: fit_quadratic called generate_data # times expected one '
                                               'call per step'},
  'visible': {'fit_quadratic_fresh_samples': 'failed: fit_quadratic called generate_data # times expected one call '
                                             'per step'}},
 {'id': 'fit_quadratic ignoring lr',
  'says': 'fit_quadratic ignores the learning rate it is given.',
  'signature': {'fit_quadratic': 'failed: fit_quadratic ignores lr: # steps with lr=# and with lr=# on the'},
  'visible': {'fit_quadratic': 'failed: fit_quadratic ignores lr: # steps with lr=# and with lr=# on the'}})
