"""Write a layout in the track_gen layout format (TOML, version 1).

A tiny TOML writer for this flat schema (tables of strings, booleans, numbers and arrays of
numbers): no dependency. Floats are written as the shortest decimal that reads back to the same
float32 (``0.45``, not ``0.44999998807907104``), so ``load(save(x))`` reproduces every array byte
for byte (``-0.0`` included). The layout is checked again before it is written (``layout.check()``),
so an array edited in place to NaN, inf or out of range is refused, never written: a layout file
holds only finite numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["FORMAT", "VERSION", "write_layout", "layout_text"]

FORMAT = "track_gen.layout"
VERSION = 1
#: the conventions every file states (and the reader checks): nothing is guessed
CONVENTIONS = {"length_unit": "m", "angle_unit": "rad", "rotation": "extrinsic-xyz", "gate_axis": "+x"}


def _num(x) -> str:
    v = np.float32(x)
    if not math.isfinite(v):  # unreachable after layout.check(); never write what the reader refuses
        raise ValueError(f"write_layout: {v} is not finite; layout files hold finite numbers only")
    a = abs(float(v))
    if a == 0.0 or 1e-4 <= a < 1e7:
        return np.format_float_positional(v, unique=True, trim="0")
    return np.format_float_scientific(v, unique=True, trim="0")


def _str(s: str) -> str:
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _vec(row) -> str:
    return "[" + ", ".join(_num(x) for x in np.asarray(row).reshape(-1)) + "]"


def _rows(arr) -> str:
    arr = np.asarray(arr, dtype=np.float32)
    if arr.shape[0] == 0:
        return "[]"
    return "[\n" + "".join(f"  {_vec(r)},\n" for r in arr) + "]"


def _one_or_many(arr) -> str:
    """One number when every entry is the same float32 (byte for byte), else a list."""
    arr = np.asarray(arr, dtype=np.float32)
    if arr.size and arr.tobytes() == np.full(arr.shape, arr[0], np.float32).tobytes():
        return _num(arr[0])
    return _vec(arr)


def layout_text(layout, comment: str = "") -> str:
    """The file text of a :class:`GateLayout` or :class:`TrackLayout` (checked first: ``layout.check()``)."""
    layout.check()
    kind = "track" if hasattr(layout, "centerline") else "gates"
    lines = [f"# track_gen course layout, format version {VERSION} (see docs/user-guide/real-tracks.rst)"]
    lines += [f"# {c}".rstrip() for c in comment.splitlines()]
    lines += ["[layout]", f'format = "{FORMAT}"', f"version = {VERSION}", f'kind = "{kind}"']
    lines += [f'{k} = "{v}"' for k, v in CONVENTIONS.items()]
    lines += [f"closed = {'true' if layout.closed else 'false'}", f"name = {_str(layout.name)}",
              f"source = {_str(layout.source)}", ""]
    if kind == "track":
        lines += ["[track]", f"centerline = {_rows(layout.centerline)}",
                  f"half_width = {_one_or_many(layout.half_width)}", ""]
    else:
        lines += ["[gates]", f"pos = {_rows(layout.pos)}", f"rpy = {_rows(layout.rpy)}",
                  f"width = {_one_or_many(layout.width)}", f"height = {_one_or_many(layout.height)}",
                  f"frame_thickness = {_one_or_many(layout.frame_thickness)}",
                  f"tolerance = {_one_or_many(layout.tolerance)}", "",
                  "[start]", f"pos = {_vec(layout.start_pos)}", f"rpy = {_vec(layout.start_rpy)}", ""]
        poles = layout.obstacles
        if len(poles):
            lines += ["[obstacles]", f"pos = {_rows(poles.pos)}", f"radius = {_one_or_many(poles.radius)}",
                      f"height = {_one_or_many(poles.height)}", ""]
    return "\n".join(lines)


def write_layout(layout, path: str | Path, comment: str = "") -> Path:
    """Write ``layout`` to ``path`` (UTF-8 TOML); ``comment`` lines go on top as ``#`` comments."""
    path = Path(path)
    path.write_text(layout_text(layout, comment), encoding="utf-8")
    return path
