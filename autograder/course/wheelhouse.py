"""The wheels grading needs, for a chosen Python, resolved by pip and kept to what grading imports.

Two sets: ``GRADESCOPE`` (the trusted grader and its worker in Gradescope's container: PyTorch, NumPy, OpenCV headless,
IPython, which runs the notebook's cells in the worker) and ``GPU_VALIDATION`` (everything ``scripts/validate-gpu.sh``
runs beyond PyTorch: nbgrader and its notebook runner for the demo, Dask, pytest for ``pytest -m gpu`` and the
proofs). pip resolves a set for the target (``pip install --dry-run
--report`` with ``--python-version``, ``--platform`` and ``--only-binary=:all:``, so nothing is built and nothing of
this machine's own Python decides); then every package reachable only through one that grading never imports
(``PRUNED``: JupyterLab and the classic notebook, which nbgrader requires for its web pages, JupyterHub, Playwright,
the PostgreSQL driver) is dropped, and the rest is downloaded ``--no-deps`` and installed ``--no-deps``.

Standard library only: ``scripts/gpu-wheelhouse.sh`` runs it as a script on a machine that may have no PyTorch.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# pip's --platform tags for x86_64 Linux, newest first (every manylinux wheel a glibc 2.28+ machine can load).
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64")
TORCH = "torch==2.13.0"
GRADESCOPE = (TORCH, "numpy>=1.26", "opencv-python-headless>=4.9", "ipython>=8.10", "psutil>=5.9", "tqdm>=4.66")
GPU_VALIDATION = ("numpy>=1.26", "opencv-python-headless>=4.9", "nbgrader>=0.9.5", "psutil>=5.9",
                  "dask[distributed]>=2024.8", "tqdm>=4.66", "pytest>=8", "pytest-timeout>=2.3", "pytest-xdist>=3.6",
                  "hypothesis==6.170.17")   # hypothesis: tests/properties is collected by `pytest -m gpu`
# Required by a package of the set, never imported by grading: JupyterLab, the classic notebook, their server
# extensions and widgets (nbgrader's web pages), Jedi (IPython imports it for tab completion only), and what the
# extras bring (JupyterHub, Playwright, the PostgreSQL driver, matplotlib: the demo writes its pages without pictures).
PRUNED = frozenset({"jupyterlab", "notebook", "jupyterlab-server", "ipywidgets", "jedi", "jupyterhub", "playwright",
                    "psycopg", "psycopg-binary", "matplotlib", "torch"})
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
LIMIT_MB = 60          # the GPU wheelhouse's size in MB (10^6 bytes), at most, but for the wheels of OVER_LIMIT
# Needed by grading and too big for the limit by itself (measured for CPython 3.11, x86_64): OpenCV headless's wheel
# is 61.2 MB alone (5.0.0.93; a 4.x wheel is about 52 MB), and the NumPy it requires 16.9 MB: the two are over the limit
# before anything else. Everything else together is 53.1 MB. Where the GPU machine has OpenCV, --have leaves it out.
OVER_LIMIT = {"opencv-python-headless": "grading encodes and decodes the dataloading topic's images with it"}


class WheelhouseError(RuntimeError):
    """The set cannot be resolved or downloaded; the message says why."""


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def target_options(python):
    """pip's options that choose wheels for CPython ``python`` ("3.12") on x86_64 Linux."""
    if python not in PYTHONS:
        raise WheelhouseError(f"--python takes one of {', '.join(PYTHONS)}, not {python!r}")
    abi = "cp" + python.replace(".", "")
    options = ["--only-binary=:all:", "--python-version", python, "--implementation", "cp", "--abi", abi,
               "--abi", "abi3", "--abi", "none"]
    for platform in PLATFORMS:
        options += ["--platform", platform]
    return options


def pip(*args, progress=None):
    """Run pip with this interpreter; ``progress(line)`` gets pip's lines as they come (downloads)."""
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    if progress is None:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise WheelhouseError(f"pip {args[0]} failed: {_errors(done.stderr)}")
        return done.stdout
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            lines.append(line)
            progress(line.rstrip())
    if process.returncode != 0:
        raise WheelhouseError(f"pip {args[0]} failed: {_errors(''.join(lines))}")
    return "".join(lines)


def _errors(text):
    """pip's own ERROR lines (its warnings and the versions it ignored left out), else the end of what it said."""
    errors = [line.removeprefix("ERROR: ") for line in text.splitlines()
              if line.startswith("ERROR: ") and not line.startswith("ERROR: Ignored the following")]
    return " ".join(errors)[-1500:] if errors else text.strip()[-1500:]


def resolve(requirements, python, *, find_links=(), extra_index=None, no_deps=False):
    """``[{"name", "version", "requires", "extras"}]``: what pip installs for ``requirements`` on ``python``."""
    with tempfile.TemporaryDirectory(prefix="epl-resolve-") as scratch:
        report = Path(scratch) / "report.json"
        links = [arg for folder in find_links for arg in ("--find-links", str(folder))]
        index = ["--extra-index-url", extra_index] if extra_index else []
        pip("install", "--dry-run", "--ignore-installed", "-q", "--report", str(report), "--target",
            str(Path(scratch) / "target"), *target_options(python), *links, *index,
            *(["--no-deps"] if no_deps else []), *requirements)
        installed = json.loads(report.read_text(encoding="utf-8"))["install"]
    return [{"name": canonical(entry["metadata"]["name"]), "version": entry["metadata"]["version"],
             "requires": entry["metadata"].get("requires_dist") or [],
             "extras": entry.get("requested_extras") or []} for entry in installed]


def _requirement(text):
    """``(name, extras)`` of a requirement such as ``"bleach[css]!=5.0.0; extra == 'x'"``."""
    found = re.match(r"\s*([A-Za-z0-9._-]+)\s*(?:\[([^\]]*)\])?", text)
    return canonical(found.group(1)), {canonical(e) for e in (found.group(2) or "").split(",") if e.strip()}


def _edges(package, extras):
    """``(name, extras)`` for each ``Requires-Dist`` of ``package`` but those of an extra not in ``extras``."""
    for line in package["requires"]:
        requirement, _, marker = line.partition(";")
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        if extra and canonical(extra.group(1)) not in extras:
            continue
        yield _requirement(requirement)


def prune(resolved, requirements, pruned=PRUNED):
    """The packages of ``resolved`` reachable from ``requirements`` without passing through a ``pruned`` one; an
    extra asked for on the way (``bleach[css]``) brings what it requires."""
    by_name = {package["name"]: package for package in resolved}
    roots = [_requirement(r) for r in requirements]
    wanted = {name for name, _ in roots}
    extras = {name: set(asked) | {canonical(e) for e in by_name[name]["extras"]} for name, asked in roots
              if name in by_name}
    todo = list(extras)
    while todo:
        name = todo.pop()
        for child, asked in _edges(by_name[name], extras[name]):
            if child not in by_name or (child in pruned and child not in wanted):
                continue
            if child not in extras or not asked <= extras[child]:
                extras[child] = extras.get(child, set()) | asked
                todo.append(child)
    return sorted((by_name[name] for name in extras), key=lambda package: package["name"])


def pins(packages):
    return [f"{package['name']}=={package['version']}" for package in packages]


def download(packages, python, folder, *, find_links=(), extra_index=None, progress=None):
    """Download each package's wheel for ``python`` into ``folder`` (``--no-deps``: the set is complete)."""
    links = [arg for link in find_links for arg in ("--find-links", str(link))]
    index = ["--extra-index-url", extra_index] if extra_index else []
    pip("download", "--no-deps", "--progress-bar", "off", "-d", str(folder), *target_options(python), *links,
        *index, *pins(packages), progress=progress)
    return sorted(Path(folder).glob("*.whl"))


def sizes(folder, packages):
    """``[(name, bytes)]`` of the wheels in ``folder`` of ``packages``, largest first."""
    wanted = {(package["name"], package["version"]) for package in packages}
    found = [(canonical(path.name.split("-")[0]), path.stat().st_size) for path in Path(folder).glob("*.whl")
             if (canonical(path.name.split("-")[0]), path.name.split("-")[1]) in wanted]
    return sorted(found, key=lambda pair: -pair[1])


def size_lines(measured):
    """What the folder holds, in words: the total, the wheels of 1 MB or more, and what puts it over the limit."""
    total = sum(size for _, size in measured)
    big = ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in measured if size >= 1e6)
    lines = [f"{len(measured)} wheels, {total / 1e6:.1f} MB ({big}, the rest smaller)"]
    over = [(name, size) for name, size in measured if name in OVER_LIMIT]
    if total > LIMIT_MB * 1e6 and over:
        rest = total - sum(size for _, size in over)
        lines.append("over " + f"{LIMIT_MB} MB only because of " + "; ".join(
            f"{name} ({size / 1e6:.1f} MB: {OVER_LIMIT[name]})" for name, size in over)
            + f": the rest is {rest / 1e6:.1f} MB. Where the GPU machine has it, pass --have with its pip freeze.")
    return lines


def already_there(freeze):
    """The names in ``pip freeze``'s output (``name==version``, ``name @ url``)."""
    return {canonical(re.match(r"[A-Za-z0-9._-]+", line).group(0)) for line in freeze.splitlines()
            if re.match(r"[A-Za-z0-9]", line)}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="scripts/gpu-wheelhouse.sh", description="The wheels scripts/validate-gpu.sh "
                                     "installs beyond PyTorch, for one Python, into one folder.")
    parser.add_argument("--python", required=True, help=f"the GPU machine's Python ({', '.join(PYTHONS)})")
    parser.add_argument("-o", "--out", default="gpu-wheels", help="the folder (default: gpu-wheels)")
    parser.add_argument("--have", metavar="FREEZE", help="`python3 -m pip freeze` of the GPU machine: what it has "
                        "already (NumPy, OpenCV...) is left out")
    parser.add_argument("--list", action="store_true", help="print the pinned set and download nothing")
    args = parser.parse_args(argv)
    try:
        packages = prune(resolve(GPU_VALIDATION, args.python), GPU_VALIDATION)
        if args.have:
            have = already_there(Path(args.have).read_text(encoding="utf-8"))
            packages = [package for package in packages if package["name"] not in have]
        if args.list:
            print("\n".join(pins(packages)))
            return 0
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        print(f"downloading {len(packages)} wheels for Python {args.python} into {out}", flush=True)
        download(packages, args.python, out, progress=lambda line: print(f"  {line}", flush=True)
                 if line.startswith(("Collecting", "Saved", "  Downloading")) else None)
    except WheelhouseError as error:
        print(f"Cannot write the wheelhouse: {error}", file=sys.stderr)
        return 1
    (out / "requirements.txt").write_text("\n".join(pins(packages)) + "\n", encoding="utf-8")
    lines = size_lines(sizes(out, packages))
    print(f"wrote {lines[0]} and requirements.txt into {out}: copy the folder to the GPU machine and run "
          "scripts/validate-gpu.sh --wheels FOLDER there", *lines[1:], sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
