"""The demo's plausible buggy student for `dataloading`: the tutorial's tar dataset, ceil-sized shards, and a
channels-last batch.

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer. This student's ``TarImageDataset`` reads every shard in every
worker (duplicates with workers and ranks) and never closes its shards; ``write_shards`` cuts chunks of
ceil(n / num_shards) images, so the last shard comes out short; ``collate_images`` pads correctly in NumPy but
never moves the channels first, so its batches are [B, Hmax, Wmax, 3] (it still copies: the copies item passes).
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('collate_images_loader', 'collate_images_values', 'tar_dataset_errors', 'tar_dataset_ranks',
         'tar_dataset_resources', 'tar_dataset_workers', 'write_shards')

CELLS = {
    "write_shards": '''import os
import tarfile


def write_shards(image_paths, out_dir, num_shards):
    """Write the images into `num_shards` balanced tar files in `out_dir`; return the shard paths in order."""
    if num_shards < 1 or num_shards > len(image_paths):
        raise ValueError("bad number of shards")
    os.makedirs(out_dir, exist_ok=True)
    per_shard = -(-len(image_paths) // num_shards)          # ceil: the last shard gets what is left
    paths = []
    for index in range(num_shards):
        path = os.path.join(out_dir, f"shard-{index:05d}.tar")
        with tarfile.open(path, "w") as tar:
            for image_path in image_paths[index * per_shard:(index + 1) * per_shard]:
                tar.add(image_path, arcname=os.path.basename(image_path))
        paths.append(path)
    return paths
''',
    "TarImageDataset": '''import os
import tarfile

import cv2
import numpy as np
from torch.utils.data import IterableDataset, get_worker_info

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")


class TarImageDataset(IterableDataset):
    """(name, image) for every image member of the tar shards."""

    def __init__(self, paths, rank=0, world_size=1):
        self.paths = list(paths)
        self.rank, self.world_size = rank, world_size

    def __iter__(self):
        for path in self.paths:
            tar = tarfile.open(path)
            for member in tar:
                if member.name.endswith(IMAGE_EXTENSIONS):
                    data = np.frombuffer(tar.extractfile(member).read(), np.uint8)
                    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
                    if image is None:
                        raise ValueError(f"cannot decode {member.name} in {path}")
                    yield member.name, image
''',
    "collate_images": '''import numpy as np
import torch


def collate_images(batch):
    """[(name, HxWx3 uint8 image)] -> (names, images [B, 3, Hmax, Wmax] uint8 zero padded, sizes [B, 2] int64)."""
    names = [name for name, _ in batch]
    arrays = [np.asarray(image) for _, image in batch]
    sizes = torch.tensor([a.shape[:2] for a in arrays])
    height, width = sizes.max(dim=0).values.tolist()
    out = np.zeros((len(arrays), height, width, 3), np.uint8)
    for index, a in enumerate(arrays):
        out[index, :a.shape[0], :a.shape[1]] = a
    return names, torch.from_numpy(out), sizes
''',
}
