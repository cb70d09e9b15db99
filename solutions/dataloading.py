"""Reference solutions for the `dataloading` assignment.

Generated from source/dataloading/dataloading.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell ImageDirectoryDataset ---
from pathlib import Path

import cv2
from torch.utils.data import Dataset


class ImageDirectoryDataset(Dataset):
    """The images in `root` matching `pattern`, in sorted path order, as HxWx3 uint8 BGR arrays."""

    def __init__(self, root, pattern="*.png"):
        self.paths = sorted(str(path) for path in Path(root).glob(pattern) if path.is_file())

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        path = self.paths[index]                   # IndexError past the end
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"OpenCV cannot decode {path}")
        return image


# --- cell write_shards ---
import os
import tarfile


def write_shards(image_paths, out_dir, num_shards):
    """Write the images into `num_shards` balanced tar files in `out_dir`; return the shard paths in order."""
    image_paths = [str(path) for path in image_paths]
    if not 1 <= num_shards <= len(image_paths):
        raise ValueError(f"num_shards must be between 1 and {len(image_paths)} (the number of images), "
                         f"got {num_shards}")
    os.makedirs(out_dir, exist_ok=True)
    per_shard, extra = divmod(len(image_paths), num_shards)
    shard_paths, start = [], 0
    for index in range(num_shards):
        size = per_shard + (1 if index < extra else 0)     # the first `extra` shards take one more
        shard_path = os.path.join(out_dir, f"shard-{index:05d}.tar")
        with tarfile.open(shard_path, "w") as tar:
            for image_path in image_paths[start:start + size]:
                tar.add(image_path, arcname=os.path.basename(image_path))
        shard_paths.append(shard_path)
        start += size
    return shard_paths


# --- cell TarImageDataset ---
import os
import tarfile

import cv2
import numpy as np
from torch.utils.data import IterableDataset, get_worker_info

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")


class TarImageDataset(IterableDataset):
    """(name, image) for every image member of the tar shards, each exactly once over all workers and ranks."""

    def __init__(self, paths, rank=0, world_size=1):
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in 0..{world_size - 1}, got {rank}")
        self.paths = [str(path) for path in paths]   # only paths and numbers: cheap to copy into workers
        self.rank, self.world_size = rank, world_size

    def __iter__(self):
        for path in self.paths:                       # fail before yielding anything
            if not os.path.isfile(path):
                raise FileNotFoundError(f"shard {path} does not exist")
        if not self.paths:
            return
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        readers = self.world_size * workers
        reader = self.rank * workers + worker
        shards = len(self.paths)
        if readers <= shards:       # enough shards: whole shards, round-robin
            plan = [(shard, 0, 1) for shard in range(reader, shards, readers)]
        else:                       # more readers than shards: the readers of one shard take turns by image
            shard = reader % shards
            sharing = len(range(shard, readers, shards))
            plan = [(shard, reader // shards, sharing)]
        for shard, first, step in plan:
            path = self.paths[shard]
            with tarfile.open(path, "r|") as tar:     # streaming: one sequential read
                index = -1
                for member in tar:
                    tar.members = []                  # tarfile remembers every member it read: forget them
                    if not member.isfile() or not member.name.lower().endswith(IMAGE_EXTENSIONS):
                        continue
                    index += 1
                    if index % step != first:
                        continue
                    data = np.frombuffer(tar.extractfile(member).read(), dtype=np.uint8)
                    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
                    if image is None:
                        raise ValueError(f"{path}: member {member.name!r} is not a decodable image")
                    yield member.name, image


# --- cell collate_images ---
import numpy as np
import torch


def collate_images(batch):
    """[(name, HxWx3 uint8 image)] -> (names, images [B, 3, Hmax, Wmax] uint8 zero padded, sizes [B, 2] int64)."""
    names = [name for name, _ in batch]
    images = [torch.as_tensor(image) for _, image in batch]     # NumPy arrays or tensors; views, not copies yet
    sizes = torch.tensor([tuple(image.shape[:2]) for image in images], dtype=torch.int64)
    height, width = sizes.max(dim=0).values.tolist()
    out = torch.zeros(len(images), 3, height, width, dtype=torch.uint8)
    for index, image in enumerate(images):
        out[index, :, :image.shape[0], :image.shape[1]] = image.permute(2, 0, 1)   # the one copy of each image
    return names, out, sizes
