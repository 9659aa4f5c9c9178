"""Layouts as a generator source: each env flies one of K real (or exported) layouts.

This module holds what the gate and track layout stages (:mod:`gates`, :mod:`track`) share: the
stage spec that carries the layouts, the build-time table upload and warning, the parameters of the
randomization, and the device functions of the pick and the retried rigid placement.

Two stage kinds fill the *same* result arrays as the procedural families, so ``GateGenerator`` /
``TrackGenerator``, ``Course.gates`` / ``Course.track`` and every component work unchanged:

* ``gates.from_layouts`` (stage ``gates``) + ``gates.layout_frames`` (stage ``gate_frames``) +
  ``gates.layout_obstacles`` (stage ``obstacles``): gate poses, count, frame sizes, start pose of
  each env's layout; ``gates.layout`` (the index of each env's layout); the layout's poles under
  the obstacle stage's names (``obstacles.pos`` [E, M] base centres, ``obstacles.radius``,
  ``obstacles.height``, ``obstacles.count``: ``result.obstacle_*``).
* ``track.from_layouts`` (stage ``centerline``) + ``track.band`` (+ ``track.layout_heights`` as
  stage ``elevation`` when a layout leaves the ground plane).

The K layouts live on device in tables padded to capacity (generator inputs
``gates.table_*`` / ``centerline.table_*``), written once, when the generator is built, from the
layouts the stage spec carries (:class:`LayoutStageSpec`, made by ``presets.gates_from_layouts``
/ ``presets.track_from_layouts``). Then each regeneration is a fixed set of launches: an env
picks its layout (a uniform draw keyed by its seed and generation, or a fixed assignment),
optionally randomizes it (dynamic parameters ``shift``, ``rotate``, ``jitter_*``: a rigid
transform about the vertical through the course origin, per-gate jitter), and is validated with
the families' own rules. Layouts that break the rules as they are get one warning at build
time (:class:`LayoutWarning`) naming them; their envs get ``valid = 0`` and the status bits.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import warp as wp

from track_gen.errors import TrackGenWarning
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.pipeline.spec import StageSpec
from track_gen.rng import stream_state

__all__ = ["ASSIGN", "LayoutStageSpec", "LayoutWarning", "check_count", "draw_placement", "layout_spec", "pick_layout",
           "place_xy", "plus", "shared_params", "table_spec", "upload_assign", "warn_bad"]

PI = 3.1416  # the bounds the procedural families use for angles
HALF_PI = 1.5708


class LayoutWarning(TrackGenWarning):
    """A layout breaks the course validity rules as it is: the envs that fly it get ``valid = 0``."""


@dataclass(frozen=True)
class LayoutStageSpec(StageSpec):
    """A layout source stage with its data: the layouts and, for a fixed assignment, each env's index."""

    layouts: tuple = ()
    assign: tuple[int, ...] | None = None


def shared_params() -> dict[str, ParamSpec]:
    """The parameters of every layout stage: the rigid randomization, the layout count, the pick, the retries."""
    return {
        "shift": ParamSpec(0.0, lo=0.0, doc="largest shift of the whole layout along x and along y [m]"),
        "rotate": ParamSpec(0.0, lo=0.0, hi=PI, doc="largest rotation of the whole layout about the vertical "
                                                     "through the course origin [rad]"),
        "num_layouts": ParamSpec(1, lo=1, hi=65536, static=True, integer=True, doc="K, the layouts on device"),
        "fixed": ParamSpec(0, lo=0, hi=1, static=True, integer=True,
                           doc="1: env e flies layout assign[e]; 0: a per-env draw keyed by seed and generation"),
        "max_attempts": ParamSpec(8, lo=1, hi=1024, static=True, integer=True,
                                  doc="randomized draws per env before valid=0 (one when nothing is randomized)"),
    }


def layout_spec(ctx) -> LayoutStageSpec:
    """The stage's spec, which carries its layouts (refused, naming the presets, when it carries none)."""
    st = ctx._program.spec.stage(ctx.name)
    if not isinstance(st, LayoutStageSpec) or not st.layouts:
        raise TypeError(
            f"stage {ctx.name!r}: a layout source takes its layouts from its spec; build it with "
            f"presets.gates_from_layouts(...) / presets.track_from_layouts(...)"
        )
    return st


def upload_assign(ctx, st: LayoutStageSpec) -> None:
    """Write the ``assign`` input: the spec's fixed assignment, or ``e % K``."""
    k = ctx.static["num_layouts"]
    if st.assign is not None:
        ctx.input("assign").assign(np.asarray(st.assign, dtype=np.int32))
    else:
        ctx.input("assign").assign(np.arange(ctx.num_envs, dtype=np.int64) % k)


def check_count(st: LayoutStageSpec, k: int) -> None:
    """Refuse a spec whose ``num_layouts`` is not the number of layouts it carries."""
    if len(st.layouts) != k:
        raise ValueError(f"num_layouts: the spec says {k} but the stage carries {len(st.layouts)} layouts; "
                         "rebuild the spec with the preset")


def warn_bad(ctx, st, status: np.ndarray, flags, explain=None) -> None:
    """One :class:`LayoutWarning` naming every layout whose status (``flags`` bits) as it is is not 0
    (and with ``explain(layout) -> str``, which gates break which rule)."""
    bad = [(lay.label(), flags(int(s)), explain(lay) if explain else "") for lay, s in zip(st.layouts, status)
           if s != 0]
    if bad:
        names = "; ".join(f"{n!r}: {f.name}" + (f" ({why})" if why else "") for n, f, why in bad)
        warnings.warn(
            f"stage {ctx.name!r}: {len(bad)} of {len(st.layouts)} layouts break the course rules as they are "
            f"({names}); the envs that fly them get valid = 0. Fix the layout, or relax the stage's limits",
            LayoutWarning, stacklevel=2,
        )


def table_spec(dtype, shape, doc) -> ArraySpec:
    """A layout table input: written once, when the generator is built."""
    return ArraySpec(dtype, shape, doc=doc + "; written when the generator is built")


ASSIGN = ArraySpec(wp.int32, ("env",), doc="layout index of each env when fixed=1; written at build (e % K by default)")


# -- device functions of every layout stage: the pick, the rigid placement of one attempt ------------
# A randomization amplitude of 0 leaves a number untouched (no ``x + 0.0``, which would turn -0.0
# into 0.0), so an unrandomized env holds its layout's float32 numbers exactly.


@wp.func
def plus(a: float, b: float) -> float:
    """``a + b``, or ``a`` itself when ``b == 0`` (keeps -0.0 and the exact value)."""
    if b == 0.0:
        return a
    return a + b


@wp.func
def pick_layout(seed: int, generation: int, key_pick: int, fixed: int, assigned: int, num_layouts: int) -> int:
    """The layout index of an env: its fixed assignment, or a uniform draw keyed by its seed and generation."""
    if fixed != 0:
        return assigned
    st = stream_state(seed, generation, key_pick, 0)
    return wp.min(int(wp.randf(st) * float(num_layouts)), num_layouts - 1)


@wp.func
def rotate_xy(x: float, y: float, c: float, s: float, angle: float) -> wp.vec2f:
    if angle == 0.0:
        return wp.vec2f(x, y)
    return wp.vec2f(c * x - s * y, s * x + c * y)


@wp.func
def draw_placement(seed: int, generation: int, key: int, attempt: int, rotate: float, shift: float):
    """(random state, angle, its cosine and sine, dx, dy) of one attempt's rigid placement: a rotation
    in [-rotate, rotate] about the vertical through the course origin, then a shift in [-shift, shift]
    along x and y. The layout's own draws continue on the returned state."""
    st = stream_state(seed, generation, key, attempt)
    angle = rotate * (2.0 * wp.randf(st) - 1.0)
    dx = shift * (2.0 * wp.randf(st) - 1.0)
    dy = shift * (2.0 * wp.randf(st) - 1.0)
    return st, angle, wp.cos(angle), wp.sin(angle), dx, dy


@wp.func
def place_xy(x: float, y: float, c: float, s: float, angle: float, dx: float, dy: float) -> wp.vec2f:
    """The plan point (x, y) under the placement of :func:`draw_placement`."""
    q = rotate_xy(x, y, c, s, angle)
    return wp.vec2f(plus(q[0], dx), plus(q[1], dy))
