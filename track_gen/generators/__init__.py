"""Course generators: band tracks and gate courses, as pipeline stages."""

from __future__ import annotations


def register_builtins(registry) -> None:
    """Register the built-in stage kinds (``track.*``, ``gates.*``) in ``registry``."""
    from track_gen.generators.gates import register_gate_stages
    from track_gen.generators.track import register_track_stages

    register_track_stages(registry)
    register_gate_stages(registry)
