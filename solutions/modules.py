"""Reference solutions for the `modules` assignment.

Generated from source/modules/modules.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell affine ---
import torch


class Affine(torch.nn.Module):
    """a * x + b with learnable parameters a and b of shape [1]."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(1))
        self.b = torch.nn.Parameter(torch.randn(1))

    def forward(self, x):
        return self.a * x + self.b


# --- cell make_mlp ---
def make_mlp(sizes, activation=torch.nn.ReLU):
    """Linear layers between consecutive sizes, with activation() between them and none after the last."""
    if len(sizes) < 2:
        raise ValueError(f"make_mlp needs at least two sizes (inputs and outputs), got {list(sizes)}")
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(activation())
        layers.append(torch.nn.Linear(n_in, n_out))
    return torch.nn.Sequential(*layers)


# --- cell fit ---
def fit(model, x, y, steps=500, lr=0.1):
    """Train `model` in place with SGD on the mean squared error; return the final loss."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


# --- cell normalizer ---
class Normalizer(torch.nn.Module):
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
        mean = x.mean(dim=0)
        var = x.var(dim=0, correction=0)               # biased (divide by N): to normalise
        n = x.shape[0]
        with torch.no_grad():                          # statistics, kept out of the autograd graph
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * n / (n - 1))   # unbiased
        return (x - mean) / torch.sqrt(var + self.eps)
