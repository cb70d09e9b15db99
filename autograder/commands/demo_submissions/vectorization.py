"""The demo's plausible buggy student for `vectorization`: the tutorial's flat-offset batch_gather with its
device fixed but no bounds check (an index N silently reads the next row); the per-sample gradients are right;
the masked mean divides by ``lengths`` unguarded, so a row of length 0 gives NaN (0 / 0).

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('batch_gather_errors', 'masked_mean_gradient', 'masked_mean_values')

CELLS = {
    "batch_gather": '''def batch_gather(tensor, indices):
    """out[b, k...] = tensor[b, indices[b, k...]] for tensor [B, N, *F] and indices [B, *K]."""
    batch, rows = tensor.shape[0], tensor.shape[1]
    if indices.shape[0] != batch:
        raise ValueError(f"batch size mismatch: {indices.shape[0]} != {batch}")
    offsets = torch.arange(batch, device=tensor.device) * rows
    offsets = offsets.reshape(batch, *[1] * (indices.dim() - 1))
    return tensor.reshape(batch * rows, *tensor.shape[2:])[indices + offsets]
''',
    "masked_batch_mean": '''import torch


def masked_batch_mean(x, lengths):
    """out[b] = x[b, :lengths[b]].mean(0) for x [B, T, F] and lengths [B]; 0 where lengths[b] == 0."""
    kept = torch.arange(x.shape[1], device=x.device) < lengths[:, None]
    total = torch.where(kept[:, :, None], x, 0).sum(1)
    return total / lengths[:, None].to(x.dtype)
''',
}
