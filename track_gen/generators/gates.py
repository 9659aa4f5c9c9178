"""Gate courses: gates along a smooth loop (or an open sprint), drawn per env on device.

Algorithm (one thread per env, up to ``max_attempts`` draws): control points as for a band
track, a closed uniform cubic B-spline through their hull, its length (a sprint uses the first
80% of the loop: an open course whose ends stay apart); a gate count in [min_gates, max_gates]; gates at evenly spaced arc lengths with
jitter, each at a random height, its heading the curve tangent plus jitter. Validation
(:func:`gate_kernels.gates_status`): spacing bounds, no crowding, bounded turn into and out of
every leg, frames inside the square and above the ground, an opening wider than 0. The ``gate_frames`` stage publishes
the frame dimensions per env (dynamic, randomizable) and each gate's normal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar, Mapping

import warp as wp

from track_gen.checks import as_bool
from track_gen.generators import gate_kernels as K
from track_gen.generators.family import FamilyGenerator
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
                             "max_spacing", "height_min", "height_max", "yaw_jitter", "max_turn")),
            p("gate_frames.gate_width"), p("gate_frames.gate_height"), p("gate_frames.frame_thickness"),
            st["min_gates"], st["max_gates"], st["control_points"], st["control_points"] * st["dense_per_span"],
            st["closed"], st["max_attempts"],
        ],
        outputs=[ctx.output(n) for n in ("control", "pos", "yaw", "count", "length", "start_pos", "start_yaw",
                                         "attempts", "status")] + [ctx.valid],
        device=ctx.device,
    )


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
    gate_width: float = FRAME_PARAMS["gate_width"].default
    gate_height: float = FRAME_PARAMS["gate_height"].default
    frame_thickness: float = FRAME_PARAMS["frame_thickness"].default
    randomize: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    family: ClassVar[str] = "gates"

    def to_spec(self) -> PipelineSpec:
        # every field is checked (named as its parameter) before anything reads it
        lay = {n: LAYOUT_PARAMS[n].check(f"gates.{n}", getattr(self, n)) for n in LAYOUT_PARAMS
               if n not in ("dense_per_span", "closed")}
        lay["closed"] = int(as_bool("closed", self.closed))
        frames = {n: FRAME_PARAMS[n].check(f"gate_frames.{n}", getattr(self, n)) for n in FRAME_PARAMS}
        spec = PipelineSpec(
            self.num_envs, self.device,
            (StageSpec("gates", "gates.layout", lay), StageSpec("gate_frames", "gates.frames", frames)),
            family="gates",
        )
        return spec.with_randomize(self.randomize) if self.randomize else spec

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


_ORDERED = (
    ("gates.radius_min", "gates.radius_max"),
    ("gates.min_spacing", "gates.max_spacing"),
    ("gates.height_min", "gates.height_max"),
    ("gates.min_gates", "gates.max_gates"),
)


class GateGenerator(FamilyGenerator):
    """Gate-course generator over a :class:`GateGenConfig` or a ``family="gates"`` spec."""

    family = "gates"
    config_type = GateGenConfig
    required_stages = ("gates", "gate_frames")
    ordered = _ORDERED

    def _make_result(self):
        r = self._results
        return GateResult(
            pos=r["gates.pos"], yaw=r["gates.yaw"], normal=r["gate_frames.normal"], count=r["gates.count"],
            width=r["gate_frames.width"], height=r["gate_frames.height"], thickness=r["gate_frames.thickness"],
            length=r["gates.length"], start_pos=r["gates.start_pos"], start_yaw=r["gates.start_yaw"],
            attempts=r["gates.attempts"], status=r["gates.status"], valid=self._valid,
            closed=bool(self.params["gates.closed"]),
        )
