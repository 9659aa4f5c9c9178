"""Pipeline specs over layouts (behind ``presets.gates_from_layouts`` / ``presets.track_from_layouts``).

Everything is checked here, before anything is built: the layouts (upright gates, one opening
and frame per layout, one ``closed`` for all), the capacities (a layout with more gates than
``max_gates`` is refused naming both numbers), the parameters and the fixed assignment.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from track_gen.generators.layouts.gates import GATE_PARAMS
from track_gen.generators.layouts.source import LayoutStageSpec
from track_gen.generators.layouts.track import TRACK_PARAMS, resample_closed
from track_gen.layouts import GateLayout, TrackLayout, load_all
from track_gen.pipeline.spec import PipelineSpec, StageSpec

__all__ = ["gates_spec", "track_spec"]

#: an upright gate: |roll|, |pitch| at most this [rad]
UPRIGHT_TOL = 1e-6
_DERIVED = ("num_layouts", "fixed")


def _collect(layouts: Any, want: type, preset: str, lsy_axis: str | None) -> list:
    items = [layouts] if isinstance(layouts, (str, Path, GateLayout, TrackLayout)) else layouts
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise TypeError(f"{preset}: layouts must be a layout, a file, a folder or a list of those, got "
                        f"{type(layouts).__name__}")
    out: list = []
    for item in items:
        if isinstance(item, (str, Path)):
            out += load_all(item, lsy_axis=lsy_axis)
        else:
            out.append(item)
    if not out:
        raise ValueError(f"{preset}: got no layouts; pass at least one")
    for lay in out:
        if not isinstance(lay, want):
            other = "track_from_layouts" if isinstance(lay, TrackLayout) else "gates_from_layouts"
            raise TypeError(f"{preset}: {getattr(lay, 'label', lambda: repr(lay))()!r} is a "
                            f"{type(lay).__name__}, not a {want.__name__}; use presets.{other}")
    for i, lay in enumerate(out):
        try:
            lay.check()  # again: an array edited in place since the layout was built (inf, NaN, out of range)
        except (TypeError, ValueError) as exc:
            raise (TypeError if isinstance(exc, TypeError) else ValueError)(f"{preset}: layouts[{i}]: {exc}") from None
    return out


def _params(preset: str, overrides: Mapping[str, Any], table: Mapping, stage: str) -> dict[str, Any]:
    allowed = sorted(n for n in table if n not in _DERIVED)
    bad = sorted(set(overrides) - set(allowed))
    if bad:
        raise TypeError(f"{preset}: unknown field(s) {bad}; fields: {allowed} (and assign, randomize, lsy_axis)")
    return {n: table[n].check(f"{stage}.{n}", v) for n, v in overrides.items()}


def _assign(preset: str, assign: Any, num_envs: int, k: int) -> tuple[int, ...] | None:
    if assign is None:
        return None
    arr = np.asarray(assign)
    if arr.shape != (num_envs,) or not (np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{preset}: assign must be {num_envs} integers (one layout index per env), got "
                         f"shape {arr.shape} dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= k):
        raise ValueError(f"{preset}: assign holds {int(arr.min())}..{int(arr.max())}; layout indices lie in "
                         f"[0, {k - 1}] for {k} layouts")
    return tuple(int(x) for x in arr)


def _amplitude(name: str, params: Mapping, randomize: Mapping, stage: str) -> float:
    hi = randomize.get(f"{stage}.{name}", (0.0, 0.0))[1]
    return max(float(params.get(name, 0.0)), float(hi))


def _fit_size(reach: float) -> float:
    """Side of the smallest square centred on the origin holding ``reach``, rounded up to 0.5 m."""
    if not math.isfinite(reach):
        raise ValueError(f"size: cannot fit the course square to a reach of {reach} m from the origin (a layout "
                         "number or a shift that is not finite); fix it, or pass size= explicitly")
    return max(0.5, math.ceil(4.0 * reach * (1.0 + 1e-6)) / 2.0)


def _check_gate_layout(preset: str, lay: GateLayout) -> None:
    tilt = np.abs(lay.rpy[:, :2])
    if not np.all(tilt <= UPRIGHT_TOL):
        g = int(np.argmax(tilt.max(axis=1)))
        raise ValueError(f"{preset}: layout {lay.label()!r} gate {g} is tilted (roll, pitch = "
                         f"{lay.rpy[g, 0]:g}, {lay.rpy[g, 1]:g} rad); course gates are upright (yaw only): "
                         f"keep |roll|, |pitch| <= {UPRIGHT_TOL:g}")
    for field in ("width", "height", "frame_thickness"):
        v = getattr(lay, field)
        if not np.all(v.view(np.int32) == v[:1].view(np.int32)):
            raise ValueError(f"{preset}: layout {lay.label()!r} has gates of different {field} "
                             f"({v.min():g}..{v.max():g} m); a course has one opening and frame per env: give the "
                             "layout one value")


def gates_spec(layouts: Any, num_envs: int, device: str = "cpu", *, assign: Any = None,
               randomize: Mapping[str, tuple[float, float]] | None = None, lsy_axis: str | None = None,
               **overrides) -> PipelineSpec:
    """The spec behind ``presets.gates_from_layouts``."""
    preset = "gates_from_layouts"
    lays = _collect(layouts, GateLayout, preset, lsy_axis)
    for lay in lays:
        _check_gate_layout(preset, lay)
    closed = {lay.closed for lay in lays}
    if len(closed) > 1:
        loops = [lay.label() for lay in lays if lay.closed]
        raise ValueError(f"{preset}: layouts mix loops ({loops}) and one-pass courses; a generator's courses are all "
                         "loops or all one pass: pass layouts of one kind (or set closed on each with replace)")
    params = _params(preset, overrides, GATE_PARAMS, "gates")
    most = max(lay.num_gates for lay in lays)
    if "max_gates" in params and params["max_gates"] < most:
        worst = max(lays, key=lambda lay: lay.num_gates)
        raise ValueError(f"{preset}: layout {worst.label()!r} has {most} gates, more than the capacity "
                         f"max_gates={params['max_gates']}; pass max_gates >= {most}")
    poles = max(len(lay.obstacles) for lay in lays)
    if "max_obstacles" in params and params["max_obstacles"] < poles:
        raise ValueError(f"{preset}: a layout has {poles} poles, more than the capacity max_obstacles="
                         f"{params['max_obstacles']}; pass max_obstacles >= {poles}")
    params.setdefault("max_gates", max(most, GATE_PARAMS["max_gates"].lo))
    params.setdefault("max_obstacles", max(1, poles))
    params["closed"] = int(closed.pop())
    params["num_layouts"] = len(lays)
    spec_assign = _assign(preset, assign, num_envs, len(lays))
    params["fixed"] = int(spec_assign is not None)
    ranges = dict(randomize or {})
    if "size" not in params:
        rot = _amplitude("rotate", params, ranges, "gates") > 0.0
        shift = _amplitude("shift", params, ranges, "gates") + _amplitude("jitter_pos", params, ranges, "gates")
        reach = 0.0
        for lay in lays:
            xy = np.concatenate([lay.pos[:, :2], lay.start_pos[None, :2], lay.obstacles.pos[:, :2]]).astype(np.float64)
            pad = 0.5 * float(lay.width[0]) + float(lay.frame_thickness[0])
            r = np.hypot(xy[:, 0], xy[:, 1]) if rot else np.abs(xy).max(axis=1)
            if np.all(np.isfinite(r)):
                reach = max(reach, float(r.max()) + pad)
        params["size"] = _fit_size(reach + shift)
    spec = PipelineSpec(
        num_envs, device,
        (LayoutStageSpec("gates", "gates.from_layouts", params, layouts=tuple(lays), assign=spec_assign),
         StageSpec("gate_frames", "gates.layout_frames"), StageSpec("obstacles", "gates.layout_obstacles")),
        family="gates",
    )
    return spec.with_randomize(ranges) if ranges else spec


def _closed_length(xy: np.ndarray) -> float:
    return float(np.linalg.norm(np.diff(np.concatenate([xy, xy[:1]]).astype(np.float64), axis=0), axis=1).sum())


def track_spec(layouts: Any, num_envs: int, device: str = "cpu", *, assign: Any = None,
               randomize: Mapping[str, tuple[float, float]] | None = None, **overrides) -> PipelineSpec:
    """The spec behind ``presets.track_from_layouts``."""
    preset = "track_from_layouts"
    lays = _collect(layouts, TrackLayout, preset, None)
    for lay in lays:
        if not lay.closed:
            raise ValueError(f"{preset}: layout {lay.label()!r} is open (closed = false); band tracks are loops: "
                             "close it (replace(closed=True)) if its last point joins its first")
    params = _params(preset, overrides, TRACK_PARAMS, "centerline")
    counts = {lay.num_points for lay in lays}
    if "num_points" not in params:  # the layouts' own points when they all have the same number
        n = next(iter(counts))
        params["num_points"] = n if len(counts) == 1 and 16 <= n <= 8192 else TRACK_PARAMS["num_points"].default
    resampled = [resample_closed(lay, params["num_points"]) for lay in lays]
    if "max_length" not in params:
        longest = max(_closed_length(xy) for xy, _, _ in resampled)
        if not math.isfinite(longest):
            longest = 1.0  # the non-finite layout gets NONFINITE at build time
        params["max_length"] = longest * 1.001 + 1e-3
    params["num_layouts"] = len(lays)
    spec_assign = _assign(preset, assign, num_envs, len(lays))
    params["fixed"] = int(spec_assign is not None)
    ranges = dict(randomize or {})
    if "size" not in params:
        rot = _amplitude("rotate", params, ranges, "centerline") > 0.0
        reach = 0.0
        for xy, _, hw in resampled:
            r = (np.hypot(xy[:, 0], xy[:, 1]) if rot else np.abs(xy).max(axis=1)).astype(np.float64) + hw
            if np.all(np.isfinite(r)):
                reach = max(reach, float(r.max()))
        params["size"] = _fit_size(reach + _amplitude("shift", params, ranges, "centerline"))
    stages = [LayoutStageSpec("centerline", "track.from_layouts", params, layouts=tuple(lays), assign=spec_assign),
              StageSpec("band", "track.band")]
    if any(np.any(z != 0.0) for _, z, _ in resampled):
        stages.append(StageSpec("elevation", "track.layout_heights"))
    spec = PipelineSpec(num_envs, device, tuple(stages), family="track", max_loop_length=float(params["max_length"]))
    return spec.with_randomize(ranges) if ranges else spec
