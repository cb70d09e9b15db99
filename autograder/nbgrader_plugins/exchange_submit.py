"""nbgrader's submit, leaving the submission readable by its student and the instructor only.

nbgrader's default submit leaves a submission's directory in the exchange's ``inbound/`` mode 0777 and
its files 0644 ("hidden from other users by the timestamp", nbgrader's own comment): any student who
learns its name can read it, and replace the files in it. ``inbound/`` is the instructor's, mode
2733: set-group-id, so that what a student makes in it belongs to the instructor's group.
:class:`PrivateSubmit` keeps it so: it copies the notebooks without copying their folders' modes
(which would drop set-group-id before nbgrader writes ``timestamp.txt`` and ``submission_secret.txt``),
then gives the submission to that group alone: directories 0770, files 0640. The instructor (the
group's member) collects and deletes it; other students cannot open it even by name. It is in the
student kit (a student's ``nbgrader submit`` and JupyterLab's Submit button run it), set by
``c.ExchangeFactory.submit`` in the students' nbgrader configuration (docs/deploy.md). The
instructor's group must hold no student.
"""

import os
import shutil

from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import ignore_patterns

PRIVATE_DIR = 0o770     # the kernel drops set-group-id here: the student is no member of that group
PRIVATE_FILE = 0o640


class PrivateSubmit(ExchangeSubmit):
    """``nbgrader submit`` whose submission only its student and the instructor's group can read."""

    def do_copy(self, src, dest, log=None):
        if os.path.dirname(os.path.abspath(dest)) != os.path.abspath(self.inbound_path):
            return super().do_copy(src, dest, log)      # the student's own cache
        limit = 1000 * self.coursedir.max_dir_size
        if self.get_size(src) > limit:
            raise RuntimeError(f"Directory size is too big. Size is {self.get_size(src)}, maximum size is {limit}")
        skip = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                               max_file_size=self.coursedir.max_file_size, log=self.log)
        _copy_contents(src, dest, skip)

    def copy_files(self):
        super().copy_files()
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        for where, dirs, files in os.walk(dest):
            for name in files:
                os.chmod(os.path.join(where, name), PRIVATE_FILE)
            for name in dirs:
                os.chmod(os.path.join(where, name), PRIVATE_DIR)
        os.chmod(dest, PRIVATE_DIR)


def _copy_contents(src, dest, skip):
    """``src`` into a new ``dest``, file contents only: every folder made here takes the group and the
    set-group-id of the folder it is made in."""
    os.mkdir(dest)
    names = os.listdir(src)
    ignored = set(skip(src, names))
    for name in names:
        if name in ignored:
            continue
        source = os.path.join(src, name)
        if os.path.isdir(source):
            _copy_contents(source, os.path.join(dest, name), skip)
        else:
            shutil.copyfile(source, os.path.join(dest, name))
