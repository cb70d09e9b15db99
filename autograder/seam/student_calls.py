"""The seam: what ``@graded`` hands a check, and the student's objects as the check reaches them.

A check is written against two things and nothing else::

    @graded(3, hidden=[{"cases": 80}])
    def check_softmax_forward(check, stable_softmax, *, seed=0, cases=40):
        gen = check.generator()                  # seeded from the item and `seed` (the hidden seed in a grade)
        out = stable_softmax(x, dim=dim)         # the student's call, through call_student's guards
        raise CheckFailure(check, "...")         # `check` is also the check's name, as messages take it

* ``check`` (:class:`Seam`): the check's name (it *is* that string: ``CheckFailure(check, ...)``), its
  :class:`~autograder.spec.Item`, its ``seed``, and :meth:`Seam.generator`: a ``torch.Generator`` seeded from the
  item and the seed, so visible and hidden variants draw distinct inputs, each reproducibly, and no check keeps a
  hand-picked seed constant. :meth:`Seam.student` makes a handle on an object the student's code returned.
* every other positional argument (:class:`Student`): the student's object under the exercise's name. Calling it
  is :func:`~autograder.seam.student.call_student` (time limit, printed output captured, inputs unchanged, errors as
  messages); ``.raises(...)`` expects an exception; ``.beside(probe, ...)`` runs a registered probe where the
  object lives; ``.via(probe, ...)`` is the guarded call made by such a probe (for arguments built there);
  ``.in_fresh_process()`` reaches it from a process that never ran the checks' calls.

Where the object lives (this process, or a sandboxed worker under trusted grading) the check never asks: the
handle knows (:class:`~autograder.seam.handle.Handle`). The check's public signature stays the student's
objects and its keyword arguments: ``check_softmax_forward(stable_softmax, seed=3)``.
"""

import hashlib
import inspect

import numpy
import torch

from autograder.seam import remote
from autograder.seam.handle import Handle, unwrapped
from autograder.seam.student import call_student, inside_a_guarded_call, raises_from_student


class Student(Handle):
    """The student's object as a check reaches it: calls go through ``call_student`` under the check's name."""

    __slots__ = ("check", "what")

    def __init__(self, target, check, what=None):
        super().__init__(unwrapped(target))
        self.check, self.what = check, what

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        if inside_a_guarded_call():       # in a closure the check hands to a guarded call: that call's guards hold
            return self.target(*_plain(args), **_plain(kwargs))
        return call_student(self.check, self.target, *_plain(args), what=self.what, **_plain(kwargs))

    def call(self, *args, timeout=None, what=None, **kwargs):
        """The guarded call with its own time limit (seconds) or name in messages (``what="Affine(3, 4)"``)."""
        __tracebackhide__ = True
        if inside_a_guarded_call():
            return self.target(*_plain(args), **_plain(kwargs))
        return call_student(self.check, self.target, *_plain(args), timeout=timeout, what=what or self.what,
                            **_plain(kwargs))

    def raises(self, *args, expected=Exception, what=None, **kwargs):
        """Call it expecting ``expected`` to be raised; return the exception (anything else fails the check)."""
        __tracebackhide__ = True
        return raises_from_student(self.check, self.target, *_plain(args), expected=expected,
                                   what=what or self.what, **_plain(kwargs))

    def beside(self, probe, *args, **kwargs):
        return super().beside(probe, *_plain(args), **_plain(kwargs))

    def beside_within(self, seconds, probe, *args, **kwargs):
        return super().beside_within(seconds, probe, *_plain(args), **_plain(kwargs))

    def via(self, probe, *recipe, shown, here=None, **kwargs):
        """The guarded call that ``probe(obj, *recipe, **kwargs)`` makes where the object lives (``beside``), for a
        call whose arguments must be built there: a view, a tensor's flag, ``.grad`` or graph (a tensor crosses to a
        worker as a plain copy). Messages show ``shown``, the arguments as the check built them; when the object
        lives in this process those (``here``) are passed on instead of being rebuilt, so the call gets the caller's
        own tensors and a change to them is caught."""
        __tracebackhide__ = True
        made_there = _MadeThere(probe, self, recipe, here)
        return call_student(self.check, made_there, *shown, what=self.what, **_plain(kwargs))

    def in_fresh_process(self):
        return Student(remote.in_fresh_process(self.target), self.check, self.what)

    def __getattr__(self, name):
        """An attribute of the object, as a handle named after it: ``Softplus.apply``, ``model.forward``."""
        if name.startswith("_"):
            raise AttributeError(name)
        return Student(getattr(self.target, name), self.check, f"{self.what}.{name}" if self.what else None)

    def named(self, what):
        """The same handle, named ``what`` in messages."""
        return Student(self.target, self.check, what)

    def __repr__(self):
        return f"student({self.target!r})"


class _MadeThere:
    """``call_student``'s callee for :meth:`Student.via`: called with the arguments messages show, it runs the probe
    on the recipe where the object lives (messages name the student's parameters, in one process)."""

    def __init__(self, probe, student, recipe, here):
        self.probe, self.student, self.recipe = probe, student, _plain(recipe)
        self.here = {} if here is None or student.in_worker else {"here": here}
        if not student.in_worker:
            try:
                self.__signature__ = inspect.signature(student.target)
            except (TypeError, ValueError):
                pass

    def __call__(self, *shown, **kwargs):
        return self.student.beside(self.probe, *self.recipe, **kwargs, **self.here)


def _plain(values):
    """Arguments with every handle replaced by the object it holds, and a seam by its name (what crosses to the
    student's process)."""
    if isinstance(values, dict):
        return {k: _plain_one(v) for k, v in values.items()}
    return tuple(_plain_one(v) for v in values)


def _plain_one(value):
    return str(value) if isinstance(value, Seam) else unwrapped(value)


def stream_seed(source, stream=0):
    """An integer seed (48 bits of a sha256) for ``stream`` (a name or a number) of ``source`` (what a check's draws
    come from: the item and its seed in :meth:`Seam.seed_for`, or a seed a plan carries): named streams of one
    source are independent, and the same wherever they are derived."""
    return int.from_bytes(hashlib.sha256(f"{source}:{stream}".encode()).digest()[:6], "big")


class Seam(str):
    """What ``@graded`` hands a check as its first argument: the check's name, with the item, the seed, the
    check's generator and handles on the student's objects (see the module's docstring)."""

    def __new__(cls, item, seed):
        seam = super().__new__(cls, item.name)
        seam.item, seam.seed = item, seed
        return seam

    def seed_for(self, stream=0):
        """An integer seed for ``stream`` of this check (a name or a number), from the item and ``seed``: for what
        seeds itself elsewhere (the student's own initialisation in their process)."""
        return stream_seed(f"{self.item.topic}.{self.item.id}:{self.seed}", stream)

    def generator(self, stream=0):
        """A CPU ``torch.Generator`` seeded by :meth:`seed_for`: the check's inputs, drawn afresh for each seed."""
        return torch.Generator().manual_seed(self.seed_for(stream))

    def numpy_generator(self, stream=0):
        """A NumPy ``Generator`` seeded by :meth:`seed_for`, for what is drawn with NumPy (images, file sizes)."""
        return numpy.random.default_rng(self.seed_for(stream))

    def student(self, obj, what=None):
        """A :class:`Student` handle on ``obj``, an object the student's code made (a model, a dataset)."""
        return obj if isinstance(obj, Student) and what is None else Student(obj, self, what)

    def __reduce__(self):        # it travels (in a failure, to another process) as the plain name
        return str, (str(self),)
