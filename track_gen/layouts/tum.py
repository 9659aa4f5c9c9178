"""Read a circuit of the TUM racetrack-database (github.com/TUMFTM/racetrack-database, ``tracks/*.csv``).

Each file is a closed reference line, one row per point in the direction of travel, with the
track's extent to either side::

    # x_m,y_m,w_tr_right_m,w_tr_left_m
    -0.320123,1.087714,5.739,5.932

The band's centre is the reference point moved to the middle of the two edges: along the left
normal by ``(w_left - w_right) / 2``, the normal taken from the reference line's central difference
(``p[i+1] - p[i-1]``, the loop closed: the last row joins the first); its half width is
``(w_right + w_left) / 2``. ``scale`` multiplies every length (positions and widths), e.g. 0.1 for a
1/10-scale car. The first line must be that header (it fixes the column order); every other row
must hold four finite numbers, widths >= 0 with a half width of at least 1 mm. A refused row raises
:class:`~track_gen.layouts.filekeys.LayoutFormatError` naming the file, the line and the column.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from track_gen.layouts.filekeys import LayoutFormatError
from track_gen.layouts.types import MIN_SIZE, TrackLayout, _FieldProblem

__all__ = ["COLUMNS", "TUM_COMMIT", "TUM_REPOSITORY", "band_from_reference", "circuit_text", "read_tum_csv"]

#: the columns of a TUM racetrack-database track file, in order
COLUMNS = ("x_m", "y_m", "w_tr_right_m", "w_tr_left_m")


def band_from_reference(xy: np.ndarray, w_right: np.ndarray, w_left: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre [N, 2], half width [N]) of a closed reference line ``xy`` [N, 2] with the distances
    ``w_right`` / ``w_left`` [N] to its right and left edges (float64)."""
    xy = np.asarray(xy, np.float64)
    tangent = np.roll(xy, -1, axis=0) - np.roll(xy, 1, axis=0)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    left = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    shift = 0.5 * (np.asarray(w_left, np.float64) - np.asarray(w_right, np.float64))
    return xy + left * shift[:, None], 0.5 * (np.asarray(w_right, np.float64) + np.asarray(w_left, np.float64))


def _rows(path: Path, text: str) -> tuple[np.ndarray, list[int]]:
    """The file's numbers [N, 4] (float64) and each row's line number; the header checked first."""
    lines = text.splitlines()
    head = lines[0].strip() if lines else ""
    names = tuple(c.strip() for c in head.lstrip("#").split(","))
    if not head.startswith("#") or names != COLUMNS:
        raise LayoutFormatError(f"{path}: line 1: expected the header '# {','.join(COLUMNS)}' (a TUM "
                                f"racetrack-database track file), got {head[:80]!r}")
    rows, where = [], []
    for n, line in enumerate(lines[1:], start=2):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        cells = s.split(",")
        if len(cells) != len(COLUMNS):
            raise LayoutFormatError(f"{path}: line {n}: expected {len(COLUMNS)} comma-separated numbers "
                                    f"({', '.join(COLUMNS)}), got {len(cells)} fields: {s[:80]!r}")
        row = []
        for name, cell in zip(COLUMNS, cells):
            try:
                v = float(cell)
            except ValueError:
                v = math.nan
            if not math.isfinite(v) or (name.startswith("w_") and v < 0.0):
                want = "a finite width >= 0 [m]" if name.startswith("w_") else "a finite number [m]"
                raise LayoutFormatError(f"{path}: line {n}, column {name!r}: expected {want}, got {cell.strip()!r}")
            row.append(v)
        rows.append(row)
        where.append(n)
    if len(rows) < 3:
        raise LayoutFormatError(f"{path}: expected at least 3 rows of points (a closed loop), got {len(rows)}")
    return np.array(rows, np.float64), where


def read_tum_csv(path: str | Path, scale: float = 1.0) -> TrackLayout:
    """A closed :class:`TrackLayout` (z = 0) from a TUM racetrack-database CSV, lengths times ``scale``."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except OSError as exc:
        raise LayoutFormatError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise LayoutFormatError(f"{path}: not UTF-8 text ({exc})") from None
    data, where = _rows(path, text)
    xy = data[:, :2]
    gap = np.linalg.norm(np.roll(xy, -1, axis=0) - np.roll(xy, 1, axis=0), axis=1)
    if np.any(gap == 0.0):
        i = int(np.flatnonzero(gap == 0.0)[0])
        raise LayoutFormatError(f"{path}: line {where[i]}: expected the points on either side of this row to differ "
                                "(its normal is undefined); drop the repeated point")
    hw = 0.5 * (data[:, 2] + data[:, 3])
    if np.any(hw * scale < MIN_SIZE):
        i = int(np.flatnonzero(hw * scale < MIN_SIZE)[0])
        raise LayoutFormatError(f"{path}: line {where[i]}: expected a track width (w_tr_right_m + w_tr_left_m) of at "
                                f"least {2 * MIN_SIZE:g} m after scale {scale:g}, got {2 * hw[i] * scale:g} m")
    centre, half = band_from_reference(xy, data[:, 2], data[:, 3])
    line = np.zeros((len(centre), 3))
    line[:, :2] = centre * scale
    note = f", lengths x {scale:g}" if scale != 1.0 else ""
    source = (f"{path.name}: TUM racetrack-database track (x_m, y_m, w_tr_right_m, w_tr_left_m); centre = reference "
              f"line + left normal x (w_left - w_right) / 2, half width = (w_right + w_left) / 2{note}")
    try:
        return TrackLayout(centerline=line, half_width=half * scale, closed=True, source=source, name=path.stem)
    except _FieldProblem as exc:
        i = exc.index if exc.index is not None else 0
        raise LayoutFormatError(f"{path}: line {where[i]}: expected {exc.expected}, got {exc.got}"
                                + (f"; {exc.fix}" if exc.fix else "")) from None


#: the racetrack-database commit the shipped circuits come from (2021-09-18, "Updated readme")
TUM_COMMIT = "e59595d1f3573b30d1ded6a08984935b957688e0"
TUM_REPOSITORY = "TUMFTM/racetrack-database"


def circuit_text(csv_path: str | Path, name: str, commit: str = TUM_COMMIT) -> str:
    """The track_gen layout file (full size, metres) of a racetrack-database CSV, its header citing the
    source: how the files of ``layouts/data/circuits/`` are made (``tests/core/test_tum.py`` checks it)."""
    from track_gen.layouts.writer import layout_text

    csv_path = Path(csv_path)
    src = f"github.com/{TUM_REPOSITORY} tracks/{csv_path.name} @ {commit[:7]} (LGPL-3.0)"
    lay = read_tum_csv(csv_path)
    lay = lay.replace(name=name, source=f"{src}; {lay.source.split(': ', 1)[1]}")
    comment = (f"Source: https://github.com/{TUM_REPOSITORY}/blob/{commit}/tracks/{csv_path.name}\n"
               f"(repository {TUM_REPOSITORY}, path tracks/{csv_path.name}, commit {commit}, licence LGPL-3.0:\n"
               "this file is a derived work under the same licence; the licence text is LICENSE beside it).\n"
               "Centre lines from OpenStreetMap, smoothed; widths from satellite images (the repository's README).\n"
               f"Converted with track_gen.layouts.tum.circuit_text; full size, in metres: load it with\n"
               "track_gen.layouts.load(path, scale=s) for a smaller car.")
    return layout_text(lay, comment)
