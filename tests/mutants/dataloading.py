"""Realistic mistakes in the dataloading exercises, each with the checks that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other student objects come from the
reference solution. The classes live in this importable module, so they also run under "spawn".
"""

import glob
import os
import random
import re
import tarfile

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset, get_worker_info

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")


def _decode(data):
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) if data else None   # OpenCV asserts on b""


def _images(path, flag=cv2.IMREAD_COLOR):
    """(name, image) of every image member of one shard, done right (closed, no growing member list)."""
    with tarfile.open(path, "r|") as tar:
        for member in tar:
            tar.members = []
            if member.isfile() and member.name.lower().endswith(IMAGE_EXTENSIONS):
                data = np.frombuffer(tar.extractfile(member).read(), np.uint8)
                image = cv2.imdecode(data, flag) if data.size else None     # OpenCV asserts on an empty buffer
                if image is None:
                    raise ValueError(f"{path}: cannot decode {member.name}")
                yield member.name, image


def _worker():
    info = get_worker_info()
    return (0, 1) if info is None else (info.id, info.num_workers)


class _Base(IterableDataset):
    def __init__(self, paths, rank=0, world_size=1):
        self.paths, self.rank, self.world_size = list(paths), rank, world_size
        for path in self.paths:
            if not os.path.isfile(path):
                raise FileNotFoundError(path)


# ------------------------------------------------------------------ TarImageDataset

class NaiveTarDataset(_Base):
    """The tutorial's design: every worker (and rank) reads every shard."""

    def __iter__(self):
        for path in self.paths:
            yield from _images(path)


class OneWorkerPerShard(_Base):
    """The tutorial's "fix": worker i reads shard i, and any other worker count is an error."""

    def __iter__(self):
        worker, workers = _worker()
        if get_worker_info() is None:
            for path in self.paths:
                yield from _images(path)
            return
        if workers != len(self.paths):
            raise ValueError(f"use exactly one worker per shard ({len(self.paths)}), not {workers}")
        yield from _images(self.paths[worker])


class DropsRemainder(_Base):
    """Gives each reader len(paths) // readers consecutive shards: the rest are never read."""

    def __iter__(self):
        worker, workers = _worker()
        readers, reader = self.world_size * workers, self.rank * workers + worker
        per_reader = len(self.paths) // readers
        for path in self.paths[reader * per_reader:(reader + 1) * per_reader]:
            yield from _images(path)


def _split(paths, reader, readers):
    """Right: whole shards while there are enough, otherwise readers share a shard by image index."""
    if readers <= len(paths):
        for path in paths[reader::readers]:
            yield from _images(path)
        return
    shard = reader % len(paths)
    sharing = len(range(shard, readers, len(paths)))
    for index, item in enumerate(_images(paths[shard])):
        if index % sharing == reader // len(paths):
            yield item


class IgnoresRank(_Base):
    """Splits among its workers correctly, but every rank reads everything."""

    def __iter__(self):
        worker, workers = _worker()
        yield from _split(self.paths, worker, workers)


class ReturnsRGB(_Base):
    def __iter__(self):
        worker, workers = _worker()
        for name, image in _split(self.paths, self.rank * workers + worker, self.world_size * workers):
            yield name, cv2.cvtColor(image, cv2.COLOR_BGR2RGB)


class LeaksOpenFiles(_Base):
    """Opens every shard and never closes it (the garbage collector closes it, with a ResourceWarning)."""

    def __iter__(self):
        worker, workers = _worker()
        readers, reader = self.world_size * workers, self.rank * workers + worker
        for path in self.paths[reader::readers]:
            tar = tarfile.open(path)
            for member in tar:
                tar.members = []
                if member.isfile() and member.name.endswith(IMAGE_EXTENSIONS):
                    yield member.name, _decode(tar.extractfile(member).read())


class KeepsShardsOpen(_Base):
    """Caches open shards on the dataset to reuse them next epoch: they stay open after the pass."""

    def __iter__(self):
        self.open_shards = getattr(self, "open_shards", {})
        worker, workers = _worker()
        for path in self.paths[self.rank * workers + worker::self.world_size * workers]:
            if path not in self.open_shards:
                self.open_shards[path] = open(path, "rb")
            handle = self.open_shards[path]
            handle.seek(0)
            tar = tarfile.open(fileobj=handle, mode="r|")
            for member in tar:
                tar.members = []
                if member.isfile() and member.name.endswith(IMAGE_EXTENSIONS):
                    yield member.name, _decode(tar.extractfile(member).read())


class GrowingMemberList(_Base):
    """Iterates tar.getmembers(): tarfile keeps a TarInfo for every member of the shard."""

    def __iter__(self):
        worker, workers = _worker()
        for path in self.paths[self.rank * workers + worker::self.world_size * workers]:
            with tarfile.open(path) as tar:
                for member in tar.getmembers():
                    if member.isfile() and member.name.endswith(IMAGE_EXTENSIONS):
                        yield member.name, _decode(tar.extractfile(member).read())


class DecodesEverything(_Base):
    """Does not skip members that are not images."""

    def __iter__(self):
        worker, workers = _worker()
        for path in self.paths[self.rank * workers + worker::self.world_size * workers]:
            with tarfile.open(path) as tar:
                for member in tar:
                    tar.members = []
                    if member.isfile():
                        yield member.name, _decode(tar.extractfile(member).read())


class ReadUnchanged(_Base):
    """cv2.IMREAD_UNCHANGED: grey images come back HxW, transparent ones HxWx4."""

    def __iter__(self):
        for path in self.paths:
            yield from _images(path, cv2.IMREAD_UNCHANGED)


class SkipsCorruptImages(_Base):
    """Silently drops members that do not decode, and shards that do not exist."""

    def __init__(self, paths, rank=0, world_size=1):
        self.paths = [p for p in paths if os.path.exists(p)]
        self.rank, self.world_size = rank, world_size

    def __iter__(self):
        for path in self.paths:
            with tarfile.open(path, "r|") as tar:
                for member in tar:
                    tar.members = []
                    if member.isfile() and member.name.endswith(IMAGE_EXTENSIONS):
                        data = np.frombuffer(tar.extractfile(member).read(), np.uint8)
                        image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
                        if image is not None:
                            yield member.name, image


class ChecksPathsLazily(_Base):
    """Opens shards one after the other: a missing last shard fails only after the others were yielded."""

    def __init__(self, paths, rank=0, world_size=1):
        self.paths, self.rank, self.world_size = list(paths), rank, world_size

    def __iter__(self):
        for path in self.paths:
            yield from _images(path)


# ------------------------------------------------------------------ ImageDirectoryDataset

class _Folder(Dataset):
    def __init__(self, root, pattern="*.png"):
        self.paths = sorted(glob.glob(os.path.join(root, pattern)))

    def __len__(self):
        return len(self.paths)


class FolderRandomChoice(_Folder):
    """The tutorial's __getitem__: random.choice ignores the index."""

    def __getitem__(self, index):
        return cv2.imread(random.choice(self.paths), cv2.IMREAD_COLOR)


class FolderUnsorted(_Folder):
    def __init__(self, root, pattern="*.png"):
        self.paths = glob.glob(os.path.join(root, pattern))

    def __getitem__(self, index):
        return cv2.imread(self.paths[index], cv2.IMREAD_COLOR)


class FolderWrapsIndex(_Folder):
    def __getitem__(self, index):
        return cv2.imread(self.paths[index % len(self.paths)], cv2.IMREAD_COLOR)


class FolderRGB(_Folder):
    def __getitem__(self, index):
        return cv2.cvtColor(cv2.imread(self.paths[index]), cv2.COLOR_BGR2RGB)


class FolderIgnoresPattern(_Folder):
    def __init__(self, root, pattern="*.png"):
        self.paths = sorted(glob.glob(os.path.join(root, "*.png")))

    def __getitem__(self, index):
        return cv2.imread(self.paths[index], cv2.IMREAD_COLOR)


class FolderRecursive(_Folder):
    def __init__(self, root, pattern="*.png"):
        self.paths = sorted(glob.glob(os.path.join(root, "**", pattern), recursive=True))   # subfolders too

    def __getitem__(self, index):
        return cv2.imread(self.paths[index], cv2.IMREAD_COLOR)


def _natural(path):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


class FolderNaturalSort(_Folder):
    def __init__(self, root, pattern="*.png"):
        self.paths = sorted(glob.glob(os.path.join(root, pattern)), key=_natural)     # img8 before img10

    def __getitem__(self, index):
        return cv2.imread(self.paths[index], cv2.IMREAD_COLOR)


# ------------------------------------------------------------------ write_shards

def _write(out_dir, groups, arcname=os.path.basename):
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for index, group in enumerate(groups):
        path = os.path.join(out_dir, f"shard-{index:05d}.tar")
        with tarfile.open(path, "w") as tar:
            for image in group:
                tar.add(image, arcname=arcname(image))
        paths.append(path)
    return paths


def shards_ceil_chunks(image_paths, out_dir, num_shards):
    """Chunks of ceil(n / num_shards): 10 images in 4 shards become 3, 3, 3, 1."""
    if not 1 <= num_shards <= len(image_paths):
        raise ValueError("bad num_shards")
    size = -(-len(image_paths) // num_shards)
    return _write(out_dir, [image_paths[i * size:(i + 1) * size] for i in range(num_shards)])


def shards_drop_remainder(image_paths, out_dir, num_shards):
    if not 1 <= num_shards <= len(image_paths):
        raise ValueError("bad num_shards")
    size = len(image_paths) // num_shards
    return _write(out_dir, [image_paths[i * size:(i + 1) * size] for i in range(num_shards)])


def shards_full_paths(image_paths, out_dir, num_shards):
    """Keeps each image's full path as the member name."""
    if not 1 <= num_shards <= len(image_paths):
        raise ValueError("bad num_shards")
    return _write(out_dir, [image_paths[i::num_shards] for i in range(num_shards)], arcname=lambda p: p)


def shards_random(image_paths, out_dir, num_shards):
    """Shuffles with an unseeded generator: a different split each call."""
    if not 1 <= num_shards <= len(image_paths):
        raise ValueError("bad num_shards")
    shuffled = random.sample(list(image_paths), len(image_paths))
    return _write(out_dir, [shuffled[i::num_shards] for i in range(num_shards)])


def shards_no_validation(image_paths, out_dir, num_shards):
    num_shards = max(num_shards, 1)
    return _write(out_dir, [image_paths[i::num_shards] for i in range(num_shards)])


# ------------------------------------------------------------------ collate_images

def _parts(batch):
    """(names, HxWx3 NumPy arrays, Hmax, Wmax) of a batch of NumPy arrays or CPU tensors."""
    arrays = [np.asarray(image) for _, image in batch]
    return ([name for name, _ in batch], arrays, max(a.shape[0] for a in arrays), max(a.shape[1] for a in arrays))


def _sizes(arrays):
    return torch.tensor([a.shape[:2] for a in arrays], dtype=torch.int64)


def _placed(arrays, height, width, *, offset=lambda a, h, w: (0, 0), fill=0):
    out = torch.full((len(arrays), 3, height, width), fill, dtype=torch.uint8)
    for i, a in enumerate(arrays):
        top, left = offset(a, height, width)
        out[i, :, top:top + a.shape[0], left:left + a.shape[1]] = torch.from_numpy(a).permute(2, 0, 1)
    return out


def collate_channels_last(batch):
    """Pads in NumPy, as OpenCV's arrays come, and never moves the channels first: [B, Hmax, Wmax, 3]."""
    names, arrays, height, width = _parts(batch)
    out = np.zeros((len(arrays), height, width, 3), np.uint8)
    for i, a in enumerate(arrays):
        out[i, :a.shape[0], :a.shape[1]] = a
    return names, torch.from_numpy(out), _sizes(arrays)


def collate_centred(batch):
    """Centres each image in its slot: the padding is split between top and bottom, left and right."""
    names, arrays, height, width = _parts(batch)
    centre = lambda a, h, w: ((h - a.shape[0]) // 2, (w - a.shape[1]) // 2)  # noqa: E731
    return names, _placed(arrays, height, width, offset=centre), _sizes(arrays)


def collate_resized(batch):
    """Resizes every image to the largest height and width instead of padding it."""
    names, arrays, height, width = _parts(batch)
    out = torch.stack([torch.from_numpy(cv2.resize(a, (width, height))).permute(2, 0, 1) for a in arrays])
    return names, out, _sizes(arrays)


def collate_int32_sizes(batch):
    names, arrays, height, width = _parts(batch)
    return names, _placed(arrays, height, width), torch.tensor([a.shape[:2] for a in arrays], dtype=torch.int32)


def collate_sizes_wh(batch):
    """Sizes as (W, H), the order cv2.resize takes."""
    names, arrays, height, width = _parts(batch)
    return names, _placed(arrays, height, width), torch.tensor([(a.shape[1], a.shape[0]) for a in arrays])


def collate_stack_when_equal(batch):
    """torch.stack, which is right only when every image has the same size."""
    names, arrays, _, _ = _parts(batch)
    return names, torch.stack([torch.from_numpy(a).permute(2, 0, 1) for a in arrays]), _sizes(arrays)


def collate_float(batch):
    """Converts to float in [0, 1] in the collate function."""
    names, arrays, height, width = _parts(batch)
    return names, _placed(arrays, height, width).float() / 255, _sizes(arrays)


def collate_grey_padding(batch):
    """Pads with 114 (the "letterbox" grey of some detectors) instead of 0."""
    names, arrays, height, width = _parts(batch)
    return names, _placed(arrays, height, width, fill=114), _sizes(arrays)


def collate_list_of_tensors(batch):
    """Returns each image as its own [3, H, W] tensor: no padding, no batch tensor."""
    names, arrays, _, _ = _parts(batch)
    return names, [torch.from_numpy(a.copy()).permute(2, 0, 1) for a in arrays], _sizes(arrays)


def collate_drops_names(batch):
    """Returns (images, sizes) only."""
    _, arrays, height, width = _parts(batch)
    return _placed(arrays, height, width), _sizes(arrays)


def collate_sorts_by_size(batch):
    """Sorts the images by area (largest first), as for packed sequences, but leaves the names in input order."""
    names, arrays, height, width = _parts(batch)
    arrays = sorted(arrays, key=lambda a: -a.shape[0] * a.shape[1])
    return names, _placed(arrays, height, width), _sizes(arrays)


def collate_view_of_single(batch):
    """A shortcut for one image: returns a view of the input instead of a copy."""
    names, arrays, height, width = _parts(batch)
    if len(batch) == 1:
        return names, torch.as_tensor(batch[0][1]).permute(2, 0, 1).unsqueeze(0), _sizes(arrays)
    return names, _placed(arrays, height, width), _sizes(arrays)


def collate_on_gpu(batch):
    """Moves the batch to the GPU inside the collate function, i.e. in a DataLoader worker."""
    names, arrays, height, width = _parts(batch)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return names, _placed(arrays, height, width).to(device), _sizes(arrays).to(device)


WORKERS, RANKS = "check_tar_dataset_workers", "check_tar_dataset_ranks"
VALUES, COPIES, LOADER = "check_collate_images_values", "check_collate_images_copies", "check_collate_images_loader"
MUTANTS = {
    "tutorial's naive tar dataset (duplicates with workers)": ({"TarImageDataset": NaiveTarDataset},
                                                               {WORKERS, RANKS}),
    "one worker per shard, or raise": ({"TarImageDataset": OneWorkerPerShard}, {WORKERS, RANKS}),
    "drops the remainder when shards don't divide evenly": ({"TarImageDataset": DropsRemainder}, {WORKERS, RANKS}),
    "ignores rank": ({"TarImageDataset": IgnoresRank}, {RANKS}),
    "returns RGB": ({"TarImageDataset": ReturnsRGB}, {"check_tar_dataset_decoding"}),
    "leaks open files (never closes a shard)": ({"TarImageDataset": LeaksOpenFiles}, {"check_tar_dataset_resources"}),
    "keeps shards open on the dataset": ({"TarImageDataset": KeepsShardsOpen}, {"check_tar_dataset_resources"}),
    "keeps every member (getmembers)": ({"TarImageDataset": GrowingMemberList}, {"check_tar_dataset_resources"}),
    "decodes non-image members": ({"TarImageDataset": DecodesEverything}, {"check_tar_dataset_decoding"}),
    "reads with IMREAD_UNCHANGED": ({"TarImageDataset": ReadUnchanged}, {"check_tar_dataset_decoding"}),
    "skips corrupt images and missing shards": ({"TarImageDataset": SkipsCorruptImages}, {"check_tar_dataset_errors"}),
    "finds a missing shard only after yielding": ({"TarImageDataset": ChecksPathsLazily}, {"check_tar_dataset_errors"}),
    "folder: random.choice ignores the index": ({"ImageDirectoryDataset": FolderRandomChoice},
                                                {"check_image_directory_dataset"}),
    "folder: unsorted paths": ({"ImageDirectoryDataset": FolderUnsorted}, {"check_image_directory_dataset"}),
    "folder: wraps the index around": ({"ImageDirectoryDataset": FolderWrapsIndex}, {"check_image_directory_dataset"}),
    "folder: returns RGB": ({"ImageDirectoryDataset": FolderRGB}, {"check_image_directory_dataset"}),
    "folder: ignores the pattern": ({"ImageDirectoryDataset": FolderIgnoresPattern}, {"check_image_directory_dataset"}),
    "folder: reads subfolders too": ({"ImageDirectoryDataset": FolderRecursive}, {"check_image_directory_dataset"}),
    "folder: natural sort": ({"ImageDirectoryDataset": FolderNaturalSort}, {"check_image_directory_dataset"}),
    "shards: ceil-sized chunks": ({"write_shards": shards_ceil_chunks}, {"check_write_shards"}),
    "shards: drops the remainder": ({"write_shards": shards_drop_remainder}, {"check_write_shards"}),
    "shards: full paths as member names": ({"write_shards": shards_full_paths}, {"check_write_shards"}),
    "shards: unseeded shuffle": ({"write_shards": shards_random}, {"check_write_shards"}),
    "shards: no ValueError": ({"write_shards": shards_no_validation}, {"check_write_shards"}),
    "collate: channels last": ({"collate_images": collate_channels_last}, {VALUES, LOADER}),
    "collate: centred (padding on top and left too)": ({"collate_images": collate_centred}, {VALUES, LOADER}),
    "collate: resizes instead of padding": ({"collate_images": collate_resized}, {VALUES, LOADER}),
    "collate: int32 sizes": ({"collate_images": collate_int32_sizes}, {VALUES, LOADER}),
    "collate: sizes as (W, H)": ({"collate_images": collate_sizes_wh}, {VALUES, LOADER}),
    "collate: stacks (only equal sizes work)": ({"collate_images": collate_stack_when_equal},
                                                {VALUES, COPIES, LOADER}),
    "collate: float output": ({"collate_images": collate_float}, {VALUES, LOADER}),
    "collate: pads with 114": ({"collate_images": collate_grey_padding}, {VALUES, LOADER}),
    "collate: a list of tensors": ({"collate_images": collate_list_of_tensors}, {VALUES, COPIES, LOADER}),
    "collate: drops the names": ({"collate_images": collate_drops_names}, {VALUES, COPIES, LOADER}),
    "collate: sorts images by size, not the names": ({"collate_images": collate_sorts_by_size}, {VALUES, LOADER}),
    "collate: a view of the input for one image": ({"collate_images": collate_view_of_single}, {COPIES}),
}

# Mistakes only a machine with CUDA shows: on a CPU-only machine the mutant stays on the CPU and is right.
GPU_MUTANTS = {
    "collate: moves the batch to the GPU in the worker": ({"collate_images": collate_on_gpu}, {VALUES, LOADER}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/dataloading/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "tutorial's naive tar dataset (duplicates with workers)": "TarImageDataset gives every DataLoader worker every "
        "shard, so samples come more than once.",
    "one worker per shard, or raise": "TarImageDataset gives each worker exactly one shard and fails when the "
                                      "counts differ.",
    "drops the remainder when shards don't divide evenly": "TarImageDataset drops the shards left over when they do "
                                                           "not divide evenly among the workers.",
    "ignores rank": "TarImageDataset ignores the rank, so every process reads the same shards.",
    "returns RGB": "TarImageDataset returns images in RGB order instead of OpenCV's BGR.",
    "leaks open files (never closes a shard)": "TarImageDataset never closes the shards it opens.",
    "keeps shards open on the dataset": "TarImageDataset keeps open shards on the dataset object.",
    "keeps every member (getmembers)": "TarImageDataset reads the list of every member of a shard into memory.",
    "decodes non-image members": "TarImageDataset tries to decode members that are not images.",
    "reads with IMREAD_UNCHANGED": "TarImageDataset decodes with `IMREAD_UNCHANGED`, so images keep their own "
                                   "number of channels.",
    "skips corrupt images and missing shards": "TarImageDataset silently skips corrupt images and missing shards "
                                               "instead of raising.",
    "finds a missing shard only after yielding": "TarImageDataset finds a missing shard only after it has yielded "
                                                 "samples.",
    "folder: random.choice ignores the index": "ImageDirectoryDataset picks a random image instead of the one at "
                                               "the index.",
    "folder: unsorted paths": "ImageDirectoryDataset does not sort its paths, so the order depends on the file "
                              "system.",
    "folder: wraps the index around": "ImageDirectoryDataset wraps an index out of range around instead of "
                                      "raising IndexError.",
    "folder: returns RGB": "ImageDirectoryDataset returns images in RGB order instead of OpenCV's BGR.",
    "folder: ignores the pattern": "ImageDirectoryDataset ignores the file pattern and reads every file.",
    "folder: reads subfolders too": "ImageDirectoryDataset also reads the images in subfolders of root, not only the "
                                    "files directly in it.",
    "folder: natural sort": "ImageDirectoryDataset sorts the names by the numbers in them (img8 before img10), not "
                            "in sorted path order.",
    "shards: ceil-sized chunks": "write_shards splits the samples into chunks of the rounded-up size, so the last "
                                 "shards are short or empty.",
    "shards: drops the remainder": "write_shards drops the samples left over when they do not divide evenly.",
    "shards: full paths as member names": "write_shards names the members by their full paths instead of their "
                                          "file names.",
    "shards: unseeded shuffle": "write_shards shuffles without the given seed, so two runs differ.",
    "shards: no ValueError": "write_shards does not raise ValueError for an impossible number of shards.",
    "collate: channels last": "collate_images returns channels last instead of channels first.",
    "collate: centred (padding on top and left too)": "collate_images centres each image instead of padding at the "
                                                      "bottom and right only.",
    "collate: resizes instead of padding": "collate_images resizes the images instead of padding them.",
    "collate: int32 sizes": "collate_images returns the sizes as int32 instead of int64.",
    "collate: sizes as (W, H)": "collate_images returns the sizes as (width, height) instead of (height, width).",
    "collate: stacks (only equal sizes work)": "collate_images stacks the images, which works only when they all "
                                               "have the same size.",
    "collate: float output": "collate_images returns a float batch instead of uint8.",
    "collate: pads with 114": "collate_images pads with a grey value instead of zeros.",
    "collate: a list of tensors": "collate_images returns a list of tensors instead of one batch tensor.",
    "collate: drops the names": "collate_images drops the samples' names.",
    "collate: sorts images by size, not the names": "collate_images reorders the images by size.",
    "collate: a view of the input for one image": "collate_images returns a view of the input for a batch of one "
                                                  "image instead of a copy.",
}
