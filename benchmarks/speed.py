"""Calibrate the speed checks: the ratio each one sees, for the reference and for naive versions.

Not a test. For every speed check it measures, ``--runs`` times on the current
device (CUDA when present, else the CPU; ``--device`` to choose), exactly the ratio
the check measures (one ``measure_speedup`` call: baseline median / candidate median,
interleaved, warmed up, CPU threads pinned as in the check), for the reference
solution and for each naive version, and prints a table:

    check | device | threshold | reference min | reference median | naive max

A threshold is sound when it sits well below "reference min" and well above
"naive max". ``--trusted`` measures as the trusted grader does instead
(``measure_remote_speedup``: the candidate in a worker process, the baseline in a clean
one, every request carrying the seeds its inputs are made from in the worker, inside the grader's clock), and
states what a timed request adds per call by itself: the round trip and making the inputs, timed with a
function that does nothing (``timed_inputs.first_argument``), beside the bare round trip (no input). Run
from the repository root::

    python benchmarks/speed.py --runs 20 [--device cpu|cuda] [--markdown] [--trusted]
"""

import argparse
import datetime
import importlib.util
import platform
import statistics
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.checks import operators, vectorization  # noqa: E402
from autograder.settings import settings  # noqa: E402
from autograder.seam import timed_inputs  # noqa: E402
from autograder.measuring.timing import draw_seeds, measure_remote_speedup, measure_speedup  # noqa: E402
from autograder.seam import remote  # noqa: E402


def _module(path, name):
    """Import a file as a module."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unbind_loop_sum(x):
    total = torch.zeros_like(x[0])
    for row in torch.unbind(x):
        total += row
    return total


def list_loop_sum(x):
    """A loop in plain Python over ``x.tolist()``: a handful of torch calls whatever the size (the adversarial
    suite's ``loop_in_python_lists``, which passed the 30x threshold while timed calls ran under the op recorder)."""
    rows = x.tolist()
    total = rows[0]
    for row in rows[1:]:
        total = [a + b for a, b in zip(total, row)]
    return torch.tensor(total, dtype=x.dtype)


def unbind_loop_gather(tensor, indices):
    """The row loop spelled with ``unbind`` and ``zip`` (until 2026-11-24 the second naive version was the same loop
    scripted with TorchScript, which the lesson no longer teaches)."""
    return torch.stack([rows[picked] for rows, picked in zip(tensor.unbind(0), indices.unbind(0))])


def cases():
    """``(check, threshold name, baseline, args builder, reference, {naive name: naive})``."""
    ops = _module(ROOT / "solutions" / "operators.py", "reference_operators")
    vec = _module(ROOT / "solutions" / "vectorization.py", "reference_vectorization")
    return [
        ("check_row_sum_speed", "row_sum", operators.slicing_loop_sum, operators.speed_args, ops.row_sum,
         {"slicing loop": operators.slicing_loop_sum, "unbind loop": unbind_loop_sum, "list loop": list_loop_sum}),
        ("check_batch_gather_speed", "batch_gather", vectorization.loop_gather, vectorization.speed_args,
         vec.batch_gather,
         {"python loop": vectorization.loop_gather, "unbind loop": unbind_loop_gather}),
    ]


def measure(runs, device):
    rows = []
    for check, name, baseline, make_args, reference, naives in cases():
        args = make_args(device)
        ref = [measure_speedup(reference, baseline, args, device=device)[0] for _ in range(runs)]
        naive = {label: max(measure_speedup(fn, baseline, args, device=device)[0] for _ in range(runs))
                 for label, fn in naives.items()}
        worst = max(naive, key=naive.get)
        rows.append({"check": check, "device": device, "threshold": settings.speed.thresholds[name].for_device(
            torch.device(device).type), "reference_min": min(ref), "reference_median": statistics.median(ref),
            "naive_max": naive[worst], "naive": worst, "runs": runs})
        print(f"  measured {check}: reference {min(ref):.1f}x .. {max(ref):.1f}x, naive max {naive}",
              file=sys.stderr, flush=True)
    return rows


WORKER_NAMES = {"row_sum": {"slicing loop": "slicing_loop_sum", "unbind loop": "unbind_loop_sum",
                            "list loop": "list_loop_sum"},
                "batch_gather": {"python loop": "loop_gather", "unbind loop": "unbind_loop_gather"}}


def measure_trusted(runs, device):
    """As :func:`measure`, through the trusted grader's timing: each function in a worker process."""
    import tempfile

    from autograder.engine.trusted_runner import NotebookWorker, RemoteNamespace, plain_launcher

    setup = (f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
             "from tests.proving import reference as _r\n"
             "globals().update(_r('operators')); _v = _r('vectorization')\n"
             "batch_gather = _v['batch_gather']\n"
             "from autograder.checks.operators import slicing_loop_sum\n"
             "from autograder.checks.vectorization import loop_gather\n"
             "import torch\n"
             "def unbind_loop_sum(x):\n"
             "    total = torch.zeros_like(x[0])\n"
             "    for row in torch.unbind(x):\n"
             "        total += row\n"
             "    return total\n"
             "def list_loop_sum(x):\n"
             "    rows = x.tolist()\n"
             "    total = rows[0]\n"
             "    for row in rows[1:]:\n"
             "        total = [a + b for a, b in zip(total, row)]\n"
             "    return torch.tensor(total, dtype=x.dtype)\n"
             "def unbind_loop_gather(tensor, indices):\n"
             "    return torch.stack([rows[picked] for rows, picked in zip(tensor.unbind(0), indices.unbind(0))])\n")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        worker = NotebookWorker([("setup", setup)], plain_launcher, scratch)
        try:
            names = RemoteNamespace(worker)
            for check, name, baseline, make_args, reference, naives in cases():
                args = make_args(device)
                ref_name = "row_sum" if name == "row_sum" else "batch_gather"

                def ratio(fn_name, seconds=None):
                    measured = measure_remote_speedup(check, names[fn_name], baseline, args,
                                                      device=torch.device(device), what=fn_name)
                    if seconds is not None:
                        seconds.append(measured[1])
                    return measured[0]
                ref_s = []
                ref = [ratio(ref_name, ref_s) for _ in range(runs)]
                naive_all = {label: [ratio(WORKER_NAMES[name][label]) for _ in range(runs)] for label in naives}
                naive = {label: max(v) for label, v in naive_all.items()}
                worst = max(naive, key=naive.get)
                rows.append({"check": check, "device": device, "threshold": settings.speed.thresholds[name].for_device(
                    torch.device(device).type), "reference_min": min(ref), "reference_median": statistics.median(ref),
                    "naive_max": naive[worst], "naive": worst, "runs": runs})
                drawn, bare = request_overhead(worker.session.twin(), args)
                print(f"  {check}: a timed request adds {drawn * 1e6:.1f} us per call with its inputs "
                      f"({bare * 1e6:.1f} us without any), against the reference's "
                      f"{statistics.median(ref_s) * 1e6:.1f} us per call", flush=True)
                print(f"  measured {check} (trusted): reference {min(ref):.1f}x .. {max(ref):.1f}x, naive "
                      f"{ {k: (round(min(v), 2), round(max(v), 2)) for k, v in naive_all.items()} }",
                      file=sys.stderr, flush=True)
        finally:
            worker.close()
    return rows


def request_overhead(session, args, calls=64, rounds=9):
    """Seconds per call that a timed request adds by itself, ``(with its inputs, bare)``: the median over
    ``rounds`` requests of ``calls`` calls of a function that does nothing, in ``session`` (a clean worker)."""
    nothing = remote.by_name(timed_inputs.first_argument)
    medians = []
    for what in (timed_inputs.spec_of(args), [{"value": 0}]):
        pool_seed = draw_seeds(1)[0]
        times = [session.timed(nothing, what, draw_seeds(calls), pool_seed=pool_seed,
                               threads=settings.speed.cpu_threads, timeout=60)[1] for _ in range(rounds + 1)]
        medians.append(statistics.median(times[1:]) / calls)     # the first drew the pools
    return tuple(medians)


def hardware(device):
    if torch.device(device).type == "cuda":
        return torch.cuda.get_device_name(torch.device(device))
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads available"


def table(rows, markdown):
    header = ["check", "device", "threshold", "reference min", "reference median", "naive max (which)"]
    lines = [[r["check"], r["device"], f"{r['threshold']:g}x" if r["threshold"] else "not graded",
              f"{r['reference_min']:.1f}x", f"{r['reference_median']:.1f}x", f"{r['naive_max']:.1f}x ({r['naive']})"]
             for r in rows]
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        out += ["| " + " | ".join(line) + " |" for line in lines]
        return "\n".join(out)
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths)) for line in lines]
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="measurements per function (at least 20 for the docs)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--trusted", action="store_true", help="time as the trusted grader does (worker processes)")
    options = parser.parse_args(argv)
    rows = (measure_trusted if options.trusted else measure)(options.runs, options.device)
    print(f"torch {torch.__version__}, {hardware(options.device)}, CPU timing threads "
          f"{settings.speed.cpu_threads}, {options.runs} runs, {datetime.date.today()}")
    print(table(rows, options.markdown))
    bad = [r["check"] for r in rows if r["threshold"] and not r["naive_max"] < r["threshold"] < r["reference_min"]]
    if bad:
        print(f"threshold not between naive max and reference min for: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
