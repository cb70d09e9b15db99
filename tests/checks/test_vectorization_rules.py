"""The compile items' source rule: a decision on a tensor's values is read from the source (the worker's explain of
graph breaks only costs), and the honest forms (guards on sizes, dtypes, devices; masks and torch.where) pass."""

import pytest

from autograder.checks.vectorization.rules import no_value_branch
from autograder.source_evidence.source_rules import rule_findings
from autograder.source_evidence.submitted_source import Submission

RULE = no_value_branch("masked_batch_mean")
HEAD = "import torch\n\ndef masked_batch_mean(x, lengths):\n"


def _findings(body):
    return rule_findings(RULE, Submission.from_text(HEAD + body))


@pytest.mark.quick
@pytest.mark.parametrize("body", [
    "    kept = torch.arange(x.shape[1], device=x.device) < lengths[:, None]\n"
    "    return torch.where(kept[:, :, None], x, 0).sum(1) / lengths.clamp(min=1).to(x.dtype)[:, None]\n",
    "    if x.dim() != 3 or lengths.dim() != 1:\n        raise ValueError('x must be [B, T, F]')\n"
    "    if x.shape[0] != lengths.shape[0]:\n        raise ValueError(f'{x.shape[0]} rows, {lengths.numel()} lengths')\n"
    "    if not torch.is_tensor(lengths) or lengths.dtype.is_floating_point:\n        raise TypeError('int lengths')\n"
    "    batch, steps, _ = x.shape\n    kept = torch.arange(steps, device=x.device) < lengths[:, None]\n"
    "    count = lengths.clamp(min=1).to(x.dtype) if x.is_floating_point() else lengths\n"
    "    return (x * kept[:, :, None]).sum(1) / count[:, None]\n",
    "    prefix = torch.cat([x.new_zeros(x.shape[0], 1, x.shape[2]), x.cumsum(1)], 1)\n"
    "    return prefix[torch.arange(x.shape[0]), lengths] / lengths.clamp(min=1).unsqueeze(1).to(x.dtype)\n",
])
def test_honest_forms_pass(body):
    assert _findings(body) == []


@pytest.mark.quick
@pytest.mark.parametrize("body, words", [
    ("    if lengths.numel() and lengths.min() == x.shape[1]:\n        return x.mean(1)\n    return x.sum(1)\n",
     "an `if` on a tensor's values"),
    ("    longest = lengths.max()\n    while longest > x.shape[1]:\n        longest = longest - 1\n    return x.sum(1)\n",
     "a `while` on a tensor's values"),
    ("    full = (lengths == x.shape[1]).all()\n    return x.mean(1) if full else x.sum(1)\n",
     "a conditional expression"),
    ("    t = int(lengths.max())\n    return x[:, :t].sum(1)\n", "with `int()`"),
    ("    print(lengths)\n    return x.sum(1)\n", "calls `print`"),
    ("    n = lengths.cpu().numpy()\n    return x.sum(1) / torch.from_numpy(n)[:, None]\n", "`.numpy()`"),
])
def test_decisions_on_values_are_read_from_the_source(body, words):
    (finding, *_) = _findings(body)
    assert words in finding.text() and "masked_batch_mean" in finding.text()
