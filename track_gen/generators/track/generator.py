"""Band tracks: the flat :class:`TrackGenConfig`, the :class:`TrackResult` arrays and :class:`TrackGenerator`.

Band tracks are closed loops with a width, drawn per env on device.

Algorithm (one thread per env, up to ``max_attempts`` draws, all on device):

1. ``control_points`` points at jittered, evenly spaced angles around the origin, each at a
   random fraction of the largest radius that keeps it (and the band around it) in the square;
   random rotation and direction.
2. A closed uniform cubic B-spline through their hull, started at its flattest knot, resampled
   to ``num_points`` points evenly spaced in arc length (a dense-polyline walk).
3. A half-width profile (constant, or varying by ``half_width_variation``).
4. Validation (:func:`validity.track_status`): length bounds, band inside the square, turn
   radius, band self-overlap. A failed draw is retried with the next attempt's random stream;
   after ``max_attempts`` the env keeps the last draw with ``valid = 0`` and the failure bits in
   ``status``.

Steps 1-4 are the ``centerline`` stage (:mod:`centerline`). Then ``band`` (:mod:`band`) derives
tangents, normals, arc length, curvature, the loop length and the start pose; the *elevated*
variant (:mod:`elevation`) adds a smooth periodic height profile with a bounded grade; with
``max_obstacles > 0`` an ``obstacles`` stage stands pole obstacles in the band (:mod:`obstacles`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import warp as wp

from track_gen.checks import as_bool
from track_gen.generators.family import FamilyGenerator
from track_gen.generators.status import TrackStatus
from track_gen.generators.track.band import register_band_stage
from track_gen.generators.track.centerline import CENTERLINE_PARAMS, register_centerline_stages
from track_gen.generators.track.elevation import ELEVATION_FIELDS, ELEVATION_PARAMS, register_elevation_stage
from track_gen.generators.track.obstacles import (OBSTACLE_ORDERED, TRACK_OBSTACLE_FIELDS, TRACK_OBSTACLE_PARAMS,
                                                  check_track_obstacle_ranges, register_track_obstacle_stages)
from track_gen.pipeline.spec import PipelineSpec, StageSpec

__all__ = ["TrackGenConfig", "TrackGenerator", "TrackResult", "TrackStatus", "register_track_stages"]


def register_track_stages(registry) -> None:
    """Register ``track.centerline``, ``track.from_points``, ``track.band``, ``track.elevation`` and the
    obstacle stages."""
    register_centerline_stages(registry)
    register_band_stage(registry)
    register_elevation_stage(registry)
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
    chicanes: float = CENTERLINE_PARAMS["chicanes"].default
    chicane_length: float = CENTERLINE_PARAMS["chicane_length"].default
    chicane_offset: float = CENTERLINE_PARAMS["chicane_offset"].default
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
    mixture: Mapping[str, tuple[float, Mapping[str, Any]]] = field(default_factory=dict)
    """per-env mixture of parameter sets (``PipelineSpec.with_mixture``): name -> (weight, {param: value or (lo, hi)})"""
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
        spec = spec.with_randomize(self.randomize) if self.randomize else spec
        return spec.with_mixture(self.mixture) if self.mixture else spec

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
    check_ranges = staticmethod(check_track_obstacle_ranges)  # ranges that cannot hold together: refused, named

    def _make_result(self):
        r = self._results
        elevated = "elevation.z" in r
        z = r["elevation.z"] if elevated else wp.zeros_like(r["centerline.half_width"])
        status = r["elevation.status"] if elevated else r["centerline.status"]
        if "obstacles.status" in r:
            status = r["obstacles.status"]
        return TrackResult(
            xy=r["centerline.xy"], z=z, half_width=r["centerline.half_width"], tangent=r["band.tangent"],
            normal=r["band.normal"], s=r["band.s"], curvature=r["band.curvature"], length=r["band.length"],
            start_pos=r["elevation.start_pos"] if elevated else r["band.start_pos"], start_yaw=r["band.start_yaw"],
            attempts=r["centerline.attempts"], status=status, valid=self._valid,
            shape=r["centerline.shape"] if "centerline.shape" in r else wp.zeros_like(r["centerline.attempts"]),
            difficulty=self._optional("centerline.difficulty_used", self.num_envs, wp.float32),
            **self._obstacle_fields(),
        )
