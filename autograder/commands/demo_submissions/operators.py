"""The demo's plausible buggy student for `operators`: a row_sum that loops over slices, and a masked_mean
that drops entries by multiplying with the mask (NaN and inf turn into NaN).

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('masked_mean_special_values', 'row_sum', 'row_sum_speed', 'row_sum_vectorized')

CELLS = {
    "masked_mean": '''import torch


def masked_mean(x, low, high):
    """Mean over dim 0 of the entries of x in [low, high]; 0 where there is none."""
    inside = (x >= low) & (x <= high)
    return (x * inside).sum(dim=0) / inside.sum(dim=0).clamp(min=1)
''',
    "row_sum": '''def row_sum(x):
    """The sum of x over dimension 0, in one vectorized call."""
    total = torch.zeros_like(x[0])
    for i in range(x.shape[0]):
        total = total + x[i]
    return total
''',
}
