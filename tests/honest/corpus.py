"""Honest answers, written the way students write: every one deserves full marks and nothing under review.

``CORPUS[topic][name]`` is ``{answer cell (grade id): source}``; ``{ref}`` in a source stands for the reference
answer of that cell (what the exercise asks, unchanged), so that an entry adds the student's habits around it:
imports and version prints, helpers, test data and comparisons at the top level, comprehensions and generators
outside the graded computation, ``getattr`` for names, parameters named like built-ins, names that lesson cells
also use, type hints, docstrings, asserts. Cells an entry does not name keep the reference answer.

The first eight (``issue_*``) are the answers that lost points before the source analysis followed Python's scopes.
"""

VERSIONS = 'import importlib.metadata\nimport torch\nprint(importlib.metadata.version("torch"))\n'
VERSIONS_LOOP = "import numpy as np\nimport torch\nfor lib in (torch, np):\n    print(lib.__name__, lib.__version__)\n"
DTYPE_HELPER = ('import torch\n\ndef make_input(shape, name="float32", eval=False):\n'
                '    """Test data of the dtype called `name` (eval: detached)."""\n'
                '    dtype = getattr(torch, name)\n    x = torch.randn(*shape, dtype=dtype)\n'
                '    return x.detach() if eval else x\n\n')

OPERATORS = {
    "issue_version_print": {"row_sum": VERSIONS + "{ref}"},
    "issue_getattr_dtype_and_eval_parameter": {"row_sum": DTYPE_HELPER + (
        "def row_sum(x, eval=False):\n    \"\"\"Sum over dim 0 (eval: no graph).\"\"\"\n"
        "    out = torch.sum(x, dim=0)\n    return out.detach() if eval else out\n\n"
        "for name in (\"float32\", \"float64\"):\n    print(name, row_sum(make_input((3, 2), name)))\n")},
    "issue_top_level_test_data_named_x": {"row_sum": (
        "import torch\n\ndef row_sum(x):\n    return x.sum(dim=0)\n\n"
        "x = torch.tensor([[float(i + j) for j in range(3)] for i in range(4)])\n"
        "expected = torch.tensor([sum(row) for row in x.tolist()])\nprint(row_sum(x), x.sum(0))\n")},
    "issue_shape_guard": {"row_sum": (
        "import torch\n\ndef row_sum(x: torch.Tensor) -> torch.Tensor:\n"
        "    if x.dim() < 1 or not all(s >= 0 for s in x.shape):\n"
        "        raise ValueError(f\"expected a tensor with rows, got shape {tuple(x.shape)}\")\n"
        "    if sum(x.shape) == 0:\n        return x.sum(0)\n    return torch.sum(x, dim=0)\n")},
    "helpers_and_asserts": {"masked_mean": (
        "import torch\n\ndef _inside(x, low, high):\n    return (x >= low) & (x <= high)\n\n"
        "def masked_mean(x, low, high):\n    inside = _inside(x, low, high)\n"
        "    total = torch.where(inside, x, torch.zeros_like(x)).sum(dim=0)\n"
        "    return total / inside.sum(dim=0).clamp(min=1)\n\n"
        "x = torch.tensor([[1.0, 5.0], [2.0, -3.0]])\nassert torch.allclose(masked_mean(x, 0, 4), torch.tensor([1.5, 0.0]))\n")},
    "comparison_with_a_loop_at_top_level": {"row_sum": (
        "{ref}\n\ndef row_sum_loop(x):\n    out = torch.zeros(x.shape[1:])\n    for r in x:\n        out += r\n"
        "    return out\n\nt = torch.randn(5, 3)\nprint(torch.allclose(row_sum(t), row_sum_loop(t)))\n"
        "print([round(v, 3) for v in row_sum(t).tolist()])\n")},
    "builtin_names_as_locals": {"row_sum": (
        "import torch\n\ndef row_sum(input, dim=0):\n    sum = torch.sum(input, dim=dim)\n    all = sum\n    return all\n")},
}

STABILITY = {
    "issue_local_exp_beside_top_level_exp": {"stable_softmax": (
        "import torch\n\ndef stable_softmax(logits, dim=-1):\n    shifted = logits - logits.amax(dim=dim, keepdim=True)\n"
        "    exp = shifted.exp()\n    return exp / exp.sum(dim=dim, keepdim=True)\n\n"
        "z = torch.randn(2, 5)\nexp = torch.softmax(z, dim=-1)\nprint((stable_softmax(z) - exp).abs().max())\n")},
    "version_print_and_type_hints": {"stable_softmax": VERSIONS + (
        "\ndef stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:\n"
        "    \"\"\"Not torch.softmax: shift by the max, then normalise.\"\"\"\n"
        "    m = logits.amax(dim=dim, keepdim=True)\n    e = (logits - m).exp()\n"
        "    return e / e.sum(dim=dim, keepdim=True)\n")},
    "reference_compared_at_top_level": {"softmax_cross_entropy": (
        "{ref}\n\nlabels = torch.softmax(torch.randn(3, 4), -1)\nlogits = torch.randn(3, 4) * 100\n"
        "reference = -(labels * torch.log_softmax(logits, -1)).sum(-1)\n"
        "print(torch.allclose(softmax_cross_entropy(labels, logits), reference))\n")},
    "helper_shared_by_two_answers": {"stable_softmax": (
        "import torch\n\ndef shift(logits, dim):\n    return logits - logits.amax(dim=dim, keepdim=True)\n\n"
        "def stable_softmax(logits, dim=-1):\n    e = shift(logits, dim).exp()\n    return e / e.sum(dim, keepdim=True)\n"),
        "softmax_cross_entropy": (
        "def softmax_cross_entropy(labels, logits, dim=-1):\n    s = shift(logits, dim)\n"
        "    log_probs = s - s.exp().sum(dim=dim, keepdim=True).log()\n    return -(labels * log_probs).sum(dim=dim)\n")},
    "softplus_with_checks": {"softplus": (
        "{ref}\n\nx = torch.linspace(-50, 50, 11, dtype=torch.float64, requires_grad=True)\n"
        "assert torch.autograd.gradcheck(softplus, (x,))\n"
        "print({name: float(v) for name, v in zip(['min', 'max'], softplus(x).aminmax())})\n")},
    "softplus_getattr_for_function": {"softplus": (
        "import torch\n\nclass Softplus(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))\n\n"
        "    @staticmethod\n    def backward(ctx, grad_output):\n        (x,) = ctx.saved_tensors\n"
        "        return grad_output * torch.sigmoid(x)\n\n"
        "def softplus(x):\n    return Softplus.apply(x)\n\n"
        "for fn in ('relu', 'sigmoid'):\n    print(fn, getattr(torch, fn)(torch.tensor([-1.0, 1.0])))\n")},
}

VECTORIZATION = {
    "issue_local_weights_beside_lesson_weights": {"masked_batch_mean": (
        "import torch\n\ndef masked_batch_mean(x, lengths):\n    steps = torch.arange(x.shape[1], device=x.device)\n"
        "    weights = (steps < lengths[:, None]).to(x.dtype)\n"
        "    total = torch.where(weights[:, :, None] > 0, x, 0).sum(1)\n"
        "    return total / lengths.clamp(min=1).to(x.dtype)[:, None]\n")},
    "issue_generator_in_error_message": {"batch_gather": (
        "import torch\n\ndef batch_gather(tensor, indices):\n    batch, rows = tensor.shape[0], tensor.shape[1]\n"
        "    if indices.shape[0] != batch:\n        shape = \", \".join(str(s) for s in indices.shape)\n"
        "        raise ValueError(f\"indices of shape ({shape}) do not match batch size {batch}\")\n"
        "    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= rows):\n"
        "        raise IndexError(f\"indices must lie in [0, {rows})\")\n"
        "    offsets = (torch.arange(batch, device=tensor.device) * rows).reshape(batch, *[1] * (indices.dim() - 1))\n"
        "    return tensor.reshape(batch * rows, *tensor.shape[2:])[indices + offsets]\n")},
    "issue_detached_parameters_before_vmap": {"per_sample_grads": (
        "import torch\nimport torch.nn.functional as F\nfrom torch.func import functional_call, grad, vmap\n\n"
        "def per_sample_grads(model, params, x, y):\n    own = {n: p.detach() for n, p in model.named_parameters()}\n"
        "    assert set(own) == set(params), f\"params must name the model's parameters: {sorted(own)}\"\n\n"
        "    def loss(p, xi, yi):\n        out = functional_call(model, p, (xi[None],))\n"
        "        return F.cross_entropy(out, yi[None])\n\n"
        "    return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)\n")},
    "version_print_and_comparison_loop": {"batch_gather": VERSIONS + "{ref}\n\n"
        "t = torch.randn(2, 5, 3)\ni = torch.randint(0, 5, (2, 4))\n"
        "loop = torch.stack([t[b, i[b]] for b in range(2)])\nprint(torch.equal(batch_gather(t, i), loop))\n"},
    "torch_vmap_spelling": {"per_sample_grads": (
        "import torch\n\ndef per_sample_grads(model, params, x, y):\n"
        "    def sample_loss(p, xi, yi):\n        logits = torch.func.functional_call(model, p, (xi.unsqueeze(0),))\n"
        "        return torch.nn.functional.cross_entropy(logits, yi.unsqueeze(0))\n"
        "    return torch.vmap(torch.func.grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)\n")},
    "type_hints_and_asserts": {"masked_batch_mean": (
        "import torch\nfrom torch import Tensor\n\ndef masked_batch_mean(x: Tensor, lengths: Tensor) -> Tensor:\n"
        "    assert x.dim() == 3, f\"x must be [B, T, F], got {tuple(x.shape)}\"\n"
        "    kept = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]\n"
        "    total = torch.where(kept.unsqueeze(-1), x, torch.zeros((), dtype=x.dtype)).sum(dim=1)\n"
        "    return total / lengths.clamp(min=1).to(x.dtype).unsqueeze(-1)\n")},
}

BASICS = {
    "version_prints": {"to_numpy": VERSIONS + "import numpy as np\nprint(np.__version__)\n{ref}"},
    "module_versions_in_a_loop": {"to_numpy": VERSIONS_LOOP + "{ref}"},
    "grad_with_docstring_and_asserts": {"grad_of": (
        "{ref}\n\nx0 = torch.tensor([1.0, 2.0])\ng = grad_of(lambda v: (v ** 2).sum(), x0)\n"
        "assert torch.equal(g, 2 * x0) and not x0.requires_grad\n")},
    "fit_with_named_helpers": {"fit_quadratic": (
        "def features(x):\n    return torch.stack([x * x, x, torch.ones_like(x)], dim=-1)\n\n"
        "def fit_quadratic(generate_data, steps=1000, lr=0.1):\n    w = torch.randn(3, requires_grad=True)\n"
        "    optimizer = torch.optim.Adam([w], lr=lr)\n    for _ in range(steps):\n        x, y = generate_data()\n"
        "        loss = torch.nn.functional.mse_loss(features(x) @ w, y)\n        optimizer.zero_grad()\n"
        "        loss.backward()\n        optimizer.step()\n    return w.detach()\n")},
    "dtype_names_at_top_level": {"to_numpy": "{ref}\n\nfor name in ('float32', 'int64', 'bool'):\n"
                                 "    t = torch.zeros(2, dtype=getattr(torch, name))\n    print(name, to_numpy(t).dtype)\n"},
    "type_hints": {"to_numpy": (
        "import numpy as np\nimport torch\n\ndef to_numpy(t: torch.Tensor) -> np.ndarray:\n"
        "    \"\"\"Detached, on the CPU.\"\"\"\n    return t.detach().to('cpu').numpy()\n")},
}

BROADCASTING = {
    "version_print": {"pairwise_sq_distances": VERSIONS + "{ref}"},
    "shape_guard_with_generator": {"pairwise_sq_distances": (
        "import torch\n\ndef pairwise_sq_distances(x, y):\n"
        "    if x.dim() != 2 or y.dim() != 2 or x.shape[1] != y.shape[1]:\n"
        "        dims = ' x '.join(str(d) for d in x.shape)\n        raise ValueError(f'bad shapes: {dims}')\n"
        "    diff = x[:, None, :] - y[None, :, :]\n    return (diff * diff).sum(-1)\n")},
    "loop_reference_at_top_level": {"pairwise_sq_distances": (
        "{ref}\n\na, b = torch.randn(3, 2), torch.randn(4, 2)\n"
        "slow = torch.tensor([[float(((p - q) ** 2).sum()) for q in b] for p in a])\n"
        "print(torch.allclose(pairwise_sq_distances(a, b), slow, atol=1e-5))\n")},
    "merge_with_setattr_on_self": {"Merge": (
        "import torch\n\nclass Merge(torch.nn.Module):\n"
        "    def __init__(self, in_features1, in_features2, out_features, activation=None):\n"
        "        super().__init__()\n        for i, n in enumerate((in_features1, in_features2), start=1):\n"
        "            setattr(self, f'linear{i}', torch.nn.Linear(n, out_features))\n"
        "        self.activation = activation\n\n    def forward(self, a, b):\n"
        "        x = getattr(self, 'linear1')(a) + self.linear2(b)\n"
        "        return x if self.activation is None else self.activation(x)\n")},
    "strict_loss_with_input_named_input": {"strict_mse_loss": (
        "def strict_mse_loss(input, target):\n    if input.shape != target.shape:\n"
        "        raise ValueError(f'shapes differ: {list(input.shape)} vs {list(target.shape)}')\n"
        "    return (input - target).pow(2).mean()\n")},
    "comprehension_test_data": {"strict_mse_loss": "{ref}\n\ncases = [(torch.ones(n), torch.zeros(n)) for n in (1, 2, 3)]\n"
                                "print([float(strict_mse_loss(p, t)) for p, t in cases])\n"},
}

MODULES = {
    "version_print": {"affine": VERSIONS + "{ref}"},
    "mlp_with_comprehension": {"make_mlp": (
        "def make_mlp(sizes, activation=torch.nn.ReLU):\n    if len(sizes) < 2:\n"
        "        raise ValueError(f'need two sizes, got {list(sizes)}')\n"
        "    linears = [torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]\n"
        "    layers = [linears[0]]\n    for layer in linears[1:]:\n        layers += [activation(), layer]\n"
        "    return torch.nn.Sequential(*layers)\n")},
    "fit_with_parameter_named_eval": {"fit": (
        "def fit(model, x, y, steps=500, lr=0.1, eval=False):\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=lr)\n    for _ in range(steps):\n"
        "        loss = torch.nn.functional.mse_loss(model(x), y)\n        optimizer.zero_grad()\n"
        "        loss.backward()\n        optimizer.step()\n    if eval:\n        model.eval()\n    return loss.item()\n")},
    "normalizer_with_getattr_buffers": {"normalizer": (
        "{ref}\n\nnorm = Normalizer(3)\nprint({name: tuple(getattr(norm, name).shape) for name in ('running_mean', 'running_var')})\n")},
    "affine_with_type_hints": {"affine": (
        "import torch\nfrom torch import nn\n\nclass Affine(nn.Module):\n    def __init__(self) -> None:\n"
        "        super().__init__()\n        self.a = nn.Parameter(torch.randn(1))\n        self.b = nn.Parameter(torch.randn(1))\n\n"
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return torch.addcmul(self.b, self.a, x)\n")},
    "parameters_listed_at_top_level": {"affine": "{ref}\n\nprint({n: p.shape for n, p in Affine().named_parameters()})\n"},
}

MEMORY = {
    "version_print": {"saved_bytes": VERSIONS + "{ref}"},
    "checkpoint_through_module_name": {"checkpointed_forward": (
        "import torch\nimport torch.utils.checkpoint\n\ndef checkpointed_forward(blocks, x):\n    h = x\n"
        "    for block in blocks:\n        h = torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)\n    return h\n")},
    "predict_with_inference_comparison": {"predict": (
        "{ref}\n\nm = torch.nn.Linear(3, 2)\nout = predict(m, torch.randn(4, 3))\nassert not out.requires_grad\n")},
    "profile_with_sorted": {"most_expensive_op": (
        "import torch\nfrom torch.profiler import ProfilerActivity, profile\n\ndef most_expensive_op(step):\n"
        "    step()\n    with profile(activities=[ProfilerActivity.CPU]) as prof:\n        step()\n"
        "    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)\n"
        "    return events[0].key\n")},
    "residual_relu_with_docstring": {"residual_relu": (
        "def residual_relu(x, w):\n    \"\"\"relu(x @ w) + x; in place on the product (no extra copy).\"\"\"\n"
        "    out = torch.matmul(x, w)\n    out.relu_()\n    return out + x\n")},
    "sizes_table_at_top_level": {"saved_bytes": "{ref}\n\nsizes = {n: saved_bytes(torch.nn.Linear(n, n), torch.randn(2, n))[1] for n in (2, 4)}\nprint(sizes)\n"},
}

DISTRIBUTED = {
    "version_print": {"train_ddp": VERSIONS + "{ref}"},
    "backend_by_getattr": {"average_gradients": (
        "{ref}\n\nprint([getattr(dist.Backend, name) for name in ('GLOO',)])\n")},
    "accumulate_with_helper": {"train_accumulate": (
        "def _loss(ddp, x, y, accumulation):\n    return torch.nn.functional.mse_loss(ddp(x), y) / accumulation\n\n"
        "def train_accumulate(rank, world_size, model, dataset, *, batch_size, accumulation, epochs, lr, seed):\n"
        "    ddp = DistributedDataParallel(model)\n"
        "    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)\n"
        "    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)\n"
        "    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)\n    for epoch in range(epochs):\n"
        "        sampler.set_epoch(epoch)\n        optimizer.zero_grad()\n"
        "        for i, (x, y) in enumerate(loader, start=1):\n            if i % accumulation:\n"
        "                with ddp.no_sync():\n                    _loss(ddp, x, y, accumulation).backward()\n"
        "            else:\n                _loss(ddp, x, y, accumulation).backward()\n"
        "                optimizer.step()\n                optimizer.zero_grad()\n    return model\n")},
    "average_with_world_size_named_len": {"average_gradients": (
        "def average_gradients(model):\n    size = float(dist.get_world_size())\n"
        "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n    for g in grads:\n"
        "        dist.all_reduce(g)\n        g.div_(size)\n")},
    "ddp_type_hints": {"train_ddp": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel\nDDP = DistributedDataParallel\n"
        "from torch.utils.data import DataLoader, Dataset, DistributedSampler\n\n"
        "def train_ddp(rank: int, world_size: int, model: torch.nn.Module, dataset: Dataset, *, batch_size: int,\n"
        "              epochs: int, lr: float, seed: int) -> torch.nn.Module:\n    ddp = DDP(model)\n"
        "    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)\n"
        "    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)\n"
        "    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)\n    for epoch in range(epochs):\n"
        "        sampler.set_epoch(epoch)\n        for x, y in loader:\n            optimizer.zero_grad()\n"
        "            torch.nn.functional.mse_loss(ddp(x), y).backward()\n            optimizer.step()\n    return model\n")},
    "names_listed_at_top_level": {"average_gradients": "{ref}\n\nprint(sorted(n for n in dir(dist) if n.startswith('all_')))\n"},
}

AMP = {
    "version_print": {"train_amp": VERSIONS + "{ref}"},
    "dtype_from_name": {"train_amp": "{ref}\n\nDTYPES = {name: getattr(torch, name) for name in ('float16', 'bfloat16')}\nprint(DTYPES)\n"},
    "checkpoint_with_type_hints": {"checkpoint": (
        "import torch\nfrom pathlib import Path\n\ndef save_checkpoint(path: Path, model, optimizer, scaler, step: int) -> None:\n"
        "    state = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
        "             'scaler': scaler.state_dict(), 'step': step}\n    torch.save(state, path)\n\n"
        "def load_checkpoint(path: Path, model, optimizer, scaler) -> int:\n"
        "    state = torch.load(path, weights_only=True, map_location='cpu')\n"
        "    for name, obj in (('model', model), ('optimizer', optimizer), ('scaler', scaler)):\n"
        "        obj.load_state_dict(state[name])\n    return state['step']\n")},
    "checkpoint_keys_checked": {"checkpoint": "{ref}\n\nKEYS = tuple(k for k in ('model', 'optimizer', 'scaler', 'step'))\nassert len(KEYS) == 4\n"},
    "train_with_eval_parameter": {"train_amp": "{ref}\n\ndef evaluate(model, batches, eval=True):\n"
                                  "    model.eval() if eval else model.train()\n"
                                  "    with torch.no_grad():\n        return [float(model(x).mean()) for x, _ in batches]\n"},
    "version_loop": {"checkpoint": VERSIONS_LOOP + "{ref}"},
}

DATALOADING = {
    "version_print": {"collate_images": VERSIONS + "{ref}"},
    "collate_checked_with_all": {"collate_images": ("{ref}\n\nnames, _, _ = collate_images([('a', np.zeros((1, 1, 3), dtype=np.uint8))])\n"
                                                 "assert all(isinstance(n, str) for n in names)\n")},
    "module_versions_in_a_loop": {"collate_images": VERSIONS_LOOP + "{ref}"},
    "fake_batch_at_top_level": {"collate_images": (
        "{ref}\n\nfake = [(f'img{i}.png', np.zeros((2 + i, 3, 3), dtype=np.uint8)) for i in range(3)]\n"
        "names, images, sizes = collate_images(fake)\nassert images.shape == (3, 3, 4, 3), images.shape\n")},
    "dtype_by_name": {"collate_images": "{ref}\n\nprint(getattr(np, 'uint8'), getattr(torch, 'uint8'))\n"},
    "write_shards_with_print": {"write_shards": "{ref}\n\nprint(write_shards.__doc__)\n"},
}

CORPUS = {"operators": OPERATORS, "stability": STABILITY, "vectorization": VECTORIZATION, "basics": BASICS,
          "broadcasting": BROADCASTING, "modules": MODULES, "memory": MEMORY, "distributed": DISTRIBUTED,
          "amp": AMP, "dataloading": DATALOADING}


def answers(topic, name, reference):
    """The answer cells of entry ``name``: the reference's, with the entry's cells (``{ref}`` filled in)."""
    return {**reference, **{cell: text.replace("{ref}", reference[cell])
                            for cell, text in CORPUS[topic][name].items()}}
