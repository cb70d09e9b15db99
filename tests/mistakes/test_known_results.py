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
    ("stability", "softplus backward ignoring the upstream gradient", "softplus_gradient",
     "upstream gradient of ones"),
    ("stability", "softplus backward using the saved output as the input", "softplus_gradient", "wrong value"),
    ("modules", "fit without zero_grad", "fit_matches_sgd", "gradients are never zeroed"),
    ("modules", "fit training a copy", "fit_matches_sgd", "did not train"),
    ("operators", "row_sum over the last dim", "row_sum", "the shape of a sum over the last dimension"),
    ("operators", "row_sum keeping the dim", "row_sum", "keeps it (keepdim=True)"),
    ("operators", "masked_mean dividing by N", "masked_mean", "divided by N, the number of rows"),
    ("operators", "masked_mean excluding the bounds", "masked_mean", "sit exactly on a bound"),
    ("operators", "masked_mean dividing 0 by 0", "masked_mean", "not finite: NaN"),
    ("basics", "grad_of with .backward() on x", "grad_of_values", "has a .grad"),
    ("basics", "grad_of leaving requires_grad set on x", "grad_of_values", "has requires_grad=True"),
]


@pytest.mark.parametrize("topic, mutant, item, says", CASES, ids=[c[1] for c in CASES])
def test_the_mistake_is_told_by_its_own_words(topic, mutant, item, says):
    replacements, _ = importlib.import_module(f"tests.mutants.{topic}").MUTANTS[mutant]
    (result,) = grade_items(topic, with_replacements(topic, replacements), only={item}, seed=0)
    assert result.status == FAILED
    assert says in (result.kind if says in ("wrong value", "not finite: NaN") else result.message), result.message
