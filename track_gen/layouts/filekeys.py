"""What both layout readers share: the file error (file, key, line, what was expected), typed access
to parsed TOML values, unknown keys refused with the nearest known name, and the mapping of a
layout's field errors (:class:`~track_gen.layouts.types.LayoutFieldError`) to the file's keys.

Numbers in a file are TOML integers or floats (never booleans); each is read as a float64 first, so
an integer too large for a float (``10**400``) is refused naming its key, not raised as an
``OverflowError``. Range rules (finite, sizes > 0, the 1 mm float32 rule ...) are the layout
types' own, checked when the layout is built from the file's numbers, and reported with the key
and line the number came from.
"""

from __future__ import annotations

import difflib
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from track_gen.errors import TrackGenError
from track_gen.layouts.types import _FieldProblem

__all__ = ["FileErrors", "LayoutFormatError", "line_of"]


class LayoutFormatError(TrackGenError, ValueError):
    """A layout file that cannot be read: names the file, the key (and line) and what was expected."""


#: a table header line (``[gates]``, ``[[env.track.gates]]``), not a row of a multi-line array (``[0.5, 1.0],``)
_HEADER = re.compile(r"^\[\[?\s*([A-Za-z0-9_\-.\"' ]+?)\s*\]\]?\s*(#.*)?$")


def _parts(key: str) -> list[tuple[str, int | None]]:
    """``"env.track.gates[2].pos"`` -> ``[("env", None), ("track", None), ("gates", 2), ("pos", None)]``."""
    out = []
    for part in key.split("."):
        m = re.fullmatch(r"(.*?)((?:\[\d+\])*)", part)
        idx = re.findall(r"\[(\d+)\]", m.group(2)) if m else []
        out.append((m.group(1) if m else part, int(idx[0]) if idx else None))
    return out


def _row_line(lines: list[str], n: int, row: int | None, end: int) -> int:
    """Line of row ``row`` of a multi-line array assigned on line ``n`` (one row per line), else ``n``."""
    if row is None or lines[n - 1].split("=", 1)[-1].split("#", 1)[0].strip() != "[":
        return n
    seen = -1
    for m in range(n + 1, end):
        s = lines[m - 1].strip()
        if s.startswith("]"):
            break
        if s.startswith("["):
            seen += 1
            if seen == row:
                return m
    return n


def line_of(text: str, key: str) -> int | None:
    """1-based line of ``key`` in ``text`` (``"gates.pos[2]"``: the row's line of a multi-line array;
    ``"env.track.gates[2].pos"``: ``pos`` under the third ``[[env.track.gates]]``; ``"obstacle"``: that
    table's header); the enclosing table's header when the key itself is not written; None when neither
    is found."""
    parts = _parts(key)
    lines = text.splitlines()
    headers: list[tuple[int, str, bool]] = []  # (line, table name, an array-of-tables header)
    for n, line in enumerate(lines, start=1):
        s = line.strip()
        m = _HEADER.match(s)
        if m:
            headers.append((n, re.sub(r"\s*\.\s*", ".", m.group(1)), s.startswith("[[")))

    def assignment(leaf: str, row: int | None, start: int, end: int) -> int | None:
        for n in range(start, end):
            if re.match(rf"^\s*{re.escape(leaf)}\s*=", lines[n - 1]):
                return _row_line(lines, n, row, end)
        return None

    for k in range(len(parts), 0, -1):
        table = ".".join(p for p, _ in parts[:k])
        hits = [h for h in headers if h[1] == table]
        if not hits:
            continue
        idx = parts[k - 1][1]
        if idx is not None and hits[0][2]:
            hits = [hits[min(idx, len(hits) - 1)]]
        start = hits[0][0]
        if k == len(parts):
            return start
        end = next((h[0] for h in headers if h[0] > start), len(lines) + 1)
        leaf, row = parts[k]
        return assignment(leaf, row, start + 1, end) or start
    leaf, row = parts[0]
    return assignment(leaf, row, 1, headers[0][0] if headers else len(lines) + 1)


class FileErrors:
    """Builds the :class:`LayoutFormatError` s of one file: ``errors(key, expected)``."""

    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text

    def __call__(self, key: str, expected: str) -> LayoutFormatError:
        line = line_of(self.text, key)
        at = f" (line {line})" if line else ""
        return LayoutFormatError(f"{self.path}: key {key!r}{at}: expected {expected}")

    def unknown(self, key: str, name: str, known: Iterable[str], what: str) -> LayoutFormatError:
        """The error for an unknown ``name`` at ``key``, with the nearest known name."""
        known = sorted(known)
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]!r}? " if near else ""
        return self(key, f"one of the {what}: {', '.join(known)}; {hint}an unknown key is refused, not ignored, "
                         f"so nothing in the file is silently lost (got {name!r})")

    def check_keys(self, table: Any, where: str, known: Iterable[str], what: str) -> dict:
        """``table`` as a dict whose every key is in ``known``, else the error naming the first other key."""
        if not isinstance(table, dict):
            raise self(where, f"a table, got {type(table).__name__} {_short(table)}")
        known = set(known)
        for name in table:
            if name not in known:
                raise self.unknown(f"{where}.{name}" if where else name, name, known, what)
        return table

    @contextmanager
    def fields(self, key_of: Callable[[_FieldProblem], str]) -> Iterator[None]:
        """Turn a layout field error raised inside into a :class:`LayoutFormatError` at ``key_of(error)``."""
        try:
            yield
        except _FieldProblem as exc:
            fix = f"; {exc.fix}" if exc.fix else ""
            raise self(key_of(exc), f"{exc.expected}, got {exc.got}{fix}") from None


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_num(x: Any) -> bool:
    """A TOML number: an int or a float, not a bool."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def real(err: FileErrors, key: str, x: Any) -> float:
    """One TOML number as a float (an integer too large for a float is refused naming ``key``)."""
    if not is_num(x):
        raise err(key, f"a number, got {type(x).__name__} {_short(x)}")
    try:
        return float(x)
    except OverflowError:
        raise err(key, f"a finite number, got an integer of {len(str(abs(x)))} digits (too large for a float)"
                  ) from None


def reals(err: FileErrors, key: str, v: Any, n: int | None, what: str = "") -> list[float]:
    """A list of ``n`` numbers (any length when None) as floats, else the error naming ``key``."""
    want = f"a list of {n} numbers{what}" if n is not None else f"a list of numbers{what}"
    if not isinstance(v, list) or (n is not None and len(v) != n):
        raise err(key, f"{want}, got {_short(v)}")
    if not all(is_num(x) for x in v):
        raise err(key, f"{want}, got {_short(v)}")
    return [real(err, key, x) for x in v]
