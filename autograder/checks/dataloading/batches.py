"""Batches of images of different sizes: the inputs, the oracle and the expectations for ``collate_images``.

A batch is a list of ``(name, image)`` items, ``image`` an ``HxWx3`` uint8 NumPy array as OpenCV decodes it, or
a uint8 tensor of that shape. Collated, it is ``(names, images, sizes)``: ``names`` the names in batch order,
``images`` a ``[B, 3, Hmax, Wmax]`` uint8 CPU tensor with image ``i`` channels first in the top-left corner of
its slot and zeros elsewhere, ``sizes`` a ``[B, 2]`` int64 tensor of each image's ``(H, W)``. The oracle is a
plain NumPy loop, grader-only (``autograder.oracles.dataloading``, through ``expected_outputs.oracle``); the
helpers below say which of these properties failed, on which image, and why.
"""

import numpy as np
import torch
from torch.utils.data import Dataset

from autograder.errors import CheckFailure
from autograder.measuring.expected_outputs import oracle
from autograder.seam.student import describe

# Batches that every seed grades, besides the random ones: (sizes as (H, W), given as tensors?).
EDGE_BATCHES = (
    (((13, 7),), False),                       # B = 1
    (((9, 11),) * 4, False),                   # equal sizes: nothing to pad
    (((1, 1), (6, 4), (3, 9)), False),         # a 1-pixel image
    (((40, 2), (2, 37), (5, 5)), False),       # a tall and a wide image
    (((1, 1),), True),                         # B = 1, one pixel, as a tensor
    (((4, 6), (7, 3), (4, 6), (2, 2)), True),  # tensors of mixed sizes
)
MAX_BATCH, MAX_SIDE = 6, 24                    # random batches: 1 .. 6 images, sides 1 .. 24 pixels
COPY_BATCHES = (                               # the no-shared-memory check: each kind of input, with and
    (((5, 8),), False), (((5, 8),), True),     # without padding (one image, equal sizes, mixed sizes)
    (((6, 6),) * 3, False), (((6, 6),) * 3, True),
    (((3, 9), (7, 2), (1, 1)), False), (((3, 9), (7, 2), (1, 1)), True),
)

COPY_HINT = ("Allocate the batch, then copy each image in: out = torch.zeros(B, 3, Hmax, Wmax, dtype=torch.uint8); "
             "out[i, :, :h, :w] = torch.as_tensor(image).permute(2, 0, 1).")


def make_batch(rng, sizes, *, tensors):
    """``[(name, image)]``: random uint8 pixels of the given ``(H, W)`` sizes; unique names in no sorted order."""
    ids = rng.choice(1000, size=len(sizes), replace=False)
    items = []
    for sample_id, (height, width) in zip(ids, sizes):
        image = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
        items.append((f"img-{int(sample_id):03d}.png", torch.from_numpy(image) if tensors else image))
    return items


def random_sizes(rng):
    count = int(rng.integers(1, MAX_BATCH + 1))
    return [tuple(int(v) for v in rng.integers(1, MAX_SIDE + 1, size=2)) for _ in range(count)]


def as_array(image):
    """An input image as a NumPy array (a copy of a tensor's values)."""
    return image.numpy() if isinstance(image, torch.Tensor) else np.asarray(image)


def describe_batch(items):
    """``3 NumPy images (H x W: 13x7, 1x1, 40x2)``."""
    kind = "tensor" if isinstance(items[0][1], torch.Tensor) else "NumPy"
    shapes = ", ".join(f"{a.shape[0]}x{a.shape[1]}" for a in (as_array(image) for _, image in items))
    return f"{len(items)} {kind} image{'s' if len(items) != 1 else ''} (H x W: {shapes})"


def repro(items):
    """A call a student can paste into the notebook to try a batch of the same sizes."""
    sizes = [tuple(as_array(image).shape[:2]) for _, image in items]
    if isinstance(items[0][1], torch.Tensor):
        make = "torch.randint(0, 256, (h, w, 3), dtype=torch.uint8)"
    else:
        make = "np.random.randint(0, 256, (h, w, 3), dtype=np.uint8)"
    return f"collate_images([(f'img{{i}}', {make}) for i, (h, w) in enumerate({sizes})])"


def _fail(check, where, text, hint, items=None):
    __tracebackhide__ = True
    __kind_at_caller__ = True     # noqa: F841 - autograder.errors.raise_site: the failure's kind is its caller's raise
    if items is not None:
        text += f" To try it: {repro(items)}"
    raise CheckFailure(check, f"with {where}: {text}", hint=hint)


def expect_batch_structure(check, result, items, *, where):
    """``result`` is ``(names, images, sizes)`` with ``images`` one tensor with a row per image; returns it."""
    __tracebackhide__ = True
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        hint = "Return a tuple of three: (names, images, sizes)."
        if isinstance(result, (tuple, list)) and len(result) == 2:
            hint = ("Return the names too, first: (names, images, sizes). The training loop needs them (to log, "
                    "or to look up labels), and the DataLoader passes them through.")
        _fail(check, where, f"collate_images returned {describe(result)}; expected a tuple (names, images, sizes).",
              hint, items)
    images = result[1]
    if isinstance(images, (list, tuple)):
        _fail(check, where, f"images is a {type(images).__name__} of {len(images)} items, not one batch tensor.",
              "Make one uint8 tensor [B, 3, Hmax, Wmax] and copy each image into its top-left corner: a model "
              "takes one tensor, and one tensor is one copy to the GPU. " + COPY_HINT, items)
    if not isinstance(images, torch.Tensor):
        _fail(check, where, f"images is {describe(images)}, not a torch tensor.", COPY_HINT, items)
    if images.dim() < 1 or images.shape[0] != len(items):
        _fail(check, where, f"images has shape {list(images.shape)}; expected [{len(items)}, 3, Hmax, Wmax] "
                            "(one row per image).", COPY_HINT, items)
    return result


def expect_collated(check, result, items, *, where):
    """``result`` equals the oracle's collation of ``items``; the first property that fails is the message."""
    __tracebackhide__ = True
    names, images, sizes = expect_batch_structure(check, result, items, where=where)
    want_names, want_images, want_sizes = oracle("dataloading.collated", items)
    count, (height, width) = len(items), want_images.shape[2:]
    _expect_names(check, names, want_names, where=where)
    if images.device.type != "cpu":
        _fail(check, where, f"images is on {images.device}.",
              "Collate on the CPU: DataLoader workers should not touch the GPU. Pass pin_memory=True to the "
              "DataLoader and move the batch in the training loop with .to(device, non_blocking=True).")
    if images.dtype != torch.uint8:
        _fail(check, where, f"images has dtype {images.dtype}; expected torch.uint8.",
              "Keep the pixels as uint8 in the batch: 4x fewer bytes than float32 to send from the workers, pin "
              "and copy to the GPU; convert with .float() / 255 on the GPU.", items)
    expected_shape = [count, 3, int(height), int(width)]
    if list(images.shape) != expected_shape:
        hint = COPY_HINT
        if list(images.shape) == [count, int(height), int(width), 3]:
            hint = ("That is channels last (B, H, W, 3), as OpenCV's arrays are; models take channels first: "
                    "image.permute(2, 0, 1) (or .transpose(2, 0, 1) in NumPy).")
        _fail(check, where, f"images has shape {list(images.shape)}; expected {expected_shape} "
                            "([B, 3, Hmax, Wmax]).", hint, items)
    got_images = images.detach().numpy()
    for index in range(count):
        _expect_image(check, got_images, want_images, want_sizes, index, items, where=where)
    _expect_sizes(check, sizes, want_sizes, items, where=where)


def _expect_names(check, names, want, *, where):
    __tracebackhide__ = True
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        _fail(check, where, f"names is {describe(names)}; expected the {len(want)} names as a list of str.",
              "names = [name for name, _ in batch].")
    if list(names) != want:
        reordered = sorted(names) == sorted(want)
        _fail(check, where, f"names came back as {list(names)}; expected {want} "
                            f"({'the same names, in the order of the batch' if reordered else 'the input names'}).",
              "Keep the batch order: the i-th name belongs to the i-th image and the i-th size.")


def _expect_image(check, got_images, want_images, want_sizes, index, items, *, where):
    __tracebackhide__ = True
    got, want = got_images[index], want_images[index]
    if np.array_equal(got, want):
        return
    height, width = (int(v) for v in want_sizes[index])
    # what the image is, in brackets; what is wrong follows (each told by a raise of its own: a kind of its own)
    label = (f"image {index} ({items[index][0]!r}, {height}x{width}, in a batch padded to "
             f"{want.shape[1]}x{want.shape[2]})")
    pixels = want[:, :height, :width]
    if np.array_equal(got[:, :height, :width], pixels):
        padding = np.ones(got.shape, dtype=bool)
        padding[:, :height, :width] = False
        wrong = tuple(int(i) for i in np.argwhere(padding & (got != 0))[0])
        values = np.unique(got[padding])
        if len(values) == 1:
            _fail(check, where, f"{label}: its padding holds {int(values[0])} everywhere, around pixels in place; "
                                "the padding must be 0.",
                  "Start from zeros (torch.zeros(...), or F.pad(..., value=0)) and copy the pixels in.", items)
        _fail(check, where, f"{label}: its padding holds varying values, not 0, around pixels in place (e.g. "
                            f"{int(got[wrong])} at (channel, row, column) {wrong}): is the image resized, or "
                            "repeated, over its slot?",
              "Pad, don't resize: copy the pixels into the top-left corner of a zero tensor.", items)
    for other in range(len(want_images)):
        if other != index and np.array_equal(got, want_images[other]):
            _fail(check, where, f"slot {index} holds image {other} ({items[other][0]!r}), not image {index}.",
                  "Keep the batch order in images as in names and sizes (no sorting by size).", items)
    offset = _offset_of(got, pixels)
    if offset is not None:
        _fail(check, where, f"{label} starts at (row, column) {offset}, not in the top-left corner (0, 0).",
              "Pad only at the bottom and the right: out[i, :, :h, :w] = image. Then (h, w) in sizes says where "
              "each image ends, and no offset has to be remembered.", items)
    if np.array_equal(got[::-1, :height, :width], pixels):
        _fail(check, where, f"{label} has its channels in reverse (RGB) order; keep OpenCV's BGR.",
              "Permute the axes, (H, W, 3) -> (3, H, W), without reversing the channels.", items)
    wrong = np.argwhere(got[:, :height, :width] != pixels)
    first = tuple(int(i) for i in wrong[0])
    _fail(check, where, f"{label} differs from its input pixels: {len(wrong)} of {pixels.size} values differ, the "
                        f"first at (channel, row, column) {first}: expected {int(pixels[first])}, got "
                        f"{int(got[first])}.",
          "Copy each image's pixels unchanged, channels first, into the top-left corner: no resizing, no "
          "interpolation, no cropping.", items)


def _offset_of(got, pixels):
    """The (row, column) where ``pixels`` sits in ``got`` other than (0, 0), or None."""
    height, width = pixels.shape[1:]
    for row in range(got.shape[1] - height + 1):
        for column in range(got.shape[2] - width + 1):
            if (row, column) != (0, 0) and np.array_equal(got[:, row:row + height, column:column + width], pixels):
                return row, column
    return None


def _expect_sizes(check, sizes, want, items, *, where):
    __tracebackhide__ = True
    hint = "sizes = torch.tensor([image.shape[:2] for image in images], dtype=torch.int64): (H, W) per image."
    if not isinstance(sizes, torch.Tensor):
        _fail(check, where, f"sizes is {describe(sizes)}, not a tensor; expected an int64 tensor of shape "
                            f"[{len(want)}, 2].", hint, items)
    if sizes.dtype != torch.int64 or list(sizes.shape) != [len(want), 2] or sizes.device.type != "cpu":
        _fail(check, where, f"sizes is a {sizes.dtype} tensor of shape {list(sizes.shape)} on {sizes.device}; "
                            f"expected torch.int64, shape [{len(want)}, 2], on the CPU.",
              hint + " int64 is torch's index type: sizes is used to slice and to build masks.", items)
    got = sizes.numpy()
    if np.array_equal(got, want):
        return
    if np.array_equal(got, want[:, ::-1]):
        _fail(check, where, f"sizes holds (W, H): {got.tolist()}; expected (H, W): {want.tolist()}.",
              "image.shape[:2] is (H, W), the order of the tensor's axes (cv2.resize is the one that takes (W, H)).",
              items)
    _fail(check, where, f"sizes is {got.tolist()}; expected each image's original (H, W): {want.tolist()}.",
          hint, items)


def call_collate(check, collate_images, items):
    """``collate_images(items)``, the guarded call of the check's handle on it; a failure names the batch by its
    sizes (not by the pixel values) and adds a call to reproduce it."""
    __tracebackhide__ = True
    try:
        return check.student(collate_images, "collate_images")(items)
    except CheckFailure as failure:
        if failure.kind == "not implemented":
            raise
        detail, listed = failure.detail, f"collate_images({describe(items)})"
        if detail.startswith(listed):
            detail = f"collate_images(<{describe_batch(items)}>)" + detail[len(listed):]
        raise CheckFailure(check, f"{detail} To try it: {repro(items)}", hint=failure.hint) from None


# ------------------------------------------------------------------ memory shared with the input

def expect_own_memory(check, facts, items, *, where):
    """From :func:`.probes.collate_copies`'s ``facts``: the call left its inputs as they were, and they stayed so
    when every tensor or array in its result was written to: the batch shares no memory with the images it was
    made from."""
    __tracebackhide__ = True
    if facts["changed"] is not None:
        _input_changed(check, items, facts["changed"], where=where,
                       text="collate_images changed input image {index} ({name!r}) in place.",
                       hint="Read the inputs, never write to them: the dataset may hand out the same arrays "
                            "again (a cache, an in-memory dataset).")
    expect_batch_structure(check, facts["result"], items, where=where)
    if facts["written"] is not None:
        _input_changed(check, items, facts["written"], where=where,
                       text="writing into the returned batch changed input image {index} ({name!r}): the "
                            "batch shares memory with it.",
                       hint="torch.from_numpy, torch.as_tensor, permute and unsqueeze make views, not copies; "
                            "a training step that normalises the batch in place would then change the "
                            "dataset's images. Copy, also for one image or equal sizes. " + COPY_HINT)


def _input_changed(check, items, index, *, where, text, hint):
    __tracebackhide__ = True
    index = int(index) if type(index) is int and 0 <= index < len(items) else 0
    _fail(check, where, text.format(index=index, name=items[index][0]), hint, items)


def arrays_in(value, depth=0):
    if isinstance(value, (torch.Tensor, np.ndarray)):
        yield value
    elif isinstance(value, (list, tuple)) and depth < 2:
        for inner in value:
            yield from arrays_in(inner, depth + 1)


# ------------------------------------------------------------------ a dataset of the synthetic images

class SyntheticImageDataset(Dataset):
    """The grader's map-style dataset: item ``i`` is ``(name, image)`` of synthetic sample ``i``, the image
    decoded by OpenCV (``HxWx3`` uint8 BGR, its pixels carry the sample's id), or as a uint8 tensor with
    ``tensors``. Holds only samples (names and bytes), so it pickles for spawned workers."""

    def __init__(self, samples, tensors=False):
        self.samples, self.tensors = list(samples), tensors

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        sample = self.samples[index]
        image = sample.expected
        return sample.name, torch.from_numpy(image) if self.tensors else image
