"""Read layout files: the track_gen layout format (version 1) and lsy_drone_racing configs.

A file is read as a track_gen layout when it has a ``[layout]`` table, as an lsy_drone_racing
config when it has ``[env.track]``. Every refusal raises :class:`LayoutFormatError` naming the
file, the key (and the line where the TOML parser or the file's text gives one) and what was
expected.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from track_gen.errors import TrackGenError
from track_gen.layouts.lsy import read_lsy
from track_gen.layouts.types import GateLayout, Poles, TrackLayout
from track_gen.layouts.writer import CONVENTIONS, FORMAT, VERSION

__all__ = ["LayoutFormatError", "load", "load_all"]


class LayoutFormatError(TrackGenError, ValueError):
    """A layout file that cannot be read: names the file, the key (and line) and what was expected."""


def _line_of(text: str, key: str) -> int | None:
    """1-based line of ``key`` (``"gates.pos"`` or ``"gates.pos[2]"``) in ``text``: the line of its
    assignment inside its table, else the table's header; None when neither is found."""
    base = re.sub(r"\[\d+\]", "", key)
    table, _, leaf = base.rpartition(".")
    current, header = "", None
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        m = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?", s)
        if m:
            current = m.group(1)
            if current == table and header is None:
                header = n
            continue
        if current == table and re.match(rf"^{re.escape(leaf)}\s*=", s):
            return n
    return header


def _error_factory(path: Path, text: str):
    def err(key: str, expected: str) -> LayoutFormatError:
        line = _line_of(text, key)
        at = f" (line {line})" if line else ""
        return LayoutFormatError(f"{path}: key {key!r}{at}: expected {expected}")
    return err


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class _Reader:
    """Typed access to one parsed track_gen layout file."""

    def __init__(self, doc: dict, err):
        self.doc, self.err = doc, err

    def get(self, key: str, required: bool = True) -> Any:
        node: Any = self.doc
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                if required:
                    raise self.err(key, "a value, missing")
                return None
            node = node[part]
        return node

    def rows(self, key: str, width: int, required: bool = True) -> np.ndarray | None:
        v = self.get(key, required)
        if v is None:
            return None
        if not isinstance(v, list):
            raise self.err(key, f"an array of [{', '.join('xyz'[:width])}] rows, got {v!r}")
        for i, row in enumerate(v):
            if not (isinstance(row, list) and len(row) == width and all(_is_num(x) for x in row)):
                raise self.err(f"{key}[{i}]", f"a list of {width} numbers, got {row!r}")
        return np.array(v, dtype=np.float32).reshape(-1, width)

    def vec(self, key: str, n: int) -> np.ndarray:
        v = self.get(key)
        if not (isinstance(v, list) and len(v) == n and all(_is_num(x) for x in v)):
            raise self.err(key, f"a list of {n} numbers, got {v!r}")
        return np.array(v, dtype=np.float32)

    def per_item(self, key: str, n: int, what: str, required: bool = True, default: float = 0.0) -> np.ndarray:
        v = self.get(key, required)
        if v is None:
            v = default
        if _is_num(v):
            return np.full(n, v, dtype=np.float32)
        if isinstance(v, list) and len(v) == n and all(_is_num(x) for x in v):
            return np.array(v, dtype=np.float32)
        raise self.err(key, f"one number or a list of {n} numbers ({what}), got {v!r}")

    def text(self, key: str) -> str:
        v = self.get(key, required=False)
        if v is None:
            return ""
        if not isinstance(v, str):
            raise self.err(key, f"a string, got {v!r}")
        return v


def _read_own(doc: dict, path: Path, err) -> GateLayout | TrackLayout:
    r = _Reader(doc, err)
    if r.get("layout.format") != FORMAT:
        raise err("layout.format", f'"{FORMAT}", got {r.get("layout.format")!r}')
    version = r.get("layout.version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise err("layout.version", f"a format version (an integer >= 1), got {version!r}")
    if version > VERSION:
        raise err("layout.version", f"version <= {VERSION} (this track_gen reads up to {VERSION}), got {version}; "
                                    "update track_gen")
    for key, want in CONVENTIONS.items():
        got = r.get(f"layout.{key}")
        if got != want:
            raise err(f"layout.{key}", f'"{want}" (the one convention of format version {VERSION}; nothing is '
                                       f"converted or guessed), got {got!r}")
    closed = r.get("layout.closed")
    if not isinstance(closed, bool):
        raise err("layout.closed", f"true or false, got {closed!r}")
    kind = r.get("layout.kind")
    name = r.text("layout.name") or path.stem
    source = r.text("layout.source")
    if kind == "track":
        line = r.rows("track.centerline", 3)
        if line.shape[0] < 3:
            raise err("track.centerline", f"at least 3 points, got {line.shape[0]}")
        hw = r.per_item("track.half_width", line.shape[0], "per point [m]")
        return TrackLayout(centerline=line, half_width=hw, closed=closed, source=source, name=name)
    if kind != "gates":
        raise err("layout.kind", f'"gates" or "track", got {kind!r}')
    pos = r.rows("gates.pos", 3)
    g = pos.shape[0]
    if g < 1:
        raise err("gates.pos", "at least one gate, got an empty array")
    rpy = r.rows("gates.rpy", 3)
    if rpy.shape[0] != g:
        raise err("gates.rpy", f"{g} rows (one per gate in gates.pos), got {rpy.shape[0]}")
    poles = Poles()
    if r.get("obstacles", required=False) is not None:
        opos = r.rows("obstacles.pos", 3)
        m = opos.shape[0]
        poles = Poles(pos=opos, radius=r.per_item("obstacles.radius", m, "per pole [m]"),
                      height=r.per_item("obstacles.height", m, "per pole [m]"))
    return GateLayout(
        pos=pos, rpy=rpy, width=r.per_item("gates.width", g, "per gate [m]"),
        height=r.per_item("gates.height", g, "per gate [m]"),
        frame_thickness=r.per_item("gates.frame_thickness", g, "per gate [m]"),
        tolerance=r.per_item("gates.tolerance", g, "per gate [m]", required=False),
        closed=closed, start_pos=r.vec("start.pos", 3), start_rpy=r.vec("start.rpy", 3),
        obstacles=poles, source=source, name=name,
    )


def load(path: str | Path, *, lsy_axis: str | None = None) -> GateLayout | TrackLayout:
    """Read one layout file: a track_gen layout (``[layout]`` table) or an lsy_drone_racing config
    (``[env.track]``; ``lsy_axis`` is its gate-pass axis, see :mod:`track_gen.layouts.lsy`)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LayoutFormatError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
        doc = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise LayoutFormatError(f"{path}: not UTF-8 text ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise LayoutFormatError(f"{path}: not valid TOML: {exc}") from None
    err = _error_factory(path, text)
    if "layout" in doc:
        layout = _read_own(doc, path, err)
    elif isinstance(doc.get("env"), dict) and isinstance(doc["env"].get("track"), dict):
        layout = read_lsy(doc, path, err, lsy_axis)
    else:
        raise LayoutFormatError(
            f"{path}: expected a track_gen layout (a [layout] table with format = \"{FORMAT}\") or an "
            f"lsy_drone_racing config (an [env.track] table); found tables {sorted(doc)}"
        )
    if lsy_axis is not None and "layout" in doc:
        raise ValueError(f"lsy_axis: {lsy_axis!r} applies to lsy_drone_racing configs; {path} is a track_gen "
                         "layout (its gates are passed along local +x); drop lsy_axis")
    return layout


def load_all(source: str | Path | Iterable[str | Path], *, lsy_axis: str | None = None) -> list:
    """Layouts from a folder (every ``*.toml`` in it, sorted by name), one file, or a list of files."""
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.is_dir():
            files = sorted(p.glob("*.toml"))
            if not files:
                raise LayoutFormatError(f"{p}: a folder with no *.toml layout files")
        else:
            files = [p]
    else:
        files = [Path(s) for s in source]
        if not files:
            raise ValueError("load_all: got an empty list of files; pass at least one")
    return [load(f, lsy_axis=lsy_axis) for f in files]
