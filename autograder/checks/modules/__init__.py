"""Checks for the ``modules`` assignment: the ``Affine`` module, ``make_mlp``, the training loop ``fit`` and the
``Normalizer`` (buffers and train / eval modes).

Modules are graded through what PyTorch sees of them (``named_parameters``,
``state_dict``, ``.to``, autograd), because that is what an optimizer, a
checkpoint and a device move rely on. ``fit`` is compared step for step with
``torch.optim.SGD`` on a copy of the same model, in float64; ``Normalizer`` with
``torch.nn.BatchNorm1d(affine=False)`` in float64 (``batchnorm_oracle``).

Each exercise's checks live in a module named after it (``affine``, ``make_mlp``, ``fit``, ``normalizer``); this
package imports them in the notebook's order, which is the order of the topic's items (``autograder.spec``: a
topic's items are its checks in the order they are declared), and exports them under the names the notebooks import.
"""

# isort: off
# the notebook's order, which is the items' order: not the alphabet's
from autograder.checks.modules.affine import (check_affine_forward, check_affine_gradients, check_affine_parameters,
                                              check_affine_round_trips)
from autograder.checks.modules.make_mlp import (check_make_mlp_forward, check_make_mlp_rejects_short_sizes,
                                                check_make_mlp_structure)
from autograder.checks.modules.fit import check_fit_matches_sgd, check_fit_recovers_line
from autograder.checks.modules.normalizer import (check_normalizer_buffers, check_normalizer_eval,
                                                  check_normalizer_gradients, check_normalizer_no_builtin,
                                                  check_normalizer_train)
# isort: on

__all__ = ["check_affine_parameters", "check_affine_forward", "check_affine_gradients", "check_affine_round_trips",
           "check_make_mlp_structure", "check_make_mlp_forward", "check_make_mlp_rejects_short_sizes",
           "check_fit_matches_sgd", "check_fit_recovers_line",
           "check_normalizer_buffers", "check_normalizer_train", "check_normalizer_eval", "check_normalizer_gradients",
           "check_normalizer_no_builtin"]
