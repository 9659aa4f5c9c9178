"""Real (or exported) layouts as the course source of a :class:`~track_gen_isaac.CourseCfg`.

``CourseCfg(layouts=...)`` takes layout files, a folder of them, ``GateLayout`` / ``TrackLayout``
objects, or a list of any of these. The cfg keeps them as plain data -- a path as a string, a
layout object as a dict of lists (:func:`layout_to_dict`; float32 -> Python float -> float32 is
exact) -- so the cfg deep-copies, serializes into ``params/env.yaml`` and takes Hydra overrides
like any other field; the numpy layouts are made again when the course is built.

The course is then ``presets.gates_from_layouts(layouts, E, device, **layout_options)`` (or
``track_from_layouts`` for band tracks): each env flies one of the K layouts, with the layout's
own numbers in the env frame. Layouts are **not recentred** unless ``layout_recenter=True``: the
env origin is the layout's origin, so a layout larger than the scene's ``env_spacing`` overlaps
its neighbours' space. That is harmless where envs do not touch each other (the drone tasks: the
course decides contact, the drones have no collision shapes); set ``layout_recenter=True`` to
put the middle of each layout's plan-view bounding box (gates and start, or the centerline) on
the env origin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["layout_to_dict", "layout_from_dict", "load_layouts", "layout_spec", "layout_kind", "recenter"]

_GATE_ARRAYS = ("pos", "rpy", "width", "height", "frame_thickness", "start_pos", "start_rpy", "tolerance")


def layout_to_dict(layout) -> dict:
    """A ``GateLayout`` / ``TrackLayout`` as plain data (lists of Python floats), exact at float32."""
    from track_gen.layouts import GateLayout, TrackLayout

    if isinstance(layout, GateLayout):
        out: dict = {"kind": "gates", **{n: getattr(layout, n).tolist() for n in _GATE_ARRAYS}}
        ob = layout.obstacles
        out["obstacles"] = {"pos": ob.pos.tolist(), "radius": ob.radius.tolist(), "height": ob.height.tolist()}
    elif isinstance(layout, TrackLayout):
        out = {"kind": "track", "centerline": layout.centerline.tolist(), "half_width": layout.half_width.tolist()}
    else:
        raise TypeError(f"expected a GateLayout or TrackLayout, got {type(layout).__name__}")
    out.update(closed=bool(layout.closed), source=str(layout.source), name=str(layout.name))
    return out


def layout_from_dict(d: dict, where: str = "CourseCfg.layouts"):
    """The layout a :func:`layout_to_dict` dict stands for."""
    from track_gen.layouts import GateLayout, Poles, TrackLayout

    d = dict(d)
    kind = d.pop("kind", None)
    try:
        if kind == "gates":
            ob = d.pop("obstacles", None) or {}
            return GateLayout(**d, obstacles=Poles(**ob))
        if kind == "track":
            return TrackLayout(**d)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where}: a layout dict does not make a layout: {exc}") from None
    raise ValueError(f"{where}: a layout dict needs kind = 'gates' or 'track', got {kind!r}")


def recenter(layout):
    """``layout`` shifted in x and y so that the middle of its plan-view bounding box (gates and
    start pose; a track's centerline) is at the origin; heights unchanged."""
    from track_gen.layouts import GateLayout, Poles

    if isinstance(layout, GateLayout):
        xy = np.concatenate([layout.pos[:, :2], layout.start_pos[None, :2]]).astype(np.float64)
    else:
        xy = layout.centerline[:, :2].astype(np.float64)
    c = np.zeros(3, np.float32)
    c[:2] = (0.5 * (xy.min(0) + xy.max(0))).astype(np.float32)
    if isinstance(layout, GateLayout):
        ob = layout.obstacles
        return layout.replace(pos=layout.pos - c, start_pos=layout.start_pos - c,
                              obstacles=Poles(ob.pos - c if len(ob) else ob.pos, ob.radius, ob.height))
    return layout.replace(centerline=layout.centerline - c)


def load_layouts(source: Any, lsy_axis: str | None = None, recentre: bool = False,
                 where: str = "CourseCfg.layouts") -> list:
    """The numpy layouts of a ``CourseCfg.layouts`` value: a path (file or folder), a layout
    dict or object, or a list of those. Errors name ``where`` and the file."""
    from track_gen.layouts import GateLayout, LayoutFormatError, TrackLayout, load_all

    items = source if isinstance(source, (list, tuple)) else [source]
    if not items:
        raise ValueError(f"{where}: an empty list; pass at least one layout file, folder or layout")
    out: list = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(source, (list, tuple)) else where
        if isinstance(item, (str, Path)):
            try:
                out += load_all(item, lsy_axis=lsy_axis)
            except LayoutFormatError as exc:
                raise LayoutFormatError(f"{at}: {exc}") from None
            except ValueError as exc:
                raise ValueError(f"{at}: {exc}") from None
        elif isinstance(item, dict):
            out.append(layout_from_dict(item, at))
        elif isinstance(item, (GateLayout, TrackLayout)):
            out.append(item)
        else:
            raise TypeError(f"{at}: expected a layout file or folder (str), a GateLayout / TrackLayout or its "
                            f"dict, got {type(item).__name__}")
    kinds = {layout_kind(lay) for lay in out}
    if len(kinds) > 1:
        raise ValueError(f"{where}: mixes gate layouts and band-track layouts; a course is one or the other")
    return [recenter(lay) for lay in out] if recentre else out


def layout_kind(layout) -> str:
    """``"gates"`` for a ``GateLayout``, ``"track"`` for a ``TrackLayout``."""
    from track_gen.layouts import GateLayout

    return "gates" if isinstance(layout, GateLayout) else "track"


def layout_spec(cfg, num_envs: int, device: str, layouts: list | None = None):
    """The ``PipelineSpec`` of a ``CourseCfg`` with ``layouts`` for ``num_envs`` envs on ``device``:
    ``presets.gates_from_layouts`` / ``track_from_layouts`` with ``cfg.layout_options``. Errors
    name the field."""
    from track_gen.layouts import LayoutFormatError
    from track_gen.pipeline import presets

    opts = dict(cfg.layout_options or {})
    lsy_axis = opts.pop("lsy_axis", None)
    if layouts is None:
        layouts = load_layouts(cfg.layouts, lsy_axis, bool(cfg.layout_recenter))
    if "randomize" in opts:
        opts["randomize"] = {str(k): tuple(float(x) for x in r) for k, r in dict(opts["randomize"]).items()}
    if opts.get("assign") is not None:
        opts["assign"] = np.asarray(list(opts["assign"]))
    make = presets.gates_from_layouts if cfg.mode == "gates" else presets.track_from_layouts
    try:
        return make(layouts, int(num_envs), str(device), **opts)
    except LayoutFormatError:
        raise
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"CourseCfg.layout_options / CourseCfg.layouts: {exc}") from None
