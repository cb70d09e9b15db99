"""A mistake whose result follows from the reference is told by name in the check's own message, and a mistake
that fails apart from another on ordinary inputs fails there first: each one's words (and so its signature, and
the named-mistake hint) differ from every other mistake of its item. Graded on the mutant's one item."""

import importlib

import pytest
import torch

from autograder.engine.results import FAILED, grade_items
from tests.proving import with_replacements

CASES = [   # topic, mutant, item, what its message says (or its kind, for a kind)
    ("broadcasting", "distances not squared (cdist)", "pairwise_values", "is the plain distances"),
    ("broadcasting", "distances as L1 sums", "pairwise_values", "the sums of absolute differences"),
    ("broadcasting", "loss summing instead of averaging", "strict_mse_value", "the sum of the squared differences"),
    ("operators", "row_sum skipping NaN", "row_sum", "NaN was left out of the sum"),
    ("operators", "row_sum always in float32", "row_sum", "has dtype torch.float32"),
    ("stability", "softmax summing over the wrong dim", "softmax_forward", "normalised over the wrong dimension"),
    ("stability", "softmax of the wrong dtype", "softmax_forward", "has dtype torch.float64"),
    ("stability", "softmax always in float32", "softmax_forward", "has dtype torch.float32"),
    ("memory", "residual_relu applies relu after the residual", "residual_values", "with relu applied after adding"),
    ("modules", "Affine computing b * x + a", "affine_forward", "in each other's place"),
    ("modules", "make_mlp ignoring activation", "make_mlp_structure", "another activation than the one given"),
    ("modules", "make_mlp without biases", "make_mlp_structure", "Linear layers without bias"),
    ("modules", "make_mlp with an activation after the last layer", "make_mlp_structure",
     "an activation after the last Linear"),
    ("memory", "saved_bytes counts elements, not bytes", "saved_bytes_count", "the number of elements"),
    ("memory", "saved_bytes assumes 4 bytes per element", "saved_bytes_count", "4 bytes for every element"),
    ("memory", "saved_bytes counts a view's whole storage", "saved_bytes_count", "the whole storages behind"),
    ("memory", "saved_bytes counts a tensor saved twice once", "saved_bytes_count", "each saved tensor counted once"),
    ("memory", "saved_bytes runs the model after the hooks' block", "saved_bytes_count", "nothing: no tensor was"),
    ("memory", "checkpointed_forward does not checkpoint", "checkpoint_trades_memory", "no block was recomputed"),
    ("memory", "checkpointed_forward checkpoints the first block only", "checkpoint_trades_memory",
     "only the first block was recomputed"),
    ("memory", "checkpointed_forward checkpoints every layer on its own", "checkpoint_trades_memory",
     "more activations were kept than without any checkpoint"),
    ("memory", "checkpointed_forward drops the RNG state (dropout differs)", "checkpoint_gradients",
     "in blocks with dropout differs"),
    ("modules", "fit with a squeezed prediction", "fit_matches_sgd", "on a squeezed prediction"),
    ("modules", "fit ignoring lr", "fit_matches_sgd", "the result does not depend on lr"),
    ("vectorization", "per_sample_grads of the batch's summed loss", "per_sample_grads_values",
     "the gradient of the whole batch's loss"),
    ("vectorization", "per_sample_grads of model.named_parameters() (not params, not detached)",
     "per_sample_grads_values", "at the model's own parameters"),
    ("vectorization", "masked_batch_mean averaging over all of T", "masked_mean_values", "the mean over all T steps"),
    ("vectorization", "masked_batch_mean off by one (<=)", "masked_mean_values", "up to and including lengths[b]"),
    ("memory", "most_expensive_op sorts by total CPU time", "top_op", "first by total CPU time"),
    ("memory", "most_expensive_op returns the most called operator", "top_op", "the one called most often"),
    ("memory", "most_expensive_op profiles the first call, without warm-up", "top_op", "profiled the first call"),
    ("memory", "most_expensive_op returns the profile's row, not its name", "top_op", "got FunctionEventAvg"),
    ("memory", "predict switches to eval mode instead of no_grad", "predict_no_graph",
     "switched the model to eval mode"),
    ("memory", "predict detaches the result instead of no_grad", "predict_no_graph", "predict built a graph"),
    ("distributed", "train_ddp sums the loss instead of its mean", "ddp_matches_single", "times batch_size"),
    ("distributed", "train_ddp trains each rank on its own (no DDP)", "ddp_matches_single",
     "this rank's samples alone"),
    ("distributed", "train_accumulate does not divide the loss by accumulation", "accumulate_matches_single",
     "times accumulation"),
    ("distributed", "average_gradients sums the gradients without dividing", "average_matches_single",
     "times world_size"),
    ("distributed", "average_gradients averages the parameters, not the gradients", "average_matches_single",
     "this rank's samples alone"),
    ("stability", "softplus backward ignoring the upstream gradient", "softplus_gradient",
     "upstream gradient of ones"),
    ("stability", "softplus backward using the saved output as the input", "softplus_gradient",
     "saved output as if it were x"),
    ("stability", "softplus backward as exp(x) / (1 + exp(x))", "softplus_gradient", "NaN"),
    ("modules", "fit without zero_grad", "fit_matches_sgd", "gradients are never zeroed"),
    ("modules", "fit training a copy", "fit_matches_sgd", "did not train"),
    ("modules", "fit with momentum", "fit_matches_sgd", "SGD with momentum"),
    ("vectorization", "per_sample_grads divided by the batch size", "per_sample_grads_values",
     "divided by the batch size"),
    ("vectorization", "per_sample_grads detaching params inside the loss", "per_sample_grads_values", "all zeros"),
    ("broadcasting", "Merge with ReLU when activation is None", "merge_forward", "ReLU of the layer's output"),
    ("basics", "fit_quadratic with features in the order 1, x, x^2", "fit_quadratic", "in the order 1, x, x^2"),
    ("basics", "fit_quadratic ignoring lr", "fit_quadratic", "fit_quadratic ignores lr"),
    ("basics", "fit_quadratic with SGD", "fit_quadratic", "not finite: NaN"),
    ("broadcasting", "Merge detaching linear2's output", "merge_forward", "is all zeros: no gradient flows back"),
    ("operators", "row_sum over the last dim", "row_sum", "the shape of a sum over the last dimension"),
    ("operators", "row_sum keeping the dim", "row_sum", "keeps it (keepdim=True)"),
    ("operators", "masked_mean dividing by N", "masked_mean", "divided by N, the number of rows"),
    ("operators", "masked_mean excluding the bounds", "masked_mean", "sit exactly on a bound"),
    ("operators", "masked_mean dividing 0 by 0", "masked_mean", "NaN where nothing is in range: 0 / 0"),
    ("operators", "masked_mean counting NaN", "masked_mean_special_values", "NaN where a NaN of x was counted"),
    ("operators", "masked_mean multiplying by the mask", "masked_mean_special_values",
     "keeps a NaN or an infinity from outside the range"),
    ("basics", "grad_of with .backward() on x", "grad_of_values", "has a .grad"),
    ("basics", "grad_of leaving requires_grad set on x", "grad_of_values", "has requires_grad=True"),
    ("basics", "grad_of by finite differences", "grad_of_values", "close to the gradient but not exact"),
    ("dataloading", "tutorial's naive tar dataset (duplicates with workers)", "tar_dataset_workers",
     "came out more than once"),
    ("dataloading", "drops the remainder when shards don't divide evenly", "tar_dataset_workers", "never came out"),
    ("dataloading", "folder: random.choice ignores the index", "image_directory_dataset",
     "gives another file each time it is asked"),
    ("dataloading", "folder: unsorted paths", "image_directory_dataset", "in an order of its own"),
    ("dataloading", "folder: natural sort", "image_directory_dataset", "follows the numbers in the file names"),
    ("dataloading", "collate: centred (padding on top and left too)", "collate_images_values",
     "not in the top-left corner"),
    ("dataloading", "collate: resizes instead of padding", "collate_images_values", "holds varying values"),
    ("dataloading", "collate: pads with 114", "collate_images_values", "holds 114 everywhere"),
    ("stability", "softplus as log1p(exp(x))", "softplus_extremes", "not finite: +inf at positive x"),
    ("stability", "softplus as x + log1p(exp(-x)) (no max, no |x|)", "softplus_extremes",
     "not finite: +inf at negative x"),
]


GROUPS = {}
for _topic, _mutant, _item, _says in CASES:
    GROUPS.setdefault((_topic, _item), []).append((_mutant, _says))


@pytest.mark.parametrize("topic, item", GROUPS, ids=[f"{topic}: {item}" for topic, item in GROUPS])
def test_each_mistake_is_told_by_its_own_words_and_kind(topic, item):
    """Each mutant's message says its words, and the mutants of one item fail it with different kinds (a check's
    own message is its fixed first words: words that come too late leave two mistakes one signature)."""
    mutants = importlib.import_module(f"tests.mutants.{topic}").MUTANTS
    kinds = {}
    for mutant, says in GROUPS[topic, item]:
        (result,) = grade_items(topic, with_replacements(topic, mutants[mutant][0]), only={item}, seed=0)
        assert result.status == FAILED, mutant
        assert says in (result.kind if says == "wrong value" or says.startswith("not finite") else result.message), \
            result.message
        kinds[mutant] = result.kind
    assert len(set(kinds.values())) == len(kinds), kinds


class AffineAsLinear(torch.nn.Module):
    """A realistic answer no mutant makes: a wrapped ``nn.Linear(1, 1)``, trained, but with no ``a`` and ``b``."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)

    def forward(self, x):
        return self.linear(x[..., None])[..., 0]


def test_parameters_under_other_names_are_told_apart_from_none_registered():
    """A module with its own parameters under other names fails with other words than one that registers none (a
    Python list): two mistakes, two kinds, so the hint does not name the list for a wrapped Linear."""
    mutants = importlib.import_module("tests.mutants.modules").MUTANTS
    items = {"affine_parameters", "affine_forward"}
    wrapped = grade_items("modules", with_replacements("modules", {"Affine": AffineAsLinear}), only=items, seed=0)
    listed = grade_items("modules", with_replacements("modules", mutants["Affine keeping its parameters in a list"][0]),
                         only=items, seed=0)
    assert all(r.status == FAILED for r in wrapped + listed)
    said = {r.item: r.message for r in wrapped}
    assert "gives other names, ['linear.bias', 'linear.weight']" in said["affine_parameters"], said
    assert "registers other parameters, ['linear.weight', 'linear.bias']" in said["affine_forward"], said
    assert all(w.kind != m.kind for w, m in zip(wrapped, listed)), [(w.kind, m.kind) for w, m in zip(wrapped, listed)]


def test_other_rankings_of_a_profile_are_not_told_as_a_mutants():
    """The profile's first row (``key_averages()[0]``) and a profile sorted the wrong way round are no mutant's
    mistake: the step starts with a cheap operator of its own, so the first row is not the operator first by total
    time, and its most called operator is not one of its cheapest, so an ascending sort does not return it. Both
    fail ``top_op`` in words of no ranking (and so the hint names nothing)."""
    from tests.named_mistakes.fourth_set import most_expensive_op_first_row
    from tests.named_mistakes.sixth_set import most_expensive_op_ascending

    for answer in (most_expensive_op_first_row, most_expensive_op_ascending):
        (result,) = grade_items("memory", with_replacements("memory", {"most_expensive_op": answer}),
                                only={"top_op"}, seed=0)
        assert result.status == FAILED, answer.__name__
        assert "first by total CPU time" not in result.message, result.message
        assert "called most often" not in result.message, result.message
