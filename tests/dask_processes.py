"""A Dask cluster of separate processes on 127.0.0.1, as on several machines: ``dask scheduler`` and ``dask worker``
commands started here and stopped by process id (the tests and benchmarks/grading_scale.py)."""

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path


@contextlib.contextmanager
def dask_processes(scratch, workers=2, gpu_workers=0, memory_limit="8GiB"):
    """Yields ``(address, {worker address: "cpu" or "gpu"}, [Popen])``: a scheduler, ``workers`` plain workers and
    ``gpu_workers`` more started with ``--resources GPU=1``, each one process with one thread."""
    from distributed import Client

    dask = str(Path(sys.executable).parent / "dask")
    file = Path(scratch) / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1")  # as executors.SCHEDULER_CONFIG
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(file)], env=env, **quiet)]
    try:
        deadline = time.monotonic() + 60
        while not file.exists():
            if time.monotonic() > deadline or procs[0].poll() is not None:
                raise RuntimeError("dask scheduler did not start")
            time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        for n in range(workers + gpu_workers):
            extra = ["--resources", "GPU=1"] if n >= workers else []
            procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "1", "--nthreads", "1",
                                           "--no-dashboard", "--memory-limit", memory_limit, *extra], **quiet))
        with Client(address) as client:
            client.wait_for_workers(workers + gpu_workers, timeout=120)
            kinds = {a: "gpu" if (w.get("resources") or {}).get("GPU") else "cpu"
                     for a, w in client.scheduler_info(n_workers=-1)["workers"].items()}
        yield address, kinds, procs
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
