"""Ready-made pipeline specs: ``presets.track(...)``, ``presets.gates(...)`` and their variants."""

from __future__ import annotations

from track_gen.pipeline.spec import PipelineSpec

__all__ = ["track", "track_car", "track_car_config", "TRACK_CAR", "track_from_points", "gates", "gates_real", "gates_real_config", "REAL_MIXTURE", "gates_from_layouts", "track_from_layouts"]


def track(num_envs: int, device: str = "cpu", **overrides) -> PipelineSpec:
    """A band-track spec: :class:`TrackGenConfig` fields as keyword overrides (``elevated=True``...)."""
    from track_gen.generators.track import TrackGenConfig

    return TrackGenConfig(num_envs=num_envs, device=device, **overrides).to_spec()


#: :func:`track_car`'s band tracks at full size (scale 1): the lengths of a race circuit [m]
TRACK_CAR = {"size": 1700.0, "half_width": 6.0, "min_length": 3000.0, "max_length": 8000.0, "min_turn_radius": 5.0,
             "clearance": 5.0}


def track_car(num_envs: int, device: str = "cpu", scale: float = 0.1, **overrides) -> PipelineSpec:
    """Band tracks shaped like race circuits, for a car: :data:`TRACK_CAR`'s lengths times ``scale`` (0.1:
    a 1/10 car such as F1TENTH; 1: full size), half widths varying +-40 %, 32 control points with deep
    radial and angular jitter, hairpins at difficulty 0.5, 1024 centreline points. At ``scale`` 0.1 the
    tracks are 300-800 m long with straights to about 150 m; they cover the shipped circuits at the
    same scale in every coverage feature but their tightest hairpins (``docs/isaac/car-racing.rst``).
    ``overrides``: :class:`TrackGenConfig` fields."""
    return track_car_config(scale, **overrides, num_envs=num_envs, device=device).to_spec()


def track_car_config(scale: float = 0.1, **overrides):
    """The :class:`TrackGenConfig` of :func:`track_car` (for a ``CourseCfg(generator=...)``); ``overrides``
    are its fields."""
    from track_gen.checks import as_real
    from track_gen.generators.track import TrackGenConfig

    s = as_real("scale", scale)
    if s <= 0.0:
        raise ValueError(f"scale: expected a length factor > 0 (0.1 for a 1/10 car), got {scale!r}")
    base = {k: v * s for k, v in TRACK_CAR.items()}
    base.update(half_width_variation=0.4, control_points=32, num_points=1024, radius_min=0.05, angle_jitter=0.45,
                max_attempts=128, difficulty=0.5, hairpin_share=0.7)
    return TrackGenConfig(**{**base, **overrides})


def gates(num_envs: int, device: str = "cpu", gate_width: float = 0.0, **overrides) -> PipelineSpec:
    """A gate-course spec. ``gate_width`` defaults to 0, which courses refuse: pass one or randomize it."""
    from track_gen.generators.gates import GateGenConfig

    return GateGenConfig(num_envs=num_envs, device=device, gate_width=gate_width, **overrides).to_spec()


#: the per-env mixture of :func:`gates_real`: name -> (weight, {gate parameter: value or (lo, hi)}).
#: Scales and shapes of the courses people race, from a lab arena to a 50 m sprint (see the docstring).
REAL_MIXTURE: dict[str, tuple[float, dict]] = {
    # a lab arena: small openings, short legs, low gates, sharp turns, thick frames (lsy_drone_racing levels)
    "arena": (0.15, {
        "gates.size": (3.5, 7.0), "gate_frames.gate_width": (0.35, 0.65), "gate_frames.frame_thickness": (0.04, 0.18),
        "gates.min_spacing": 0.6, "gates.max_spacing": 4.0, "gates.height_min": 0.6, "gates.height_max": (1.0, 1.8),
        "gates.max_turn": 1.75, "gates.yaw_jitter": 0.5, "gates.difficulty": (0.0, 1.0),
        "gates.hard_size": (3.5, 7.0), "gates.hard_min_spacing": 0.6, "gates.hard_max_spacing": 4.0,
        "gates.hard_height_max": (1.2, 2.2), "gates.crossing_clearance": 0.5, "gates.ground_start": 0.5}),
    # a hall or field course: metre-wide gates 3-8 m apart, climbs and dives (AlphaPilot, TII)
    "field": (0.35, {
        "gates.size": (9.0, 22.0), "gate_frames.gate_width": (0.6, 1.7), "gate_frames.frame_thickness": (0.04, 0.12),
        "gates.min_spacing": 2.0, "gates.max_spacing": 9.0, "gates.height_min": 1.0, "gates.height_max": (2.0, 4.0),
        "gates.difficulty": (0.0, 1.0), "gates.hard_size": (10.0, 24.0), "gates.hard_min_spacing": 2.0,
        "gates.hard_max_spacing": 10.0, "gates.hard_height_max": (4.0, 7.0), "gates.ground_start": 0.3}),
    # a hall loop: metre-wide gates in a 10 m room, short legs, low gates (indoor racing halls; the loops the
    # racer of TrackGen-Drone-Gates-Race trains on), flown one pass
    "loop": (0.2, {
        "gates.size": (8.0, 12.0), "gate_frames.gate_width": (0.8, 1.2), "gate_frames.frame_thickness": (0.04, 0.12),
        "gates.min_spacing": 1.5, "gates.max_spacing": 6.0, "gates.height_min": 0.8, "gates.height_max": (1.6, 2.4),
        "gates.difficulty": (0.0, 1.0), "gates.hard_size": (10.0, 14.0), "gates.hard_min_spacing": 1.2,
        "gates.hard_max_spacing": 8.0, "gates.hard_height_max": (3.0, 6.5), "gates.ground_start": 0.0}),
    # an outdoor sprint: long legs, gentle turns, 30-60 m long (Swift, A2RL)
    "sprint": (0.3, {
        "gates.size": (25.0, 80.0), "gate_frames.gate_width": (0.6, 1.7), "gate_frames.frame_thickness": (0.04, 0.1),
        "gates.min_spacing": 3.0, "gates.max_spacing": 30.0, "gates.height_min": 1.0, "gates.height_max": (2.0, 4.5),
        "gates.difficulty": (0.0, 1.0), "gates.hard_size": (25.0, 80.0), "gates.hard_min_spacing": 3.0,
        "gates.hard_max_spacing": 30.0, "gates.hard_height_max": (3.0, 5.0), "gates.ground_start": 0.2}),
}


def gates_real_config(**overrides):
    """The :class:`GateGenConfig` of :func:`gates_real` (for a ``CourseCfg(generator=...)``); ``overrides``
    are its fields (``mixture=`` replaces :data:`REAL_MIXTURE`)."""
    from track_gen.generators.gates import GateGenConfig

    base = {"gate_width": 1.0, "closed": False, "min_gates": 3, "max_gates": 12, "max_attempts": 32,
            "max_climb": 0.9, "hard_max_climb": 0.9, "mixture": REAL_MIXTURE,
            # pole obstacles: none to two on an easy course, one to four on a hard one, thin to thick
            "max_obstacles": 4, "obstacle_count_min": 0, "obstacle_count_max": 2, "hard_obstacle_count_min": 1,
            "hard_obstacle_count_max": 4, "obstacle_radius_min": 0.01, "obstacle_radius_max": 0.15,
            "obstacle_height_min": 1.0, "obstacle_height_max": 4.0, "obstacle_clearance": 0.3}
    return GateGenConfig(**{**base, **overrides})


def gates_real(num_envs: int, device: str = "cpu", **overrides) -> PipelineSpec:
    """Gate courses at the scales and shapes of real race tracks, mixed per env (:data:`REAL_MIXTURE`).

    Each env draws, at every regeneration, one of four kinds of course -- a lab arena (3.5-7 m,
    0.35-0.65 m openings, thick frames, gates from 0.6 m up, pole obstacles), a hall or field course
    (9-24 m, 0.6-1.7 m openings, climbs and dives up to 7 m), a hall loop (8-14 m, 0.8-1.2 m openings,
    low gates) or an outdoor sprint (25-80 m, legs up to 30 m) -- and within it draws its size,
    opening, frame, spacing, heights and difficulty (the hard shapes: figure-8s, hairpins, split-S);
    some courses start on the ground (a take-off).
    Courses are one pass (``closed=False``: every real track we know is flown once from a start
    pose), 3 to 12 gates. No real layout is an input: :func:`track_gen.layouts.coverage` checks
    that a layout lies inside the distribution.

    ``overrides``: :class:`GateGenConfig` fields (base values for what the mixture leaves alone,
    e.g. ``max_attempts``); ``mixture=`` replaces :data:`REAL_MIXTURE`.
    """
    return gates_real_config(**overrides, num_envs=num_envs, device=device).to_spec()


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
    from track_gen.generators.layouts.specs import gates_spec

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
    from track_gen.generators.layouts.specs import track_spec

    return track_spec(layouts, num_envs, device, **overrides)
