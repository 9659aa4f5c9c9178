"""Gate courses: gates along a smooth loop (or an open sprint), drawn per env on device.

Algorithm (one thread per env, up to ``max_attempts`` draws): control points as for a band
track, a closed uniform cubic B-spline through their hull, its length (a sprint uses the first
80% of the loop: an open course whose ends stay apart); a gate count in [min_gates, max_gates]; gates at evenly spaced arc lengths with
jitter, each at a random height, its heading the curve tangent plus jitter. Validation
(:func:`gate_kernels.gates_status`): spacing bounds, no crowding, bounded turn into and out of
every leg, frames inside the square and above the ground, an opening wider than 0; split-S courses
also keep every other leg out of the stacked column (:mod:`gate_column`). The ``gate_frames`` stage publishes
the frame dimensions per env (dynamic, randomizable) and each gate's normal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import warp as wp

from track_gen.checks import as_bool
from track_gen.generators import gate_kernels as K
from track_gen.generators.family import FamilyGenerator
from track_gen.generators.gate_checks import check_gate_ranges
from track_gen.generators.obstacles import OBSTACLE_FIELDS, OBSTACLE_ORDERED, OBSTACLE_PARAMS, register_obstacle_stage
from track_gen.generators.status import GateStatus
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.pipeline.spec import PipelineSpec, StageSpec

__all__ = ["GateGenConfig", "GateGenerator", "GateResult", "GateStatus", "register_gate_stages"]


LAYOUT_PARAMS = {
    "size": ParamSpec(10.0, lo=0.0, lo_open=True, doc="side of the square the gates fit in [m]"),
    "radius_min": ParamSpec(0.45, lo=0.0, hi=1.0, doc="smallest control-point radius, fraction of the largest"),
    "radius_max": ParamSpec(0.9, lo=0.0, hi=1.0, lo_open=True, doc="largest control-point radius, fraction"),
    "angle_jitter": ParamSpec(0.3, lo=0.0, hi=0.5, hi_open=True, doc="control-point angle jitter, fraction of a slot"),
    "spacing_jitter": ParamSpec(0.3, lo=0.0, hi=0.9, doc="gate arc-position jitter, fraction of the mean spacing"),
    "min_spacing": ParamSpec(1.5, lo=0.0, lo_open=True, doc="shortest distance between consecutive gates [m]"),
    "max_spacing": ParamSpec(6.0, lo=0.0, lo_open=True, doc="longest distance between consecutive gates [m]"),
    "height_min": ParamSpec(0.8, lo=0.0, doc="lowest gate centre [m]"),
    "height_max": ParamSpec(2.0, lo=0.0, doc="highest gate centre [m]"),
    "yaw_jitter": ParamSpec(0.3, lo=0.0, hi=3.1416, doc="gate heading jitter about the tangent [rad]"),
    "max_turn": ParamSpec(1.2, lo=0.0, lo_open=True, hi=3.1416, doc="largest angle between a gate and its legs [rad]"),
    "max_climb": ParamSpec(1.5708, lo=0.0, lo_open=True, hi=1.5708,
                           doc="steepest leg (atan2(|dz|, plan length)) [rad]; 1.5708 = no limit"),
    "crossing_clearance": ParamSpec(1.5, lo=0.0, doc="height gap between two legs crossing in plan view [m]"),
    "ground_start": ParamSpec(0.0, lo=0.0, hi=1.0, doc="share of courses whose start is on the ground (z = 0): "
                                                         "a take-off; the others start at gate 0's height"),
    # one difficulty knob: each field below is the value at difficulty 1; the field above of the same
    # name (size, min_spacing, ...) is the value at difficulty 0; in between: linear
    "difficulty": ParamSpec(0.0, lo=0.0, hi=1.0, doc="course difficulty in [0, 1] (0: the fields above)"),
    "hard_size": ParamSpec(12.0, lo=0.0, lo_open=True, doc="size at difficulty 1 [m]"),
    "hard_min_spacing": ParamSpec(1.2, lo=0.0, lo_open=True, doc="min_spacing at difficulty 1 [m]"),
    "hard_max_spacing": ParamSpec(8.0, lo=0.0, lo_open=True, doc="max_spacing at difficulty 1 [m]"),
    "hard_height_max": ParamSpec(5.5, lo=0.0, doc="height_max at difficulty 1 [m]"),
    "hard_max_turn": ParamSpec(1.75, lo=0.0, lo_open=True, hi=3.1416, doc="max_turn at difficulty 1 [rad]"),
    "hard_max_climb": ParamSpec(0.9, lo=0.0, lo_open=True, hi=1.5708, doc="max_climb at difficulty 1 [rad]"),
    "figure8_share": ParamSpec(0.35, lo=0.0, hi=1.0, doc="share of figure-8 courses at difficulty 1"),
    "hairpin_share": ParamSpec(0.2, lo=0.0, hi=1.0, doc="share of hairpin (thin-loop) courses at difficulty 1"),
    "split_s_share": ParamSpec(0.35, lo=0.0, hi=1.0, doc="share of split-S courses at difficulty 1"),
    "min_gates": ParamSpec(6, lo=2, hi=256, static=True, integer=True, doc="fewest gates"),
    "max_gates": ParamSpec(10, lo=2, hi=256, static=True, integer=True, doc="most gates (capacity)"),
    "control_points": ParamSpec(8, lo=4, hi=64, static=True, integer=True, doc="control points of the path"),
    "dense_per_span": ParamSpec(32, lo=4, hi=1024, static=True, integer=True, doc="samples per spline span"),
    "closed": ParamSpec(1, lo=0, hi=1, static=True, integer=True, doc="1: a loop; 0: an open sprint"),
    "max_attempts": ParamSpec(16, lo=1, hi=1024, static=True, integer=True, doc="draws per env before valid=0"),
}

FRAME_PARAMS = {
    "gate_width": ParamSpec(0.0, lo=0.0, doc="inner opening width [m] (a course needs > 0)"),
    "gate_height": ParamSpec(0.0, lo=0.0, doc="inner opening height [m]; 0 means equal to the width"),
    "frame_thickness": ParamSpec(0.05, lo=0.0, doc="frame bar thickness [m]"),
}


def _launch_layout(ctx):
    st = ctx.static
    p = ctx.param
    wp.launch(
        K.layout_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.active, ctx.seeds, ctx.generation, ctx.key,
            *(p(n) for n in ("size", "radius_min", "radius_max", "angle_jitter", "spacing_jitter", "min_spacing",
                             "max_spacing", "height_min", "height_max", "yaw_jitter", "max_turn", "max_climb",
                             "crossing_clearance", "difficulty")),
            ctx.input("difficulty_offset"),
            *(p(n) for n in ("hard_size", "hard_min_spacing", "hard_max_spacing", "hard_height_max", "hard_max_turn",
                             "hard_max_climb", "figure8_share", "hairpin_share", "split_s_share")),
            p("gate_frames.gate_width"), p("gate_frames.gate_height"), p("gate_frames.frame_thickness"),
            st["min_gates"], st["max_gates"], st["control_points"], st["control_points"] * st["dense_per_span"],
            st["closed"], st["max_attempts"],
        ],
        outputs=[ctx.output(n) for n in ("control", "pos", "yaw", "stacked", "count", "length", "start_pos",
                                         "start_yaw", "attempts", "status", "shape", "difficulty_used", "arena")]
        + [ctx.valid],
        device=ctx.device,
    )
    wp.launch(K.ground_start_kernel, dim=ctx.num_envs, inputs=[ctx.key, p("ground_start"), ctx.active, ctx.seeds,
                                                               ctx.generation],
              outputs=[ctx.output("start_pos")], device=ctx.device)


def _launch_frames(ctx):
    p = ctx.param
    wp.launch(
        K.frames_kernel, dim=ctx.num_envs,
        inputs=[ctx.active, ctx.input("yaw"), p("gate_width"), p("gate_height"), p("frame_thickness"),
                ctx.capacity("gates")],
        outputs=[ctx.output("width"), ctx.output("height"), ctx.output("thickness"), ctx.output("normal")],
        device=ctx.device,
    )


GATES = ("env", "gates")


def register_gate_stages(registry) -> None:
    registry.register(
        "gates.layout", _launch_layout, params=LAYOUT_PARAMS, _builtin=True,
        reads=("gate_frames.gate_width", "gate_frames.gate_height", "gate_frames.frame_thickness"),
        capacities=lambda s: {"gates": s["max_gates"], "control_points": s["control_points"]},
        inputs={"difficulty_offset": ArraySpec(
            wp.float32, doc="[E] per-env difficulty offset you write in place (a curriculum's level); the env's "
                            "difficulty is clamp(gates.difficulty + offset, 0, 1)")},
        outputs={
            "control": ArraySpec(wp.vec2f, ("env", "control_points"), doc="control points of the path [m]"),
            "pos": ArraySpec(wp.vec3f, GATES, doc="gate centres [m]; rows >= count are zero"),
            "yaw": ArraySpec(wp.float32, GATES, doc="gate headings (direction of passage) [rad]"),
            "count": ArraySpec(wp.int32, doc="gates in this course"),
            "length": ArraySpec(wp.float32, doc="length of the path through the gates [m]"),
            "start_pos": ArraySpec(wp.vec3f, doc="start position, before gate 0 [m]"),
            "start_yaw": ArraySpec(wp.float32, doc="start heading [rad]"),
            "attempts": ArraySpec(wp.int32, doc="draws used"),
            "status": ArraySpec(wp.int32, doc="GateStatus bits of the last draw (0: valid)"),
            "stacked": ArraySpec(wp.int32, GATES, doc="1 where leg g -> g+1 is a split-S (a stacked pair)"),
            "shape": ArraySpec(wp.int32, doc="shape drawn: 0 loop, 1 figure-8, 2 hairpin, 3 split-S"),
            "difficulty_used": ArraySpec(wp.float32, doc="the difficulty this course was drawn at, in [0, 1]"),
            "arena": ArraySpec(wp.float32, doc="side of the square at that difficulty [m]"),
        },
    )
    registry.register(
        "gates.frames", _launch_frames, params=FRAME_PARAMS, _builtin=True,
        inputs={"yaw": ArraySpec(wp.float32, GATES, source="gates.yaw")},
        outputs={
            "width": ArraySpec(wp.float32, doc="opening width of this env's gates [m]"),
            "height": ArraySpec(wp.float32, doc="opening height [m]"),
            "thickness": ArraySpec(wp.float32, doc="frame bar thickness [m]"),
            "normal": ArraySpec(wp.vec3f, GATES, doc="unit normal of each gate (direction of passage)"),
        },
    )
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
    """[E] int32 shape drawn: 0 loop, 1 figure-8, 2 hairpin, 3 split-S (``gate_shapes.SHAPE_NAMES``)."""
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

    def __init__(self, source, *, prepare=True, **kwargs):
        super().__init__(source, prepare=False, **kwargs)
        check_gate_ranges(dict(self.params))   # ranges that cannot hold together: refused, named
        if prepare:
            self.prepare()

    def _check_param_set(self, name, value):
        super()._check_param_set(name, value)
        check_gate_ranges({**dict(self.params), name: value})

    def _make_result(self):
        r = self._results
        E, dev = self.num_envs, self.device

        def opt(name, shape, dtype):
            return r[name] if name in r else wp.zeros(shape, dtype=dtype, device=dev)

        G = r["gates.pos"].shape[1]
        return GateResult(
            pos=r["gates.pos"], yaw=r["gates.yaw"], normal=r["gate_frames.normal"], count=r["gates.count"],
            width=r["gate_frames.width"], height=r["gate_frames.height"], thickness=r["gate_frames.thickness"],
            length=r["gates.length"], start_pos=r["gates.start_pos"], start_yaw=r["gates.start_yaw"],
            attempts=r["gates.attempts"], status=r["obstacles.status"] if "obstacles.status" in r else r["gates.status"],
            valid=self._valid, closed=bool(self.params["gates.closed"]),
            stacked=opt("gates.stacked", (E, G), wp.int32), shape=opt("gates.shape", E, wp.int32),
            difficulty=opt("gates.difficulty_used", E, wp.float32), arena=opt("gates.arena", E, wp.float32),
            obstacle_pos=opt("obstacles.pos", (E, 0), wp.vec3f), obstacle_radius=opt("obstacles.radius", (E, 0),
                                                                                     wp.float32),
            obstacle_height=opt("obstacles.height", (E, 0), wp.float32),
            obstacle_count=opt("obstacles.count", E, wp.int32),
        )
