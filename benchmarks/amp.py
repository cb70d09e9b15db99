"""Calibrate the ``amp`` speed check: the ratio it sees for the reference and for naive loops, on CUDA.

Not a test. It builds exactly what ``check_speed`` builds (the AMP recipe's model: three
``Linear(4096, 4096)`` with ReLU between them, batch 512, MSE, SGD; the grader's float32
loop as the baseline, pinned to full IEEE float32 with TF32 off) and measures, ``--runs``
times, the ratio ``check_speed`` measures (one ``measure_speedup`` call: baseline median /
candidate median, interleaved, warmed up, synchronised) for:

- the reference ``train_amp`` with float16 (and with bfloat16, for information);
- naive versions: float16 autocast without a scaler, and the float32 loop itself.

It prints one row per candidate (min, median, max over the runs) and the device. A
threshold is sound when it sits well below the reference's min and well above the naive
float32 loop's max. Without a GPU it says so and exits (``--device cpu`` forces a CPU run,
with ``--width`` to shrink the model, for information only: AMP speed is not graded there).
Run from the repository root::

    python benchmarks/amp.py --runs 20 [--markdown]
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
from autograder.timing import measure_speedup  # noqa: E402
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


def one_ratio(fn, dtype, device, width, batch, count, seed):
    gen = torch.Generator().manual_seed(seed)
    model = amp_speed.tutorial_model(device, width=width)
    base_model = amp_speed.tutorial_model(device, width=width)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--width", type=int, default=amp_speed.TUTORIAL_WIDTH)
    parser.add_argument("--batch", type=int, default=amp_speed.TUTORIAL_BATCH)
    parser.add_argument("--batches", type=int, default=amp_speed.TIMED_BATCHES)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("benchmarks/amp.py needs a GPU: the amp speed check is graded on CUDA only. Run it on a machine with "
              "an NVIDIA GPU (`python benchmarks/amp.py --runs 20`), or pass --device cpu for an ungraded CPU figure.")
        return 0
    where = torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or platform.machine()
    threshold = settings.speed.thresholds["amp"].for_device(args.device)
    rows = []
    for name, (fn, dtype) in candidates(args.device).items():
        measured = [one_ratio(fn, dtype, args.device, args.width, args.batch, args.batches, seed)
                    for seed in range(args.runs)]
        ratios = [r for r, _, _ in measured]
        rows.append((name, min(ratios), statistics.median(ratios), max(ratios),
                     statistics.median(c for _, c, _ in measured), statistics.median(b for _, _, b in measured)))
        print(f"  measured {name}", file=sys.stderr, flush=True)
    print(f"amp speed, {args.runs} runs, {args.device} ({where}), torch {torch.__version__}, "
          f"{datetime.date.today()}, model 3 x Linear({args.width}, {args.width}), batch {args.batch}, "
          f"{args.batches} batches per call, baseline float32 with TF32 off, threshold {threshold}")
    header = ("candidate", "min", "median", "max", "candidate s/call", "baseline s/call")
    if args.markdown:
        print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        for name, lo, mid, hi, cand, base in rows:
            print(f"| {name} | {lo:.2f}x | {mid:.2f}x | {hi:.2f}x | {cand:.4f} | {base:.4f} |")
    else:
        for name, lo, mid, hi, cand, base in rows:
            print(f"{name:38} min {lo:6.2f}x  median {mid:6.2f}x  max {hi:6.2f}x  ({cand:.4f} s vs {base:.4f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
