"""Read layout files: the track_gen layout format (version 1), lsy_drone_racing configs and TUM
racetrack-database circuits (``*.csv``, :mod:`track_gen.layouts.tum`).

A file is read as a track_gen layout when it has a ``[layout]`` table, as an lsy_drone_racing
config when it has ``[env.track]``. Every field is checked when it is read -- a number (never a
boolean), finite, in range, the right shape (the rules of :mod:`track_gen.layouts.types`) -- and
every key and table must be one the format knows: a misspelled one is refused with the nearest
known name, never ignored. Every refusal raises :class:`LayoutFormatError` naming the file, the key,
its line and what was expected. A UTF-8 byte order mark at the start of the file is skipped.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any, Iterable

from track_gen.layouts.filekeys import FileErrors, LayoutFormatError, _short, is_num, real, reals
from track_gen.layouts.lsy import read_lsy
from track_gen.layouts.tum import read_tum_csv
from track_gen.layouts.types import GateLayout, Poles, TrackLayout, _FieldProblem, scale_factor
from track_gen.layouts.writer import CONVENTIONS, FORMAT, VERSION

__all__ = ["LayoutFormatError", "layout_files", "load", "load_all"]

#: every table of format version 1 and its keys (anything else is refused with the nearest known name)
TABLES: dict[str, tuple[str, ...]] = {
    "layout": ("format", "version", "kind", *CONVENTIONS, "closed", "name", "source"),
    "gates": ("pos", "rpy", "width", "height", "frame_thickness", "tolerance"),
    "start": ("pos", "rpy"),
    "obstacles": ("pos", "radius", "height"),
    "track": ("centerline", "half_width"),
}
#: the file names a folder of layouts is read for
PATTERNS = ("*.toml", "*.csv")
#: the tables a file of each kind may hold
KIND_TABLES = {"gates": ("layout", "gates", "start", "obstacles"), "track": ("layout", "track")}
_FILE_KEY = {"closed": "layout.closed", "source": "layout.source", "name": "layout.name"}


class _Reader:
    """Typed access to one parsed track_gen layout file (every value a TOML number where numbers are due)."""

    def __init__(self, doc: dict, err: FileErrors):
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

    def rows(self, key: str, width: int) -> list[list[float]]:
        v = self.get(key)
        if not isinstance(v, list):
            raise self.err(key, f"an array of [{', '.join('xyz'[:width])}] rows, got {_short(v)}")
        return [reals(self.err, f"{key}[{i}]", row, width) for i, row in enumerate(v)]

    def vec(self, key: str, n: int) -> list[float]:
        return reals(self.err, key, self.get(key), n)

    def per_item(self, key: str, n: int, what: str, required: bool = True, default: float = 0.0
                 ) -> float | list[float]:
        v = self.get(key, required)
        if v is None:
            return default
        if is_num(v):
            return real(self.err, key, v)
        if isinstance(v, list) and len(v) == n and all(is_num(x) for x in v):
            return reals(self.err, key, v, n)
        raise self.err(key, f"one number or a list of {n} numbers ({what}), got {_short(v)}")

    def text(self, key: str) -> str:
        v = self.get(key, required=False)
        if v is None:
            return ""
        if not isinstance(v, str):
            raise self.err(key, f"a string, got {_short(v)}")
        return v


def _file_key(exc: _FieldProblem) -> str:
    key = _FILE_KEY.get(exc.field, exc.field)
    return key + (f"[{exc.index}]" if exc.index is not None else "")


def _check_tables(doc: dict, err: FileErrors, kind: str) -> None:
    """Every table of ``doc`` is one of format version 1, of a kind-``kind`` file, with known keys only."""
    for name, table in doc.items():
        if name not in TABLES:
            raise err.unknown(name, name, TABLES, f"tables of format version {VERSION}")
        if name not in KIND_TABLES[kind]:
            raise err(name, f"the tables of a kind = {kind!r} layout ({', '.join(KIND_TABLES[kind])}); "
                            f"[{name}] belongs to the other kind: drop it or fix layout.kind")
        err.check_keys(table, name, TABLES[name], f"keys of [{name}]")


def _read_own(doc: dict, path: Path, err: FileErrors) -> GateLayout | TrackLayout:
    r = _Reader(doc, err)
    if not isinstance(doc["layout"], dict):
        raise err("layout", f"a table [layout], got {_short(doc['layout'])}")
    if r.get("layout.format") != FORMAT:
        raise err("layout.format", f'"{FORMAT}", got {_short(r.get("layout.format"))}')
    version = r.get("layout.version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise err("layout.version", f"a format version (an integer >= 1), got {_short(version)}")
    if version > VERSION:
        raise err("layout.version", f"version <= {VERSION} (this track_gen reads up to {VERSION}), got "
                                    f"{_short(version)}; update track_gen")
    kind = r.get("layout.kind")
    if not isinstance(kind, str) or kind not in KIND_TABLES:
        raise err("layout.kind", f'"gates" or "track", got {_short(kind)}')
    _check_tables(doc, err, kind)
    for key, want in CONVENTIONS.items():
        got = r.get(f"layout.{key}")
        if got != want:
            raise err(f"layout.{key}", f'"{want}" (the one convention of format version {VERSION}; nothing is '
                                       f"converted or guessed), got {_short(got)}")
    closed = r.get("layout.closed")
    if not isinstance(closed, bool):
        raise err("layout.closed", f"true or false, got {_short(closed)}")
    name = r.text("layout.name") or path.stem
    source = r.text("layout.source")
    if kind == "track":
        line = r.rows("track.centerline", 3)
        hw = r.per_item("track.half_width", len(line), "per point [m]")
        with err.fields(_file_key):
            return TrackLayout(centerline=line, half_width=hw, closed=closed, source=source, name=name)
    pos = r.rows("gates.pos", 3)
    g = len(pos)
    if g < 1:
        raise err("gates.pos", "at least one gate, got an empty array")
    rpy = r.rows("gates.rpy", 3)
    if len(rpy) != g:
        raise err("gates.rpy", f"{g} rows (one per gate in gates.pos), got {len(rpy)}")
    fields: dict[str, Any] = {
        "width": r.per_item("gates.width", g, "per gate [m]"),
        "height": r.per_item("gates.height", g, "per gate [m]"),
        "frame_thickness": r.per_item("gates.frame_thickness", g, "per gate [m]"),
        "tolerance": r.per_item("gates.tolerance", g, "per gate [m]", required=False),
        "start_pos": r.vec("start.pos", 3), "start_rpy": r.vec("start.rpy", 3),
    }
    with err.fields(_file_key):
        poles = Poles()
        if "obstacles" in doc:
            opos = r.rows("obstacles.pos", 3)
            m = len(opos)
            poles = Poles(pos=opos if m else poles.pos, radius=r.per_item("obstacles.radius", m, "per pole [m]"),
                          height=r.per_item("obstacles.height", m, "per pole [m]"))
        return GateLayout(pos=pos, rpy=rpy, closed=closed, obstacles=poles, source=source, name=name, **fields)


def load(path: str | Path, *, lsy_axis: str | None = None, scale: float | None = None) -> GateLayout | TrackLayout:
    """Read one layout file: a track_gen layout (``[layout]`` table), an lsy_drone_racing config
    (``[env.track]``; ``lsy_axis`` is its gate-pass axis, see :mod:`track_gen.layouts.lsy`) or, for a
    ``.csv`` file, a TUM racetrack-database circuit (:mod:`track_gen.layouts.tum`).

    ``scale`` multiplies every length of the layout (``layout.scaled(scale)``): e.g. 0.1 puts a
    full-size circuit at the scale of a 1/10 car. None (default) keeps the file's metres."""
    path = Path(path)
    s = None if scale is None else scale_factor(scale)
    if path.suffix.lower() == ".csv":
        if lsy_axis is not None:
            raise ValueError(f"lsy_axis: {lsy_axis!r} applies to lsy_drone_racing configs; {path} is a CSV circuit; "
                             "drop lsy_axis")
        return read_tum_csv(path, 1.0 if s is None else s)
    layout = _load_toml(path, lsy_axis)
    return layout if s is None else layout.scaled(s)


def _load_toml(path: Path, lsy_axis: str | None) -> GateLayout | TrackLayout:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LayoutFormatError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
        text = text.removeprefix("\ufeff")  # a byte order mark some editors write: not part of the TOML
        doc = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise LayoutFormatError(f"{path}: not UTF-8 text ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise LayoutFormatError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise LayoutFormatError(f"{path}: not valid TOML: nested too deeply") from None
    err = FileErrors(path, text)
    if "layout" in doc:
        layout = _read_own(doc, path, err)
    elif isinstance(doc.get("env"), dict) and isinstance(doc["env"].get("track"), dict):
        layout = read_lsy(doc, path, err, lsy_axis)
    else:
        near = sorted({m for t in doc for m in difflib.get_close_matches(t, ["layout", "env"], n=1, cutoff=0.6)})
        hint = f"; did you mean {' or '.join(repr(m) for m in near)}?" if near else ""
        raise LayoutFormatError(
            f"{path}: expected a track_gen layout (a [layout] table with format = \"{FORMAT}\") or an "
            f"lsy_drone_racing config (an [env.track] table); found tables {sorted(doc)}{hint}"
        )
    if lsy_axis is not None and "layout" in doc:
        raise ValueError(f"lsy_axis: {lsy_axis!r} applies to lsy_drone_racing configs; {path} is a track_gen "
                         "layout (its gates are passed along local +x); drop lsy_axis")
    return layout


def _folder(p: Path) -> list[Path]:
    """The layout files of folder ``p`` (``*.toml`` and ``*.csv``), sorted by name."""
    return sorted(f for pattern in PATTERNS for f in p.glob(pattern))


def load_all(source: str | Path | Iterable[str | Path], *, lsy_axis: str | None = None,
             scale: float | None = None) -> list:
    """Layouts from a folder (every ``*.toml`` and ``*.csv`` in it, sorted by name), one file, or a list of
    files; ``lsy_axis`` and ``scale`` as for :func:`load`."""
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.is_dir():
            files = _folder(p)
            if not files:
                raise LayoutFormatError(f"{p}: a folder with no *.toml or *.csv layout files")
        else:
            files = [p]
    else:
        files = [Path(s) for s in source]
        if not files:
            raise ValueError("load_all: got an empty list of files; pass at least one")
    return [load(f, lsy_axis=lsy_axis, scale=scale) for f in files]


def layout_files(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """The layout files of ``paths``: files as they are, folders as every ``*.toml`` and ``*.csv`` in them
    (sorted). FileNotFoundError naming a path that is neither; ValueError for a folder with no layout
    file or no path at all."""
    out: list[Path] = []
    for p in map(Path, [paths] if isinstance(paths, (str, Path)) else paths):
        if p.is_dir():
            found = _folder(p)
            if not found:
                raise ValueError(f"{p}: a folder with no *.toml or *.csv layout file")
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such layout file or folder")
    if not out:
        raise ValueError("layout_files: no layout file given; pass at least one file or folder")
    return out

