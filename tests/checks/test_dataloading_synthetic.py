"""The synthetic images carry their id through PNG and JPEG, and the grader's shards are exact and repeatable."""

import os
import tarfile

import cv2
import numpy as np
import pytest

from autograder.checks.dataloading import synthetic


@pytest.mark.quick
@pytest.mark.parametrize("fmt", ["png", "jpg"])
def test_every_id_survives_encoding(fmt):
    for sample_id in list(range(0, synthetic.MAX_ID + 1, 37)) + [synthetic.MAX_ID]:
        for height, width in synthetic.SIZES:
            image = synthetic.synthetic_image(sample_id, height, width)
            decoded = cv2.imdecode(np.frombuffer(synthetic.encode(image, fmt), np.uint8), cv2.IMREAD_COLOR)
            assert decoded.shape == (height, width, 3)
            assert synthetic.decode_id(decoded) == sample_id


def test_red_differs_from_blue_so_channel_order_shows():
    for sample_id in range(0, synthetic.MAX_ID + 1, 5):
        image = synthetic.synthetic_image(sample_id, 8, 8)
        assert (image[..., 2] != image[..., 0]).all()     # every pixel: RGB order never looks like BGR


def test_ids_out_of_range_are_refused():
    with pytest.raises(ValueError):
        synthetic.synthetic_image(synthetic.MAX_ID + 1, 4, 4)


def test_samples_are_distinct_and_png_is_lossless():
    samples = synthetic.make_samples(20, seed=3, first_id=100)
    assert [s.sample_id for s in samples] == list(range(100, 120))
    assert len({s.name for s in samples}) == 20
    assert {s.fmt for s in samples} == {"png", "jpg"}
    for s in samples:
        assert s.name.endswith("." + s.fmt) and s.lossy == (s.fmt == "jpg")
        if s.fmt == "png":
            height, width = s.expected.shape[:2]
            assert np.array_equal(s.expected, synthetic.synthetic_image(s.sample_id, height, width))
    assert synthetic.make_samples(3, prefix="img{id}")[2].name.startswith("img2.")


def test_shards_hold_images_and_non_image_members(tmp_path):
    samples = synthetic.make_samples(7, seed=1)
    rng = np.random.default_rng(0)
    sizes = synthetic.split_sizes(7, 3, rng)
    assert sum(sizes) == 7 and min(sizes) >= 1
    paths = synthetic.write_shards(tmp_path, synthetic.group(samples, sizes))
    assert [os.path.basename(p) for p in paths] == ["part-0000.tar", "part-0001.tar", "part-0002.tar"]
    images, others = [], []
    for path in paths:
        for name, data in synthetic.read_tar_members(path):
            (images if name.endswith((".png", ".jpg")) else others).append((name, data))
    assert [name for name, _ in images] == [s.name for s in samples]
    assert [data for _, data in images] == [s.data for s in samples]
    assert ("meta", None) in others and any(n.endswith(".json") for n, _ in others)
    assert any(n.endswith(".txt") for n, _ in others)


def test_shards_are_byte_for_byte_repeatable(tmp_path):
    samples = synthetic.make_samples(4, seed=2)
    first = synthetic.write_shards(tmp_path / "a", [samples])[0]
    second = synthetic.write_shards(tmp_path / "b", [samples])[0]
    with open(first, "rb") as a, open(second, "rb") as b:
        assert a.read() == b.read()
    with tarfile.open(first) as tar:
        assert {m.mtime for m in tar.getmembers()} == {synthetic.FIXED_MTIME}


def test_split_sizes_with_an_empty_shard():
    rng = np.random.default_rng(5)
    for total, shards in ((9, 7), (20, 7), (6, 3)):
        sizes = synthetic.split_sizes(total, shards, rng, empty_shard=True)
        assert len(sizes) == shards and sum(sizes) == total and sizes.count(0) == 1


def test_loose_files_come_back_sorted(tmp_path):
    samples = synthetic.make_samples(5, prefix="img{id}", first_id=8)
    paths = synthetic.write_files(tmp_path, samples)
    assert [os.path.basename(p) for p in paths] == sorted(s.name for s in samples)
    assert all(os.path.getsize(p) == len(s.data) for p, s in zip(paths, sorted(samples, key=lambda s: s.name)))
