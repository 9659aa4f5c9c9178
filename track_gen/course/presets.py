"""The presets behind ``Course.track`` / ``Course.gates`` and ``CourseConfig``.

Every check runs before anything is built: arguments, the collision slot, the extra components
sorted together with the preset's own, the source's family and (gates) the construction gate
width. Only then is a generator built from a config or spec.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from track_gen import tools
from track_gen.checks import as_real
from track_gen.course.components import check_components
from track_gen.generators.gates import GateGenConfig, GateGenerator
from track_gen.generators.track import TrackGenConfig, TrackGenerator
from track_gen.pipeline.spec import PipelineSpec
from track_gen.tools.component import Component

__all__ = ["track_parts", "gates_parts", "finish_preset", "agents_arg", "agents_kwargs"]


def _number(name: str, value: Any, *, gt: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise TypeError(f"{name}: expected a finite number, got {value!r}")
    if gt is not None and not value > gt:
        raise ValueError(f"{name}: must be > {gt:g}, got {value!r}")
    return as_real(name, value)     # and finite in float32, the kernels' precision


def _int(name: str, value: Any, *, ge: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {value!r}")
    if value < ge:
        raise ValueError(f"{name}: must be >= {ge}, got {value}")
    return int(value)


def agents_arg(value: Any) -> int:
    """``agents``: the agents racing each env's course, an int >= 1."""
    return _int("agents", value, ge=1)


def agents_kwargs(agents: int) -> dict:
    """The ``agents=`` keyword a preset passes to the course class: none for the default 1, so a
    subclass whose ``__init__`` predates ``agents`` keeps serving every one-agent route."""
    return {} if agents == 1 else {"agents": agents}


def _extra(extra: Any) -> list:
    if isinstance(extra, Component) or isinstance(extra, str) or not isinstance(extra, Sequence):
        raise TypeError(f"extra: expected a sequence of components, got {type(extra).__name__}; wrap one: [c]")
    return list(extra)


def _slot_component(value: Any, preset: str) -> Any:
    """A component passed in the collision slot must be named 'collision'."""
    name = getattr(value, "name", None)
    if name != "collision":
        raise ValueError(
            f"Course.{preset}: a component in the collision slot must be named 'collision' (it fills "
            f"StepResult.contacts), got {name!r}; put a collision under another name in extra="
        )
    return value


def _source_family(source: Any) -> str | None:
    if isinstance(source, TrackGenConfig):
        return "track"
    if isinstance(source, GateGenConfig):
        return "gates"
    if isinstance(source, PipelineSpec):
        return source.family
    return getattr(source, "family", None)


def _is_built(source: Any) -> bool:
    return hasattr(source, "enqueue") and hasattr(source, "result")


def _check_family(source: Any, want: str) -> None:
    other = {"track": "gates", "gates": "track"}[want]
    fam = _source_family(source)
    if fam == other:
        raise TypeError(f"Course.{want}: the source is a {other} generator/config; use Course.{other}(...)")
    if not _is_built(source) and fam != want:
        raise TypeError(
            f"Course.{want}: expected a {'TrackGenConfig' if want == 'track' else 'GateGenConfig'}, a "
            f"family={want!r} PipelineSpec or a built generator, got {type(source).__name__}"
        )


def _build(source: Any, family: str, seeds: Any, stream: Any):
    if _is_built(source):
        if seeds is not None or stream is not None:
            raise TypeError(
                f"Course.{family}: seeds= and stream= configure the generator the preset builds; this source is "
                f"already built (pass them to its constructor)"
            )
        return source
    cls = TrackGenerator if family == "track" else GateGenerator
    return cls(source, seeds=seeds, stream=stream)


def _construction_gate_width(source: Any) -> tuple[float | None, tuple[float, float] | None]:
    """(construction width, randomizer range or None) of a gates source."""
    name = "gate_frames.gate_width"
    if isinstance(source, GateGenConfig):
        return source.gate_width, (tuple(source.randomize[name]) if name in source.randomize else None)
    if isinstance(source, PipelineSpec):
        try:
            width = source.param(name)
        except KeyError:
            return None, None
        return width, (tuple(source.randomize[name]) if name in source.randomize else None)
    params = getattr(source, "params", None)
    if params is None or name not in params:
        return None, None
    ranges = getattr(source, "randomizers", {})
    return params[name], (tuple(ranges[name]) if name in ranges else None)


def _check_gate_width(source: Any) -> None:
    width, rng = _construction_gate_width(source)
    if rng is not None:
        if not rng[0] > 0:
            raise ValueError(
                f"Course.gates: the gate_frames.gate_width randomizer draws from lo={rng[0]:g}; a gate with no "
                f"opening can never be passed: keep lo > 0"
            )
    elif width is not None and not width > 0:
        raise ValueError(
            f"Course.gates: gate_frames.gate_width is {width:g}; a width-0 gate can never be passed. Pass "
            f"presets.gates(..., gate_width=w) with w > 0, or randomize it with with_randomize("
            f"{{'gate_frames.gate_width': (lo, hi)}})"
        )


def _gate_width_guard(name, value) -> None:
    if not value > 0:
        raise ValueError(f"{name}: {value:g} would make gates that can never be passed; keep it > 0")


def finish_preset(mode: str, generator) -> None:
    """What a preset adds once its course is built (never before: a refused construction leaves a
    generator of yours as it was). ``gates``: refuse a later scalar set of a width <= 0."""
    if mode != "gates":
        return
    add = getattr(generator, "add_param_guard", None)
    params = getattr(generator, "params", None)
    if add is None or params is None or "gate_frames.gate_width" not in params:
        return
    add("gate_frames.gate_width", _gate_width_guard)  # one function: adding it again keeps one


def track_parts(source, *, checkpoint_spacing, collision=None, max_checkpoints=None, extra=(), seeds=None,
                stream=None):
    """Check, then build the generator and the components of a track course.

    With pole obstacles (an ``obstacles`` stage) an :class:`~track_gen.tools.ObstacleCollision` named
    ``"obstacles"`` is added (its box half height: the collision component's, else 0), unless ``extra``
    holds one, as for gate courses."""
    spacing = _number("checkpoint_spacing", checkpoint_spacing, gt=0)
    if isinstance(collision, bool) or (isinstance(collision, str) and collision not in ("segments", "sdf")):
        raise ValueError(f"Course.track: collision must be None, 'segments', 'sdf' or a component, got {collision!r}")
    if collision is not None and not isinstance(collision, str) and not hasattr(collision, "step"):
        raise TypeError(f"Course.track: collision must be None, 'segments', 'sdf' or a component, got {collision!r}")
    if max_checkpoints == "auto":
        max_checkpoints = None
    if max_checkpoints is not None:
        max_checkpoints = _int("max_checkpoints", max_checkpoints, ge=3)
    extra = _extra(extra)
    comps = [tools.Checkpoints(spacing, max_checkpoints=max_checkpoints or "auto"), tools.Progress()]
    if isinstance(collision, str):
        comps.append(tools.BandCollision(collision))
    elif collision is not None:
        comps.append(_slot_component(collision, "track"))
    _add_obstacles(source, comps, collision, extra)
    comps += extra
    check_components(comps)
    _check_family(source, "track")
    return _build(source, "track", seeds, stream), comps


def _has_obstacles(source: Any) -> bool:
    """Whether a source places pole obstacles (an ``obstacles`` stage, or result arrays of them)."""
    if isinstance(source, (GateGenConfig, TrackGenConfig)):
        return source.max_obstacles > 0
    if isinstance(source, PipelineSpec):
        return any(s.name == "obstacles" for s in source.stages)
    pos = getattr(getattr(source, "result", None), "obstacle_pos", None)
    return pos is not None and len(pos.shape) == 2 and pos.shape[1] > 0


def _add_obstacles(source: Any, comps: list, collision: Any, extra: list) -> None:
    """Append the pole collision of a source with obstacles, unless ``extra`` holds one."""
    if _has_obstacles(source) and not any(isinstance(c, tools.ObstacleCollision) for c in extra):
        comps.append(tools.ObstacleCollision(getattr(collision, "half_height", 0.0)))


def gates_parts(source, *, collision=None, samples_per_gate=8, localize_window=None, extra=(), seeds=None,
                stream=None):
    """Check, then build the generator and the components of a gate course.

    With pole obstacles (an ``obstacles`` stage) an :class:`~track_gen.tools.ObstacleCollision`
    named ``"obstacles"`` is added (its box half height: the collision component's, else 0),
    unless ``extra`` holds one. The width guard is added by :func:`finish_preset`, once the course is built."""
    if isinstance(collision, bool) or isinstance(collision, str):
        raise ValueError(f"Course.gates: collision must be None, a post radius > 0 or a component, got {collision!r}")
    radius = None
    if isinstance(collision, numbers.Real):
        radius = _number("collision (post radius)", collision, gt=0)
    elif collision is not None and not hasattr(collision, "step"):
        raise TypeError(f"Course.gates: collision must be None, a post radius or a component, got {collision!r}")
    samples = _int("samples_per_gate", samples_per_gate, ge=2)
    window = None if localize_window is None else _int("localize_window", localize_window, ge=1)
    extra = _extra(extra)
    comps = [tools.GateCheckpoints(), tools.CenterlineFromGates(samples), tools.Progress()]
    if radius is not None:
        comps.append(tools.DiscCollision(radius))
    elif collision is not None:
        comps.append(_slot_component(collision, "gates"))
    comps.append(tools.Localizer(warm_window=window, source="centerline"))
    _add_obstacles(source, comps, collision, extra)
    comps += extra
    check_components(comps)
    _check_family(source, "gates")
    _check_gate_width(source)
    return _build(source, "gates", seeds, stream), comps
