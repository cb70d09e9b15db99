"""What the loading checks expect: items, decoded images, every sample exactly once, the errors asked for, shards.

Each helper raises a :class:`CheckFailure` whose message names the configuration (``where``), the sample,
expected against got, and a hint.
"""

import functools
import os
from collections import Counter, defaultdict

import numpy as np

from autograder.checks.dataloading import probes, synthetic
from autograder.errors import CheckFailure, named_kind
from autograder.seam.handle import handle
from autograder.settings import settings

DUPLICATE_HINT = ("Every DataLoader worker (and every rank) gets its own copy of the dataset and iterates it from "
                  "the start: use torch.utils.data.get_worker_info() and the rank to give each of the "
                  "world_size * num_workers readers its own share.")
MISSING_HINT = ("Every image must go to exactly one reader, also when there are more readers "
                "(world_size * num_workers) than shards, or when the shards don't divide evenly among them.")


def _examples(names, limit=4):
    shown = ", ".join(repr(n) for n in list(names)[:limit])
    return shown + (", ..." if len(names) > limit else "")


def as_item(check, item, *, where, position):
    """``(name, image)`` from one yielded item; anything else is a failure."""
    __tracebackhide__ = True
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise CheckFailure(check, f"with {where}: item {position} is {_type_text(item)}, not a (name, image) pair.",
                           hint="Yield `(member.name, image)` for each image member.")
    name, image = item
    if not isinstance(name, str):
        raise CheckFailure(check, f"with {where}: item {position} has name {name!r} ({type(name).__name__}), "
                                  "not a str.", hint="Yield the member's name in the tar, `member.name`.")
    return name, image


def _type_text(value):
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


def expect_image(check, image, sample, *, where, allow_tensor=False):
    """``image`` is an ``HxWx3`` uint8 BGR array equal to OpenCV's decoding of ``sample`` (JPEG: close)."""
    __tracebackhide__ = True
    expected = sample.expected
    label = f"with {where}: the image {sample.name!r}"
    if allow_tensor and hasattr(image, "numpy") and hasattr(image, "dtype"):
        image = image.cpu().numpy()
    if not isinstance(image, np.ndarray):
        raise CheckFailure(check, f"{label} is a {type(image).__name__}, expected a numpy array.",
                           hint="Return what cv2.imdecode / cv2.imread return: an HxWx3 uint8 numpy array.")
    if image.shape != expected.shape or image.dtype != np.uint8:
        raise CheckFailure(check, f"{label} has shape {tuple(image.shape)} and dtype {image.dtype}; expected "
                                  f"{tuple(expected.shape)} and uint8.",
                           hint="Decode with cv2.IMREAD_COLOR: always three channels, also for grey or "
                                "transparent images (IMREAD_UNCHANGED keeps 1 or 4).")
    difference = np.abs(image.astype(np.int16) - expected.astype(np.int16))
    if _matches(difference, sample.lossy):
        return
    swapped = np.abs(image[..., ::-1].astype(np.int16) - expected.astype(np.int16))
    if _matches(swapped, sample.lossy):
        raise CheckFailure(check, f"{label} has its channels in RGB order; OpenCV's order is BGR.",
                           hint="Return the array cv2.imdecode gives, without cv2.cvtColor(..., COLOR_BGR2RGB).")
    where_max = np.unravel_index(int(difference.argmax()), difference.shape)
    raise CheckFailure(check, f"{label} differs from OpenCV's decoding of the member's bytes: "
                              f"{int((difference > 0).sum())} / {difference.size} values differ, the largest by "
                              f"{int(difference.max())} at (row, column, channel) {tuple(int(i) for i in where_max)}.",
                       hint="Decode exactly the member's bytes: "
                            "cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).")


def _matches(difference, lossy):
    if not lossy:
        return not difference.any()
    limits = settings.dataloading
    return difference.max() <= limits.jpeg_max_abs_diff and difference.mean() <= limits.jpeg_mean_abs_diff


def expect_exactly_once(check, items_by_source, samples, *, where):
    """Every sample's name comes out exactly once over all sources, each with its own image.

    ``items_by_source``: ``{source label: [(name, image), ...]}``, one source per rank (or a single one).
    """
    __tracebackhide__ = True
    by_name = {s.name: s for s in samples}
    sources = defaultdict(list)
    for source, items in items_by_source.items():
        for name, image in items:
            sources[name].append(source)
            sample = by_name.get(name)
            if sample is None:
                continue
            shape = tuple(getattr(image, "shape", ()))
            if len(shape) != 3 or shape[2] != 3:
                raise CheckFailure(check, f"with {where}: the image yielded with name {name!r} is "
                                          f"{_type_text(image)}, not an HxWx3 image.",
                                   hint="Yield the decoded image: cv2.imdecode(..., cv2.IMREAD_COLOR).")
            if synthetic.decode_id(image) != sample.sample_id:
                raise CheckFailure(check, f"with {where}: the image yielded with name {name!r} is not that "
                                          "member's image.", hint="Yield each member's name with its own image.")
    counts = Counter({name: len(found) for name, found in sources.items()})
    duplicated = sorted(n for n, c in counts.items() if c > 1 and n in by_name)
    missing = sorted(set(by_name) - set(counts))
    unexpected = sorted(set(counts) - set(by_name))
    if not (duplicated or missing or unexpected):
        return
    total = sum(counts.values())
    parts = []
    if duplicated:
        shown = duplicated[0]
        origin = ""
        if len(items_by_source) > 1:
            origin = f" ({shown!r} came from {', '.join(str(s) for s in sources[shown])})"
        parts.append(f"{len(duplicated)} came out more than once, e.g. {_examples(duplicated)}{origin}")
    if missing:
        parts.append(f"{len(missing)} never came out, e.g. {_examples(missing)}")
    if unexpected:
        parts.append(f"{len(unexpected)} names are not image members of the shards, e.g. {_examples(unexpected)}")
    hint = DUPLICATE_HINT if duplicated else MISSING_HINT
    if unexpected and not (duplicated or missing):
        hint = "Yield the member's own name (`member.name`) and skip members that are not images."
    # what went wrong first (more than once, never, other names), then what was expected: duplicates and missing
    # images are two mistakes, two kinds
    found = [label for label, present in (("duplicates", duplicated), ("missing", missing),
                                          ("other names", unexpected)) if present]
    raise CheckFailure(check, f"with {where}: {'; '.join(parts)}; expected each of the {len(samples)} images exactly "
                              f"once, got {total} items.", hint=hint, kind=named_kind(" and ".join(found)),
                       measurements={"items": total, "images": len(samples), "duplicated": len(duplicated),
                                     "missing": len(missing)})


# ------------------------------------------------------------------ single expectations

def same_image_as(image, samples):
    """The sample whose decoding ``image`` equals (in either channel order), or None."""
    if not isinstance(image, np.ndarray):
        return None
    for sample in samples:
        expected = sample.expected
        if image.shape == expected.shape and (np.array_equal(image, expected)
                                              or np.array_equal(image[..., ::-1], expected)):
            return sample
    return None


def expect_index_error(check, dataset, index, where):
    __tracebackhide__ = True

    def get():
        try:
            return dataset[index]
        except IndexError:
            return IndexError
    got = check.student(get, f"dataset[{index}]")()
    if got is not IndexError:
        raise CheckFailure(check, f"with {where}: dataset[{index}] (past the end) returned "
                                  f"{type(got).__name__}, expected it to raise IndexError.",
                           hint="Index a list of paths, which raises IndexError by itself; don't wrap indices "
                                "around with %.")


def written_layout(check, write_shards, given, out_dir, num_shards, where):
    """``[[(member name, bytes), ...] per shard]`` after checking the returned paths and the files written (read
    where ``write_shards`` wrote them: :func:`.probes.shard_layout`)."""
    __tracebackhide__ = True
    returned = check.student(write_shards, "write_shards")(list(given), out_dir, num_shards)
    expected = [os.path.join(out_dir, f"shard-{i:05d}.tar") for i in range(num_shards)]
    facts = handle(write_shards).beside(probes.shard_layout, returned, out_dir, num_shards)
    if not facts["returned"]:
        raise CheckFailure(check, f"{where} returned {str(returned)[:200]}; expected the {num_shards} shard paths "
                                  f"{[os.path.basename(p) for p in expected][:3]}... in order.",
                           hint="Name shard i f'shard-{i:05d}.tar' inside out_dir and return the list of paths.")
    written = facts["written"]
    if written != [os.path.basename(p) for p in expected]:
        raise CheckFailure(check, f"{where} left {written[:5]} in out_dir; expected exactly the shard files.")
    layout = []
    for path, members in zip(expected, facts["shards"]):
        if isinstance(members, str):
            raise CheckFailure(check, f"{where}: {os.path.basename(path)} is not a readable tar file ({members}).")
        layout.append([(name, data) for name, data in members])
    return layout


def expect_value_error(check, write_shards, given, out_dir, num_shards):
    __tracebackhide__ = True

    def attempt():
        try:
            write_shards(list(given), out_dir, num_shards)
        except ValueError:
            return ValueError
        return None
    if check.student(attempt, "write_shards")() is not ValueError:
        raise CheckFailure(check, f"write_shards(<{len(given)} image paths>, out_dir, num_shards={num_shards}) did "
                                  "not raise ValueError.",
                           hint="Check 1 <= num_shards <= len(image_paths) before writing anything.")


def expect_missing_shard(check, TarImageDataset, paths):
    __tracebackhide__ = True
    where = "TarImageDataset([an existing shard, 'missing-0002.tar'])"
    attempt = functools.partial(handle(TarImageDataset).beside, probes.missing_shard_attempt, list(paths))
    yielded = check.student(attempt, where)()
    if yielded is None:
        raise CheckFailure(check, f"{where}: neither building it nor a full pass raised FileNotFoundError.",
                           hint="Check that every path exists (os.path.isfile) and raise FileNotFoundError.")
    if yielded:
        raise CheckFailure(check, f"{where}: FileNotFoundError came only after {yielded} samples.",
                           hint="Check all the paths before yielding anything, so that a typo fails at once.")
