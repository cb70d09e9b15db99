"""The memory checks: their messages, the source rules that earn the checkpoint and no_grad points, the facts that
only cost, and the top-operator item's second asking."""

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from autograder.checks import memory
from autograder.checks.memory.rules import calls_with
from autograder.source_rules import rule_findings, uses
from autograder.submitted_source import Submission
from tests.mutants.memory import MUTANTS
from tests.proving import failing_among, reference, run_check, with_replacements

TOPIC = "memory"
CHECKPOINT_RULE = calls_with("checkpointed_forward", "torch.utils.checkpoint.checkpoint", use_reentrant=False)
NO_GRAD_RULE = uses("predict", *memory.NO_GRAD_NAMES)


def _findings(rule, text):
    return rule_findings(rule, Submission.from_text(text))


@pytest.mark.quick
@pytest.mark.parametrize("text", [
    "from torch.utils.checkpoint import checkpoint\ndef checkpointed_forward(blocks, x):\n"
    "    for b in blocks:\n        x = checkpoint(b, x, use_reentrant=False)\n    return x\n",
    "import torch.utils.checkpoint as cp\ndef checkpointed_forward(blocks, x):\n"
    "    return run(blocks, x)\ndef run(blocks, x):\n    for b in blocks:\n"
    "        x = cp.checkpoint(b, x, use_reentrant=False)\n    return x\n",
    "import torch\ndef checkpointed_forward(blocks, x):\n"
    "    for b in blocks:\n        x = torch.utils.checkpoint.checkpoint(b, x, use_reentrant=False)\n    return x\n",
    "from torch.utils.checkpoint import checkpoint as ckpt\ndef checkpointed_forward(blocks, x):\n"
    "    for b in blocks:\n        x = ckpt(b, x, preserve_rng_state=True, use_reentrant=False)\n    return x\n",
])
def test_the_checkpoint_rule_sees_every_spelling(text):
    assert _findings(CHECKPOINT_RULE, text) == []


@pytest.mark.quick
@pytest.mark.parametrize("text, construct", [
    ("def checkpointed_forward(blocks, x):\n    for b in blocks:\n        x = b(x)\n    return x\n", "never calls"),
    ("from torch.utils.checkpoint import checkpoint\ndef checkpointed_forward(blocks, x):\n"
     "    for b in blocks:\n        x = checkpoint(b, x, use_reentrant=True)\n    return x\n", "use_reentrant=False"),
    ("from torch.utils.checkpoint import checkpoint\ndef checkpointed_forward(blocks, x):\n"
     "    for b in blocks:\n        x = checkpoint(b, x)\n    return x\n", "use_reentrant=False"),
])
def test_the_checkpoint_rule_fails_without_the_non_reentrant_call(text, construct):
    (finding,) = _findings(CHECKPOINT_RULE, text)
    assert construct in finding.text() and "checkpointed_forward" in finding.text()


@pytest.mark.quick
@pytest.mark.parametrize("text, found", [
    ("import torch\ndef predict(model, x):\n    with torch.no_grad():\n        return model(x)\n", False),
    ("import torch\n@torch.inference_mode()\ndef predict(model, x):\n    return model(x)\n", False),
    ("from torch import no_grad\ndef predict(model, x):\n    with no_grad():\n        return model(x)\n", False),
    ("import torch\ndef predict(model, x):\n    with torch.set_grad_enabled(False):\n        return model(x)\n", False),
    ("def predict(model, x):\n    return model(x).detach()\n", True),
])
def test_the_no_grad_rule(text, found):
    assert bool(_findings(NO_GRAD_RULE, text)) is found


def hiding_liar(blocks, x):
    """Forges both facts of the checkpoint item: each block runs once more under no_grad (two forward calls per
    layer), and no-op hooks of its own hide every activation from the grader's counter. No checkpoint at all."""
    for block in blocks:
        with torch.no_grad():
            block(x)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            x = block(x)
    return x


def test_forged_facts_earn_nothing_the_source_decides():
    memory.check_checkpoint_trades_memory(hiding_liar)     # the facts in its own process: fooled, as documented
    result = run_check(memory.check_checkpoint_trades_memory, {"checkpointed_forward": hiding_liar})
    assert not result.passed and "never calls `torch.utils.checkpoint.checkpoint" in result.message


def test_a_source_with_the_call_but_no_checkpointing_loses_on_the_facts():
    def dead_call(blocks, x):
        if x is None:
            checkpoint(blocks[0], x, use_reentrant=False)
        for block in blocks:
            x = block(x)
        return x

    result = run_check(memory.check_checkpoint_trades_memory, {"checkpointed_forward": dead_call})
    assert not result.passed and "run twice" in result.message


def test_count_message_lists_what_autograd_saved():
    replacements, _ = MUTANTS["saved_bytes counts elements, not bytes"]
    message = failing_among(TOPIC, with_replacements(TOPIC, replacements), {"check_saved_bytes_count"})[
        "check_saved_bytes_count"]
    assert "float32" in message and "HalfGate" in message and "element_size" in message


def test_count_must_be_an_int():
    def float_count(model, x):
        out, total = reference(TOPIC)["saved_bytes"](model, x)
        return out, float(total)

    message = failing_among(TOPIC, with_replacements(TOPIC, {"saved_bytes": float_count}),
                            {"check_saved_bytes_count"})["check_saved_bytes_count"]
    assert "as an int, got float" in message


def test_version_counter_error_is_shown_with_the_fix():
    replacements, _ = MUTANTS["residual_relu adds x in place into relu's saved output"]
    message = failing_among(TOPIC, with_replacements(TOPIC, replacements), {"check_residual_backward"})[
        "check_residual_backward"]
    assert "modified by an inplace operation" in message and "relu saves its output" in message


def _answering(answers):
    """A most_expensive_op that gives ``answers`` in turn, whatever the step."""
    given = iter(answers)

    def most_expensive_op(step):
        return next(given)
    return most_expensive_op


def test_top_op_asks_again_and_takes_the_majority():
    ok = _answering(["aten::add", "aten::mm", "aten::mm", "aten::topk"])
    memory.check_top_op(ok, kinds=("matmul", "topk"))        # once wrong (a busy machine), then right twice
    cycling = _answering(["aten::add", "aten::mm", "aten::add"])
    with pytest.raises(AssertionError) as excinfo:
        memory.check_top_op(cycling, kinds=("matmul",))
    assert "['aten::add', 'aten::mm', 'aten::add']" in str(excinfo.value)


def test_top_op_accepts_the_name_without_its_namespace():
    memory.check_top_op(_answering(["mm"]), kinds=("matmul",))
