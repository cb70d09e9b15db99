"""nbgrader's Execute preprocessor, made to survive a kernel that dies.

nbgrader gives up on the whole notebook when a cell kills the kernel (a segfault,
``os._exit``, the out-of-memory killer), and records 0 for every check. This one
marks the cell that killed the kernel with an error saying so, starts a fresh
kernel, and runs the remaining cells: only the checks that needed what the dead
kernel held lose their points. ``nbgrader_config.py`` puts it in the autograde pipeline.

It also marks the kernel as an official grade (``AUTOGRADER_GRADING=1``) and hands it
the grading run's seed for the hidden variants: the one the grader set, or a new one,
logged, when plain ``nbgrader autograde`` runs (the formgrader's button too).
"""

import os

from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute

from ..spec import GRADING_ENV, SEED_ENV, new_run_seed

KERNEL_DIED = ("The kernel died while running this cell (a crash, os._exit, or running out of memory). "
               "A fresh kernel ran the cells after it, without anything defined before.")


class ResilientExecute(Execute):
    async def async_start_new_kernel(self, **kwargs):
        env = dict(kwargs.pop("env", None) or os.environ)
        env[GRADING_ENV] = "1"
        if not env.get(SEED_ENV):
            env[SEED_ENV] = str(new_run_seed())
            self.log.info("Hidden tests graded with seed %s (AUTOGRADER_GRADING_SEED reproduces it)", env[SEED_ENV])
        return await super().async_start_new_kernel(env=env, **kwargs)

    # nbclient binds the sync name to its own coroutine function at class creation: bind it to ours.
    start_new_kernel = run_sync(async_start_new_kernel)

    def preprocess_cell(self, cell, resources, index):
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self.log.warning("Kernel died in cell %s; restarting it and going on", index)
            cell.outputs.append(new_output("error", ename="KernelDied", evalue=KERNEL_DIED, traceback=[KERNEL_DIED]))
            self._restart()
            return cell, self.resources

    def _restart(self):
        if self.kc is not None:
            self.kc.stop_channels()
        run_sync(self.km.restart_kernel)(now=True)
        self.start_new_kernel_client()
