"""Ready-made pipeline specs: ``presets.track(...)`` and ``presets.gates(...)``."""

from __future__ import annotations

from track_gen.pipeline.spec import PipelineSpec

__all__ = ["track", "gates"]


def track(num_envs: int, device: str = "cpu", **overrides) -> PipelineSpec:
    """A band-track spec: :class:`TrackGenConfig` fields as keyword overrides (``elevated=True``...)."""
    from track_gen.generators.track import TrackGenConfig

    return TrackGenConfig(num_envs=num_envs, device=device, **overrides).to_spec()


def gates(num_envs: int, device: str = "cpu", gate_width: float = 0.0, **overrides) -> PipelineSpec:
    """A gate-course spec. ``gate_width`` defaults to 0, which courses refuse: pass one or randomize it."""
    from track_gen.generators.gates import GateGenConfig

    return GateGenConfig(num_envs=num_envs, device=device, gate_width=gate_width, **overrides).to_spec()
