"""Loose files against tar shards: images per second through a DataLoader, with 0 and 2 workers.

Not a test. It writes ``--images`` synthetic images (OpenCV PNG, ``--size`` pixels square) as loose files and as
``--shards`` tar shards (with the reference ``write_shards``), then reads them back with the reference
``ImageDirectoryDataset`` and ``TarImageDataset`` through ``DataLoader(batch_size=None, num_workers=...)``, each
``--repeats`` times, and prints the median rate as a table. The files sit in the page cache (they were just
written), so this compares per-file overhead (open, stat, close) and per-member overhead, not disk seeks or
network requests, where shards gain far more. Run from the repository root::

    python benchmarks/loading.py [--images 2000] [--size 64] [--shards 8] [--repeats 3] [--batch-size 32] [--markdown]
"""

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch
from torch.utils.data import DataLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.checks.dataloading import synthetic  # noqa: E402
from tests.proving import reference  # noqa: E402


def _count(batch):
    return len(batch[1]) if isinstance(batch, (tuple, list)) else len(batch)


def rate(dataset, num_workers, count, repeats, batch_size):
    """Median images per second of full passes; every pass must yield ``count`` images."""
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        loader = DataLoader(dataset, batch_size=batch_size, num_workers=num_workers)
        seen = sum(_count(batch) for batch in loader) if batch_size else sum(1 for _ in loader)
        elapsed = time.perf_counter() - started
        assert seen == count, f"a pass yielded {seen} images, expected {count}"
        rates.append(count / elapsed)
    return statistics.median(rates)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=0, help="0: batch_size=None (one image at a time)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message=".*worker processes in total")
    solution = reference("dataloading")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-loading-") as root:
        samples = [synthetic.Sample(f"{i:06d}.png", i, "png",
                                    synthetic.encode(synthetic.synthetic_image(i % (synthetic.MAX_ID + 1),
                                                                               args.size, args.size), "png"))
                   for i in range(args.images)]
        paths = synthetic.write_files(os.path.join(root, "files"), samples)
        shards = solution["write_shards"](paths, os.path.join(root, "shards"), args.shards)
        folder = solution["ImageDirectoryDataset"](os.path.join(root, "files"))
        tar = solution["TarImageDataset"](shards)
        for workers in (0, 2):
            rows.append(("loose files, ImageDirectoryDataset", workers, rate(folder, workers, args.images, args.repeats, args.batch_size or None)))
            rows.append((f"{args.shards} shards, TarImageDataset", workers, rate(tar, workers, args.images, args.repeats, args.batch_size or None)))
    batching = f"batch_size={args.batch_size}" if args.batch_size else "batch_size=None"
    header = (f"{args.images} PNG images of {args.size}x{args.size}, {batching}, median of {args.repeats} passes; "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
              f"{datetime.date.today()}")
    print(header)
    if args.markdown:
        print("\n| data | num_workers | images / s |\n| --- | ---: | ---: |")
        for name, workers, value in rows:
            print(f"| {name} | {workers} | {value:,.0f} |")
    else:
        for name, workers, value in rows:
            print(f"{name:40} num_workers={workers}  {value:10,.0f} images/s")


if __name__ == "__main__":
    main()
