"""Band tracks: closed loops with a width (the ``track.*`` stage kinds, :class:`TrackGenerator`).

Modules, one per stage, each kernel above its launcher: :mod:`centerline` (random or hand-drawn
centerlines), :mod:`band`, :mod:`elevation`, :mod:`obstacles`; the checks in :mod:`validity` and
:mod:`overlap`; the status bits in :mod:`bits`; the config, result and generator in :mod:`generator`.
"""

from __future__ import annotations

from track_gen.generators.track.centerline import CENTERLINE_PARAMS, SHAPE_ONLY
from track_gen.generators.track.elevation import ELEVATION_FIELDS, ELEVATION_PARAMS
from track_gen.generators.track.generator import (TrackGenConfig, TrackGenerator, TrackResult, TrackStatus,
                                                  register_track_stages)

__all__ = ["CENTERLINE_PARAMS", "ELEVATION_FIELDS", "ELEVATION_PARAMS", "SHAPE_ONLY", "TrackGenConfig",
           "TrackGenerator", "TrackResult", "TrackStatus", "register_track_stages"]
