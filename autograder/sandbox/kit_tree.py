"""The student kit as a directory tree, for the grading sandbox: what a submission can import is what students have.

``kit_tree()`` returns a directory holding ``autograder/`` with only the kit's modules (``autograder.kit_contents``)
of the installed package: no oracle, no course tool. It is made once per content (its name carries a digest of
every file) under the system's temporary directory, readable by everyone (the sandbox runs as uid 65534), and
reused by every later grade, in any process (a Dask worker too). A directory of that name that this user did not
make, or that others could write, is never used. The expected-output tables of a built kit are not in it: inside
the sandbox no check runs, the grader judges outside.
"""

import hashlib
import os
import shutil
import stat
import tempfile

from autograder.kit_contents import PACKAGE, kit_files

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # .../autograder
COMPLETE = ".complete"   # written last, with the digest: a tree cut short by a crash is not used


def kit_tree(package_dir=PACKAGE_DIR):
    """The directory (to put on ``PYTHONPATH``) whose ``autograder/`` is the kit of ``package_dir``."""
    files = kit_files(package_dir)
    digest = _digest(files)
    final = os.path.join(tempfile.gettempdir(), f"{PACKAGE}-kit-{os.geteuid()}-{digest[:20]}")
    if _usable(final, digest):
        return final
    staging = tempfile.mkdtemp(prefix=f"{PACKAGE}-kit-staging-")
    _write(staging, files, digest)
    try:
        os.rename(staging, final)   # atomic; fails if another process got there first
    except OSError:
        if _usable(final, digest):
            shutil.rmtree(staging, ignore_errors=True)
            return final
        return staging              # a foreign or broken directory holds the name: use our own, unshared
    return final


def _digest(files):
    hasher = hashlib.sha256()
    for relative, path in files:
        with open(path, "rb") as handle:
            content = handle.read()
        hasher.update(f"{relative}\0{len(content)}\0".encode())
        hasher.update(content)
    return hasher.hexdigest()


def _write(root, files, digest):
    os.chmod(root, 0o755)
    for relative, path in files:
        target = os.path.join(root, PACKAGE, relative)
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        shutil.copyfile(path, target)
        os.chmod(target, 0o644)
    for folder, dirs, _ in os.walk(root):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o755)
    marker = os.path.join(root, COMPLETE)
    with open(marker, "w") as handle:
        handle.write(digest)
    os.chmod(marker, 0o644)


def _usable(path, digest):
    """Ours, a real directory, written by nobody else, and complete with this digest."""
    try:
        info = os.lstat(path)
        with open(os.path.join(path, COMPLETE)) as handle:
            complete = handle.read() == digest
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022 and complete
