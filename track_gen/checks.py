"""Host-side argument rules shared by every public entry point (one rule per kind of value).

* **Numbers** are Python or numpy reals (``numbers.Real``: ``int``, ``float``, ``np.float32``,
  ``np.int64``...), never ``bool``. A real that a kernel will read as float32 must be finite
  *in float32*: ``|x| <= 3.4028235e38``; anything larger would turn into ``inf`` on the device.
* **Integers** are ``numbers.Integral`` values (``int``, ``np.int64``...) or reals that are
  exactly integral (``256.0``), never ``bool``, and must lie in the field's range: nothing is
  truncated (``1.7``) or folded modulo ``2**32``.
* **Flags** are ``bool`` or ``np.bool_``, nothing else (``1``, ``"no"`` are refused).

Every refusal names the field, the value and the fix, and raises before anything changes.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["FLOAT32_MAX", "INT32_MAX", "as_bool", "as_int", "as_real", "is_number"]

#: the largest finite float32; device parameters beyond it would become inf
FLOAT32_MAX = float(np.finfo(np.float32).max)
INT32_MAX = 2**31 - 1


def is_number(value: Any) -> bool:
    """A real number that is not a bool (Python or numpy scalar)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def as_real(what: str, value: Any, *, float32: bool = True) -> float:
    """``value`` as a finite float (float32-finite when ``float32``), else TypeError / ValueError."""
    if not is_number(value):
        raise TypeError(f"{what}: expected a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{what}: must be finite, got {value!r}")
    if float32 and abs(v) > FLOAT32_MAX:
        raise ValueError(
            f"{what}: {v:g} is beyond the float32 range (|x| <= {FLOAT32_MAX:.7g}) the device computes in; "
            "pass a smaller value"
        )
    return v


def as_int(what: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an exact int in ``[lo, hi]``, else TypeError / ValueError naming ``what``."""
    if not is_number(value):
        raise TypeError(f"{what}: expected an integer, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    else:
        f = float(value)
        if not (math.isfinite(f) and f == math.floor(f)):
            raise ValueError(f"{what}: expected an integer, got {value!r}; nothing is rounded or truncated")
        v = int(f)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        lo_t = "-inf" if lo is None else str(lo)
        hi_t = "inf" if hi is None else str(hi)
        raise ValueError(f"{what}: {v} is outside [{lo_t}, {hi_t}]; pass an integer in that range")
    return v


def as_bool(what: str, value: Any) -> bool:
    """``value`` as a bool (``bool`` or ``np.bool_`` only), else TypeError naming ``what``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what}: expected a bool (True or False), got {type(value).__name__} {value!r}")
    return bool(value)
