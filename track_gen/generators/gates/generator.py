"""Gate courses: the flat :class:`GateGenConfig`, the :class:`GateResult` arrays and :class:`GateGenerator`.

The stages: ``gates.layout`` (:mod:`layout`: gates along a smooth loop or an open sprint, validated
by :mod:`validity` and :mod:`column`), ``gates.frames`` (:mod:`frames`: frame sizes and gate
normals) and, with ``max_obstacles > 0``, ``gates.obstacles`` (:mod:`obstacles`: pole obstacles).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import warp as wp

from track_gen.checks import as_bool
from track_gen.generators.family import FamilyGenerator
from track_gen.generators.gates.checks import check_gate_ranges
from track_gen.generators.gates.frames import FRAME_PARAMS, register_frames_stage
from track_gen.generators.gates.layout import LAYOUT_PARAMS, register_layout_stage
from track_gen.generators.gates.obstacles import (OBSTACLE_FIELDS, OBSTACLE_ORDERED, OBSTACLE_PARAMS,
                                                  register_obstacle_stage)
from track_gen.generators.status import GateStatus
from track_gen.pipeline.spec import PipelineSpec, StageSpec

__all__ = ["GateGenConfig", "GateGenerator", "GateResult", "GateStatus", "register_gate_stages"]


def register_gate_stages(registry) -> None:
    """Register ``gates.layout``, ``gates.frames`` and ``gates.obstacles``."""
    register_layout_stage(registry)
    register_frames_stage(registry)
    register_obstacle_stage(registry)


@dataclass(frozen=True)
class GateGenConfig:
    """Flat configuration of a gate-course generator (each field maps to one stage parameter).

    ``gate_width`` defaults to 0, which no course accepts: pass one, or randomize
    ``"gate_frames.gate_width"``. ``closed=False`` draws open sprint courses.
    """

    # defaults: the stage parameters' (LAYOUT_PARAMS / FRAME_PARAMS), the one place they live;
    # every field but num_envs, device, randomize is the layout or frame parameter of its name
    num_envs: int = 64
    device: str = "cpu"
    size: float = LAYOUT_PARAMS["size"].default
    min_gates: int = LAYOUT_PARAMS["min_gates"].default
    max_gates: int = LAYOUT_PARAMS["max_gates"].default
    min_spacing: float = LAYOUT_PARAMS["min_spacing"].default
    max_spacing: float = LAYOUT_PARAMS["max_spacing"].default
    height_min: float = LAYOUT_PARAMS["height_min"].default
    height_max: float = LAYOUT_PARAMS["height_max"].default
    yaw_jitter: float = LAYOUT_PARAMS["yaw_jitter"].default
    max_turn: float = LAYOUT_PARAMS["max_turn"].default
    spacing_jitter: float = LAYOUT_PARAMS["spacing_jitter"].default
    radius_min: float = LAYOUT_PARAMS["radius_min"].default
    radius_max: float = LAYOUT_PARAMS["radius_max"].default
    angle_jitter: float = LAYOUT_PARAMS["angle_jitter"].default
    control_points: int = LAYOUT_PARAMS["control_points"].default
    closed: bool = bool(LAYOUT_PARAMS["closed"].default)  # the stage takes it as an int
    max_attempts: int = LAYOUT_PARAMS["max_attempts"].default
    max_climb: float = LAYOUT_PARAMS["max_climb"].default
    crossing_clearance: float = LAYOUT_PARAMS["crossing_clearance"].default
    ground_start: float = LAYOUT_PARAMS["ground_start"].default
    difficulty: float = LAYOUT_PARAMS["difficulty"].default
    hard_size: float = LAYOUT_PARAMS["hard_size"].default
    hard_min_spacing: float = LAYOUT_PARAMS["hard_min_spacing"].default
    hard_max_spacing: float = LAYOUT_PARAMS["hard_max_spacing"].default
    hard_height_max: float = LAYOUT_PARAMS["hard_height_max"].default
    hard_max_turn: float = LAYOUT_PARAMS["hard_max_turn"].default
    hard_max_climb: float = LAYOUT_PARAMS["hard_max_climb"].default
    figure8_share: float = LAYOUT_PARAMS["figure8_share"].default
    hairpin_share: float = LAYOUT_PARAMS["hairpin_share"].default
    split_s_share: float = LAYOUT_PARAMS["split_s_share"].default
    shuttle_share: float = LAYOUT_PARAMS["shuttle_share"].default
    uturn_gates: float = LAYOUT_PARAMS["uturn_gates"].default
    gate_width: float = FRAME_PARAMS["gate_width"].default
    gate_height: float = FRAME_PARAMS["gate_height"].default
    frame_thickness: float = FRAME_PARAMS["frame_thickness"].default
    # obstacles (the "obstacles" stage, present when max_obstacles > 0; fields map by OBSTACLE_FIELDS)
    max_obstacles: int = 0
    obstacle_count_min: int = OBSTACLE_PARAMS["count_min"].default
    obstacle_count_max: int = OBSTACLE_PARAMS["count_max"].default
    hard_obstacle_count_min: int = OBSTACLE_PARAMS["hard_count_min"].default
    hard_obstacle_count_max: int = OBSTACLE_PARAMS["hard_count_max"].default
    obstacle_radius_min: float = OBSTACLE_PARAMS["radius_min"].default
    obstacle_radius_max: float = OBSTACLE_PARAMS["radius_max"].default
    obstacle_height_min: float = OBSTACLE_PARAMS["height_min"].default
    obstacle_height_max: float = OBSTACLE_PARAMS["height_max"].default
    obstacle_clearance: float = OBSTACLE_PARAMS["clearance"].default
    obstacle_tries: int = OBSTACLE_PARAMS["tries"].default
    randomize: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    mixture: Mapping[str, tuple[float, Mapping[str, Any]]] = field(default_factory=dict)
    """per-env mixture of parameter sets (``PipelineSpec.with_mixture``): name -> (weight, {param: value or (lo, hi)})"""
    family: ClassVar[str] = "gates"

    def to_spec(self) -> PipelineSpec:
        # every field is checked (named as its parameter) before anything reads it
        lay = {n: LAYOUT_PARAMS[n].check(f"gates.{n}", getattr(self, n)) for n in LAYOUT_PARAMS
               if n not in ("dense_per_span", "closed")}
        lay["closed"] = int(as_bool("closed", self.closed))
        frames = {n: FRAME_PARAMS[n].check(f"gate_frames.{n}", getattr(self, n)) for n in FRAME_PARAMS}
        stages = [StageSpec("gates", "gates.layout", lay), StageSpec("gate_frames", "gates.frames", frames)]
        if self.max_obstacles != 0:
            obs = {p: OBSTACLE_PARAMS[p].check(f"{f} (obstacles.{p})", getattr(self, f))
                   for f, p in OBSTACLE_FIELDS.items()}
            obs["closed"] = lay["closed"]
            stages.append(StageSpec("obstacles", "gates.obstacles", obs))
        spec = PipelineSpec(self.num_envs, self.device, tuple(stages), family="gates")
        spec = spec.with_randomize(self.randomize) if self.randomize else spec
        return spec.with_mixture(self.mixture) if self.mixture else spec

    def with_randomize(self, ranges: Mapping[str, tuple[float, float]]) -> "GateGenConfig":
        return dataclasses.replace(self, randomize={**self.randomize, **dict(ranges)})


@dataclass
class GateResult:
    """The committed gate-course layout (E envs, G = ``layout.gates`` gate slots), env frame [m]."""

    pos: wp.array
    """[E, G] vec3f gate centres; rows >= count are zero."""
    yaw: wp.array
    """[E, G] float32 headings: the direction a gate is passed in [rad]."""
    normal: wp.array
    """[E, G] vec3f unit normals (cos yaw, sin yaw, 0)."""
    count: wp.array
    """[E] int32 gates in each course."""
    width: wp.array
    """[E] float32 opening width."""
    height: wp.array
    """[E] float32 opening height."""
    thickness: wp.array
    """[E] float32 frame bar thickness."""
    length: wp.array
    """[E] float32 length of the path the gates were placed on."""
    start_pos: wp.array
    """[E] vec3f start position (half a spacing before gate 0 on a loop; the path start on a sprint)."""
    start_yaw: wp.array
    """[E] float32 start heading."""
    attempts: wp.array
    """[E] int32 draws used."""
    status: wp.array
    """[E] int32 :class:`GateStatus` bits of the kept draw."""
    valid: wp.array
    """[E] int32, 1 when every constraint holds."""
    closed: bool = True
    """True for loops, False for open sprints (static)."""
    stacked: wp.array = None
    """[E, G] int32, 1 where leg g -> g+1 is a split-S: gates g and g+1 stacked, passed in opposite directions."""
    shape: wp.array = None
    """[E] int32 shape drawn: 0 loop, 1 figure-8, 2 hairpin, 3 split-S, 4 shuttle (``shapes.SHAPE_NAMES``)."""
    difficulty: wp.array = None
    """[E] float32 the difficulty each course was drawn at (``gates.difficulty`` + offset, in [0, 1])."""
    arena: wp.array = None
    """[E] float32 side of the square at that difficulty [m]."""
    obstacle_pos: wp.array = None
    """[E, K] vec3f pole base centres on the ground (z = 0) [m]; rows >= obstacle_count zero (K = 0
    without an obstacles stage)."""
    obstacle_radius: wp.array = None
    """[E, K] float32 pole radii [m]."""
    obstacle_height: wp.array = None
    """[E, K] float32 pole heights [m]."""
    obstacle_count: wp.array = None
    """[E] int32 poles in each course."""


_ORDERED = (
    ("gates.radius_min", "gates.radius_max"),
    ("gates.min_spacing", "gates.max_spacing"),
    ("gates.height_min", "gates.height_max"),
    ("gates.min_gates", "gates.max_gates"),
    ("gates.hard_min_spacing", "gates.hard_max_spacing"),
    ("gates.height_min", "gates.hard_height_max"),
) + OBSTACLE_ORDERED


class GateGenerator(FamilyGenerator):
    """Gate-course generator over a :class:`GateGenConfig` or a ``family="gates"`` spec."""

    family = "gates"
    config_type = GateGenConfig
    required_stages = ("gates", "gate_frames")
    ordered = _ORDERED
    check_ranges = staticmethod(check_gate_ranges)  # ranges that cannot hold together: refused, named

    def _make_result(self):
        r = self._results
        E, opt = self.num_envs, self._optional
        return GateResult(
            pos=r["gates.pos"], yaw=r["gates.yaw"], normal=r["gate_frames.normal"], count=r["gates.count"],
            width=r["gate_frames.width"], height=r["gate_frames.height"], thickness=r["gate_frames.thickness"],
            length=r["gates.length"], start_pos=r["gates.start_pos"], start_yaw=r["gates.start_yaw"],
            attempts=r["gates.attempts"], status=r["obstacles.status"] if "obstacles.status" in r else r["gates.status"],
            valid=self._valid, closed=bool(self.params["gates.closed"]),
            stacked=opt("gates.stacked", (E, r["gates.pos"].shape[1]), wp.int32), shape=opt("gates.shape", E, wp.int32),
            difficulty=opt("gates.difficulty_used", E, wp.float32), arena=opt("gates.arena", E, wp.float32),
            **self._obstacle_fields(),
        )
