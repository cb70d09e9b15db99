"""Synthetic image data for the loading checks: images that carry their own id, and the grader's tar writer.

Every image's pixels encode a unique id (blue and green levels), and its red channel differs from its blue
one, so a check can tell any two samples apart, recover the id from a decoded image even after JPEG, and see
an RGB/BGR swap. Images are encoded with OpenCV, as PNG (lossless) and JPEG (lossy), and written into tar
shards by the grader's own writer, so that a dataset is graded independently of the student's ``write_shards``.
Shards also hold members that are not images (JSON, text, a directory), which a dataset must skip.
"""

import io
import json
import os
import tarfile
from dataclasses import dataclass

import cv2
import numpy as np

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")
LEVELS = 64                # distinct levels per channel: ids 0 .. 64 * 64 - 1
STEP = 256 // LEVELS       # 4 grey levels between neighbouring ids survive JPEG's error on a channel mean
MAX_ID = LEVELS * LEVELS - 1
FIXED_MTIME = 1_700_000_000  # tar headers carry a fixed time, so the grader's shards are byte-for-byte repeatable


def synthetic_image(sample_id, height, width):
    """An ``height x width x 3`` uint8 BGR image whose pixels encode ``sample_id``.

    Blue is ``sample_id % 64`` and green ``sample_id // 64`` (each times 4, plus 2); red is a checkerboard
    around ``253 - blue`` that is never equal to blue, so an image read in RGB order is told from one in BGR.
    """
    if not 0 <= sample_id <= MAX_ID:
        raise ValueError(f"sample_id must be in 0..{MAX_ID}, got {sample_id}")
    blue = STEP * (sample_id % LEVELS) + STEP // 2
    green = STEP * (sample_id // LEVELS) + STEP // 2
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[..., 0] = blue
    image[..., 1] = green
    yy, xx = np.mgrid[0:height, 0:width]
    checker = np.where((yy // 4 + xx // 4) % 2 == 0, 12, -12)
    image[..., 2] = np.clip(255 - blue - 2 + checker, 0, 255)
    return image


def decode_id(image):
    """The id that :func:`synthetic_image` encoded in ``image`` (BGR, uint8 array or tensor), from channel means."""
    array = np.asarray(image.cpu() if hasattr(image, "cpu") else image, dtype=np.float64)
    blue, green = array[..., 0].mean(), array[..., 1].mean()
    return int(round((blue - STEP // 2) / STEP)) + LEVELS * int(round((green - STEP // 2) / STEP))


def encode(image, fmt):
    """``image`` encoded by OpenCV as ``"png"`` or ``"jpg"`` (quality 90), as bytes."""
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] if fmt == "jpg" else []
    ok, buffer = cv2.imencode("." + fmt, image, params)
    if not ok:
        raise RuntimeError(f"OpenCV could not encode a {image.shape} image as {fmt}")
    return buffer.tobytes()


@dataclass(frozen=True)
class Sample:
    """One synthetic image: its file or member name, its id, its encoded bytes and what OpenCV decodes them to."""

    name: str
    sample_id: int
    fmt: str            # "png" or "jpg"
    data: bytes

    @property
    def expected(self):
        """The oracle: OpenCV's own decoding of the bytes, ``HxWx3`` uint8 BGR."""
        return cv2.imdecode(np.frombuffer(self.data, dtype=np.uint8), cv2.IMREAD_COLOR)

    @property
    def lossy(self):
        return self.fmt == "jpg"


SIZES = ((8, 8), (12, 20), (17, 9), (5, 31), (16, 16))


def make_samples(count, *, seed=0, first_id=0, formats=("png", "jpg"), sizes=SIZES, prefix=""):
    """``count`` samples with ids ``first_id, first_id + 1, ...``, sizes and formats drawn from ``seed``.

    Names are ``f"{prefix}{id:06d}.{fmt}"`` unless ``prefix`` holds ``{id}``, as in ``"img{id}"``.
    """
    rng = np.random.default_rng(seed)
    samples = []
    for sample_id in range(first_id, first_id + count):
        height, width = sizes[int(rng.integers(len(sizes)))]
        fmt = formats[int(rng.integers(len(formats)))]
        stem = prefix.format(id=sample_id) if "{id}" in prefix else f"{prefix}{sample_id:06d}"
        samples.append(Sample(f"{stem}.{fmt}", sample_id, fmt, encode(synthetic_image(sample_id, height, width), fmt)))
    return samples


def odd_samples(first_id):
    """A grey PNG and a PNG with an alpha channel: OpenCV's IMREAD_COLOR gives both three channels."""
    grey = np.tile(np.arange(0, 240, 20, dtype=np.uint8), (7, 1))
    rgba = np.dstack([synthetic_image(first_id + 1, 6, 10), np.full((6, 10), 128, np.uint8)])
    return [Sample(f"grey-{first_id:06d}.png", first_id, "png", encode(grey, "png")),
            Sample(f"alpha-{first_id + 1:06d}.png", first_id + 1, "png", encode(rgba, "png"))]


def tiny_png():
    """The bytes of a 2x2 PNG (about 70 bytes): shards of many such members test per-member memory."""
    return encode(synthetic_image(0, 2, 2), "png")


# ------------------------------------------------------------------ writing

def write_tar(path, members):
    """Write a tar file of ``members``: ``(name, bytes)`` for a file, ``(name, None)`` for a directory.

    Headers are fixed (mtime, owner, mode) so the same members always give the same bytes.
    """
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = FIXED_MTIME, 0, 0, "", ""
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return path


def with_extras(samples, shard_index):
    """The members of one shard: its images, with non-image members around and between them."""
    members = [("meta", None), ("meta/README.txt", f"shard {shard_index}\n".encode())]
    for position, sample in enumerate(samples):
        members.append((sample.name, sample.data))
        if position % 2 == 0:
            stem = sample.name.rsplit(".", 1)[0]
            members.append((stem + ".json", json.dumps({"id": sample.sample_id}).encode()))
    members.append((f"labels-{shard_index}.txt", b"not an image\n"))
    return members


def shard_plan(out_dir, groups, *, extras=True, stem="part"):
    """``[(path, members)]``: one tar file per group of samples in ``out_dir`` (``part-0000.tar``, ...), each with
    its images and, with ``extras``, non-image members (see :func:`with_extras`)."""
    return [(os.path.join(out_dir, f"{stem}-{index:04d}.tar"),
             with_extras(group, index) if extras else [(s.name, s.data) for s in group])
            for index, group in enumerate(groups)]


def write_shards(out_dir, groups, *, extras=True, stem="part"):
    """The tar files of :func:`shard_plan`, written; returns their paths as str."""
    os.makedirs(out_dir, exist_ok=True)
    return [write_tar(path, members) for path, members in shard_plan(out_dir, groups, extras=extras, stem=stem)]


def split_sizes(total, num_shards, rng, *, empty_shard=False):
    """Random, uneven shard sizes (each at least 1, or one shard 0 with ``empty_shard``) that sum to ``total``."""
    floor = 0 if empty_shard else 1
    cuts = np.sort(rng.choice(np.arange(1, total), size=num_shards - 1, replace=False)) if num_shards > 1 else []
    sizes = np.diff(np.concatenate([[0], cuts, [total]])).astype(int).tolist()
    if empty_shard and num_shards > 2:
        victim = int(rng.integers(num_shards))
        neighbour = (victim + 1) % num_shards
        sizes[neighbour] += sizes[victim]
        sizes[victim] = 0
    assert sum(sizes) == total and min(sizes) >= floor
    return sizes


def group(samples, sizes):
    """``samples`` cut into consecutive groups of the given sizes."""
    groups, start = [], 0
    for size in sizes:
        groups.append(samples[start:start + size])
        start += size
    return groups


def write_files(directory, samples):
    """Each sample as a loose file named after it in ``directory``; returns the paths in sorted order."""
    os.makedirs(directory, exist_ok=True)
    for sample in samples:
        with open(os.path.join(directory, sample.name), "wb") as handle:
            handle.write(sample.data)
    return sorted(os.path.join(directory, s.name) for s in samples)


def read_tar_members(path):
    """``[(name, bytes or None)]`` of every member of a tar file, in archive order (the grader's reader)."""
    with tarfile.open(path) as tar:
        return [(m.name, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]
