"""The contracts of the modules exercises, clause by clause (``autograder.contracts``): the build writes them into
the notebook's bullet lists and docs/modules.md's table; ``tests/checks/test_contracts.py`` proves that each clause's
items send its inputs."""

from autograder.contracts import Clause, Contract, tensor_labels

CONTRACTS = (
    Contract("affine", (
        Clause("`a` and `b` are parameters of shape `[1]` registered under the names `a` and `b` (initialise them as "
               "you like, for example with `torch.randn(1)`): `named_parameters()` gives exactly `a` and `b`;",
               items=("affine_parameters",), inputs=("fresh_module", "drawn_parameters")),
        Clause("`forward(x)` returns `a * x + b` for a tensor `x` of any shape, with the shape and dtype of `x`;",
               items=("affine_forward",), inputs=("rank_1", "rank_2", "rank_3", "one_element", "float32")),
        Clause("gradients reach both `a` and `b`;",
               items=("affine_gradients",), inputs=("rank_1", "rank_2", "rank_3", "random_upstream")),
        Clause("`state_dict()` saves and reloads them, and `.to(torch.float64)` converts them.",
               items=("affine_round_trips",), inputs=("saved_and_loaded", "to_float64")),
    )),
    Contract("make_mlp", (
        Clause("return a `torch.nn.Sequential` with a `torch.nn.Linear(sizes[i], sizes[i + 1])` for each consecutive "
               "pair of sizes, a new `activation()` between two consecutive Linear layers, and nothing after the last "
               "one;",
               items=("make_mlp_structure", "make_mlp_forward"),
               inputs=("two_sizes", "three_or_more_sizes", "batch_rank_1", "batch_rank_2")),
        Clause("`activation` is a module **class** (`torch.nn.ReLU`, the default, `torch.nn.Tanh`, ...);",
               items=("make_mlp_structure", "make_mlp_forward"), inputs=("default_activation", "given_activation")),
        Clause("every Linear is a new module with its own weights, also when two pairs have the same sizes "
               "(`make_mlp([5, 5, 5])` has two `Linear(5, 5)`): reusing one `Linear` object ties their weights, so "
               "the model has fewer parameters than its sizes ask for and each update moves both layers;",
               items=("make_mlp_structure",), inputs=("equal_consecutive_sizes",)),
        Clause("raise `ValueError` when `sizes` has fewer than two entries;",
               items=("make_mlp_rejects_short_sizes",), inputs=("no_size", "one_size")),
        Clause("`sizes` may be a list or a tuple.",
               items=("make_mlp_structure", "make_mlp_rejects_short_sizes"), inputs=("list_sizes", "tuple_sizes")),
    )),
    Contract("fit", (
        Clause("train `model` **in place** (the model you are given, not a copy) for `steps` full-batch steps of "
               "`torch.optim.SGD(model.parameters(), lr=lr)` (no momentum) on the mean squared error between "
               "`model(x)` and `y`;",
               items=("fit_matches_sgd", "fit_recovers_line"),
               inputs=("line_model", "mlp_model", "drawn_steps_and_lr", "float64", "float32")),
        Clause("return the final loss as a Python float (`loss.item()` of the last step);",
               items=("fit_matches_sgd",), inputs=("line_model", "mlp_model")),
        Clause("on noisy samples of `5x + 3`, `fit(model, x, y, steps=300, lr=0.1)` on a `torch.nn.Linear(1, 1)` "
               "recovers the slope 5 and the intercept 3.",
               items=("fit_recovers_line",), inputs=("noisy_line",)),
    )),
    Contract("normalizer", (
        Clause("In `__init__`, register the buffers `running_mean` (zeros) and `running_var` (ones), of shape "
               "`[num_features]`: saved by `state_dict()`, converted by `.to(torch.float64)` and `.double()`, not "
               "parameters.",
               items=("normalizer_buffers",),
               inputs=("default_config", "drawn_config", "state_dict_round_trip", "converted")),
        Clause("In `train()` mode, normalise each feature with the batch's own mean and biased variance, `(x - mean) "
               "/ sqrt(var + eps)`, and update `running_mean` and `running_var` as `(1 - momentum) * running + "
               "momentum * batch_statistic`, with the unbiased variance for `running_var`. The gradient reaches `x` "
               "through the batch mean and variance too; the running statistics get no autograd history.",
               items=("normalizer_train", "normalizer_gradients"),
               inputs=("default_config", "drawn_config", "batch_of_2", "several_steps", "float32", "float64",
                       "gradcheck_float64")),
        Clause("In `eval()` mode, return `(x - running_mean) / sqrt(running_var + eps)` and update nothing.",
               items=("normalizer_eval",), inputs=("after_train_steps", "batch_of_1", "under_no_grad")),
        Clause("Read `self.training` to tell the modes apart. Do not use `F.batch_norm`, `torch.batch_norm` or a "
               "`BatchNorm` module (the grader records the operations you call), and do not modify `x` in place.",
               items=("normalizer_no_builtin", "normalizer_gradients"),
               inputs=("train_mode", "eval_mode", "x_requires_grad")),
    )),
)


def affine_input_labels(x):
    """The cases an ``Affine`` input covers: the tensor's, and a one-element ``x``."""
    return tensor_labels(x) | ({"one_element"} if x.numel() == 1 else set())


def mlp_labels(sizes, activation):
    """The cases a ``make_mlp`` call covers: how many sizes, list or tuple, the activation, equal neighbours."""
    labels = {"two_sizes" if len(sizes) == 2 else "three_or_more_sizes",
              "tuple_sizes" if isinstance(sizes, tuple) else "list_sizes",
              "given_activation" if activation is not None else "default_activation"}
    if any(a == b for a, b in zip(sizes[:-1], sizes[1:])):
        labels.add("equal_consecutive_sizes")
    return labels
