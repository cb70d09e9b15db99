"""A second correct solution, written differently from the reference: ``.backward()`` on a cloned leaf,
``Tensor.numpy(force=True)``, and an ``nn.Linear`` on the features [x^2, x] whose bias is the constant."""

import torch


def grad_of(f, x):
    with torch.enable_grad():
        point = x.detach().clone()
        point.requires_grad = True
        f(point).backward()
    return point.grad


def to_numpy(t):
    return t.numpy(force=True)


def fit_quadratic(generate_data, steps=1000, lr=0.1):
    line = torch.nn.Linear(2, 1)
    optimizer = torch.optim.Adam(line.parameters(), lr=lr)
    for _ in range(steps):
        x, y = generate_data()
        prediction = line(torch.stack([x ** 2, x], dim=1)).squeeze(1)
        loss = ((prediction - y) ** 2).sum()     # Adam is insensitive to the loss's scale
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        return torch.cat([line.weight.reshape(-1), line.bias])
