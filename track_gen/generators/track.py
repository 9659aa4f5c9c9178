"""Band tracks: closed loops with a width, drawn per env on device.

Algorithm (one thread per env, up to ``max_attempts`` draws, all on device):

1. ``control_points`` points at jittered, evenly spaced angles around the origin, each at a
   random fraction of the largest radius that keeps it (and the band around it) in the square;
   random rotation and direction.
2. A closed uniform cubic B-spline through their hull, started at its flattest knot, resampled
   to ``num_points`` points evenly spaced in arc length (a dense-polyline walk).
3. A half-width profile (constant, or varying by ``half_width_variation``).
4. Validation (:func:`track_kernels.track_status`): length bounds, band inside the square, turn
   radius, band self-overlap. A failed draw is retried with the next attempt's random stream;
   after ``max_attempts`` the env keeps the last draw with ``valid = 0`` and the failure bits in
   ``status``.

Then ``band`` derives tangents, normals, arc length, curvature, the loop length and the start
pose; the *elevated* variant adds a smooth periodic height profile with a bounded grade; with
``max_obstacles > 0`` an ``obstacles`` stage stands pole obstacles in the band
(:mod:`track_obstacles`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import ClassVar, Mapping

import warp as wp

from track_gen.checks import as_bool
from track_gen.generators import track_kernels as K
from track_gen.generators.family import FamilyGenerator
from track_gen.generators.status import TrackStatus
from track_gen.generators.track_obstacles import (OBSTACLE_ORDERED, TRACK_OBSTACLE_FIELDS, TRACK_OBSTACLE_PARAMS,
                                                  check_track_obstacle_ranges, register_track_obstacle_stages)
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.pipeline.spec import PipelineSpec, StageSpec

__all__ = ["TrackGenConfig", "TrackGenerator", "TrackResult", "TrackStatus", "register_track_stages"]


def _pos(default, doc, **kw):
    return ParamSpec(default, lo=0.0, lo_open=True, doc=doc, **kw)


CENTERLINE_PARAMS = {
    "size": _pos(10.0, "side of the square the track fits in [m]"),
    "radius_min": ParamSpec(0.35, lo=0.0, hi=1.0, doc="smallest control-point radius, fraction of the largest"),
    "radius_max": ParamSpec(1.0, lo=0.0, hi=1.0, lo_open=True, doc="largest control-point radius, fraction"),
    "angle_jitter": ParamSpec(0.3, lo=0.0, hi=0.5, hi_open=True, doc="control-point angle jitter, fraction of a slot"),
    "half_width": _pos(0.4, "band half width [m]"),
    "half_width_variation": ParamSpec(0.0, lo=0.0, hi=0.9, doc="relative half-width variation along the loop"),
    "min_turn_radius": ParamSpec(0.5, lo=0.0, doc="smallest turn radius [m] (never below the half width)"),
    "clearance": ParamSpec(0.1, lo=0.0, doc="gap kept between non-adjacent parts of the band [m]"),
    "min_length": ParamSpec(10.0, lo=0.0, doc="shortest loop [m]"),
    "max_length": _pos(40.0, "longest loop [m]; sizes checkpoint capacity", static=True),
    "control_points": ParamSpec(9, lo=4, hi=64, static=True, integer=True, doc="control points per loop"),
    "num_points": ParamSpec(256, lo=16, hi=8192, static=True, integer=True, doc="centerline points"),
    "max_attempts": ParamSpec(16, lo=1, hi=1024, static=True, integer=True, doc="draws per env before valid=0"),
    "difficulty": ParamSpec(0.0, lo=0.0, hi=1.0, doc="course difficulty in [0, 1]: the share of hairpin tracks "
                                                     "and their waviness grow with it"),
    "hairpin_share": ParamSpec(0.7, lo=0.0, hi=1.0, doc="share of hairpin/chicane tracks at difficulty 1"),
}
#: parameters of random shapes only (a hand-drawn centerline has none of them)
SHAPE_ONLY = ("radius_min", "radius_max", "angle_jitter", "max_attempts", "difficulty", "hairpin_share")

ELEVATION_PARAMS = {
    "base_height": ParamSpec(1.0, lo=0.0, doc="mean height of the centerline [m]"),
    "amplitude": ParamSpec(0.6, lo=0.0, doc="peak-to-mean height variation [m] (split over three harmonics)"),
    "max_grade": _pos(0.15, "largest |dz/ds| of the height profile"),
}
#: TrackGenConfig field -> elevation stage parameter. Every other config field (but num_envs, device,
#: elevated, randomize) is the centerline parameter of its name. The flat config says which height
#: it means (``height_amplitude``); in the stage, ``elevation.amplitude`` is unambiguous.
ELEVATION_FIELDS = {"base_height": "base_height", "height_amplitude": "amplitude", "max_grade": "max_grade"}


def _launch_centerline(ctx, use_points: bool = False):
    st = ctx.static
    n, k = st["num_points"], st["control_points"]
    points = ctx.input("points") if use_points else ctx.output("control")
    shape = ("size", "size", "size") if use_points else ("radius_min", "radius_max", "angle_jitter")  # unused if drawn
    dense = k * max(2, math.ceil(2 * n / k))
    p = ctx.param
    level = (p("size"), p("size"), p("size")) if use_points else (
        p("difficulty"), ctx.input("difficulty_offset"), p("hairpin_share"))  # unused when drawn by hand
    wp.launch(
        K.centerline_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.active, ctx.seeds, ctx.generation, ctx.key, p("size"), *(p(n) for n in shape), p("half_width"), p("half_width_variation"), p("min_turn_radius"), p("clearance"),
            p("min_length"), float(st["max_length"]), k, n, dense, 1 if use_points else st["max_attempts"],
            points, int(use_points), *level,
        ],
        outputs=[ctx.output("control"), ctx.output("xy"), ctx.output("half_width"), ctx.output("attempts"),
                 ctx.output("status"), ctx.output("shape"), ctx.output("difficulty_used"), ctx.valid],
        device=ctx.device,
    )


def _launch_band(ctx):
    wp.launch(
        K.band_kernel, dim=ctx.num_envs,
        inputs=[ctx.active, ctx.input("xy"), ctx.capacity("points")],
        outputs=[ctx.output(n) for n in ("tangent", "normal", "s", "curvature", "length", "start_pos", "start_yaw")],
        device=ctx.device,
    )


def _launch_elevation(ctx):
    p = ctx.param
    wp.launch(
        K.elevation_kernel, dim=ctx.num_envs,
        inputs=[ctx.active, ctx.seeds, ctx.generation, ctx.key, ctx.input("xy"), ctx.input("s"), ctx.input("length"),
                p("base_height"), p("amplitude"), p("max_grade"), ctx.capacity("points"), ctx.input("status")],
        outputs=[ctx.output("z"), ctx.output("start_pos"), ctx.output("status"), ctx.valid],
        device=ctx.device,
    )


PTS = ("env", "points")

_CENTERLINE_OUTPUTS = {
    "control": ArraySpec(wp.vec2f, ("env", "control_points"), doc="control points of the accepted draw [m]"),
    "xy": ArraySpec(wp.vec2f, PTS, doc="centerline, evenly spaced, point 0 on the start line [m]"),
    "half_width": ArraySpec(wp.float32, PTS, doc="band half width at each point [m]"),
    "attempts": ArraySpec(wp.int32, doc="draws used"),
    "status": ArraySpec(wp.int32, doc="TrackStatus bits of the last draw (0: valid)"),
    "shape": ArraySpec(wp.int32, doc="shape drawn: 0 loop, 2 hairpin (thin loop with hairpins and chicanes)"),
    "difficulty_used": ArraySpec(wp.float32, doc="the difficulty this track was drawn at, in [0, 1]"),
}


def register_track_stages(registry) -> None:
    registry.register(
        "track.centerline", _launch_centerline, params=CENTERLINE_PARAMS, _builtin=True,
        capacities=lambda s: {"points": s["num_points"], "control_points": s["control_points"]},
        inputs={"difficulty_offset": ArraySpec(
            wp.float32, doc="[E] per-env difficulty offset you write in place; the env's difficulty is "
                            "clamp(centerline.difficulty + offset, 0, 1)")},
        outputs=_CENTERLINE_OUTPUTS,
    )
    drawn_params = {n: p for n, p in CENTERLINE_PARAMS.items() if n not in SHAPE_ONLY}
    registry.register(
        "track.from_points", lambda ctx: _launch_centerline(ctx, use_points=True), params=drawn_params,
        _builtin=True, capacities=lambda s: {"points": s["num_points"], "control_points": s["control_points"]},
        inputs={"points": ArraySpec(wp.vec2f, ("env", "control_points"),
                                    doc="your control points, in order around the loop [m]; written in place")},
        outputs={n: a for n, a in _CENTERLINE_OUTPUTS.items()},
    )
    registry.register(
        "track.band", _launch_band, _builtin=True,
        inputs={"xy": ArraySpec(wp.vec2f, PTS, source="centerline.xy")},
        outputs={
            "tangent": ArraySpec(wp.vec2f, PTS, doc="unit tangent (direction of travel)"),
            "normal": ArraySpec(wp.vec2f, PTS, doc="unit normal, to the left of travel"),
            "s": ArraySpec(wp.float32, PTS, doc="arc length from the start line [m]"),
            "curvature": ArraySpec(wp.float32, PTS, doc="signed curvature [1/m], > 0 turning left"),
            "length": ArraySpec(wp.float32, doc="loop length [m]"),
            "start_pos": ArraySpec(wp.vec3f, doc="start position (point 0) [m]"),
            "start_yaw": ArraySpec(wp.float32, doc="start heading [rad]"),
        },
    )
    registry.register(
        "track.elevation", _launch_elevation, params=ELEVATION_PARAMS, _builtin=True,
        inputs={
            "xy": ArraySpec(wp.vec2f, PTS, source="centerline.xy"),
            "s": ArraySpec(wp.float32, PTS, source="band.s"),
            "length": ArraySpec(wp.float32, source="band.length"),
            "status": ArraySpec(wp.int32, source="centerline.status"),
        },
        outputs={
            "z": ArraySpec(wp.float32, PTS, doc="centerline height [m]"),
            "start_pos": ArraySpec(wp.vec3f, doc="start position with its height [m]"),
            "status": ArraySpec(wp.int32, doc="TrackStatus bits: the centerline's plus GROUND, GRADE"),
        },
    )
    register_track_obstacle_stages(registry)


@dataclass(frozen=True)
class TrackGenConfig:
    """Flat configuration of a band-track generator (every field maps to one stage parameter).

    Lengths in metres, angles in radians. ``randomize`` maps global parameter names
    (``"centerline.size"``) to ``(lo, hi)`` ranges drawn per env per generation.
    """

    # defaults: the stage parameters' (CENTERLINE_PARAMS / ELEVATION_PARAMS), the one place they live
    num_envs: int = 64
    device: str = "cpu"
    size: float = CENTERLINE_PARAMS["size"].default
    num_points: int = CENTERLINE_PARAMS["num_points"].default
    control_points: int = CENTERLINE_PARAMS["control_points"].default
    radius_min: float = CENTERLINE_PARAMS["radius_min"].default
    radius_max: float = CENTERLINE_PARAMS["radius_max"].default
    angle_jitter: float = CENTERLINE_PARAMS["angle_jitter"].default
    half_width: float = CENTERLINE_PARAMS["half_width"].default
    half_width_variation: float = CENTERLINE_PARAMS["half_width_variation"].default
    min_turn_radius: float = CENTERLINE_PARAMS["min_turn_radius"].default
    clearance: float = CENTERLINE_PARAMS["clearance"].default
    min_length: float = CENTERLINE_PARAMS["min_length"].default
    max_length: float = CENTERLINE_PARAMS["max_length"].default
    max_attempts: int = CENTERLINE_PARAMS["max_attempts"].default
    difficulty: float = CENTERLINE_PARAMS["difficulty"].default
    hairpin_share: float = CENTERLINE_PARAMS["hairpin_share"].default
    elevated: bool = False
    base_height: float = ELEVATION_PARAMS[ELEVATION_FIELDS["base_height"]].default
    height_amplitude: float = ELEVATION_PARAMS[ELEVATION_FIELDS["height_amplitude"]].default
    max_grade: float = ELEVATION_PARAMS[ELEVATION_FIELDS["max_grade"]].default
    # obstacles (the "obstacles" stage, present when max_obstacles > 0; fields map by TRACK_OBSTACLE_FIELDS)
    max_obstacles: int = 0
    obstacle_count_min: int = TRACK_OBSTACLE_PARAMS["count_min"].default
    obstacle_count_max: int = TRACK_OBSTACLE_PARAMS["count_max"].default
    hard_obstacle_count_min: int = TRACK_OBSTACLE_PARAMS["hard_count_min"].default
    hard_obstacle_count_max: int = TRACK_OBSTACLE_PARAMS["hard_count_max"].default
    obstacle_radius_min: float = TRACK_OBSTACLE_PARAMS["radius_min"].default
    obstacle_radius_max: float = TRACK_OBSTACLE_PARAMS["radius_max"].default
    obstacle_height_min: float = TRACK_OBSTACLE_PARAMS["height_min"].default
    obstacle_height_max: float = TRACK_OBSTACLE_PARAMS["height_max"].default
    obstacle_clearance: float = TRACK_OBSTACLE_PARAMS["clearance"].default
    obstacle_gap: float = TRACK_OBSTACLE_PARAMS["gap"].default
    obstacle_tries: int = TRACK_OBSTACLE_PARAMS["tries"].default
    randomize: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    family: ClassVar[str] = "track"

    def to_spec(self) -> PipelineSpec:
        # every field is checked (named as its parameter) before anything reads it; the elevation
        # fields even when the track is flat
        cl = {n: CENTERLINE_PARAMS[n].check(f"centerline.{n}", getattr(self, n)) for n in CENTERLINE_PARAMS}
        el = {param: ELEVATION_PARAMS[param].check(f"elevation.{param}" if f == param else f"{f} (elevation.{param})",
                                                   getattr(self, f)) for f, param in ELEVATION_FIELDS.items()}
        elevated = as_bool("elevated", self.elevated)
        stages = [StageSpec("centerline", "track.centerline", cl), StageSpec("band", "track.band")]
        if elevated:
            stages.append(StageSpec("elevation", "track.elevation", el))
        if self.max_obstacles != 0:
            obs = {p: TRACK_OBSTACLE_PARAMS[p].check(f"{f} (obstacles.{p})", getattr(self, f))
                   for f, p in TRACK_OBSTACLE_FIELDS.items()}
            kind = "track.obstacles_elevated" if elevated else "track.obstacles"
            stages.append(StageSpec("obstacles", kind, obs))
        spec = PipelineSpec(
            self.num_envs, self.device, tuple(stages), family="track",
            max_loop_length=None if elevated else float(cl["max_length"]),
        )
        return spec.with_randomize(self.randomize) if self.randomize else spec

    def with_randomize(self, ranges: Mapping[str, tuple[float, float]]) -> "TrackGenConfig":
        return dataclasses.replace(self, randomize={**self.randomize, **dict(ranges)})


@dataclass
class TrackResult:
    """The committed band-track layout; every array is stable and rewritten in place.

    Shapes: E envs, N = ``layout.points`` centerline points. Lengths in metres, in the env frame
    (the square is centred on the origin).
    """

    xy: wp.array
    """[E, N] vec2f centerline points, evenly spaced; point 0 is the start line."""
    z: wp.array
    """[E, N] float32 centerline height (zeros for flat tracks)."""
    half_width: wp.array
    """[E, N] float32 band half width."""
    tangent: wp.array
    """[E, N] vec2f unit tangent."""
    normal: wp.array
    """[E, N] vec2f unit normal, left of travel."""
    s: wp.array
    """[E, N] float32 arc length from the start line."""
    curvature: wp.array
    """[E, N] float32 signed curvature [1/m]."""
    length: wp.array
    """[E] float32 loop length."""
    start_pos: wp.array
    """[E] vec3f start position."""
    start_yaw: wp.array
    """[E] float32 start heading [rad]."""
    attempts: wp.array
    """[E] int32 draws used."""
    status: wp.array
    """[E] int32 :class:`TrackStatus` bits of the kept draw."""
    valid: wp.array
    """[E] int32, 1 when every constraint holds."""
    shape: wp.array = None
    """[E] int32 shape drawn: 0 loop, 2 hairpin (a thin loop with hairpins and an S-bend)."""
    difficulty: wp.array = None
    """[E] float32 the difficulty each track was drawn at (``centerline.difficulty`` + offset, in [0, 1])."""
    obstacle_pos: wp.array = None
    """[E, K] vec3f pole base centres on the ground (z = 0) [m], each pole standing in the band;
    rows >= obstacle_count zero (K = 0 without an obstacles stage)."""
    obstacle_radius: wp.array = None
    """[E, K] float32 pole radii [m]."""
    obstacle_height: wp.array = None
    """[E, K] float32 pole heights above the ground [m]."""
    obstacle_count: wp.array = None
    """[E] int32 poles on each track."""


_ORDERED = (("centerline.radius_min", "centerline.radius_max"),
            ("centerline.min_length", "centerline.max_length")) + OBSTACLE_ORDERED


class TrackGenerator(FamilyGenerator):
    """Band-track generator: the generator surface over a track :class:`PipelineSpec`.

    Args:
        source: a :class:`TrackGenConfig` or a ``family="track"`` :class:`PipelineSpec`.
        seeds, stream, prepare, registry, out, env_offset: as :class:`~track_gen.pipeline.Program`.
    """

    family = "track"
    config_type = TrackGenConfig
    required_stages = ("centerline", "band")
    ordered = _ORDERED

    def __init__(self, source, *, prepare=True, **kwargs):
        super().__init__(source, prepare=False, **kwargs)
        check_track_obstacle_ranges(dict(self.params))  # ranges that cannot hold together: refused, named
        if prepare:
            self.prepare()

    def _check_param_set(self, name, value):
        super()._check_param_set(name, value)
        check_track_obstacle_ranges({**dict(self.params), name: value})

    def _make_result(self):
        r = self._results
        E, dev = self.num_envs, self.device
        elevated = "elevation.z" in r
        if elevated:
            z = r["elevation.z"]
        else:
            z = wp.zeros_like(r["centerline.half_width"])
        status = r["elevation.status"] if elevated else r["centerline.status"]
        if "obstacles.status" in r:
            status = r["obstacles.status"]

        def opt(name, shape, dtype):
            return r[name] if name in r else wp.zeros(shape, dtype=dtype, device=dev)
        return TrackResult(
            xy=r["centerline.xy"], z=z, half_width=r["centerline.half_width"], tangent=r["band.tangent"],
            normal=r["band.normal"], s=r["band.s"], curvature=r["band.curvature"], length=r["band.length"],
            start_pos=r["elevation.start_pos"] if elevated else r["band.start_pos"], start_yaw=r["band.start_yaw"],
            attempts=r["centerline.attempts"], status=status, valid=self._valid,
            shape=r["centerline.shape"] if "centerline.shape" in r else wp.zeros_like(r["centerline.attempts"]),
            difficulty=opt("centerline.difficulty_used", E, wp.float32),
            obstacle_pos=opt("obstacles.pos", (E, 0), wp.vec3f),
            obstacle_radius=opt("obstacles.radius", (E, 0), wp.float32),
            obstacle_height=opt("obstacles.height", (E, 0), wp.float32),
            obstacle_count=opt("obstacles.count", E, wp.int32),
        )
