"""Calibrate the ``memory`` checks: the kept-activation ratio of ``check_checkpoint_trades_memory`` and the stability
of ``check_top_op``'s answer under load.

Not a test. For ``--plans`` plans drawn as the check draws them (4 blocks, no dropout, an input that needs no
grad), it measures what the check measures (``probes.checkpoint_run``'s kept bytes over
``plain_activation_bytes``) for the reference ``checkpointed_forward`` and for checkpointing the first block only,
and every layer on its own. Then, ``--runs`` times for each step kind, it profiles the step as the grader does
(``oracles.memory.top_op``) and runs the reference ``most_expensive_op``, counts the answers that differ from
the kind's operator, and grades the reference with ``check_top_op`` on that kind (its majority of three included). Everything runs on one CPU thread, as the checks and probes do. Run from the repository root, under whatever load the grading machine carries::

    python benchmarks/memory.py --plans 40 --runs 50
"""

import argparse
import collections
import datetime
import platform
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.checks import memory  # noqa: E402
from autograder.checks.memory import probes, problems  # noqa: E402
from autograder.commands.check import exec_source  # noqa: E402
from autograder.oracles.memory import top_op  # noqa: E402
from autograder.measuring.threads import one_thread  # noqa: E402
from tests.mutants.memory import forward_every_layer, forward_first_block_only  # noqa: E402

EXPECTED = {"matmul": "aten::mm", "conv": "aten::mkldnn_convolution", "topk": "aten::topk"}


def ratios(fn, plans):
    found = []
    for plan in plans:
        entry = probes.checkpoint_run(fn, "calibration", plan)
        found.append(entry["kept_bytes"] / memory.plain_activation_bytes(plan))
    return min(found), max(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=40)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    reference = exec_source((ROOT / "solutions" / "memory.py").read_text(), "<solutions.memory>", "solutions.memory")
    print(f"{datetime.date.today()}, {platform.machine()}, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}")
    gen = torch.Generator().manual_seed(300)
    plans = []
    for _ in range(args.plans):
        plan = problems.blocks_plan(gen, dropout=False, x_grad=False)
        plan["blocks"], plan["acts"] = 4, (plan["acts"] * 4)[:4]
        plans.append(plan)
    for name, fn in (("reference", reference["checkpointed_forward"]), ("first block only", forward_first_block_only),
                     ("every layer on its own", forward_every_layer)):
        low, high = ratios(fn, plans)
        print(f"kept / plain activation bytes, {name:24}: {low:.2f} to {high:.2f} over {len(plans)} plans "
              f"(threshold {memory.KEPT_RATIO})")
    gen = torch.Generator().manual_seed(400)
    for kind, expected in EXPECTED.items():
        wrong, failed = collections.Counter(), 0
        started = time.perf_counter()
        for run in range(args.runs):
            step = problems.Step(problems.step_plan(gen, kind))
            grader = top_op(step)
            student = reference["most_expensive_op"](step)
            wrong.update([f"grader {grader}"] if grader != expected else [])
            wrong.update([f"reference {student}"] if student != expected else [])
            try:
                memory.check_top_op(reference["most_expensive_op"], seed=run, kinds=(kind,))
            except AssertionError:
                failed += 1
        print(f"top op of {kind:6} ({expected}): {args.runs} runs, single answers wrong {dict(wrong) or 0}; "
              f"the check failed the reference {failed} times; {time.perf_counter() - started:.1f} s")

if __name__ == "__main__":
    with one_thread():
        main()
