"""The contracts of the dataloading exercises, clause by clause (``autograder.contracts``): the build writes them into
the notebook's bullet lists and docs/dataloading.md's table; ``tests/checks/test_contracts.py`` proves that each
clause's items send its inputs."""

import torch

from autograder.contracts import Clause, Contract

BATCH_KINDS = ("one_image", "equal_sizes", "mixed_sizes", "numpy_images", "tensor_images")

CONTRACTS = (
    Contract("ImageDirectoryDataset", (
        Clause("`len(dataset)` is the number of files directly in `root` whose names match `pattern` (0 for an empty "
               "folder);",
               items=("image_directory_dataset",),
               inputs=("default_pattern", "given_pattern", "other_files", "subfolder", "empty_folder")),
        Clause("`dataset[i]` is the `i`-th file **in sorted path order** (the paths sorted as strings: `img10.png` "
               "comes before `img8.png`), decoded by OpenCV: an `HxWx3` `uint8` NumPy "
               "array in BGR order (use `cv2.IMREAD_COLOR`, which also turns grey and transparent images into three "
               "channels);",
               items=("image_directory_dataset",),
               inputs=("written_unsorted", "names_past_img10", "png", "jpg", "in_dataloader")),
        Clause("an index past the end raises `IndexError` (indexing a Python list already does).",
               items=("image_directory_dataset",), inputs=("index_len", "index_past_len")),
    )),
    Contract("write_shards", (
        Clause("every image goes into exactly one shard, as a member named by its file name "
               "(`arcname=os.path.basename(path)`), holding the file's bytes unchanged (no re-encoding);",
               items=("write_shards",), inputs=("one_shard", "several_shards", "one_image_per_shard")),
        Clause("shard sizes differ by at most one image (10 images in 4 shards: 3, 3, 2, 2);",
               items=("write_shards",), inputs=("uneven_split",)),
        Clause("the same input always gives the same shards (no unseeded shuffling);",
               items=("write_shards",), inputs=("written_twice",)),
        Clause("`num_shards < 1`, or more shards than images, raises `ValueError`.",
               items=("write_shards",), inputs=("zero_shards", "negative_shards", "more_shards_than_images")),
    )),
    Contract("TarImageDataset", (
        Clause("Over all `DataLoader` workers of all ranks, every image is yielded **exactly once**, for any number of "
               "shards and any `num_workers`: 0, fewer workers than shards, as many, and more workers than shards.",
               items=("tar_dataset_workers", "tar_dataset_ranks"),
               inputs=("no_workers", "fewer_workers_than_shards", "as_many_workers_as_shards",
                       "more_workers_than_shards", "uneven_shards", "empty_shard", "world_size_2", "world_size_3")),
        Clause("With `num_workers=0` and `world_size=1` it yields the shards in order, each in archive order.",
               items=("tar_dataset_decoding",), inputs=("no_dataloader", "png", "jpg")),
        Clause("Members that are not images (`.png`, `.jpg` and `.jpeg` are images; skip `.json`, `.txt` and "
               "directories) are skipped. An image member that does not decode raises an error that names the shard "
               "and the member.",
               items=("tar_dataset_decoding", "tar_dataset_errors"), inputs=("non_image_members", "undecodable_member")),
        Clause("A missing shard raises `FileNotFoundError` before any sample is yielded.",
               items=("tar_dataset_errors",), inputs=("missing_shard",)),
        Clause("It closes every file it opens, and keeps no list that grows with the number of members.",
               items=("tar_dataset_resources",), inputs=("full_pass", "many_members")),
    )),
    Contract("collate_images", (
        Clause("`names`: the list of the names, in batch order;",
               items=("collate_images_values",), inputs=("numpy_images", "tensor_images")),
        Clause("`images`: one `uint8` tensor of shape `[B, 3, Hmax, Wmax]` (`B` images; the largest height and width "
               "in the batch) on the CPU. Image `i` goes channels first (`(H, W, 3)` becomes `(3, H, W)`; the channel "
               "order stays BGR) into the top-left corner of `images[i]`, exactly its pixels; every other value is "
               "`0` (padding at the bottom and the right only);",
               items=("collate_images_values",), inputs=("one_image", "equal_sizes", "mixed_sizes", "one_pixel")),
        Clause("`sizes`: an `int64` tensor of shape `[B, 2]`, row `i` the original `(H, W)` of image `i`;",
               items=("collate_images_values",), inputs=("mixed_sizes",)),
        Clause("don't modify the inputs, and return new memory: writing into `images` must not change the dataset's "
               "arrays, also when the batch holds one image or images of one size (`torch.from_numpy`, "
               "`torch.as_tensor` and `permute` make views, not copies);",
               items=("collate_images_copies",), inputs=BATCH_KINDS),
        Clause("it runs inside the `DataLoader`'s worker processes (`collate_fn=collate_images`), with "
               "`pin_memory=True`: keep it on the CPU, and keep it a plain function at the top level of the cell.",
               items=("collate_images_loader",), inputs=("two_workers", "partial_last_batch", "pin_memory")),
    )),
)


def batch_labels(items):
    """The cases a ``collate_images`` batch covers: its size, its sizes, NumPy or tensors, a 1-pixel image."""
    sizes = [tuple(image.shape[:2]) for _, image in items]
    labels = {"tensor_images" if isinstance(items[0][1], torch.Tensor) else "numpy_images"}
    labels.add("one_image" if len(sizes) == 1 else "equal_sizes" if len(set(sizes)) == 1 else "mixed_sizes")
    if (1, 1) in sizes:
        labels.add("one_pixel")
    return labels


def worker_labels(num_shards, num_workers):
    """How a ``DataLoader``'s workers compare with the number of shards."""
    if num_workers == 0:
        return {"no_workers"}
    return {"fewer_workers_than_shards" if num_workers < num_shards else
            "as_many_workers_as_shards" if num_workers == num_shards else "more_workers_than_shards"}
