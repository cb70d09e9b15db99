"""The demo's plausible buggy student for `modules`: `Affine` keeps a and b as plain tensors (the forward pass
works, but nothing registers them), `make_mlp` puts an activation after the last layer too, and `Normalizer`
normalises with `x.var(0)`, which divides by N - 1 by default (BatchNorm normalises with the biased variance).

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('affine_parameters', 'affine_round_trips', 'make_mlp_forward', 'make_mlp_structure', 'normalizer_gradients',
         'normalizer_train')

CELLS = {
    "affine": '''import torch


class Affine(torch.nn.Module):
    """a * x + b with learnable parameters a and b of shape [1]."""

    def __init__(self):
        super().__init__()
        self.a = torch.randn(1, requires_grad=True)
        self.b = torch.randn(1, requires_grad=True)

    def forward(self, x):
        return self.a * x + self.b
''',
    "make_mlp": '''def make_mlp(sizes, activation=torch.nn.ReLU):
    """Linear layers between consecutive sizes, with activation() between them and none after the last."""
    if len(sizes) < 2:
        raise ValueError("make_mlp needs at least two sizes")
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers.append(torch.nn.Linear(n_in, n_out))
        layers.append(activation())
    return torch.nn.Sequential(*layers)
''',
    "normalizer": '''class Normalizer(torch.nn.Module):
    """Normalises each feature of x [N, num_features]: batch statistics in train(), running statistics in eval()."""

    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        mean, var = x.mean(0), x.var(0)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * var)
        return (x - mean) / torch.sqrt(var + self.eps)
''',
}
