"""Export the current course of any env (or a batch) as a :class:`GateLayout` / :class:`TrackLayout`.

Reads the generator's result back to the host (not for a captured path). The layout holds the
result's float32 numbers unchanged, so ``load(save(export(g, e)))`` reproduces them byte for byte.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from track_gen.layouts.types import GateLayout, Poles, TrackLayout, _FieldProblem

__all__ = ["export"]


def _result_of(source: Any):
    """(generator or None, result) of a generator, a Course or a result."""
    if hasattr(source, "valid") and (hasattr(source, "pos") or hasattr(source, "xy")):
        return None, source
    gen = getattr(source, "generator", source)  # a Course holds its generator
    res = getattr(gen, "result", None)
    if res is not None and hasattr(res, "valid") and (hasattr(res, "pos") or hasattr(res, "xy")):
        return gen, res
    raise TypeError(
        f"export: expected a GateGenerator, a TrackGenerator, a Course or their result, got {type(source).__name__}"
    )


def _what(gen, res) -> str:
    return type(gen).__name__ if gen is not None else type(res).__name__


def _gate_layout(gen, res, e: int) -> GateLayout:
    n = int(res.count.numpy()[e])
    yaw = res.yaw.numpy()[e, :n]
    rpy = np.zeros((n, 3), np.float32)
    rpy[:, 2] = yaw
    start_rpy = np.zeros(3, np.float32)
    start_rpy[2] = res.start_yaw.numpy()[e]
    poles = Poles()
    counts = getattr(res, "obstacle_count", None)
    if counts is not None and res.obstacle_pos.shape[1] > 0:  # obstacles of the course (poles: base centres)
        m = int(counts.numpy()[e])
        poles = Poles(pos=res.obstacle_pos.numpy()[e, :m], radius=res.obstacle_radius.numpy()[e, :m],
                      height=res.obstacle_height.numpy()[e, :m])
    valid = int(res.valid.numpy()[e])
    return GateLayout(
        pos=res.pos.numpy()[e, :n], rpy=rpy, width=res.width.numpy()[e], height=res.height.numpy()[e],
        frame_thickness=res.thickness.numpy()[e], closed=bool(res.closed), start_pos=res.start_pos.numpy()[e],
        start_rpy=start_rpy, obstacles=poles, name=f"env{e}",
        source=f"exported from {_what(gen, res)} env {e} (valid = {valid})",
    )


def _track_layout(gen, res, e: int) -> TrackLayout:
    xy = res.xy.numpy()[e]
    line = np.concatenate([xy, res.z.numpy()[e][:, None]], axis=1).astype(np.float32)
    valid = int(res.valid.numpy()[e])
    return TrackLayout(centerline=line, half_width=res.half_width.numpy()[e], closed=True, name=f"env{e}",
                       source=f"exported from {_what(gen, res)} env {e} (valid = {valid})")


def export(source: Any, env: int | Sequence[int] | None = 0):
    """The current course of env ``env`` as a layout; a list of layouts for a sequence of envs, or
    for every env when ``env`` is None.

    ``source``: a ``GateGenerator`` / ``TrackGenerator`` (or any program whose result is a
    ``GateResult`` / ``TrackResult``), a ``Course``, or the generator's result itself.
    """
    gen, res = _result_of(source)
    num_envs = int(res.valid.shape[0])
    if env is None:
        envs: list[int] = list(range(num_envs))
    elif isinstance(env, numbers.Integral) and not isinstance(env, bool):
        envs = [int(env)]
    elif isinstance(env, Sequence) and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in env):
        envs = [int(x) for x in env]
    else:
        raise TypeError(f"export: env must be an int, a sequence of ints or None, got {env!r}")
    for e in envs:
        if not 0 <= e < num_envs:
            raise IndexError(f"export: env {e} is outside [0, {num_envs - 1}]; pass an env index of this generator")
    build = _track_layout if hasattr(res, "xy") else _gate_layout
    out = []
    for e in envs:
        try:
            out.append(build(gen, res, e))
        except _FieldProblem as exc:  # a course no layout can hold (NaN, inf, out of range): say which env
            valid = int(res.valid.numpy()[e])
            raise type(exc)(exc.field, exc.expected, f"{exc.got} in env {e}'s course (valid = {valid}, status = "
                            f"{int(res.status.numpy()[e])})", index=exc.index, owner=f"export({_what(gen, res)})",
                            fix="a layout holds only finite, in-range numbers: export valid envs") from None
    return out[0] if isinstance(env, numbers.Integral) else out
