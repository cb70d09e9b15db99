"""Where grading jobs run: this process, one after another (:class:`InlineExecutor`, ``--workers 0``), or Dask
distributed (:class:`DaskExecutor`: a local cluster of ``--workers N`` processes, or the cluster at ``--scheduler``).
Each executor takes jobs (``engine.jobs.Job``) and gives back ``(tag, plain data, error)`` as they finish.

A local cluster shares the machine out (:func:`local_workers`): each worker gets its share of the cores as its
thread count (passed on to its sandboxed workers), one GPU to use (``CUDA_VISIBLE_DEVICES``, round robin), and the
Dask resource ``GPU=1`` goes to as many workers as the machine has GPUs, one per GPU: the resource's total is the
number of GPUs. Every grading step that uses CUDA holds its GPU's lease (``engine.gpu_lease``): shared for cells
and untimed items, exclusive for a timed one, so a timed item runs with its GPU otherwise idle."""

import collections
import copy
import logging
import os
import time

from autograder.engine import jobs
from autograder.engine.trusted_runner import MachineError
from autograder.errors import ClusterUnavailable


class InlineExecutor:
    """Grades each job in this process, when its result is asked for."""

    workers = 1
    name = "this process, one at a time"
    ends_with_batch = False    # this process may grade again (a worker started ahead serves the next batch)

    def __init__(self):
        self.queue = collections.deque()
        self.gpu = jobs.cuda_here()

    def wait_for_gpu(self, seconds=0):
        """This process has a GPU or not: nothing joins later."""

    def submit(self, tag, job, gpu=False):
        self.queue.append((tag, job))

    def __len__(self):
        return len(self.queue)

    def next_done(self):
        tag, job = self.queue.popleft()
        try:
            return tag, jobs.grade_job(job), None
        except MachineError:      # the machine's, not the submission's: the batch stops, nothing recorded
            raise
        except Exception as error:  # noqa: BLE001 - recorded as the submission's error, grading goes on
            return tag, None, f"{type(error).__name__}: {error}"

    def close(self):
        pass


# A worker that dies mid-job has the job retried once on another worker, then it fails (KilledWorker). Dask counts
# a death against every task assigned to the worker, so no more jobs are in flight than the workers have threads
# (grade_batch's window): a job is not queued on a worker behind one that kills it. The local cluster's scheduler
# runs in the grader's process and takes this; a scheduler started elsewhere takes its own configuration
# (DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1 in its environment).
SCHEDULER_CONFIG = {"distributed.scheduler.allowed-failures": 1}
GPU_WAIT_S = 20     # how long grade --pending waits for a GPU worker of a cluster at --scheduler


class DaskExecutor:
    """Jobs on Dask distributed: a local cluster of ``workers`` processes, or the cluster at ``scheduler``."""

    def __init__(self, workers=None, scheduler=None, task=None, gpus=None):
        import dask
        from distributed import Client, LocalCluster, as_completed

        self.task = task or dask_grade_job
        self.cluster = None
        self.ends_with_batch = not scheduler    # a local cluster's workers end with it: nothing started ahead
        self.environ = dict(os.environ)   # a local cluster's nannies set theirs here (OMP_NUM_THREADS=1, ...)
        dask.config.set(SCHEDULER_CONFIG)
        dask.config.set({"distributed.worker.daemon": False})   # workers start processes (the sandboxed ones)
        if scheduler:
            try:
                _reachable(scheduler)
                self.client = Client(scheduler, timeout="20s")
                self.client.wait_for_workers(1, timeout=60)
            except (OSError, TimeoutError) as error:
                raise ClusterUnavailable(f"the Dask scheduler at {scheduler} cannot be reached, or no worker joined "
                                         f"it within a minute ({type(error).__name__}: {error}). Start one with "
                                         f"`dask worker {scheduler} --nthreads 1`.") from None
            self.name = f"the Dask cluster at {scheduler}"
        else:
            workers = workers or os.cpu_count() or 1
            gpus = jobs.gpu_count() if gpus is None else gpus
            self.cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=None,
                                        silence_logs=logging.ERROR)
            for index, options in enumerate(local_workers(workers, gpus)):
                spec = copy.deepcopy(self.cluster.new_spec)
                spec["options"].update(options, memory_limit=_memory_share(workers))
                self.cluster.worker_spec[f"grader-{index}"] = spec
            self.cluster.scale(workers)
            self.client = Client(self.cluster)
            self.client.wait_for_workers(workers, timeout=120)
            self.name = f"{workers} local Dask worker{'s' * (workers != 1)}" + (
                f" ({gpus} holding the GPU resource, one per GPU)" if gpus else "")
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info.values()))   # jobs at once
        self.gpu = _holds_gpu(info)
        self.done = as_completed()
        self.tags = {}

    def wait_for_gpu(self, seconds=GPU_WAIT_S):
        """Whether a worker holding the GPU resource is (or, within ``seconds``, comes) in the cluster: one that its
        nanny restarts, or that joins after the first, is waited for before the GPU items are left pending."""
        deadline = time.monotonic() + seconds
        while not self.gpu and self.cluster is None and time.monotonic() < deadline:
            time.sleep(0.5)
            self.gpu = _holds_gpu(self.client.scheduler_info(n_workers=-1)["workers"])
        return self.gpu

    def check_sandbox(self):
        """Every worker can make the sandbox (else: stop before grading anything, naming the worker)."""
        from autograder.sandbox.bubblewrap import SandboxUnavailable

        answers = self.client.run(_probe_quietly)
        failed = {address: why for address, why in answers.items() if why}
        if failed:
            raise SandboxUnavailable("; ".join(f"worker {a}: {why}" for a, why in sorted(failed.items())))

    def submit(self, tag, job, gpu=False):
        future = self.client.submit(self.task, job, pure=False, resources={"GPU": 1} if gpu else None,
                                    key=f"grade-{job.student}-{job.assignment}-{'gpu' if gpu else 'all'}-"
                                        f"{time.monotonic_ns()}")
        self.tags[future.key] = tag
        self.done.add(future)

    def __len__(self):
        return self.done.count()

    def next_done(self):
        from distributed.scheduler import KilledWorker

        future = next(self.done)
        tag = self.tags.pop(future.key)
        try:
            return tag, future.result(), None
        except MachineError:      # the machine's, not the submission's: the batch stops, nothing recorded
            raise
        except KilledWorker as killed:
            return tag, None, (f"the grading worker died twice while grading it (it was retried once on another "
                               f"worker; Dask: {killed})")
        except Exception as error:  # noqa: BLE001
            return tag, None, f"{type(error).__name__} on the grading worker: {error}"
        finally:
            future.release()

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        os.environ.clear()
        os.environ.update(self.environ)


def _holds_gpu(info):
    return any((w.get("resources") or {}).get("GPU", 0) >= 1 for w in info.values())


def local_workers(workers, gpus, cores=None, visible=None):
    """The options of each worker of a local cluster: ``{"resources", "env"}``. ``OMP_NUM_THREADS`` and
    ``MKL_NUM_THREADS`` are the worker's share of ``cores`` (at least 1): 16 workers each running 16 torch threads on
    16 cores wait for each other's. With ``gpus``, worker ``i`` sees GPU ``i % gpus`` (of ``visible``, the grader's
    ``CUDA_VISIBLE_DEVICES``), and the first ``gpus`` workers declare the resource ``GPU=1``, one for each GPU."""
    cores = cores or os.cpu_count() or 1
    threads = str(max(1, cores // max(1, workers)))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES") if visible is None else visible
    devices = [d.strip() for d in visible.split(",") if d.strip()] if visible else [str(i) for i in range(gpus)]
    out = []
    for index in range(workers):
        env = {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "KINETO_LOG_LEVEL": "6"}
        resources = {}
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = devices[index % gpus]
            if index < gpus:
                resources = {"GPU": 1}
        out.append({"resources": resources, "env": env})
    return out


def _memory_share(workers):
    """The machine's memory over the workers: the memory past which a worker's nanny restarts it."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return "auto"
    return int(total // max(1, workers))


def dask_grade_job(job):
    """``jobs.grade_job`` on a Dask worker, the result naming the worker by its address."""
    from distributed import get_worker

    data = jobs.grade_job(job)
    data["worker"] = get_worker().address
    return data


def _reachable(address):
    """Fail at once, not after Dask's retries, where nothing listens at ``tcp://HOST:PORT``."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme == "tcp" and parts.hostname and parts.port:
        socket.create_connection((parts.hostname, parts.port), timeout=10).close()


def _probe_quietly():
    from autograder.sandbox.bubblewrap import SandboxUnavailable, probe

    try:
        probe()
    except SandboxUnavailable as error:
        return str(error)
    return ""


def executor_for(workers, scheduler, planned):
    """``--workers 0`` (or a single job and no cluster named): grade here; else Dask."""
    if scheduler or (workers != 0 and planned > 1):
        return DaskExecutor(workers, scheduler)
    return InlineExecutor()
