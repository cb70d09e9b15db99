"""A batch's progress: a line per submission with counts and ETA, and a tqdm bar on a terminal."""

import sys
import time


class Progress:
    """A line per submission (with counts and ETA), through ``out``; a tqdm bar too where stderr is a terminal."""

    def __init__(self, total, out, bar=None):
        self.total, self.out, self.done, self.started = total, out, 0, time.perf_counter()
        self.graded = 0
        bar = out is print and sys.stderr.isatty() if bar is None else bar
        self.bar = None
        if bar and out:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="notebook", dynamic_ncols=True, file=sys.stderr, smoothing=0.1)

    def say(self, text):
        if not self.out:
            return
        if self.bar is not None:
            self.bar.write(text)
        else:
            self.out(text, flush=True)

    def step(self, text, graded=True):
        self.done += 1
        self.graded += graded
        if self.bar is not None:
            self.bar.update(1)
        self.say(f"[{self.done}/{self.total}] {text}{self.eta()}")

    def eta(self):
        elapsed = time.perf_counter() - self.started
        left = self.total - self.done
        if not self.graded or not left:
            return f" ({elapsed:.0f} s elapsed)"
        return f" ({elapsed:.0f} s elapsed, about {duration(elapsed / self.graded * left)} left)"

    def close(self):
        if self.bar is not None:
            self.bar.close()


def duration(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def counted(number, noun, plural=None):
    """``"1 submission"``, ``"4 submissions"``: a count with its noun in the right number."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"
