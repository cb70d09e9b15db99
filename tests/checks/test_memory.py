"""The memory checks: their messages, the source rules and the data that earn the checkpoint and no_grad points, the
facts that only cost, and the top-operator item's second asking."""

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from autograder.checks import memory
from autograder.checks.memory.rules import calls_with, runs_without_grad
from autograder.errors import CheckFailure
from autograder.seam.student_calls import Student
from autograder.source_evidence.source_rules import rule_findings
from autograder.source_evidence.submitted_source import Submission
from tests.mutants.memory import MUTANTS
from tests.proving import failing_among, reference, run_check, with_replacements

TOPIC = "memory"
CHECKPOINT_RULE = calls_with("checkpointed_forward", "torch.utils.checkpoint.checkpoint", use_reentrant=False)
NO_GRAD_RULE = runs_without_grad("predict")


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
    ("import torch\n@torch.no_grad()\ndef predict(model, x):\n    model.eval()\n    return model(x)\n", False),
    ("from torch import no_grad\ndef predict(model, x):\n    with no_grad():\n        return model(x)\n", False),
    ("import torch\ndef predict(model, x):\n    with torch.set_grad_enabled(False):\n        return model(x)\n", False),
    ("import torch\ndef predict(model, x):\n    model.eval()\n    with torch.inference_mode():\n"
     "        out = model.forward(x)\n    return out\n", False),
    ("import torch\ndef predict(model, x):\n    assert isinstance(model, torch.nn.Module)\n"
     "    with torch.no_grad(), torch.autocast('cpu', enabled=False):\n        return run(model, x)\n"
     "def run(m, x):\n    return m(x)\n", False),
    ("import torch\nimport torch.autograd as ag\ndef predict(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:\n"
     "    \"\"\"Doc.\"\"\"\n    with ag.no_grad():\n        y = model(x)\n    return y\n", False),
    ("def predict(model, x):\n    return model(x).detach()\n", True),
    ("import torch\ndef predict(model, x):\n    torch.no_grad()\n    return model(x)\n", True),
    ("import torch\ndef predict(model, x):\n    with torch.no_grad():\n        pass\n    return model(x)\n", True),
    ("import torch\ndef predict(model, x):\n    out = model(x)\n    with torch.no_grad():\n        return out.clone()\n",
     True),
    ("import torch\ndef predict(model, x):\n    with torch.set_grad_enabled(True):\n        return model(x)\n", True),
    ("import torch\ndef predict(model, x):\n    with torch.no_grad():\n        with torch.enable_grad():\n"
     "            return model(x)\n", True),
    ("import torch\ndef predict(model, x):\n    torch.set_grad_enabled(False)\n    return model(x)\n", True),
    ("import torch\ndef predict(model, x):\n    with torch.no_grad():\n        torch.set_grad_enabled(True)\n"
     "        return model(x)\n", True),
    ("import torch\ndef predict(model, x):\n    with torch.inference_mode(False):\n        return model(x)\n", True),
])
def test_the_no_grad_rule(text, found):
    """The model runs only where autograd is off, read from the source: the forms students write pass; a dead or
    too-late block, a statement, a block that turns grad back on do not (the worker's "no graph" only costs)."""
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


def test_forged_facts_earn_nothing_the_data_and_source_decide():
    """In its own process the liar fools the facts, but not the shifts the grader hands out: its second run of each
    block is handed the second shift, so its output is not the forward pass's. Its source has no checkpoint either."""
    with pytest.raises(CheckFailure) as caught:
        memory.check_checkpoint_trades_memory(hiding_liar)
    assert "checkpointed_forward's output differs" in str(caught.value)
    result = run_check(memory.check_checkpoint_trades_memory, {"checkpointed_forward": hiding_liar})
    assert not result.passed


def test_a_source_with_the_call_but_no_checkpointing_loses_on_the_data():
    def dead_call(blocks, x):
        if x is None:
            checkpoint(blocks[0], x, use_reentrant=False)
        for block in blocks:
            x = block(x)
        return x

    result = run_check(memory.check_checkpoint_trades_memory, {"checkpointed_forward": dead_call})
    assert not result.passed and "no block was recomputed in backward" in result.message


def test_asking_for_the_shift_twice_without_recomputing_loses_on_the_gradients():
    """A block run a second time by hand in backward (a hook on the output) is handed a second shift, but its saved
    activations are still those of the first: the gradients tell."""
    def asks_twice(blocks, x):
        inputs = []
        for block in blocks:
            inputs.append(x)
            x = checkpoint(blocks[0], x, use_reentrant=False) if block is blocks[0] else block(x)
        x.register_hook(lambda g: [blocks[k](inputs[k].detach()) for k in range(1, len(blocks))] and g)
        return x

    result = run_check(memory.check_checkpoint_trades_memory, {"checkpointed_forward": asks_twice})
    assert not result.passed and "gradient" in result.message and "recomputed" in result.message


def test_checkpoint_sequential_is_told_which_block_it_keeps():
    """``checkpoint_sequential`` runs its last segment without checkpointing it: the shifts show which block."""
    from torch.utils.checkpoint import checkpoint_sequential

    gen = torch.Generator().manual_seed(300)
    plan = memory.problems.blocks_plan(gen, dropout=False, x_grad=False)
    plan["blocks"], plan["acts"] = 4, (plan["acts"] * 4)[:4]
    with pytest.raises(CheckFailure) as caught:
        memory._expect_recomputed("check_checkpoint_trades_memory", Student(
            lambda blocks, x: checkpoint_sequential(list(blocks), 4, x, use_reentrant=False),
            "check_checkpoint_trades_memory", "checkpointed_forward"), plan)
    assert "not block 4 of 4" in str(caught.value)


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
