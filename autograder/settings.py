"""The single home of every tunable number of the autograder.

The course's own values live in the course directory, under version control beside ``nbgrader_config.py``: the
JSON file ``course_settings.json`` (docs/deadlines.md), e.g.::

    {"call_timeout_s": 120, "deadlines": {"due": {"basics": "2026-12-01T23:59:00+01:00"}}}

Every path reads it: ``python -m autograder`` (``--course``) and every nbgrader command (``nbgrader_config.py`` calls
:func:`use_course`), so ``grade``, the formgrader, plain ``nbgrader autograde``, ``generate_feedback`` and the exports
grade with the same values. A JSON file named by the environment variable ``AUTOGRADER_SETTINGS`` is applied on top
of it (an override; each process says so on stderr, once). In Python, ``settings.override(...)`` applies values for
a block and restores the previous ones on exit.
"""

import contextlib
import copy
import dataclasses
import json
import os
import sys
from dataclasses import dataclass, field


@dataclass
class SpeedThreshold:
    """Minimum speedup (baseline time / candidate time) per device type.

    ``calibration`` records what the reference and the naive version measured,
    on which hardware and when; a threshold without it is a guess.
    ``None`` for a device means the check does not grade speed there.

    ``of_reference`` (device type -> fraction) calibrates the threshold in the same run on that device: the
    grader times its own reference (``autograder/oracles/speed.py``) against the same baseline, interleaved with
    the student's runs, and requires ``max(the fixed threshold above, fraction x the reference's speedup)``; the
    fixed one is then a floor (``None``: no floor). The tests switch it on for the CPU.
    """

    cpu: float | None
    cuda: float | None
    calibration: str = ""
    of_reference: dict = field(default_factory=dict)

    def for_device(self, device_type):
        return getattr(self, device_type, None)


@dataclass
class SpeedSettings:
    warmup: int = 2                # untimed calls of each function before measuring
    repeats: int = 9               # timed samples of each function; the median counts
    min_sample_s: float = 0.002    # each sample runs the function often enough to last this long
    retries: int = 2               # extra measurements after a miss before failing
    cpu_threads: int | None = 1    # torch threads while timing on the CPU (None: leave as is); see measuring/timing.py
    # The most speedup believed per device type: a passing ratio above it goes under review (timing.expect_plausible).
    # cuda: a guess, not a calibration (no GPU lent yet): the reference row_sum / batch_gather against a loop that
    # launches one kernel per row should stay within a few thousand x; see docs/speed.md. cpu: none (measured
    # reference ratios reach 470x; nothing on the CPU has been seen past 1000x).
    ceilings: dict = field(default_factory=lambda: {"cpu": None, "cuda": 20_000.0})
    thresholds: dict = field(default_factory=lambda: {
        # The speed lessons' own issue calibrates these (see docs in autograder/checks/*).
        "row_sum": SpeedThreshold(cpu=6.0, cuda=5.0, calibration=(
            "check_row_sum_speed, torch.sum(x, 0) vs the slicing loop on [500, 10] float32, benchmarks/speed.py "
            "--trusted --runs 10, 2026-11-28, with every timed input made inside the grader's clock (fresh rows of a "
            "pool, about 10 us a call): at load 11-12 the reference's lowest 9.2x (median 38.6x), naive max 3.4x (the "
            "list loop); 6x lies between them (the reference once lost the item at 10x in a loaded full test run). "
            "Before the inputs moved inside the clock, "
            "--trusted (the candidate in a worker, the baseline in a clean one, timed calls not under the op "
            "recorder), 1 timing thread, 2-core x86_64 shared with other jobs, torch 2.13.0, 2026-11-24/25: 10 runs "
            "at load 1.5-3.5: cpu reference min 42.6x (median 50.5x), naive max 2.9x (a loop in plain Python over "
            "x.tolist(); slicing loop 1.2x, unbind loop 1.7x); 6 runs with 4 more busy processes: reference min "
            "37.4x (median 54.7x), naive max 3.7x (unbind loop). Until 2026-11-24 the timed calls ran under the op "
            "recorder, which slowed the baseline 25-fold and the list loop not at all, and the threshold was 30x. "
            "cuda: calibrated in the same run, at least 0.25 of the grader's torch.sum(x, 0) (timed beside it), and "
            "at least 5x; not yet run on a GPU, see docs/speed.md."), of_reference={"cuda": 0.25}),
        "batch_gather": SpeedThreshold(cpu=5.0, cuda=5.0, calibration=(
            "check_batch_gather_speed, reference batch_gather vs the row loop on [4096, 16, 4] with indices [4096], "
            "benchmarks/speed.py --trusted (timed calls not under the op recorder), 1 timing thread, 2-core x86_64 "
            "shared with other jobs, torch 2.13.0, 2026-11-24/25: 10 runs at load 1.5-3.5: cpu reference min 20.6x "
            "(median 26.0x), naive max 1.3x (unbind loop; Python loop 1.2x); 6 runs with 4 more busy processes: "
            "reference min 22.6x (median 28.8x), naive max 1.6x. Under the op recorder (until 2026-11-24) the "
            "threshold was 10x. cuda: calibrated in the same run, at least 0.25 of the grader's reference "
            "batch_gather (timed beside it), and at least 5x; not yet run on a GPU, see docs/speed.md."),
            of_reference={"cuda": 0.25}),
        "amp": SpeedThreshold(cpu=None, cuda=1.2, of_reference={"cuda": 0.7}, calibration=(
            "check_speed, train_amp (float16 autocast) vs the grader's float32 loop (TF32 off) on the timed "
            "problem of checks/amp/speed.py (TIMED_LAYERS x Linear(TIMED_WIDTH), batch TIMED_BATCH, 8 batches per "
            "timed call); calibrated in the same run: at least 0.7 of the grader's float16 + GradScaler loop's "
            "speedup, timed beside it, and at least 1.2x (beating the float32 loop with margin). Measured on an "
            "NVIDIA H200 (PyTorch 2.11.0+cu130) on the recipe's smaller model (3 x Linear(4096), batch 512): "
            "reference float16 + GradScaler 1.38-1.50x, bfloat16 1.69-2.03x, float16 without scaler 1.68-2.13x, "
            "the float32 loop 0.91-0.93x: a fixed 2.0x failed the reference there, which is why the threshold is "
            "now relative. The larger timed problem is not yet run on a GPU (benchmarks/amp.py --sweep chooses "
            "it; docs/amp.md). cpu: not graded (3 x Linear(512, 512), batch 128, 1 thread, 2-core x86_64, torch "
            "2.13.0: float16 0.10x of float32, bfloat16 0.95-2.1x).")),
    })


@dataclass
class GradingSettings:
    """Limits for one submission (one student's notebook) in batch grading (`python -m autograder grade`)."""

    submission_timeout_s: float = 900.0  # wall-clock budget of one notebook: starting its workers, its cells (again
                                         # after every restart) and its items together; when it is spent the
                                         # worker is killed and the items not finished score 0 (trusted_runner)
    cell_timeout_s: int = 300            # one code cell of the student's, run in the worker; past it the worker
                                         # is stopped and a fresh one runs the cells after it
    # Memory each process of the sandboxed worker may write (RLIMIT_DATA: not the address space it reserves, which
    # CUDA needs far more of than it uses), and memory.max of the sandbox's cgroup where one is delegated (0: none).
    memory_limit_gb: float = 8.0
    # The share of each GPU's memory the student's worker may take (torch.cuda.set_per_process_memory_fraction, set
    # in the worker before any student code; 0: none). A bound for a careless answer: the student's code can raise it.
    gpu_memory_fraction: float = 0.5
    # Whether the student's worker must start CUDA: None, when the grading process sees a GPU. A worker that cannot
    # is the machine's failure: grading stops, naming it, before anything is scored (trusted_runner.MachineError).
    expect_cuda: bool | None = None
    max_notebook_mb: float = 20.0        # a submitted notebook larger than this is refused before it is read
    # What one answer of the student's worker may be (autograder/seam/wire.py, docs/sandbox.md): past either
    # limit the worker is killed before the rest is read and the item fails with the size. The header (tagged JSON:
    # every value but the raw bytes of tensors, arrays and bytes) of the largest honest answer over every proof is
    # 55 kB (tests/trusted/test_trusted_proofs.py: 44,289 answers, 2026-11-24); 2 MB is 36 times that, and parsed
    # costs the grader at most about 50 MB (values are also bounded: wire.MAX_NODES).
    max_reply_header_mb: float = 2.0
    # The whole answer. The largest honest answer over every proof is 0.8 MB; 64 MB is 80 times that, and holds a
    # 4096 x 4096 float32 weight (the AMP recipe's layer). The grader holds one copy of an answer (read into one
    # buffer allocated once its size is checked; tensors are made on it without a copy). Before, an answer of up to
    # 1 GiB was read in pieces, joined and copied again per tensor (3 copies), and its header parsed whole: a 150 MB
    # answer took the grader from 364 MB to 4.3 GB, and one of 1 GiB needed more memory than the machine has.
    max_reply_mb: float = 64.0
    # The grading process's own address space while it grades one submission (RLIMIT_AS, soft limit, set for the
    # job and put back after; 0: none): past it, grading that submission stops with a grader-side error
    # (jobs.GraderMemoryError) and the batch goes on. Grading all eight reference notebooks in one process
    # (jobs.grade_job_here, sandboxed, torch 2.13.0 CPU, 2-core x86_64, 2026-11-24) peaked at 1.07 GiB of address
    # space and 0.35 GiB resident; nbgrader and a Dask worker add their own. 6 GB leaves about 5 GB: the largest
    # answer (max_reply_mb) many times over. Not applied where CUDA is available (CUDA reserves far more address
    # space than it uses): bound the machine's memory there (Dask's memory_limit, a cgroup).
    grader_memory_gb: float = 6.0
    # The gradebook: nbgrader's db_url. A relative sqlite path is taken in the course directory; PostgreSQL
    # ("postgresql+psycopg://user@host/db") serves several graders. nbgrader_config.py reads it from here.
    db_url: str = "sqlite:///gradebook.db"
    # A GPU-only item (the AMP speed check) graded on a machine without a GPU: "pending" (0 points, listed by
    # `python -m autograder pending` until a machine with a GPU grades it), "fail" (0 points), "waive" (full points).
    gpu_items: str = "pending"
    # Student code runs in a sandbox (autograder/sandbox/bubblewrap.py, docs/security.md). False (`grade --no-sandbox`)
    # only on a machine where students' code may do anything; every record it writes says so.
    sandbox: bool = True

    def gradebook_url(self, course):
        """``db_url`` with a relative SQLite path taken in the course directory ``course``."""
        prefix = "sqlite:///"
        if self.db_url.startswith(prefix) and not self.db_url.startswith(prefix + "/"):
            return prefix + os.path.join(os.path.abspath(course), self.db_url[len(prefix):])
        return self.db_url


@dataclass
class DataloadingSettings:
    """The loading checks (``autograder.checks.dataloading``).

    ``start_method``: how DataLoader workers start. "fork" (the default where the platform has it) lets workers
    use a dataset class defined in a notebook; "spawn" and "forkserver" unpickle the dataset in each worker,
    which needs its class importable from a module (a class in a notebook's ``__main__`` is not).
    """

    start_method: str = "fork"
    jpeg_max_abs_diff: int = 24        # JPEG members: largest per-pixel difference from OpenCV's own decoding
    jpeg_mean_abs_diff: float = 2.0    # ... and the largest mean difference (another decoder, e.g. PIL, passes)
    memory_members: tuple = (200, 2000)  # members of the small and the large shard in the memory check
    max_bytes_per_member: float = 64.0   # allowed growth of peak traced memory per extra member
    memory_calibration: str = ("2026-11-22, 2-core CPU, Python 3.11, tracemalloc peak over 200 vs 2000 "
                               "2x2 PNG members: reference (tar.members reset) -0.04 B/member, "
                               "tarfile's growing members list 410 B/member")


@dataclass
class LatePenalty:
    """How much a late submission loses (applied by nbgrader's late-submission step, autograder/nbgrader_plugins/late.py).

    The default takes nothing: a course has no late penalty until the instructor sets one.
    """

    per_day_percent: float = 0.0        # percent of the points earned taken per started day late (counted from the
                                        # end of the grace period); 0: no penalty
    cap_percent: float = 100.0          # the most the per-day penalty takes, in percent of the points earned
    zero_after_days: float | None = None  # later than this many days after the due date (with any extension): 0
                                          # points; None: no cut-off


@dataclass
class DeadlineSettings:
    """Due dates, the grace period, the late policy and per-student extensions (docs/deadlines.md).

    ``python -m autograder grade`` writes each due date into nbgrader's gradebook and each extension into the
    student's submission there; the submission time is nbgrader's (``timestamp.txt``, written by the exchange's
    submit, or by ``collect-zip``). Plain ``nbgrader autograde`` applies the same policy (nbgrader_config.py).
    """

    # {"<assignment>": "<ISO 8601 date and time with its UTC offset>"}, e.g. {"basics": "2026-12-01T23:59:00+01:00"};
    # an assignment without an entry has no due date (never late)
    due: dict = field(default_factory=dict)
    grace_minutes: float = 0.0          # a submission at most this long after its due date is on time
    penalty: LatePenalty = field(default_factory=LatePenalty)
    # {"<student>": {"<assignment>": <hours>}}: that student's due date for that assignment moves this much later
    extensions: dict = field(default_factory=dict)


@dataclass
class Settings:
    call_timeout_s: float = 60.0       # one call of student code; longer counts as a hang
    max_output_chars: int = 2000       # what a student's prints may show inside a check message
    max_examples_in_message: int = 6   # values shown from a failing tensor
    dataloader_timeout_s: float = 60.0 # one DataLoader pass in the loading checks
    dataloading: DataloadingSettings = field(default_factory=DataloadingSettings)
    speed: SpeedSettings = field(default_factory=SpeedSettings)
    grading: GradingSettings = field(default_factory=GradingSettings)
    deadlines: DeadlineSettings = field(default_factory=DeadlineSettings)


COURSE_SETTINGS = "course_settings.json"     # the course's settings file, in the course directory
OVERRIDE_VARIABLE = "AUTOGRADER_SETTINGS"     # a JSON file applied on top of it


class SettingsError(ValueError):
    """A settings file that cannot be used: one line naming the file and the key."""


def _merge(target, values, where="settings"):
    if not isinstance(values, dict):
        raise TypeError(f"{where} takes a JSON object, not {type(values).__name__}")
    for key, value in values.items():
        if not hasattr(target, key):
            raise KeyError(f"unknown setting {where}.{key}")
        current = getattr(target, key)
        if dataclasses.is_dataclass(current) and isinstance(value, dict):
            _merge(current, value, f"{where}.{key}")
        elif dataclasses.is_dataclass(current):
            raise TypeError(f"{where}.{key} takes a JSON object")
        elif isinstance(current, dict) and isinstance(value, dict):
            for name, item in value.items():
                if name in current and dataclasses.is_dataclass(current[name]) and isinstance(item, dict):
                    _merge(current[name], item, f"{where}.{key}.{name}")
                elif name in current and dataclasses.is_dataclass(current[name]):
                    raise TypeError(f"{where}.{key}.{name} takes a JSON object")
                else:
                    current[name] = item
        else:
            setattr(target, key, value)


def read_file(path):
    """The values in the settings file ``path``, checked against the settings' keys; SettingsError (one line: the
    file and the key) when it is missing, not JSON or names an unknown key."""
    try:
        with open(path, encoding="utf-8") as handle:
            values = json.load(handle)
    except FileNotFoundError:
        raise SettingsError(f"{path}: no such settings file") from None
    except OSError as error:
        raise SettingsError(f"{path}: cannot be read ({error.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: not JSON ({error})") from None
    try:
        _merge(Settings(), values)
    except (KeyError, TypeError) as error:
        raise SettingsError(f"{path}: {error.args[0]}") from None
    return values


def override_path():
    """The file named by ``AUTOGRADER_SETTINGS``, or None."""
    return os.environ.get(OVERRIDE_VARIABLE) or None


_course = {"path": None, "key": None}      # the course whose settings are in force, and what they were read from
_active = []                               # the values of the ``override`` blocks open now, outermost first
_announced = set()


def _announce(path, course_file):
    if path in _announced:
        return
    _announced.add(path)
    print(f"autograder: settings from {OVERRIDE_VARIABLE}={path}, applied over "
          + (f"{course_file}" if course_file else f"the defaults (no {COURSE_SETTINGS})"), file=sys.stderr)


def _file_key(path):
    try:
        status = os.stat(path)
        return (str(path), status.st_mtime_ns, status.st_size)
    except OSError:
        return (str(path), None, None)


def course_values(course):
    """``(values, files)``: the course's settings file (when it has one) with the override (when set) applied over
    it, as plain JSON data (objects merged key by key, the override's values winning), and the files read, in
    order; SettingsError for a file that cannot be used. What :func:`use_course` puts in force, and what the
    Gradescope bundle carries."""
    files, values = [], {}
    course_file = os.path.join(os.path.abspath(course), COURSE_SETTINGS)
    extra = override_path()
    for path in ([course_file] if os.path.exists(course_file) else []) + ([extra] if extra else []):
        values = _layered(values, read_file(path))
        files.append(path)
    return values, files


def _layered(base, over):
    merged = dict(base)
    for key, value in over.items():
        merged[key] = _layered(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) \
            else copy.deepcopy(value)
    return merged


def use_course(course):
    """Put the settings of the course directory ``course`` in force: the defaults, its ``course_settings.json``, then
    ``AUTOGRADER_SETTINGS``, then the ``override`` blocks open now. Nothing changes when the same files are in force
    already (values set in Python since stay). SettingsError (one line) for a file that cannot be used."""
    course_file = os.path.join(os.path.abspath(course), COURSE_SETTINGS)
    extra = override_path()
    key = (_file_key(course_file), _file_key(extra) if extra else None)
    if _course["path"] == os.path.abspath(course) and _course["key"] == key:
        return settings
    values, _ = course_values(course)
    fresh = Settings()
    _merge(fresh, values)
    for values in _active:
        _merge(fresh, values)
    for f in dataclasses.fields(Settings):
        setattr(settings, f.name, getattr(fresh, f.name))
    _course.update(path=os.path.abspath(course), key=key)
    if extra:
        _announce(extra, course_file if os.path.exists(course_file) else None)
    return settings


def _load():
    """The settings at import: the defaults and ``AUTOGRADER_SETTINGS`` (a process that grades for a course then
    calls :func:`use_course`, which adds the course's file)."""
    loaded = Settings()
    path = override_path()
    if path:
        try:
            _merge(loaded, read_file(path))
        except SettingsError:      # said by use_course, which every command calls before it reads a setting
            pass
    return loaded


settings = _load()


@contextlib.contextmanager
def override(values):
    """Apply nested ``values`` (as in the JSON file) for the duration of a block."""
    saved, course = copy.deepcopy(settings), dict(_course)
    _merge(settings, values)
    _active.append(copy.deepcopy(values))
    try:
        yield settings
    finally:
        _active.pop()
        if _course != course and _course["path"]:   # another course came in force inside the block: its
            path, _course["key"] = _course["path"], None   # settings, with the blocks still open
            use_course(path)
        else:
            for f in dataclasses.fields(Settings):
                setattr(settings, f.name, getattr(saved, f.name))


def as_dict():
    """The settings in force, as plain data (for results and docs)."""
    return dataclasses.asdict(settings)
