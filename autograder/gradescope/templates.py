"""The bundle's scripts and README, as text (``@ASSIGNMENTS@``, ``@PYTHON@`` and ``@IMAGE@`` are replaced): shipped
inside the package, so a wheel built from it can build a bundle without data files."""

SETUP_SH = r'''#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the autograder's image.
# It installs the pinned wheels of this bundle, chosen for Python @PYTHON@ (@IMAGE@'s python3), into a venv (no index:
# the day's versions do not matter), the worker's own unprivileged user (the fallback sandbox, where bubblewrap cannot
# make namespaces) and, where apt can, bubblewrap. Nothing here downloads a Python package.
set -euo pipefail
cd "$(dirname "$0")"
SOURCE="$(pwd)"
ROOT="$(dirname "$SOURCE")"
VENV="$ROOT/venv"
WORKER_USER=epl-student
BASELINE_USER=epl-baseline
WANTED=@PYTHON@

PYTHON="$(command -v "python$WANTED" || true)"
if [ -z "$PYTHON" ] || ! "$PYTHON" -c 'import sys' >/dev/null 2>&1; then     # not there, or a shim of none
    HAVE="$(python3 --version 2>&1 || echo no python3)"
    echo "setup.sh: this bundle's wheels are for Python $WANTED and this image has $HAVE: choose the base image" \
         "@IMAGE@ in Gradescope, or rebuild the bundle with --python of this image (docs/gradescope.md)"
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt_updated=
apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    [ -n "$apt_updated" ] || { apt-get update -q >/dev/null && apt_updated=1; }
    apt-get install -y -q --no-install-recommends "$@" >/dev/null
}
if ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    # Ubuntu's python3 comes without venv: its own package, from Ubuntu's archive.
    apt_install "python$WANTED-venv" \
        || { echo "setup.sh: python$WANTED has no venv module (apt-get install python$WANTED-venv)"; exit 1; }
fi
if ! command -v bwrap >/dev/null 2>&1; then
    # bubblewrap is the first choice where the container allows user namespaces; without it the fallback is used.
    apt_install bubblewrap || echo "bubblewrap could not be installed: the fallback sandbox will be used"
fi
for tool in setpriv prlimit env useradd; do
    command -v "$tool" >/dev/null 2>&1 || { echo "setup.sh: $tool is missing (util-linux, coreutils, passwd)"; exit 1; }
done

"$PYTHON" -m venv "$VENV"
# --no-deps: requirements.txt is the whole set, pruned of what grading never imports.
"$VENV/bin/python" -m pip install --no-index --no-deps --no-compile --disable-pip-version-check -q \
    --find-links "$SOURCE/wheels" -r "$SOURCE/requirements.txt"
# Compiled once here, on every core: Gradescope starts each submission from this image, and the worker (which may not
# write the venv) would otherwise compile torch's modules in memory at every start. A few packages ship files that are
# not Python 3 (templates, old tests): compileall's complaint about them does not stop setup.
"$VENV/bin/python" -m compileall -q -j 0 "$VENV/lib" >/dev/null || true

# Two users: the student's worker, and the clean worker that times the baselines (without a pid namespace, a process
# can signal every process of its own user).
for user in "$WORKER_USER" "$BASELINE_USER"; do
    if ! getent passwd "$user" >/dev/null; then
        useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
    fi
done

# The grader's files are root's alone: the installed grader (oracles), the bundle (its wheels hold them too).
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
chmod 0700 "$SITE/autograder" "$SOURCE"
chmod 0755 "$ROOT"
echo "setup.sh: done ($("$VENV/bin/python" --version), worker user $(id -u "$WORKER_USER"))"
'''

RUN_AUTOGRADER = r'''#!/usr/bin/env bash
# Gradescope runs this as root for each submission: grade the notebook in /autograder/submission, write
# /autograder/results/results.json. -I: nothing of the environment or the working directory is imported.
ROOT="$(cd "$(dirname "$0")" && pwd)"
exec "$ROOT/venv/bin/python" -I -m autograder.gradescope.run --root "$ROOT"
'''

README = r'''# Autograder for @ASSIGNMENTS@ (Effective PyTorch Lab)

Built by `python -m autograder gradescope`. Upload this zip in Gradescope (assignment > Configure Autograder > Zip
file upload; base image @IMAGE@, whose python3 is @PYTHON@, the Python its wheels are for). Students upload the
assignment's notebook, `<assignment>.ipynb`.

* `setup.sh` installs the wheels in `wheels/` (torch 2.13.0 CPU, the grader and what grading imports, pinned in
  `requirements.txt`; no index is used) into `/autograder/venv`, and the user `epl-student` that runs students' code
  where bubblewrap cannot (Gradescope's Docker refuses user namespaces).
* `run_autograder` finds which assignment it grades (the Gradescope assignment's title naming one of them, else the
  uploaded notebook's name), grades the notebook the trusted way (the student's code in a sandboxed worker, the checks
  in the grader), with a hidden seed drawn per submission, and writes `results.json`: a test per graded item.

## What to set in Gradescope

The defaults (768 MB of memory, half a CPU, 10 minutes) are not enough: raise them as docs/gradescope.md says, with
the peak memory and time measured for each assignment (its table "Measured"). The grader's own time budget for one
notebook is `settings.grading.submission_timeout_s` (900 s by default): keep Gradescope's timeout above it.

More: docs/gradescope.md in the course repository.
'''
