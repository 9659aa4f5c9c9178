"""Course generators: band tracks and gate courses, as pipeline stages.

The generators are built on :mod:`track_gen.pipeline` (never the other way round). Importing
this package registers them there: the built-in stage kinds (``track.*``, ``gates.*``) in every
``StageRegistry()`` and the default registry, and the family classes ``pipeline.build`` makes.
``import track_gen`` imports it.

One sub-package per family, each stage's kernels beside the Python that launches them:
:mod:`track` (band tracks), :mod:`gates` (gate courses), :mod:`layouts` (real layouts as a
source of either). Shared by both families: :mod:`curve` (B-splines and the arc-length walk),
:mod:`shapes` (course shapes), :mod:`poles` (pole placement), :mod:`status` (the status flags)
and :mod:`family` (the generator base class).
"""

from __future__ import annotations

from track_gen.generators.gates import GateGenerator, register_gate_stages
from track_gen.generators.layouts import register_layout_stages
from track_gen.generators.track import TrackGenerator, register_track_stages
from track_gen.pipeline.program import register_family
from track_gen.pipeline.registry import add_builtin_stages

__all__ = ["register_builtins"]


def register_builtins(registry) -> None:
    """Register the built-in stage kinds (``track.*``, ``gates.*``) in ``registry``."""
    register_track_stages(registry)
    register_gate_stages(registry)
    register_layout_stages(registry)


add_builtin_stages(register_builtins)
register_family("track", TrackGenerator)
register_family("gates", GateGenerator)
