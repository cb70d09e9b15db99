"""Calibrate the ``amp`` speed check: the ratio it sees for the reference and for naive loops, on CUDA.

Not a test. It builds what ``check_speed`` builds (the timed problem of ``checks/amp/speed.py``:
``TIMED_LAYERS`` x ``Linear(TIMED_WIDTH)`` with ReLU between them, batch ``TIMED_BATCH``, MSE, SGD; the
grader's float32 loop as the baseline, pinned to full IEEE float32 with TF32 off) and measures, ``--runs``
times, the ratio ``check_speed`` measures (one ``measure_speedup`` call: baseline median / candidate median,
interleaved, warmed up, synchronised) for:

- the reference ``train_amp`` with float16 (what the grader's own float16 + GradScaler loop, timed beside the
  student's, stands for: the threshold is a fraction of its ratio) and with bfloat16, for information;
- naive versions: float16 autocast without a scaler, and the float32 loop itself (what must fail).

``--sweep`` measures a list of sizes (width, layers, batch) instead of one, from the recipe's
(3 x Linear(4096), batch 512, which does not keep a current datacenter GPU busy) up: a size is good when the
reference's ratio is well above the float32 loop's and steady across runs, and a call lasts well under a second.
It prints one row per candidate (min, median, max over the runs) and the device. Without a GPU it says so and
exits 0 (``--device cpu`` forces a CPU run, with ``--width`` to shrink the model, for information only: AMP speed
is not graded there). Run from the repository root::

    python benchmarks/amp.py --runs 20 [--markdown] [--sweep]
"""

import argparse
import datetime
import platform
import statistics
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.checks.amp import speed as amp_speed  # noqa: E402
from autograder.checks.amp.problems import mse  # noqa: E402
from autograder.settings import settings  # noqa: E402
from autograder.measuring.timing import measure_speedup  # noqa: E402
from tests.mutants.amp import MUTANTS  # noqa: E402
from tests.proving import reference  # noqa: E402


def candidates(device):
    train_amp = reference("amp")["train_amp"]
    autocast_only = MUTANTS["float16 autocast without a scaler"][0]["train_amp"]
    float32_loop = MUTANTS["float32 loop (no autocast, no scaler)"][0]["train_amp"]
    return {
        "reference, float16": (train_amp, torch.float16),
        "reference, bfloat16": (train_amp, torch.bfloat16),
        "naive: float16 autocast, no scaler": (autocast_only, torch.float16),
        "naive: the float32 loop": (float32_loop, torch.float16),
    }


SWEEP = ((4096, 3, 512), (4096, 3, 2048), (4096, 4, 4096), (8192, 3, 2048), (8192, 4, 4096))   # width, layers, batch


def one_ratio(fn, dtype, device, width, batch, count, seed, layers=amp_speed.TIMED_LAYERS):
    gen = torch.Generator().manual_seed(seed)
    model = amp_speed.tutorial_model(device, width=width, layers=layers)
    base_model = amp_speed.tutorial_model(device, width=width, layers=layers)
    base_model.load_state_dict(model.state_dict())
    batches = amp_speed.tutorial_batches(gen, device, width=width, batch=batch, count=count)
    opt = torch.optim.SGD(model.parameters(), lr=amp_speed.LEARNING_RATE)
    base_opt = torch.optim.SGD(base_model.parameters(), lr=amp_speed.LEARNING_RATE)

    def candidate():
        return fn(model, batches, opt, mse, device_type=device, dtype=dtype)

    def baseline():
        return amp_speed.float32_loop(base_model, batches, base_opt, mse)

    with amp_speed.full_float32_precision():
        ratio, cand_s, base_s = measure_speedup(candidate, baseline, (), device=device)
    return ratio, cand_s, base_s


def measure(args, width, layers, batch):
    """``[(candidate, min, median, max, candidate s/call, baseline s/call)]`` for one size."""
    rows = []
    for name, (fn, dtype) in candidates(args.device).items():
        measured = [one_ratio(fn, dtype, args.device, width, batch, args.batches, seed, layers)
                    for seed in range(args.runs)]
        ratios = [r for r, _, _ in measured]
        rows.append((name, min(ratios), statistics.median(ratios), max(ratios),
                     statistics.median(c for _, c, _ in measured), statistics.median(b for _, _, b in measured)))
        print(f"  measured {name} at {layers} x Linear({width}), batch {batch}", file=sys.stderr, flush=True)
    return rows


def print_rows(rows, markdown, size=""):
    header = (("size",) if size else ()) + ("candidate", "min", "median", "max", "candidate s/call",
                                             "baseline s/call")
    if markdown:
        print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        for name, lo, mid, hi, cand, base in rows:
            print(f"| {size + ' | ' if size else ''}{name} | {lo:.2f}x | {mid:.2f}x | {hi:.2f}x | {cand:.4f} | "
                  f"{base:.4f} |")
    else:
        for name, lo, mid, hi, cand, base in rows:
            print(f"{size + '  ' if size else ''}{name:38} min {lo:6.2f}x  median {mid:6.2f}x  max {hi:6.2f}x  "
                  f"({cand:.4f} s vs {base:.4f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--width", type=int, default=amp_speed.TIMED_WIDTH)
    parser.add_argument("--layers", type=int, default=amp_speed.TIMED_LAYERS)
    parser.add_argument("--batch", type=int, default=amp_speed.TIMED_BATCH)
    parser.add_argument("--batches", type=int, default=amp_speed.TIMED_BATCHES)
    parser.add_argument("--sweep", action="store_true", help="measure every size of SWEEP (width, layers, batch)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("benchmarks/amp.py needs a GPU: the amp speed check is graded on CUDA only. Run it on a machine with "
              "an NVIDIA GPU (`python benchmarks/amp.py --runs 20`), or pass --device cpu for an ungraded CPU figure.")
        return 0
    where = torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or platform.machine()
    spec = settings.speed.thresholds["amp"]
    sizes = SWEEP if args.sweep else ((args.width, args.layers, args.batch),)
    print(f"amp speed, {args.runs} runs, {args.device} ({where}), torch {torch.__version__}, "
          f"{datetime.date.today()}, {args.batches} batches per call, baseline float32 with TF32 off; required: "
          f"at least {spec.of_reference.get(args.device)} of the float16 reference's ratio and at least "
          f"{spec.for_device(args.device)}x")
    for width, layers, batch in sizes:
        rows = measure(args, width, layers, batch)
        size = f"{layers} x Linear({width}), batch {batch}"
        if not args.sweep:
            print(size)
        print_rows(rows, args.markdown, size if args.sweep else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
