"""Ready-made pipeline specs: ``presets.track(...)`` and ``presets.gates(...)``."""

from __future__ import annotations

from track_gen.pipeline.spec import PipelineSpec

__all__ = ["track", "track_from_points", "gates"]


def track(num_envs: int, device: str = "cpu", **overrides) -> PipelineSpec:
    """A band-track spec: :class:`TrackGenConfig` fields as keyword overrides (``elevated=True``...)."""
    from track_gen.generators.track import TrackGenConfig

    return TrackGenConfig(num_envs=num_envs, device=device, **overrides).to_spec()


def gates(num_envs: int, device: str = "cpu", gate_width: float = 0.0, **overrides) -> PipelineSpec:
    """A gate-course spec. ``gate_width`` defaults to 0, which courses refuse: pass one or randomize it."""
    from track_gen.generators.gates import GateGenConfig

    return GateGenConfig(num_envs=num_envs, device=device, gate_width=gate_width, **overrides).to_spec()


def track_from_points(num_envs: int, device: str = "cpu", control_points: int = 12, **overrides) -> PipelineSpec:
    """A band track through control points you write: ``generator.inputs["centerline.points"]``.

    The input is an ``[E, control_points]`` vec2f array (a closed polygon per env, in order, in
    the env frame); each regeneration smooths it with the same closed B-spline, resamples and
    validates it (one draw, no retries: ``valid`` says whether your course meets the constraints).
    The start line sits at the curve point nearest control point 0. ``overrides`` are
    :class:`TrackGenConfig` fields (the random-shape ones do not apply).
    """
    import dataclasses

    from track_gen.generators.track import TrackGenConfig

    for n in ("radius_min", "radius_max", "angle_jitter", "max_attempts"):
        if n in overrides:
            raise TypeError(f"track_from_points: {n} shapes random tracks and does not apply to drawn ones")
    spec = TrackGenConfig(num_envs=num_envs, device=device, control_points=control_points, **overrides).to_spec()
    cl = spec.stage("centerline")
    params = {k: v for k, v in cl.params.items() if k not in ("radius_min", "radius_max", "angle_jitter",
                                                                 "max_attempts")}
    stages = tuple(dataclasses.replace(s, kind="track.from_points", params=params) if s.name == "centerline" else s
                   for s in spec.stages)
    return dataclasses.replace(spec, stages=stages)
