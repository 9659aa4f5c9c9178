"""Ready-made pipeline specs: ``presets.track(...)``, ``presets.gates(...)`` and their variants."""

from __future__ import annotations

from track_gen.pipeline.spec import PipelineSpec

__all__ = ["track", "track_from_points", "gates", "gates_from_layouts", "track_from_layouts"]


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

    from track_gen.generators.track import SHAPE_ONLY, TrackGenConfig

    for n in SHAPE_ONLY:
        if n in overrides:
            raise TypeError(f"track_from_points: {n} shapes random tracks and does not apply to drawn ones")
    spec = TrackGenConfig(num_envs=num_envs, device=device, control_points=control_points, **overrides).to_spec()
    cl = spec.stage("centerline")
    params = {k: v for k, v in cl.params.items() if k not in SHAPE_ONLY}
    stages = tuple(dataclasses.replace(s, kind="track.from_points", params=params) if s.name == "centerline" else s
                   for s in spec.stages)
    return dataclasses.replace(spec, stages=stages)


def gates_from_layouts(layouts, num_envs: int, device: str = "cpu", **overrides) -> PipelineSpec:
    """Gate courses from real (or exported) layouts: each env flies one of K ``GateLayout`` s.

    ``layouts``: a ``GateLayout``, a layout file, a folder of them, or a list of those (files are
    read with :func:`track_gen.layouts.load`; ``lsy_axis=`` is passed on). Each env gets one
    layout: a uniform draw keyed by its seed and generation, or ``assign=[...]`` (one index per
    env, fixed). Without randomization an env's gates equal its layout's float32 numbers exactly.
    ``overrides``: the ``gates.from_layouts`` parameters -- randomization amplitudes ``shift``,
    ``rotate``, ``jitter_pos``, ``jitter_height``, ``jitter_yaw``; rule limits ``size`` (default:
    the smallest square, to 0.5 m, that holds every layout and its randomization), ``min_spacing``,
    ``max_spacing``, ``max_turn``; capacities ``max_gates`` (default: the most gates of a layout),
    ``max_obstacles``; ``max_attempts`` -- and ``randomize={name: (lo, hi)}``.
    """
    from track_gen.generators.layout_specs import gates_spec

    return gates_spec(layouts, num_envs, device, **overrides)


def track_from_layouts(layouts, num_envs: int, device: str = "cpu", **overrides) -> PipelineSpec:
    """Band tracks from ``TrackLayout`` s (files, a folder, or layouts), one per env as for gates.

    Each layout's closed centerline is used as it is when it has ``num_points`` points (default:
    the layouts' own count when they all share one, else 256), else resampled on the host, once,
    to ``num_points`` points evenly spaced in horizontal arc length (heights and half widths
    linearly interpolated). ``overrides``: ``shift``, ``rotate``, ``size``, ``min_turn_radius``,
    ``clearance``, ``min_length``, ``max_length``, ``num_points``, ``max_attempts``, ``assign``,
    ``randomize``. Layouts with heights add an ``elevation`` stage (the heights as they are).
    """
    from track_gen.generators.layout_specs import track_spec

    return track_spec(layouts, num_envs, device, **overrides)
