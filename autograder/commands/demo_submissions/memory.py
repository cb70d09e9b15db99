"""The demo's plausible buggy student for `memory`: a counter that counts elements instead of bytes, the residual
added in place into relu's saved output (backward raises the version-counter error), and predictions detached
after the forward pass instead of computed under `torch.no_grad()`.

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('predict_no_graph', 'residual_backward', 'saved_bytes_count')

CELLS = {
    "saved_bytes": '''import torch


def saved_bytes(model, x):
    """Run model(x), counting the bytes of every tensor autograd saves for backward; return (output, bytes)."""
    total = 0

    def pack(t):
        nonlocal total
        total += t.numel()              # elements, not bytes
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total
''',
    "residual_relu": '''def residual_relu(x, w):
    """relu(x @ w) + x, with backward intact."""
    h = torch.relu(x @ w)
    h += x                              # saves an allocation... into relu's saved output
    return h
''',
    "predict": '''def predict(model, x):
    """model(x) without building a graph."""
    return model(x).detach()
''',
}
