"""Course layouts in and out: real tracks from files, any generated course exported to one.

* :class:`GateLayout` / :class:`TrackLayout` (and :class:`Poles`): numpy data, float32, metres and
  radians, in the course frame.
* :func:`load` reads the track_gen layout format (TOML, versioned, documented in
  ``docs/user-guide/real-tracks.rst``) and lsy_drone_racing's track configs as they are;
  ``layout.save(path)`` writes the track_gen format; :func:`load_all` reads a folder.
* :func:`export` turns any env's current course (or a batch) into layouts.
* :func:`coverage` measures whether a course distribution covers a layout, feature by feature
  and (gate layouts) leg by leg, jointly (:func:`leg_features`, :func:`leg_support`)
  (``python -m track_gen.layouts coverage FILE... --preset NAME`` prints it).
* :func:`shipped` lists the real layouts that ship with track_gen (``layouts/data/*.toml``: gate
  courses; ``shipped("track")``: race circuits from the TUM racetrack-database), each citing its source.
* :func:`load` also reads TUM racetrack-database CSVs (``*.csv``), and ``scale=`` resizes any layout.

Use layouts as a generator source with ``presets.gates_from_layouts`` / ``presets.track_from_layouts``.
"""

from __future__ import annotations

from pathlib import Path

from track_gen.layouts.coverage import LEG_BOX, LEG_FEATURES, Coverage, Feature, coverage, leg_features, leg_support
from track_gen.layouts.export import export
from track_gen.layouts.reader import LayoutFormatError, layout_files, load, load_all
from track_gen.layouts.types import GateLayout, Poles, TrackLayout
from track_gen.layouts.writer import FORMAT, VERSION, write_layout

__all__ = ["FORMAT", "VERSION", "LEG_BOX", "LEG_FEATURES", "Coverage", "Feature", "GateLayout", "LayoutFormatError",
           "Poles", "TrackLayout", "coverage", "data_dir", "export", "layout_files", "leg_features", "leg_support", "load",
           "load_all", "save", "shipped"]

save = write_layout


def data_dir() -> Path:
    """The folder of the shipped layouts."""
    return Path(__file__).resolve().parent / "data"


#: the folders of the shipped layouts of each kind, under :func:`data_dir`
SHIPPED = {"gates": ".", "track": "circuits"}


def shipped(kind: str = "gates") -> dict[str, Path]:
    """Shipped real layouts of ``kind`` by name (file stem) -> path, sorted by name: ``"gates"`` the gate
    courses (``layouts/data/*.toml``), ``"track"`` the race circuits (``layouts/data/circuits/*.toml``,
    full size: ``load(path, scale=s)`` puts one at a small car's scale)."""
    if kind not in SHIPPED:
        raise ValueError(f"kind: expected one of {sorted(SHIPPED)}, got {kind!r}")
    return {p.stem: p for p in sorted((data_dir() / SHIPPED[kind]).glob("*.toml"))}
