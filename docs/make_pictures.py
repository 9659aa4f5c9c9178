"""Regenerate the pictures of the docs (CPU only, a few seconds).

    bash scripts/env.sh >/dev/null; python docs/make_pictures.py      # or, from the repo root:
    PYTHONPATH=. python docs/make_pictures.py [out_dir]

Writes ``courses.png`` (band tracks and gate loops) and ``variants.png`` (elevated tracks and
gate sprints) into ``docs/_static`` (or ``out_dir``).
"""

from __future__ import annotations

import pathlib
import sys

import warp as wp

import track_gen as tg
from track_gen.pipeline import presets
from track_gen.plot import contact_sheet

HERE = pathlib.Path(__file__).resolve().parent


def main(out_dir: str | pathlib.Path = HERE / "_static") -> list[pathlib.Path]:
    wp.config.log_level = wp.LOG_WARNING
    out_dir = pathlib.Path(out_dir)
    tracks = tg.TrackGenerator(presets.track(8, "cpu"), seeds=42)
    gates = tg.GateGenerator(presets.gates(8, "cpu", gate_width=1.0), seeds=7)
    courses = contact_sheet(tracks, gates, out_dir / "courses.png", envs=8, cols=4,
                            title="TrackGenerator (top two rows) and GateGenerator loops (bottom two rows), seeds 42 / 7")
    elevated = tg.TrackGenerator(presets.track(4, "cpu", elevated=True, half_width_variation=0.4), seeds=3)
    sprints = tg.GateGenerator(presets.gates(4, "cpu", gate_width=1.0, closed=False), seeds=3)
    variants = contact_sheet(elevated, sprints, out_dir / "variants.png", envs=4, cols=4,
                             title="elevated tracks, varying width (centerline colored by height) and gate sprints")
    return [courses, variants]


if __name__ == "__main__":
    for p in main(*sys.argv[1:]):
        print(p, p.stat().st_size, "bytes")
