"""Tasks for the Dask executor's tests, importable by Dask workers (they pickle by reference)."""

import os
from pathlib import Path


def dies(job):
    """Kills the Dask worker running it: always for student "always", the first time only for "once" (a marker
    file in ``job.settings["scratch"]`` remembers); else returns where it ran."""
    marker = Path(job.settings["scratch"]) / f"{job.student}.started"
    if job.student == "always" or (job.student == "once" and not marker.exists()):
        marker.touch()
        os._exit(1)
    return {"student": job.student, "pid": os.getpid()}


def raises(job):
    raise ValueError(f"a grader bug for {job.student}")
