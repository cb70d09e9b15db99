"""Checks for the ``dataloading`` assignment: an image folder, tar shards, a sharded IterableDataset, and a
``collate_fn`` for batches of images of different sizes.

The grader makes its own data (:mod:`.synthetic`): images whose pixels carry their id, encoded by
OpenCV as PNG and JPEG, written into shards by the grader's own writer together with members that are not
images. ``TarImageDataset`` is therefore graded independently of the student's ``write_shards``. The
exactly-once checks run real ``DataLoader`` worker processes (see :mod:`.runs` for time limits, clean-up and
the start method); :mod:`.batches` holds the oracle and the expectations for ``collate_images``.

Files, DataLoader passes, open files, traced memory and shared memory are made and seen where the student's code
runs (:mod:`.probes`): under trusted grading that is the student's worker process, which writes the grader's data
into its own temporary directory and sends back what a pass yielded, as data; the verdicts are computed here.
"""

import functools
import os
import re

import numpy as np

from autograder.checks.dataloading import probes, synthetic
from autograder.checks.dataloading.batches import (COPY_BATCHES, EDGE_BATCHES, SyntheticImageDataset, call_collate,
                                                   describe_batch, expect_collated, expect_own_memory, make_batch,
                                                   random_sizes)
from autograder.checks.dataloading.contract import batch_labels, worker_labels
from autograder.checks.dataloading.expect import (as_item, expect_exactly_once, expect_image, expect_index_error,
                                                  expect_missing_shard, expect_value_error, same_image_as,
                                                  written_layout)
from autograder.checks.dataloading.runs import describe_run
from autograder.contracts import exercised, exercised_as
from autograder.errors import CheckFailure
from autograder.settings import settings
from autograder.spec import graded

# (number of shards, the num_workers values run over them): fewer workers than shards, as many, and more.
WORKER_GRID = ((1, (0, 2, 3)), (2, (1, 2, 5)), (3, (2, 3, 5)), (7, (0, 2, 3, 5)))
# (number of shards, world_size): every rank runs a DataLoader with two workers.
RANK_GRID = ((3, 2), (7, 3), (2, 3))
RANK_WORKERS = 2
# collate_images in a DataLoader: batches of 3 over 10 .. 17 images (never a multiple of 3: a last partial batch),
# with two workers; the synthetic sizes plus a 1-pixel and a tall image.
LOADER_BATCH, LOADER_WORKERS = 3, 2
LOADER_SIZES = synthetic.SIZES + ((1, 1), (30, 2))


def _shard_set(student, directory, num_shards, rng, *, first_id=0, empty_shard=False):
    """Shards with uneven numbers of images (and non-image members), written beside ``student``; returns (paths,
    samples in order)."""
    total = num_shards * 2 + int(rng.integers(1, 5))
    samples = synthetic.make_samples(total, seed=int(rng.integers(1 << 30)), first_id=first_id)
    sizes = synthetic.split_sizes(total, num_shards, rng, empty_shard=empty_shard)
    exercised(*(["uneven_shards"] if len(set(sizes)) > 1 else []), *(["empty_shard"] if 0 in sizes else []))
    paths = probes.write_shard_set(student, directory, synthetic.group(samples, sizes))
    return paths, samples


def _construct(check, TarImageDataset, paths, **options):
    return TarImageDataset(list(paths), **options)


def _iterate(check, dataset, *, what):
    """Every item of a single-process pass over ``dataset`` (no DataLoader)."""
    __tracebackhide__ = True
    return check.student(lambda: list(iter(dataset)), what)()


# ------------------------------------------------------------ ImageDirectoryDataset

ORDER_HINT = ("Sort the paths as strings (sorted(...), no key): item i must be the i-th of them, never a random one, "
              "and 'img10.png' sorts before 'img8.png'.")


def _natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _expect_not_another_order(check, dataset, by_path, index, got, where):
    """Tell the order the items come in when item ``index`` is the file ``got``, another one than sorted paths give:
    another file each time it is asked (a random pick), the numbers in the names (a natural sort), or the files in
    another order than sorted (not sorted at all). Each in words of its own, by a raise of its own (a kind of its
    own); anything else is told by the caller as a file out of place."""
    __tracebackhide__ = True
    again = [same_image_as(check.student(lambda: dataset[index], f"dataset[{index}]")(), by_path)
             for _ in range(3)]
    shown = [s.name if s is not None else None for s in [got, *again]]
    if any(s is not got for s in again):
        raise CheckFailure(check, f"dataset[{index}] gives another file each time it is asked ({where}): "
                                  f"asked four times, it gave {shown}.", hint=ORDER_HINT)
    items = [same_image_as(check.student(lambda i=i: dataset[i], f"dataset[{i}]")(), by_path)
             for i in range(len(by_path))]
    if any(s is None for s in items) or len({s.name for s in items}) != len(items):
        return
    names, in_order = [s.name for s in items], [s.name for s in by_path]
    if names == sorted(in_order, key=_natural_key):
        raise CheckFailure(check, f"dataset follows the numbers in the file names, a natural sort ('img8.png' before "
                                  f"'img10.png'), not the sorted paths ({where}): its items are {names}; sorted "
                                  f"paths give {in_order}.", hint=ORDER_HINT)
    if names != in_order[::-1]:
        raise CheckFailure(check, f"dataset lists the files in an order of its own, not sorted by path ({where}): "
                                  f"its items are {names}; sorted paths give {in_order}.", hint=ORDER_HINT)

@graded(2, hidden=[{}])
def check_image_directory_dataset(check, ImageDirectoryDataset, *, seed=0):
    """``len`` counts the files directly in ``root`` matching ``pattern`` (not those in a subfolder); item ``i`` is
    the ``i``-th in sorted path order (names from ``img8`` past ``img10``, where sorted order is not "natural"
    order), decoded by OpenCV (``HxWx3`` uint8, BGR); an index past the end raises ``IndexError``; an empty folder
    has length 0; it works in a ``DataLoader`` with two workers."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    with probes.scratch(ImageDirectoryDataset, "grader-images-") as root:
        pngs = synthetic.make_samples(int(rng.integers(6, 11)), seed=check.seed_for("pngs"), first_id=8,
                                      formats=("png",), prefix="img{id}")
        jpgs = synthetic.make_samples(3, seed=check.seed_for("jpgs"), first_id=50, formats=("jpg",),
                                      prefix="img{id}")
        files = pngs + jpgs
        order = rng.permutation(len(files))          # written neither in sorted nor in reverse order
        probes.write_samples(ImageDirectoryDataset, root, [files[i] for i in order] + [("notes.txt", b"not an image\n")])
        exercised("written_unsorted", "other_files", "png", "jpg", "names_past_img10")
        seeded = check.seed_for
        nested = (synthetic.make_samples(2, seed=seeded("nested"), first_id=70, prefix="img{id}")   # a png and a jpg,
                  + synthetic.make_samples(1, seed=seeded("nested png"), first_id=72, formats=("png",),  # or two
                                           prefix="img{id}")
                  + synthetic.make_samples(1, seed=seeded("nested jpg"), first_id=73, formats=("jpg",),
                                           prefix="img{id}"))
        probes.write_samples(ImageDirectoryDataset, os.path.join(root, "more"), nested)
        exercised("subfolder")
        for pattern, chosen in (("*.png", pngs), ("*.jpg", jpgs)):
            by_path = sorted(chosen, key=lambda s: os.path.join(root, s.name))
            kwargs = {} if pattern == "*.png" else {"pattern": pattern}
            exercised("default_pattern" if pattern == "*.png" else "given_pattern")
            dataset = ImageDirectoryDataset(root, **kwargs)
            where = f"ImageDirectoryDataset(root, pattern={pattern!r}) on a folder of {len(files)} images"
            length = check.student(len, "len(dataset)")(dataset)
            in_subfolder = sum(s.name.endswith(pattern[1:]) for s in nested)
            if length == len(chosen) + in_subfolder:
                raise CheckFailure(check, f"with {where}: len(dataset) is {length}: it counts the {in_subfolder} "
                                          f"matching files of the subfolder `more` too; expected {len(chosen)} (the "
                                          f"files directly in root matching {pattern!r}).",
                                   hint="List root itself with the pattern (Path(root).glob(pattern)), not its "
                                        "subfolders (rglob, '**' or os.walk).")
            if length != len(chosen):
                raise CheckFailure(check, f"with {where} (and a subfolder `more` holding other images): "
                                          f"len(dataset) is {length}, expected {len(chosen)} (the files directly in "
                                          f"root matching {pattern!r}).",
                                   hint="List root with the pattern (Path(root).glob(pattern), not rglob or '**') "
                                        "and keep that list.")
            for index, sample in enumerate(by_path):
                image = check.student(lambda i=index: dataset[i], f"dataset[{index}]")()
                other = same_image_as(image, by_path)
                if other is not None and other is not sample:
                    names = [s.name for s in by_path]
                    _expect_not_another_order(check, dataset, by_path, index, other, where)
                    raise CheckFailure(check, f"with {where}: dataset[{index}] is not the file {sample.name!r}; the "
                                              f"files in sorted path order are {names}.",
                                       hint="Sort the paths as strings (sorted(...), no key): item i must be the i-th "
                                            "of them, never a random one, and 'img10.png' sorts before 'img8.png'.")
                expect_image(check, image, sample, where=f"{where}, dataset[{index}]")
            exercised("index_len", "index_past_len")
            for bad in (length, length + 3):
                expect_index_error(check, dataset, bad, where)
        exercised("in_dataloader")
        _expect_loader_order(check, ImageDirectoryDataset, root, sorted(pngs, key=lambda s: s.name))
        empty = os.path.join(root, "empty")
        probes.write_samples(ImageDirectoryDataset, empty, [])
        exercised("empty_folder")
        dataset = ImageDirectoryDataset(empty)
        length = check.student(len, "len(dataset)")(dataset)
        if length != 0:
            raise CheckFailure(check, f"an empty folder gives len(dataset) = {length}, expected 0.")


def _expect_loader_order(check, ImageDirectoryDataset, root, samples):
    __tracebackhide__ = True
    dataset = ImageDirectoryDataset(root)
    where = "ImageDirectoryDataset in DataLoader(num_workers=2)"
    items = probes.load_beside(check, dataset, 2, where=where)
    got = [synthetic.decode_id(image) for image in items]
    if got != [s.sample_id for s in samples]:
        raise CheckFailure(check, f"with {where}: the images came out in another order than the sorted files.")


# ------------------------------------------------------------------ write_shards

def uneven_shards(count, rng):
    """A number of shards from 4 to 7 that ``count`` images split into unevenly enough to show both common wrong
    splits: ``count % k`` is neither 0 nor 1 nor ``k - 1``, so chunks of ``ceil(count / k)`` leave the last shard
    short by two or more (or empty), and chunks of ``count // k`` give the last one two or more extra. Every count
    the check draws (9 to 14) has one; ``rng`` picks among them."""
    fitting = [k for k in range(4, 8) if 2 <= count % k <= k - 2]
    return fitting[int(rng.integers(len(fitting)))]


@graded(2, hidden=[{}])
def check_write_shards(check, write_shards, *, seed=0):
    """``num_shards`` tar files ``shard-00000.tar``, ... in ``out_dir``, returned in order; each image in exactly
    one shard under its own file name with its bytes; shard sizes differ by at most one; the same input gives the
    same shards; ``num_shards`` < 1 or more shards than images raise ``ValueError``."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    with probes.scratch(write_shards, "grader-write-") as root:
        count = int(rng.integers(9, 15))
        samples = synthetic.make_samples(count, seed=check.seed_for("samples"))
        paths = probes.write_samples(write_shards, os.path.join(root, "images"), samples)
        given = [paths[i] for i in rng.permutation(count)]
        by_name = {s.name: s for s in samples}
        for num_shards in (3, 1, count, uneven_shards(count, rng)):
            out_dir = os.path.join(root, f"out-{num_shards}")
            probes.write_samples(write_shards, out_dir, [])
            where = f"write_shards(<{count} image paths>, out_dir, num_shards={num_shards})"
            exercised("one_shard" if num_shards == 1 else "one_image_per_shard" if num_shards == count else
                      "several_shards", *(["uneven_split"] if count % num_shards else []))
            layout = written_layout(check, write_shards, given, out_dir, num_shards, where)
            found = [name for members in layout for name, _ in members]
            extra = sorted(set(found) - set(by_name))
            if extra:
                raise CheckFailure(check, f"{where} wrote members {extra[:3]} that are not image file names.",
                                   hint="Add each image with arcname=os.path.basename(path).")
            twice = sorted({n for n in found if found.count(n) > 1})
            missing = sorted(set(by_name) - set(found))
            if twice or missing:
                raise CheckFailure(check, f"{where}: images in more than one shard: {twice[:3]}; in none: "
                                          f"{missing[:3]}.", hint="Give each image to exactly one shard.")
            for members in layout:
                for name, data in members:
                    if data != by_name[name].data:
                        raise CheckFailure(check, f"{where}: the member {name!r} does not hold that file's bytes.")
            sizes = [len(members) for members in layout]
            if max(sizes) - min(sizes) > 1:
                raise CheckFailure(check, f"{where} wrote shards of {sizes} images; sizes may differ by at most one.",
                                   hint="Give the first len % num_shards shards one image more than the others.")
            exercised("written_twice")
            again_dir = os.path.join(root, f"again-{num_shards}")
            probes.write_samples(write_shards, again_dir, [])
            again = written_layout(check, write_shards, given, again_dir, num_shards, where)
            if [[n for n, _ in m] for m in again] != [[n for n, _ in m] for m in layout]:
                raise CheckFailure(check, f"{where} called twice with the same input wrote different shards.",
                                   hint="Don't shuffle with an unseeded random generator or depend on set order.")
        for bad in (0, -1, count + 1):
            exercised(("zero_shards", "negative_shards", "more_shards_than_images")[(0, -1, count + 1).index(bad)])
            expect_value_error(check, write_shards, given, os.path.join(root, f"bad{bad}"), bad)


# ------------------------------------------------------------------ TarImageDataset

@graded(2, hidden=[{}])
def check_tar_dataset_decoding(check, TarImageDataset, *, seed=0):
    """A single-process pass yields ``(name, image)`` for every image member, shard after shard in archive order,
    skipping members that are not images (JSON, text, directories); each image is OpenCV's decoding of the
    member (PNG: equal; JPEG: within a tolerance): an ``HxWx3`` uint8 array in BGR order."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    with probes.scratch(TarImageDataset, "grader-decode-") as root:
        samples = synthetic.make_samples(int(rng.integers(10, 16)), seed=check.seed_for("samples")) + synthetic.odd_samples(1000)
        order = rng.permutation(len(samples))
        samples = [samples[i] for i in order]
        sizes = synthetic.split_sizes(len(samples), 3, rng)
        paths = probes.write_shard_set(TarImageDataset, root, synthetic.group(samples, sizes))
        where = f"TarImageDataset over {len(paths)} shards of {sizes} images (and non-image members), no DataLoader"
        exercised("no_dataloader", "non_image_members", "png", "jpg")
        dataset = _construct(check, TarImageDataset, paths)
        items = [as_item(check, item, where=where, position=i)
                 for i, item in enumerate(_iterate(check, dataset, what="list(TarImageDataset(paths))"))]
        names = [name for name, _ in items]
        expected = [s.name for s in samples]
        if names != expected:
            skipped = sorted(set(names) - set(expected))
            hint = ("Skip members that are not images: directories, .json and .txt files." if skipped else
                    "Without workers and with world_size=1, yield every image of shard 0 in archive order, "
                    "then shard 1, and so on.")
            raise CheckFailure(check, f"with {where}: the names came out as {names[:6]}{'...' if len(names) > 6 else ''}"
                                      f" ({len(names)} items); expected {expected[:6]}... ({len(expected)} images).",
                               hint=hint)
        for (name, image), sample in zip(items, samples):
            expect_image(check, image, sample, where=where)


def _full_pass_error(dataset):
    """The exception a full pass over ``dataset`` raised (``NotImplementedError``, the stub's, raised on), or None."""
    try:
        list(iter(dataset))
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - the error is what we grade
        return error
    return None


@graded(1, hidden=[{}])
def check_tar_dataset_errors(check, TarImageDataset, *, seed=0):
    """A member that does not decode (random bytes, or an empty file: both, every time) raises an error that names
    its shard and the member; a missing shard raises ``FileNotFoundError`` before any sample is yielded."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    with probes.scratch(TarImageDataset, "grader-errors-") as root:
        samples = synthetic.make_samples(6, seed=check.seed_for("samples"))
        good = probes.write_shard_set(TarImageDataset, os.path.join(root, "good"), [samples[:3]])[0]
        damages = (("broken-000099.png", rng.integers(0, 256, 300, dtype=np.uint8).tobytes(), "random bytes"),
                   ("empty-000099.jpg", b"", "empty"))
        for number, (bad_name, bad_bytes, what) in enumerate(damages, start=1):
            shard = f"damaged-{number:04d}.tar"
            members = [(s.name, s.data) for s in samples[3:5]] + [(bad_name, bad_bytes), (samples[5].name,
                                                                                       samples[5].data)]
            bad = TarImageDataset.beside(probes.write_tars, [(os.path.join(root, shard), members)])[0]
            exercised("undecodable_member")
            dataset = _construct(check, TarImageDataset, [good, bad])
            attempt = functools.partial(_full_pass_error, dataset)
            error = check.student(attempt, "list(TarImageDataset([good shard, damaged shard]))")()
            where = f"a shard {shard!r} whose member {bad_name!r} is {what}"
            if error is None:
                raise CheckFailure(check, f"with {where}: a full pass raised no error.",
                                   hint="cv2.imdecode returns None for bytes it cannot decode: raise an error then.")
            text = str(error)
            if shard not in text or bad_name not in text:
                raise CheckFailure(check, f"with {where}: the error was {type(error).__name__}: {text[:300]!r}; it "
                                          "should name the shard and the member.",
                                   hint="Raise e.g. ValueError(f'{path}: cannot decode {member.name}').")
        missing = os.path.join(root, "missing-0002.tar")
        exercised("missing_shard")
        expect_missing_shard(check, TarImageDataset, [good, missing])


def _exactly_once_over(check, TarImageDataset, paths, samples, runs, *, world_size=None):
    """Run each ``(num_workers)`` in ``runs`` (per rank with ``world_size``) and expect every image exactly once."""
    __tracebackhide__ = True
    for num_workers in runs:
        exercised_as(worker_labels, len(paths), num_workers)
        exercised(*([f"world_size_{world_size}"] if world_size else []))
        if world_size is None:
            where = describe_run(len(paths), num_workers)
            dataset = _construct(check, TarImageDataset, paths)
            by_source = {"one process": _load_items(check, dataset, num_workers, where)}
        else:
            where = describe_run(len(paths), num_workers, world_size=world_size)
            by_source = {}
            for rank in range(world_size):
                dataset = _construct(check, TarImageDataset, paths, rank=rank, world_size=world_size)
                rank_where = describe_run(len(paths), num_workers, rank, world_size)
                by_source[f"rank {rank}"] = _load_items(check, dataset, num_workers, rank_where)
        expect_exactly_once(check, by_source, samples, where=where)


def _load_items(check, dataset, num_workers, where):
    __tracebackhide__ = True
    return [as_item(check, item, where=where, position=i)
            for i, item in enumerate(probes.load_beside(check, dataset, num_workers, where=where))]


@graded(3, hidden=[{}])
def check_tar_dataset_workers(check, TarImageDataset, *, seed=0, grid=WORKER_GRID):
    """Through real ``DataLoader`` worker processes, every image comes out exactly once (no duplicate, nothing
    missing), with ``num_workers`` in {0, 1, 2, 3, 5} over 1, 2, 3 and 7 shards of uneven sizes: fewer workers
    than shards, as many, and more."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    with probes.scratch(TarImageDataset, "grader-workers-") as root:
        for num_shards, runs in grid:
            directory = os.path.join(root, f"{num_shards}-shards")
            paths, samples = _shard_set(TarImageDataset, directory, num_shards, rng, empty_shard=num_shards >= 7)
            _exactly_once_over(check, TarImageDataset, paths, samples, runs)


@graded(2, hidden=[{}])
def check_tar_dataset_ranks(check, TarImageDataset, *, seed=0, grid=RANK_GRID):
    """With ``world_size`` 2 and 3 (one ``TarImageDataset(paths, rank, world_size)`` per rank, each read by a
    ``DataLoader`` with two workers), the union over all ranks holds every image exactly once."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    with probes.scratch(TarImageDataset, "grader-ranks-") as root:
        for num_shards, world_size in grid:
            directory = os.path.join(root, f"{num_shards}-shards-{world_size}-ranks")
            paths, samples = _shard_set(TarImageDataset, directory, num_shards, rng)
            _exactly_once_over(check, TarImageDataset, paths, samples, (RANK_WORKERS,), world_size=world_size)


@graded(2, hidden=[{}])
def check_tar_dataset_resources(check, TarImageDataset, *, seed=0):
    """After a full pass no shard is left open (neither held open nor left for the garbage collector to close),
    and the peak memory of a pass does not grow with the number of members in a shard (no growing member
    list: ``tarfile`` keeps every member it has read in ``tar.members`` unless told otherwise)."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    limits = settings.dataloading
    with probes.scratch(TarImageDataset, "grader-resources-") as root:
        paths, samples = _shard_set(TarImageDataset, os.path.join(root, "files"), 3, rng)
        dataset = _construct(check, TarImageDataset, paths)
        where = f"a full pass over TarImageDataset of {len(paths)} shards, no DataLoader"
        exercised("full_pass")
        count, still_open, unclosed = probes.files_after_pass(check, dataset, root, "TarImageDataset")
        if count != len(samples):
            raise CheckFailure(check, f"with {where}: {count} items came out, expected {len(samples)}.")
        if still_open:
            raise CheckFailure(check, f"after {where}, these shards are still open: "
                                      f"{[os.path.basename(p) for p in still_open]}.",
                               hint="Open each shard with `with tarfile.open(path) as tar:` inside __iter__; don't "
                                    "keep open files on the dataset.")
        if unclosed:
            raise CheckFailure(check, f"during {where}, Python's garbage collector had to close shards your code left "
                                      f"open: {unclosed[0]}.",
                               hint="Close every shard you open: `with tarfile.open(path) as tar:`.")
        small, large = limits.memory_members
        exercised("many_members")
        peaks = {}
        for members in (small, large):
            shard = (os.path.join(root, f"many-{members}.tar"),
                     [(f"{i:07d}.png", synthetic.tiny_png()) for i in range(members)])
            path = TarImageDataset.beside(probes.write_tars, [shard])[0]
            dataset = _construct(check, TarImageDataset, [path])
            count, peaks[members] = probes.peak_of_pass(check, dataset, f"TarImageDataset over {members} members",
                                                        warm_up=members == small)   # first-pass costs not counted
            if count != members:
                raise CheckFailure(check, f"a shard of {members} images gave {count} items.")
        per_member = (peaks[large] - peaks[small]) / (large - small)
        if per_member > limits.max_bytes_per_member:
            raise CheckFailure(check, f"the peak memory of a pass grew from {peaks[small] / 1024:.0f} KiB over a "
                                      f"shard of {small} small images to {peaks[large] / 1024:.0f} KiB over one of "
                                      f"{large}: {per_member:.0f} bytes per member (allowed: "
                                      f"{limits.max_bytes_per_member:g}).",
                               hint="tarfile keeps every member it reads in `tar.members`: set `tar.members = []` "
                                    "after each one, and don't call `getmembers()` or keep lists of names.",
                               measurements={"bytes_per_member": per_member})


# ------------------------------------------------------------------ collate_images

@graded(3, hidden=[{"cases": 60}])
def check_collate_images_values(check, collate_images, *, seed=0, cases=20):
    """``collate_images(batch)`` returns ``(names, images, sizes)``: the names in batch order; ``images`` one
    ``[B, 3, Hmax, Wmax]`` uint8 CPU tensor, image ``i`` channels first (BGR kept) in the top-left corner of slot
    ``i``, exactly its pixels, zeros elsewhere; ``sizes`` a ``[B, 2]`` int64 tensor of each ``(H, W)``. On random
    batches of NumPy arrays and of uint8 tensors, and on one image, equal sizes, a 1-pixel, a tall and a wide one."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    batches = [make_batch(rng, sizes, tensors=tensors) for sizes, tensors in EDGE_BATCHES]
    batches += [make_batch(rng, random_sizes(rng), tensors=bool(k % 2)) for k in range(cases)]
    for items in batches:
        exercised_as(batch_labels, items)
        result = call_collate(check, collate_images, items)
        expect_collated(check, result, items, where=f"collate_images on {describe_batch(items)}")


@graded(1, hidden=[{}])
def check_collate_images_copies(check, collate_images, *, seed=0):
    """``collate_images`` leaves its input images unchanged, and the batch it returns shares no memory with
    them: writing into the returned tensors leaves the inputs as they were (one image, equal sizes, mixed sizes;
    NumPy and tensor inputs)."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    for sizes, tensors in COPY_BATCHES:
        items = make_batch(rng, sizes, tensors=tensors)
        exercised_as(batch_labels, items)
        copies = functools.partial(collate_images.beside, probes.collate_copies)   # the call, where it lives
        facts = call_collate(check, copies, items)
        expect_own_memory(check, facts, items, where=f"collate_images on {describe_batch(items)}")


@graded(2, hidden=[{"tensors": True}])
def check_collate_images_loader(check, collate_images, *, seed=0, tensors=False):
    """As the ``collate_fn`` of a real ``DataLoader`` (two worker processes, ``batch_size=3`` with a last partial
    batch, ``pin_memory=True``) over the grader's dataset of synthetic images of different sizes: every batch is
    the right collation, and every image comes out exactly once and decodes back to its own id. With CUDA, the
    batches come out in pinned memory."""
    __tracebackhide__ = True
    rng = check.numpy_generator()
    count = int(rng.choice([n for n in range(10, 18) if n % LOADER_BATCH]))
    samples = synthetic.make_samples(count, seed=check.seed_for("samples"), first_id=int(rng.integers(0, synthetic.MAX_ID - 20)),
                                     formats=("png",), sizes=LOADER_SIZES)
    dataset = SyntheticImageDataset(samples, tensors=tensors)
    order = [int(i) for i in rng.permutation(count)]
    where = (f"DataLoader(<{count} synthetic {'tensor' if tensors else 'NumPy'} images, shuffled>, "
             f"batch_size={LOADER_BATCH}, num_workers={LOADER_WORKERS}, collate_fn=collate_images, pin_memory=True)")
    planned = [order[i:i + LOADER_BATCH] for i in range(0, count, LOADER_BATCH)]
    exercised("two_workers", "pin_memory", *(["partial_last_batch"] if count % LOADER_BATCH else []))
    call_collate(check, collate_images, [dataset[i] for i in planned[0]])   # an error shows best in this process
    batches, pinned = probes.load_collated(check, collate_images, samples, tensors, LOADER_WORKERS, where=where,
                                           batch_size=LOADER_BATCH, sampler=order, pin_memory=True)
    if len(batches) != len(planned):
        raise CheckFailure(check, f"with {where}: {len(batches)} batches came out, expected {len(planned)}.")
    items = []
    for number, (batch, indices) in enumerate(zip(batches, planned)):
        label = f"{where}, batch {number}" + (f" (the last, of {len(indices)} images)" if number == len(planned) - 1
                                              else "")
        expect_collated(check, batch, [dataset[i] for i in indices], where=label)
        names, images, sizes = batch
        items += [(name, images[row, :, :h, :w].permute(1, 2, 0).numpy())
                  for row, (name, (h, w)) in enumerate(zip(names, sizes.tolist()))]
    expect_exactly_once(check, {"one process": items}, samples, where=where)
    if pinned is not None:                     # CUDA where the batches were made: were they pinned there?
        for number, flags in enumerate(pinned):
            for label, flag in zip(("images", "sizes"), flags):
                if not flag:
                    raise CheckFailure(check, f"with {where}: batch {number}'s {label} is not in pinned memory.",
                                       hint="Return plain tensors in a tuple: the DataLoader pins every tensor in "
                                            "a tuple, list or dict (and objects with a pin_memory() method).")
