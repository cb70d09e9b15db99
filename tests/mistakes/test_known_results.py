"""A mistake whose result follows from the reference is told by name in the check's own message, and a mistake
that fails apart from another on ordinary inputs fails there first: each one's words (and so its signature, and
the named-mistake hint) differ from every other mistake of its item. Graded on the mutant's one item."""

import importlib

import pytest

from autograder.engine.results import FAILED, grade_items
from tests.proving import with_replacements

CASES = [   # topic, mutant, item, what its message says (or its kind, for a kind)
    ("broadcasting", "distances not squared (cdist)", "pairwise_values", "is the plain distances"),
    ("broadcasting", "distances as L1 sums", "pairwise_values", "wrong value"),
    ("memory", "saved_bytes counts elements, not bytes", "saved_bytes_count", "the number of elements"),
    ("memory", "saved_bytes assumes 4 bytes per element", "saved_bytes_count", "4 bytes for every element"),
    ("memory", "most_expensive_op sorts by total CPU time", "top_op", "first by total CPU time"),
    ("memory", "most_expensive_op returns the most called operator", "top_op", "the one called most often"),
    ("stability", "softplus backward ignoring the upstream gradient", "softplus_gradient",
     "upstream gradient of ones"),
    ("stability", "softplus backward using the saved output as the input", "softplus_gradient", "wrong value"),
    ("modules", "fit without zero_grad", "fit_matches_sgd", "gradients are never zeroed"),
    ("modules", "fit training a copy", "fit_matches_sgd", "did not train"),
    ("modules", "fit with momentum", "fit_matches_sgd", "SGD with momentum"),
    ("vectorization", "per_sample_grads divided by the batch size", "per_sample_grads_values",
     "divided by the batch size"),
    ("vectorization", "per_sample_grads detaching params inside the loss", "per_sample_grads_values", "all zeros"),
    ("broadcasting", "Merge with ReLU when activation is None", "merge_forward", "ReLU of the layer's output"),
    ("basics", "fit_quadratic with features in the order 1, x, x^2", "fit_quadratic", "in the order 1, x, x^2"),
    ("operators", "row_sum over the last dim", "row_sum", "the shape of a sum over the last dimension"),
    ("operators", "row_sum keeping the dim", "row_sum", "keeps it (keepdim=True)"),
    ("operators", "masked_mean dividing by N", "masked_mean", "divided by N, the number of rows"),
    ("operators", "masked_mean excluding the bounds", "masked_mean", "sit exactly on a bound"),
    ("operators", "masked_mean dividing 0 by 0", "masked_mean", "not finite: NaN"),
    ("basics", "grad_of with .backward() on x", "grad_of_values", "has a .grad"),
    ("basics", "grad_of leaving requires_grad set on x", "grad_of_values", "has requires_grad=True"),
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
        assert says in (result.kind if says in ("wrong value", "not finite: NaN") else result.message), result.message
        kinds[mutant] = result.kind
    assert len(set(kinds.values())) == len(kinds), kinds
