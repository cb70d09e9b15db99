"""The demo's plausible buggy student for `modules`: `Affine` keeps a and b as plain tensors (the forward pass
works, but nothing registers them), and `make_mlp` puts an activation after the last layer too.

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

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
}
