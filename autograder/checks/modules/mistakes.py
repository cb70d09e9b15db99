"""The known mistakes of the modules exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write modules`` from ``tests/mutants/modules.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "a6af2a03b8bbfb40"

MISTAKES = ({'id': 'Affine with plain tensors',
  'says': 'Affine keeps its weights as plain tensors, not `nn.Parameter`s, so the module does not register them.',
  'signature': {'affine_parameters': 'failed: Affine .named_parameters gives expected exactly',
                'affine_round_trips': 'failed: Affine .state_dict has keys expected so a checkpoint would not save '
                                      'the'},
  'visible': {'affine_parameters': 'failed: Affine .named_parameters gives expected exactly',
              'affine_round_trips': 'failed: Affine .state_dict has keys expected so a checkpoint would not save '
                                    'the'}},
 {'id': 'Affine keeping its parameters in a list',
  'says': 'Affine keeps its parameters in a Python list, which the module does not register.',
  'signature': {'affine_parameters': 'failed: Affine .named_parameters gives expected exactly',
                'affine_forward': 'failed: Affine .a is None expected a torch.nn.Parameter of shape',
                'affine_gradients': 'failed: Affine .a is None expected a torch.nn.Parameter of shape',
                'affine_round_trips': 'failed: Affine .a is None expected a torch.nn.Parameter of shape'},
  'visible': {'affine_parameters': 'failed: Affine .named_parameters gives expected exactly',
              'affine_forward': 'failed: Affine .a is None expected a torch.nn.Parameter of shape',
              'affine_gradients': 'failed: Affine .a is None expected a torch.nn.Parameter of shape',
              'affine_round_trips': 'failed: Affine .a is None expected a torch.nn.Parameter of shape'}},
 {'id': 'Affine with scalar parameters',
  'says': "Affine's parameters are scalars instead of having the shape the exercise gives.",
  'signature': {'affine_parameters': 'failed: parameter a has shape expected',
                'affine_forward': 'failed: Affine .a has shape expected',
                'affine_gradients': 'failed: Affine .a has shape expected',
                'affine_round_trips': 'failed: Affine .a has shape expected'},
  'visible': {'affine_parameters': 'failed: parameter a has shape expected',
              'affine_forward': 'failed: Affine .a has shape expected',
              'affine_gradients': 'failed: Affine .a has shape expected',
              'affine_round_trips': 'failed: Affine .a has shape expected'}},
 {'id': 'Affine with buffers',
  'says': 'Affine registers its weights as buffers, which get no gradient.',
  'signature': {'affine_parameters': 'failed: Affine .named_parameters gives expected exactly',
                'affine_gradients': 'failed: backward through Affine failed: element # of tensors does not require '
                                    'grad'},
  'visible': {'affine_parameters': 'failed: Affine .named_parameters gives expected exactly',
              'affine_gradients': 'failed: backward through Affine failed: element # of tensors does not require '
                                  'grad'}},
 {'id': 'Affine calling .item() in forward',
  'says': 'Affine calls `.item()` in forward, which cuts the graph.',
  'signature': {'affine_gradients': 'failed: backward through Affine failed: element # of tensors does not require '
                                    'grad'},
  'visible': {'affine_gradients': 'failed: backward through Affine failed: element # of tensors does not require '
                                  'grad'}},
 {'id': 'Affine computing b * x + a',
  'says': 'Affine swaps the roles of its two parameters.',
  'signature': {'affine_parameters': 'wrong value',
                'affine_forward': 'wrong value',
                'affine_gradients': 'wrong value',
                'affine_round_trips': 'wrong value'},
  'visible': {'affine_parameters': 'wrong value',
              'affine_forward': 'wrong value',
              'affine_gradients': 'wrong value',
              'affine_round_trips': 'wrong value'}},
 {'id': 'Affine with float64 parameters',
  'says': 'Affine creates float64 parameters.',
  'signature': {'affine_parameters': 'failed: parameter a has dtype torch.float# expected the default torch.float#',
                'affine_forward': 'wrong dtype'},
  'visible': {'affine_parameters': 'failed: parameter a has dtype torch.float# expected the default torch.float#',
              'affine_forward': 'wrong dtype'}},
 {'id': 'make_mlp with an activation after the last layer',
  'says': 'make_mlp puts an activation after the last layer too.',
  'signature': {'make_mlp_structure': 'failed: make_mlp has layers expected There must be no activation after the '
                                      'last',
                'make_mlp_forward': 'wrong value'},
  'visible': {'make_mlp_structure': 'failed: make_mlp has layers expected There must be no activation after the '
                                    'last',
              'make_mlp_forward': 'wrong value'}},
 {'id': 'make_mlp ignoring activation',
  'says': 'make_mlp ignores the `activation` it is given.',
  'signature': {'make_mlp_structure': 'failed: make_mlp has layers expected', 'make_mlp_forward': 'wrong value'},
  'visible': {'make_mlp_structure': 'failed: make_mlp has layers expected', 'make_mlp_forward': 'wrong value'}},
 {'id': 'make_mlp with the activation class instead of an instance',
  'says': 'make_mlp puts the activation class in the Sequential instead of an instance of it.',
  'signature': {'make_mlp_structure': 'raised: TypeError', 'make_mlp_forward': 'raised: TypeError'},
  'visible': {'make_mlp_structure': 'raised: TypeError', 'make_mlp_forward': 'raised: TypeError'}},
 {'id': 'make_mlp accepting fewer than two sizes',
  'says': 'make_mlp accepts fewer than two sizes instead of raising ValueError.',
  'signature': {'make_mlp_rejects_short_sizes': 'did not raise'},
  'visible': {'make_mlp_rejects_short_sizes': 'did not raise'}},
 {'id': 'make_mlp asserting instead of raising ValueError',
  'says': 'make_mlp checks the sizes with `assert` instead of raising ValueError.',
  'signature': {'make_mlp_rejects_short_sizes': 'raised: AssertionError'},
  'visible': {'make_mlp_rejects_short_sizes': 'raised: AssertionError'}},
 {'id': 'make_mlp without biases',
  'says': 'make_mlp builds its Linear layers without biases.',
  'signature': {'make_mlp_structure': 'failed: make_mlp has layers expected'},
  'visible': {'make_mlp_structure': 'failed: make_mlp has layers expected'}},
 {'id': 'make_mlp reusing one Linear for layers of equal size',
  'says': 'make_mlp reuses one Linear object for layers of equal size, so they share their weights.',
  'signature': {'make_mlp_structure': 'failed: make_mlp puts the same Linear module at positions # and # the'},
  'visible': {'make_mlp_structure': 'failed: make_mlp puts the same Linear module at positions # and # the'}},
 {'id': 'make_mlp tying the weights of layers of equal size',
  'says': 'make_mlp ties the weights of layers of equal size.',
  'signature': {'make_mlp_structure': 'failed: make_mlp has # distinct parameter values expected # Some of them '
                                      'are'},
  'visible': {'make_mlp_structure': 'failed: make_mlp has # distinct parameter values expected # Some of them '
                                    'are'}},
 {'id': 'fit without zero_grad',
  'says': 'fit never clears the gradients, so they add up across steps.',
  'signature': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is what SGD gives when the',
                'fit_recovers_line': 'wrong value'},
  'visible': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is what SGD gives when the',
              'fit_recovers_line': 'wrong value'}},
 {'id': 'fit on the sum of squares',
  'says': 'fit minimises the sum of squared errors instead of their mean.',
  'signature': {'fit_matches_sgd': 'wrong value', 'fit_recovers_line': 'not finite: NaN'},
  'visible': {'fit_matches_sgd': 'wrong value', 'fit_recovers_line': 'not finite: NaN'}},
 {'id': 'fit with momentum',
  'says': 'fit uses SGD with momentum instead of plain SGD.',
  'signature': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is what SGD with momentum gives'},
  'visible': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is what SGD with momentum gives'}},
 {'id': 'fit with a squeezed prediction',
  'says': 'fit squeezes the prediction, so [N] against [N, 1] broadcasts to [N, N] in the loss.',
  'signature': {'fit_matches_sgd': 'wrong value', 'fit_recovers_line': 'wrong value'},
  'visible': {'fit_matches_sgd': 'wrong value', 'fit_recovers_line': 'wrong value'}},
 {'id': 'fit returning the first loss',
  'says': 'fit returns the loss of the first step instead of the last.',
  'signature': {'fit_matches_sgd': 'failed: fit on Linear returned # expected the final loss #: the loss'},
  'visible': {'fit_matches_sgd': 'failed: fit on Linear returned # expected the final loss #: the loss'}},
 {'id': 'fit returning a tensor',
  'says': 'fit returns the loss as a tensor instead of a Python float.',
  'signature': {'fit_matches_sgd': 'wrong type'},
  'visible': {'fit_matches_sgd': 'wrong type'}},
 {'id': 'fit returning the loss after training',
  'says': 'fit returns a new loss computed after the last update instead of the loss of the last step.',
  'signature': {'fit_matches_sgd': 'failed: fit on Linear returned # the loss after training expected the loss'},
  'visible': {'fit_matches_sgd': 'failed: fit on Linear returned # the loss after training expected the loss'}},
 {'id': 'fit stepping before backward',
  'says': 'fit steps the optimizer before calling backward.',
  'signature': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is the value it had before',
                'fit_recovers_line': 'wrong value'},
  'visible': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is the value it had before',
              'fit_recovers_line': 'wrong value'}},
 {'id': 'fit training a copy',
  'says': 'fit trains a copy of the model, so the model it is given does not change.',
  'signature': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is the value it had before',
                'fit_recovers_line': 'wrong value'},
  'visible': {'fit_matches_sgd': 'failed: parameter weight after fit on Linear is the value it had before',
              'fit_recovers_line': 'wrong value'}},
 {'id': 'fit ignoring lr',
  'says': 'fit ignores the learning rate it is given.',
  'signature': {'fit_matches_sgd': 'wrong value', 'fit_recovers_line': 'wrong value'},
  'visible': {'fit_matches_sgd': 'wrong value', 'fit_recovers_line': 'wrong value'}},
 {'id': 'Normalizer with running statistics as plain tensor attributes',
  'says': 'Normalizer does not register its running statistics as buffers saved in the state_dict.',
  'signature': {'normalizer_buffers': 'failed: Normalizer .running_mean is a plain tensor attribute not a '
                                      'registered buffer: state_dict'},
  'visible': {'normalizer_buffers': 'failed: Normalizer .running_mean is a plain tensor attribute not a registered '
                                    'buffer: state_dict'}},
 {'id': 'Normalizer with running statistics as nn.Parameter',
  'says': 'Normalizer does not register its running statistics as buffers saved in the state_dict.',
  'signature': {'normalizer_buffers': 'failed: Normalizer .running_mean is an nn.Parameter: parameters hands it to '
                                      'the optimizer which'},
  'visible': {'normalizer_buffers': 'failed: Normalizer .running_mean is an nn.Parameter: parameters hands it to '
                                    'the optimizer which'}},
 {'id': 'Normalizer with non-persistent buffers',
  'says': 'Normalizer does not register its running statistics as buffers saved in the state_dict.',
  'signature': {'normalizer_buffers': 'failed: Normalizer .state_dict has keys without running_mean running_var: a '
                                      'checkpoint would lose the'},
  'visible': {'normalizer_buffers': 'failed: Normalizer .state_dict has keys without running_mean running_var: a '
                                    'checkpoint would lose the'}},
 {'id': 'Normalizer updating running_var with the biased variance',
  'says': 'Normalizer updates `running_var` with the biased variance instead of the unbiased one.',
  'signature': {'normalizer_train': 'failed: running_var after train step # of Normalizer differs from the '
                                    'reference'},
  'visible': {'normalizer_train': 'failed: running_var after train step # of Normalizer differs from the '
                                  'reference'}},
 {'id': 'Normalizer normalising with the unbiased variance',
  'says': 'Normalizer normalises the batch with the unbiased variance instead of the biased one.',
  'signature': {'normalizer_train': 'failed: the train-mode output of Normalizer at step # differs from the '
                                    'reference',
                'normalizer_gradients': 'failed: Normalizer .double in train mode on x = tensor of shape '
                                        'torch.float#'},
  'visible': {'normalizer_train': 'failed: the train-mode output of Normalizer at step # differs from the '
                                  'reference',
              'normalizer_gradients': 'failed: Normalizer .double in train mode on x = tensor of shape '
                                      'torch.float#'}},
 {'id': 'Normalizer updating running statistics in eval mode',
  'says': 'Normalizer updates its running statistics in eval mode too.',
  'signature': {'normalizer_eval': 'failed: Normalizer in eval mode changed running_mean from tensor of shape '
                                   'torch.float# on'},
  'visible': {'normalizer_eval': 'failed: Normalizer in eval mode changed running_mean from tensor of shape '
                                 'torch.float# on'}},
 {'id': 'Normalizer using batch statistics in eval mode',
  'says': "Normalizer uses the batch's statistics in eval mode instead of the running ones.",
  'signature': {'normalizer_buffers': 'wrong value',
                'normalizer_eval': 'failed: the eval-mode output of Normalizer differs from the reference'},
  'visible': {'normalizer_buffers': 'wrong value',
              'normalizer_eval': 'failed: the eval-mode output of Normalizer differs from the reference'}},
 {'id': 'Normalizer applying momentum the other way round',
  'says': 'Normalizer applies the momentum the other way round in the running average.',
  'signature': {'normalizer_train': 'failed: running_mean after train step # of Normalizer differs from the '
                                    'reference'},
  'visible': {'normalizer_train': 'failed: running_mean after train step # of Normalizer differs from the '
                                  'reference'}},
 {'id': 'Normalizer updating running statistics with gradient history',
  'says': 'Normalizer updates its running statistics from tensors that carry gradient history.',
  'signature': {'normalizer_gradients': 'failed: after train-mode calls on an x that requires grad Normalizer '
                                        '.running_mean carries'},
  'visible': {'normalizer_gradients': 'failed: after train-mode calls on an x that requires grad Normalizer '
                                      '.running_mean carries'}},
 {'id': 'Normalizer adding eps outside the square root',
  'says': 'Normalizer adds eps outside the square root instead of inside it.',
  'signature': {'normalizer_buffers': 'wrong value',
                'normalizer_train': 'failed: the train-mode output of Normalizer at step # differs from the '
                                    'reference',
                'normalizer_eval': 'failed: the eval-mode output of Normalizer differs from the reference',
                'normalizer_gradients': 'failed: Normalizer .double in train mode on x = tensor of shape '
                                        'torch.float#'},
  'visible': {'normalizer_buffers': 'wrong value',
              'normalizer_train': 'failed: the train-mode output of Normalizer at step # differs from the '
                                  'reference',
              'normalizer_eval': 'failed: the eval-mode output of Normalizer differs from the reference',
              'normalizer_gradients': 'failed: Normalizer .double in train mode on x = tensor of shape '
                                      'torch.float#'}},
 {'id': 'Normalizer normalising over the features of each row',
  'says': 'Normalizer normalises over the features of each row instead of over the batch.',
  'signature': {'normalizer_train': 'failed: the train-mode output of Normalizer at step # differs from the '
                                    'reference',
                'normalizer_gradients': 'failed: Normalizer .double in train mode on x = tensor of shape '
                                        'torch.float#'},
  'visible': {'normalizer_train': 'failed: the train-mode output of Normalizer at step # differs from the '
                                  'reference',
              'normalizer_gradients': 'failed: Normalizer .double in train mode on x = tensor of shape '
                                      'torch.float#'}},
 {'id': 'Normalizer calling F.batch_norm',
  'says': 'Normalizer calls a built-in batch norm.',
  'signature': {'normalizer_no_builtin': 'forbidden op'},
  'visible': {'normalizer_no_builtin': 'forbidden op'}},
 {'id': 'Normalizer wrapping nn.BatchNorm1d',
  'says': 'Normalizer wraps a built-in BatchNorm1d.',
  'signature': {'normalizer_buffers': 'failed: Normalizer has no buffer named running_mean named_buffers gives',
                'normalizer_no_builtin': 'failed: Normalizer contains a built-in batch norm which this exercise '
                                         'forbids'},
  'visible': {'normalizer_buffers': 'failed: Normalizer has no buffer named running_mean named_buffers gives',
              'normalizer_no_builtin': 'failed: Normalizer contains a built-in batch norm which this exercise '
                                       'forbids'}})
