"""The ``dataloading`` answers the checks compare against (grader-only)."""

import numpy as np
import torch


def _as_array(image):
    return image.numpy() if isinstance(image, torch.Tensor) else np.asarray(image)


def collated(items):
    """The collation of ``[(name, image)]``: ``(names, images [B, 3, Hmax, Wmax] uint8, sizes [B, 2] int64)`` as
    NumPy arrays, each image channels first in the top-left corner of its slot, zeros elsewhere."""
    arrays = [_as_array(image) for _, image in items]
    sizes = np.array([a.shape[:2] for a in arrays], dtype=np.int64).reshape(-1, 2)
    height, width = sizes.max(axis=0)
    images = np.zeros((len(arrays), 3, height, width), dtype=np.uint8)
    for index, array in enumerate(arrays):
        images[index, :, :array.shape[0], :array.shape[1]] = array.transpose(2, 0, 1)
    return [name for name, _ in items], images, sizes
