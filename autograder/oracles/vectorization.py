"""Grader-only oracle of the ``vectorization`` assignment: per-sample gradients, one sample at a time in float64.

``per_sample_grads(model, params, x, y)`` is the exercise; its answer is computed here as the lesson's slow
version is, a Python loop over the samples with ``torch.autograd.grad``, from the parameters' values alone (the
MLP's computation written out), so that nothing here depends on the student's model object.
"""

import torch


def per_sample_grads(sizes, params, x, y):
    """``{name: [B, *shape]}`` in float64 on the CPU: row ``i`` of each is the gradient of
    ``cross_entropy(mlp(x[i:i+1]), y[i:i+1])`` with respect to that parameter, where ``mlp`` is
    ``Linear(sizes[0], sizes[1]), Tanh(), Linear(sizes[1], sizes[2]), ...`` with the values of ``params``
    (named as ``nn.Sequential`` names them: ``"0.weight"``, ``"0.bias"``, ``"2.weight"``...)."""
    values = {name: p.detach().to("cpu", torch.float64) for name, p in params.items()}
    inputs, targets = x.detach().to("cpu", torch.float64), y.detach().to("cpu")
    layers = len(sizes) - 1
    rows = {name: [] for name in values}
    for i in range(inputs.shape[0]):
        leaves = {name: value.clone().requires_grad_(True) for name, value in values.items()}
        h = inputs[i]
        for k in range(layers):
            h = h @ leaves[f"{2 * k}.weight"].T + leaves[f"{2 * k}.bias"]
            if k < layers - 1:
                h = torch.tanh(h)
        loss = torch.logsumexp(h, 0) - h[int(targets[i])]
        grads = torch.autograd.grad(loss, list(leaves.values()))
        for name, g in zip(leaves, grads):
            rows[name].append(g)
    return {name: torch.stack(rows[name]) for name in values}
