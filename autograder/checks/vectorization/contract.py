"""The contracts of the vectorization exercises, clause by clause (``autograder.contracts``): the build writes them
into the notebook's bullet lists and docs/vectorization.md's table; ``tests/checks/test_contracts.py`` proves that
each clause's items send its inputs."""

from autograder.contracts import Clause, Contract, tensor_labels

VALUE_DTYPES = ("float32", "int64", "float64", "float16", "int32", "bfloat16", "bool", "uint8")
DEVICES = ("on_cpu", "on_cuda")

CONTRACTS = (
    Contract("batch_gather", (
        Clause("`tensor`: `[B, N, *F]`; `indices`: an int64 or int32 tensor `[B, *K]` with values in `[0, N)`; the "
               "result: `[B, *K, *F]` with `out[b, k...] = tensor[b, indices[b, k...]]`, in `tensor`'s dtype and on "
               "its device;",
               items=("batch_gather_values",),
               inputs=("int64_indices", "int32_indices", "no_k", "several_k", "empty_k", "no_f", "several_f", "n_1",
                       "b_1", "non_contiguous", *VALUE_DTYPES, *DEVICES)),
        Clause("differentiable with respect to `tensor`, repeated indices accumulating their gradients;",
               items=("batch_gather_gradient",), inputs=("repeated_indices",)),
        Clause("no Python loop over the batch (the grader counts your torch operations for a batch of 4 and of 64, "
               "and times you against the loop);",
               items=("batch_gather_vectorized", "batch_gather_speed"),
               inputs=("batches_4_and_64", "timed_4096x16x4")),
        Clause("an index outside `[0, N)` raises an error (negative indices may raise, or count from the end as in "
               "Python); `indices` whose batch size differs from `tensor`'s raise a `ValueError` that says so.",
               items=("batch_gather_errors",),
               inputs=("index_n", "index_past_n", "index_below_minus_n", "batch_larger", "batch_smaller")),
    )),
    Contract("per_sample_grads", (
        Clause("`model`: an `nn.Module` classifier (here an MLP: `Linear`, `Tanh`, `Linear`, ..., of any sizes); "
               "`params`: a dict `{name: tensor}` with the model's parameter names (`\"0.weight\"`, `\"0.bias\"`, "
               "...), plain tensors that do not require grad; `x`: `[B, F]` in params' dtype; `y`: `[B]` int64 "
               "class ids;",
               items=("per_sample_grads_values",),
               inputs=("layers_1", "layers_2", "layers_3", "float32", "float64", "batch_1", *DEVICES)),
        Clause("the result: a dict with the keys of `params`, `out[name]` of shape `[B, *params[name].shape]`, in "
               "params' dtype and on their device, where `out[name][i]` is the gradient of "
               "`F.cross_entropy(model(x[i:i+1]), y[i:i+1])` with respect to `params[name]`, **computed with the "
               "values in `params`**: the model's own parameters hold other values (use `functional_call`);",
               items=("per_sample_grads_values", "per_sample_grads_vmapped"), inputs=("decoy_parameters",)),
        Clause("written with `torch.func.vmap` over `torch.func.grad`, with no Python loop and no comprehension "
               "anywhere in it (the grader reads your source), and the same number of torch calls for 4 samples as "
               "for 64.",
               items=("per_sample_grads_vmapped",), inputs=("batch_16", "batches_4_and_64")),
    )),
    Contract("masked_batch_mean", (
        Clause("`x`: a float tensor `[B, T, F]`; `lengths`: an int64 tensor `[B]` with `0 <= lengths[b] <= T`, on "
               "`x`'s device;",
               items=("masked_mean_values",), inputs=("float32", "float64", "float16", "bfloat16", "b_0", "b_1", "t_0", "t_1", *DEVICES)),
        Clause("the result: `[B, F]`, in `x`'s dtype and on its device, `out[b] = x[b, :lengths[b]].mean(0)`, and 0 "
               "for a row whose length is 0;",
               items=("masked_mean_values",),
               inputs=("empty_row", "full_row", "non_contiguous", "huge_values", "tiny_values")),
        Clause("the padding (the steps from `lengths[b]` on) holds anything, NaN and inf included, and must not "
               "change the result: select the real steps with `torch.where`, since multiplying by a 0/1 mask lets "
               "NaN through (`0 * nan = nan`);",
               items=("masked_mean_values",), inputs=("nan", "inf", "neg_inf")),
        Clause("differentiable with respect to `x`;",
               items=("masked_mean_gradient",), inputs=("analytic_gradient", "gradcheck_float64", "empty_row")),
        Clause("no Python loop over the steps or the batch (the grader counts your torch calls for T = 4 and T = 64, "
               "and for B = 4 and B = 64);",
               items=("masked_mean_vectorized",), inputs=("t_4_and_64", "b_4_and_64")),
        Clause("one graph for every size: `torch.compile(masked_batch_mean, fullgraph=True, dynamic=True)` compiles "
               "it without a graph break, `torch._dynamo.explain` finds none either, and the compiled function "
               "serves x of 8 different shapes (sizes 2 to 17, B, T and F different from each other) with random "
               "lengths from at most 2 graphs, each result right. So: no `.item()`, `int(t)`, `bool(t)` or "
               "`.tolist()`, no `if` on a tensor's value, no loop.",
               items=("masked_mean_one_graph", "masked_mean_no_recompiles"),
               inputs=("compiled_fullgraph_dynamic", "explained", "sweep_8_shapes")),
    )),
)


def gather_labels(tensor, indices):
    """The cases a ``batch_gather`` input covers."""
    labels = tensor_labels(tensor) - {"empty", "zero_rows", "one_row", "nan", "inf", "neg_inf"}
    labels.add(f"{str(indices.dtype).removeprefix('torch.')}_indices")
    labels.add("no_k" if indices.dim() == 1 else "several_k" if indices.dim() > 2 else "one_k")
    labels.update(["empty_k"] if not indices.numel() else [])
    labels.add("no_f" if tensor.dim() == 2 else "several_f" if tensor.dim() > 3 else "one_f")
    labels.update(name for name, size in (("b_1", tensor.shape[0]), ("n_1", tensor.shape[1])) if size == 1)
    return labels


def mean_labels(x, lengths):
    """The cases a ``masked_batch_mean`` input covers (``nan``, ``inf``: in the padding, where the checks put them)."""
    labels = tensor_labels(x) - {"empty", "zero_rows", "one_row", "rank_3"}
    b, t = x.shape[0], x.shape[1]
    labels.update(name for name, size in (("b_0", b), ("b_1", b - 1), ("t_0", t), ("t_1", t - 1)) if size == 0)
    if t and b:
        labels.update(["empty_row"] if bool((lengths == 0).any()) else [])
        labels.update(["full_row"] if bool((lengths == t).any()) else [])
    finite = x.detach()[x.detach().isfinite()].abs()
    if finite.numel() and float(finite.max()) > 1e20:
        labels.add("huge_values")
    if finite.numel() and 0 < float(finite.max()) < 1e-20:
        labels.add("tiny_values")
    return labels
