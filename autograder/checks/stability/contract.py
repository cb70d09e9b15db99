"""The contracts of the stability exercises, clause by clause (``autograder.contracts``): the build writes them into
the notebook's bullet lists and docs/stability.md's table; ``tests/checks/test_contracts.py`` proves that each
clause's items send its inputs."""

from autograder.contracts import Clause, Contract, tensor_labels

FLOATS = ("float16", "bfloat16", "float32", "float64")
DEVICES = ("on_cpu", "on_cuda")

CONTRACTS = (
    Contract("stable_softmax", (
        Clause("the same shape, dtype and device as `logits`;",
               items=("softmax_forward",),
               inputs=("rank_1", "rank_2", "rank_3", "rank_4", "dim_last", "dim_other", *FLOATS, *DEVICES)),
        Clause("sums to 1 along `dim`, no NaN or inf for any finite input in float16, bfloat16, float32 or float64;",
               items=("softmax_forward", "softmax_extremes"),
               inputs=(*FLOATS, "near_dtype_max", "rows_differ_in_scale")),
        Clause("differentiable (use torch operations only);",
               items=("softmax_gradient",), inputs=("gradcheck_float64", "backward_at_1e4")),
        Clause("built from elementary operations: calling `softmax`, `log_softmax`, `logsumexp`, `cross_entropy` or "
               "`nll_loss` in any spelling is not allowed (the grader records every torch operation your code "
               "calls).",
               items=("softmax_no_builtin",), inputs=("float32", "float16")),
    )),
    Contract("softmax_cross_entropy", (
        Clause("its shape is `logits.shape` without `dim` (no mean over the batch), its dtype and device those of "
               "`logits`;",
               items=("cross_entropy_forward",),
               inputs=("rank_1", "rank_2", "rank_3", "rank_4", "dim_last", "dim_other", *FLOATS, *DEVICES)),
        Clause("`labels` is a distribution along `dim` (soft or one-hot) and may broadcast against `logits` (for "
               "example one `[C]` distribution shared by a `[B, C]` batch);",
               items=("cross_entropy_forward", "cross_entropy_gradient"), inputs=("soft", "onehot", "broadcast")),
        Clause("finite for finite logits of any magnitude (try `1e4` and `-1e4` in float32), forward and backward;",
               items=("cross_entropy_extremes", "cross_entropy_gradient"),
               inputs=("plus_minus_1e4", "near_dtype_max", "backward_at_extremes", "gradcheck_float64")),
        Clause("the same forbidden operations as above.", items=("cross_entropy_no_builtin",), inputs=("soft",)),
    )),
    Contract("softplus", (
        Clause("`forward(ctx, x)`: `log(1 + exp(x))` elementwise, with the shape, dtype and device of `x`, finite and "
               "accurate for **every** finite `x` of every float dtype (try `1e4` and `-1e4` in float32, and "
               "`torch.finfo(dtype).max`); save what the backward needs;",
               items=("softplus_forward", "softplus_extremes"),
               inputs=("rank_0", "rank_1", "rank_2", "rank_3", "non_contiguous", *FLOATS, *DEVICES, "extreme_points")),
        Clause("`backward(ctx, grad_output)`: `grad_output * sigmoid(x)`, finite for every finite `x`;",
               items=("softplus_gradient",), inputs=("gradcheck_float64", "extreme_points", *FLOATS)),
        Clause("`softplus(x)` returns `Softplus.apply(x)`: the grader checks that `softplus(x).grad_fn` is your "
               "Function's backward node;",
               items=("softplus_custom_backward",), inputs=("requires_grad_float32", "apply_float64")),
        Clause("a built-in softplus (`F.softplus`, `nn.Softplus`), `logaddexp` or `logsigmoid`, in any spelling, is "
               "not allowed in forward or backward (the grader reads your source and records every operation).",
               items=("softplus_no_builtin",), inputs=("float32", "float64", "backward")),
    )),
)


def logits_labels(x, dim):
    """The cases a ``stable_softmax`` / ``softmax_cross_entropy`` input covers: the tensor's, and which ``dim``."""
    return tensor_labels(x) | {"dim_last" if dim % max(x.dim(), 1) == x.dim() - 1 else "dim_other"}
