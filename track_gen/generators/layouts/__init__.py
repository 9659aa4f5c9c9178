"""Layouts as a generator source: each env flies one of K real (or exported) layouts.

Two families of stage kinds fill the same result arrays as the procedural families: :mod:`gates`
(``gates.from_layouts``, ``gates.layout_frames``, ``gates.layout_obstacles``) and :mod:`track`
(``track.from_layouts``, ``track.layout_heights``); what they share (the spec that carries the
layouts, the upload, the pick and the rigid placement) is :mod:`source`; :mod:`specs` builds the
specs behind ``presets.gates_from_layouts`` / ``presets.track_from_layouts``.
"""

from __future__ import annotations

from track_gen.generators.layouts.gates import register_gate_layout_stages
from track_gen.generators.layouts.source import LayoutStageSpec, LayoutWarning
from track_gen.generators.layouts.track import register_track_layout_stages

__all__ = ["LayoutStageSpec", "LayoutWarning", "register_layout_stages"]


def register_layout_stages(registry) -> None:
    """Register ``gates.from_layouts``, ``gates.layout_frames``, ``gates.layout_obstacles``,
    ``track.from_layouts`` and ``track.layout_heights``."""
    register_gate_layout_stages(registry)
    register_track_layout_stages(registry)
