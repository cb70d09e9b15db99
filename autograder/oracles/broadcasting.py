"""The ``broadcasting`` answers the checks compare against (grader-only)."""


def sq_distances(x, y):
    """sum_d (x[n, d] - y[m, d])^2 in float64, tiled explicitly (``pairwise_sq_distances``'s answer)."""
    n, m = x.shape[0], y.shape[0]
    xs = x.double().unsqueeze(1).expand(n, m, x.shape[1])
    ys = y.double().unsqueeze(0).expand(n, m, y.shape[1])
    return ((xs - ys) ** 2).sum(-1)
