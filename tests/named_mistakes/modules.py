"""Mistakes in the modules exercises, written apart from the mutants (see ``__init__``)."""

import torch


def fit_no_zero_grad(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return loss.item()


def fit_sum_loss(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y, reduction="sum")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


class AffinePlain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.randn(1, requires_grad=True)
        self.b = torch.randn(1, requires_grad=True)

    def forward(self, x):
        return self.a * x + self.b


def make_mlp_relu_everywhere(sizes, activation=torch.nn.ReLU):
    if len(sizes) < 2:
        raise ValueError(f"need two sizes, got {sizes}")
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(n_in, n_out), activation()]
    return torch.nn.Sequential(*layers)


MISTAKES = {
    "fit never zeroing the gradients": ({"fit": fit_no_zero_grad}, "fit without zero_grad"),
    "fit with reduction='sum'": ({"fit": fit_sum_loss}, "fit on the sum of squares"),
    "Affine with tensors that require grad": ({"Affine": AffinePlain}, "Affine with plain tensors"),
    "make_mlp with an activation after every layer": ({"make_mlp": make_mlp_relu_everywhere},
                                                      "make_mlp with an activation after the last layer"),
}
