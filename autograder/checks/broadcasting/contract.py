"""The contracts of the broadcasting exercises, clause by clause (``autograder.contracts``): the build writes them
into the notebook's bullet lists and docs/broadcasting.md's table; ``tests/checks/test_contracts.py`` proves that
each clause's items send its inputs."""

from autograder.contracts import Clause, Contract, tensor_labels

ACTIVATION_LABELS = ("no_activation", "relu", "tanh", "sigmoid_module", "activation_default")

CONTRACTS = (
    Contract("Merge", (
        Clause("`self.linear1 = nn.Linear(in_features1, out_features)` reads `a`, `self.linear2 = "
               "nn.Linear(in_features2, out_features)` reads `b`; these are its only parameters;",
               items=("merge_structure", "merge_forward"), inputs=("in_features_differ", "gradients")),
        Clause("`a` has shape `[..., in_features1]`, `b` has shape `[..., in_features2]`, and their batch dimensions "
               "(all but the last) broadcast; the output has the broadcast batch shape and `out_features` features;",
               items=("merge_forward",),
               inputs=("no_batch_dims", "equal_batches", "size_1_dims", "batch_ranks_differ")),
        Clause("`activation` is a function (such as `torch.relu`) or `None`, meaning no activation;",
               items=("merge_structure", "merge_forward"), inputs=ACTIVATION_LABELS),
        Clause("it equals the concatenate-then-linear layer above, on the tiled inputs, with weight `[W1 W2]` and "
               "bias `b1 + b2`;",
               items=("merge_forward",), inputs=("tutorial_shapes", "float32", "float64", "gradients", "on_cpu",
                                                 "on_cuda")),
        Clause("it **never copies an input to the broadcast shape**: the grader records every operation your "
               "`forward` runs and rejects `repeat`, `tile`, `repeat_interleave`, `expand` (or `expand_as`, "
               "`broadcast_to`, `broadcast_tensors`) followed by `cat` or `stack`, and any tensor with the tiled "
               "shape of `a`, `b` or their concatenation.",
               items=("merge_no_tiling",), inputs=("tutorial_shapes", "size_1_dims", "batch_ranks_differ")),
    )),
    Contract("pairwise_sq_distances", (
        Clause("the dtype and device of `x`; close to a float64 reference;",
               items=("pairwise_values",),
               inputs=("float32", "float64", "n_ne_m", "n_eq_m", "one_row", "one_feature", "on_cpu", "on_cuda")),
        Clause("**never negative**, even for nearly identical rows far from the origin (if you expand the square, "
               "clamp the result at 0);",
               items=("pairwise_nonnegative",), inputs=("far_from_origin", "identical_rows", "float32", "float64")),
        Clause("**no Python loop**: the grader counts the torch operations your function calls, and the count must "
               "be the same for every `N`, `M` and `D`.",
               items=("pairwise_vectorized",), inputs=("sizes_2_5_13",)),
    )),
    Contract("strict_mse_loss", (
        Clause("a 0-dim tensor of the prediction's dtype, differentiable with respect to `prediction`;",
               items=("strict_mse_value",), inputs=("float32", "float64", "rank_0", "rank_1", "rank_2", "gradients")),
        Clause("for any other pair of shapes, raise `ValueError` with a message that names both shapes (for example "
               "`prediction has shape [4, 1] but target has shape [4]`), whether or not the shapes would broadcast.",
               items=("strict_mse_refuses_broadcast",),
               inputs=("trailing_one", "row_against_column", "scalar_target", "not_broadcastable")),
    )),
)


def merge_labels(in1, in2, activation, pass_activation):
    """The cases a ``Merge(...)`` construction covers."""
    labels = {"in_features_differ"} if in1 != in2 else set()
    if not pass_activation:
        return labels | {"activation_default"}
    name = getattr(activation, "__name__", type(activation).__name__)
    return labels | {{"NoneType": "no_activation", "Sigmoid": "sigmoid_module"}.get(name, name)}


def batch_labels(batch_a, batch_b):
    """The cases a pair of batch shapes covers."""
    labels = {"tutorial_shapes"} if (list(batch_a), list(batch_b)) == ([5, 3], [5, 1]) else set()
    if not batch_a and not batch_b:
        labels.add("no_batch_dims")
    if list(batch_a) == list(batch_b):
        labels.add("equal_batches")
    if len(batch_a) != len(batch_b):
        labels.add("batch_ranks_differ")
    if 1 in [*batch_a, *batch_b]:
        labels.add("size_1_dims")
    return labels


def distance_labels(x, y):
    """The cases a ``pairwise_sq_distances`` input covers."""
    labels = tensor_labels(x) - {"nan", "inf", "neg_inf", "rank_2", "zero_rows"}
    labels.add("n_eq_m" if x.shape[0] == y.shape[0] else "n_ne_m")
    if 1 in (x.shape[0], y.shape[0]):
        labels.add("one_row")
    if x.shape[1] == 1:
        labels.add("one_feature")
    if x.numel() and float(x.detach().abs().min()) > 100:
        labels.add("far_from_origin")
    return labels


def shape_pair_labels(shape_p, shape_t):
    """The cases a refused pair of shapes covers."""
    labels = set()
    if list(shape_p[:-1]) == list(shape_t) and shape_p[-1:] == [1] or list(shape_t[:-1]) == list(shape_p) \
            and shape_t[-1:] == [1]:
        labels.add("trailing_one")
    if len(shape_p) == len(shape_t) == 2 and 1 in shape_p and 1 in shape_t and shape_p != shape_t:
        labels.add("row_against_column")
    if not shape_t:
        labels.add("scalar_target")
    padded = [[1] * (max(len(shape_p), len(shape_t)) - len(s)) + list(s) for s in (shape_p, shape_t)]
    if any(p != t and 1 not in (p, t) for p, t in zip(*padded)):
        labels.add("not_broadcastable")
    return labels
