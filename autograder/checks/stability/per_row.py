"""Naming the tutorial's global-max softmax when it fails a check.

Subtracting ``torch.max(logits)`` (one max for the whole tensor) instead of the max of each row along
``dim`` fails in two ways: rows whose own max is far below the global one underflow to ``0 / 0 = NaN``, and,
less far below, rows are shifted by a large amount that rounds in a low-precision dtype (bfloat16 keeps about
3 significant digits: -19.80 becomes -19.75) and ``exp`` turns that rounding into a 5 % error. The second way is
what a random bfloat16 batch shows first, and "normalise along dim" would send a student the wrong way, so a
failing softmax check runs one probe: a batch whose first row is near 1e4 and whose second is ordinary. A
softmax whose first row is right and whose second is wrong shifts by something that is not the row's own max.
"""

import torch

from autograder.errors import CheckFailure

PROBE_ROWS = [[1e4, 1e4 - 1.0, 0.0], [1.0, 2.0, 3.0]]
PROBE_CALL = "stable_softmax(torch.tensor([[1e4, 1e4 - 1.0, 0.0], [1.0, 2.0, 3.0]]), dim=-1)"
PER_ROW_HINT = ("Take the max per row, along `dim`: `logits.amax(dim=dim, keepdim=True)` (or "
                "`torch.max(logits, dim=dim, keepdim=True).values`), not `torch.max(logits)` over the whole tensor.")


def _rows_text(t):
    return "[" + ", ".join("[" + ", ".join(f"{v:.4g}" for v in row) + "]" for row in t.tolist()) + "]"


def global_shift_diagnosis(check, stable_softmax):
    """A sentence naming a max taken over the whole tensor, with a call to paste; ``None`` if the probe passes
    or fails in some other way (the check's own message then stands)."""
    x = torch.tensor(PROBE_ROWS)
    try:
        out = stable_softmax(x, dim=-1)
    except CheckFailure:
        return None
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (2, 3) or not out.is_floating_point():
        return None
    got = out.detach().cpu().double()
    expected = torch.softmax(x.double(), dim=-1)

    def right(i):
        return bool(torch.isfinite(got[i]).all()) and torch.allclose(got[i], expected[i], rtol=1e-4, atol=1e-6)

    if not right(0) or right(1):
        return None
    return (f"The cause: the shift is not each row's own max. `{PROBE_CALL}` returns {_rows_text(got)}, "
            f"expected {_rows_text(expected)}: the first row is right, the second (ordinary logits next to a row "
            f"near 1e4) is not. That is what subtracting one max over the whole tensor does: a row far below it "
            f"underflows to 0 / 0 = NaN, and a row less far below it is shifted by a large amount, which rounds in "
            f"a low-precision dtype (bfloat16 keeps about 3 significant digits) into an error that exp magnifies.")


def with_diagnosis(failure, check, stable_softmax):
    """``failure``, or the same failure naming the global max when the probe shows it."""
    diagnosis = global_shift_diagnosis(check, stable_softmax)
    if diagnosis is None:
        return failure
    return CheckFailure(failure.check, f"{failure.detail}\n{diagnosis}", hint=PER_ROW_HINT,
                        measurements=failure.measurements)
