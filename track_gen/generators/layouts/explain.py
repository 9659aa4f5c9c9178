"""Which rule a layout breaks, and where: the device's course rules for a gate layout, on the host,
naming the gates, legs and poles (for warnings and for refusing a layout before anything flies).

The device only keeps one status word per course (:class:`~track_gen.generators.status.GateStatus`
bits); :func:`explain_gate_layout` re-checks a layout as it is, in float64 numpy, with the same
definitions (:func:`track_gen.generators.gates.validity.gates_status` and the layout stage's pole and
ground rules), and says which gates break each rule. Tests check that it flags exactly the bits the
device sets.
"""

from __future__ import annotations

import numpy as np

__all__ = ["explain_gate_layout"]


def _wrap(a):
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def _leg_angle(yaw: float, d: np.ndarray) -> float:
    return abs(float(_wrap(np.arctan2(d[1], d[0]) - yaw)))


def _crossings(pos: np.ndarray, legs: int, clearance: float) -> list[str]:
    g = pos.shape[0]
    out = []
    for i in range(legs):
        a0, a1 = pos[i], pos[(i + 1) % g]
        for j in range(i + 2, legs):
            if (j + 1) % g == i:
                continue
            b0, b1 = pos[j], pos[(j + 1) % g]
            da, db = a1[:2] - a0[:2], b1[:2] - b0[:2]
            den = da[0] * db[1] - da[1] * db[0]
            if den == 0.0:
                continue
            w = b0[:2] - a0[:2]
            t = (w[0] * db[1] - w[1] * db[0]) / den
            u = (w[0] * da[1] - w[1] * da[0]) / den
            if 0.0 <= t <= 1.0 and 0.0 <= u <= 1.0:
                za, zb = a0[2] + t * (a1[2] - a0[2]), b0[2] + u * (b1[2] - b0[2])
                if abs(za - zb) < clearance:
                    out.append(f"legs {i}->{(i + 1) % g} and {j}->{(j + 1) % g} cross {abs(za - zb):.2f} m apart in "
                               f"height (< crossing_clearance {clearance:g} m)")
    return out


def _pole_hits(lay, outer_half: float, outer_half_h: float) -> list[str]:
    poles, out = lay.obstacles, []
    depth = float(np.max(lay.frame_thickness))
    for g, (c, yaw) in enumerate(zip(lay.pos.astype(np.float64), lay.yaw.astype(np.float64))):
        for j in range(len(poles)):
            b, r, h = poles.pos[j].astype(np.float64), float(poles.radius[j]), float(poles.height[j])
            d = b[:2] - c[:2]
            along = np.cos(yaw) * d[0] + np.sin(yaw) * d[1]
            across = -np.sin(yaw) * d[0] + np.cos(yaw) * d[1]
            if (abs(along) <= 0.5 * depth + r and abs(across) <= outer_half + r and b[2] <= c[2] + outer_half_h
                    and b[2] + h >= c[2] - outer_half_h):
                out.append(f"pole {j} at ({b[0]:.2f}, {b[1]:.2f}) stands in the frame of gate {g}")
    return out


def explain_gate_layout(lay, *, size: float, min_spacing: float, max_spacing: float, max_turn: float,
                        max_climb: float, crossing_clearance: float) -> list[tuple[str, str]]:
    """``[(rule, what)]`` for every rule ``lay`` (a :class:`~track_gen.layouts.GateLayout`) breaks as it is,
    with the limits of the layout stage; ``[]`` when it breaks none. Split-S pairs are not checked
    (a layout has none)."""
    pos = lay.pos.astype(np.float64)
    yaw = lay.yaw.astype(np.float64)
    g = pos.shape[0]
    width, height, thick = float(np.max(lay.width)), float(np.max(lay.height)), float(np.max(lay.frame_thickness))
    outer_half, outer_half_h = 0.5 * width + thick, 0.5 * height + thick
    out: list[tuple[str, str]] = []
    if not (float(np.min(lay.width)) > 0.0 and float(np.min(lay.height)) > 0.0):
        out.append(("OPENING", "an opening of no width or height"))
    legs = g if lay.closed else g - 1
    for k in range(legs):
        k1 = (k + 1) % g
        d = pos[k1] - pos[k]
        dist, plan = float(np.linalg.norm(d)), float(np.hypot(d[0], d[1]))
        if not (min_spacing <= dist <= max_spacing):
            out.append(("SPACING", f"leg {k}->{k1} is {dist:.2f} m long (outside [{min_spacing:g}, {max_spacing:g}] m)"))
        turn = max(_leg_angle(yaw[k], d), _leg_angle(yaw[k1], d))
        if not turn <= max_turn:
            out.append(("TURN", f"leg {k}->{k1} leaves or enters its gate at {turn:.2f} rad (> max_turn {max_turn:g})"))
        if max_climb < 1.5707963 and not np.arctan2(abs(d[2]), plan) <= max_climb:
            out.append(("CLIMB", f"leg {k}->{k1} climbs at {np.arctan2(abs(d[2]), plan):.2f} rad "
                                 f"(> max_climb {max_climb:g})"))
    out += [("CROSSING", m) for m in _crossings(pos, legs, crossing_clearance)]
    sep = max(min_spacing, 2.0 * outer_half)
    for k in range(g):
        p = pos[k]
        if not max(abs(p[0]), abs(p[1])) + outer_half <= 0.5 * size:
            out.append(("BOUNDS", f"the frame of gate {k} reaches outside the {size:g} m square"))
        if not p[2] - 0.5 * height >= 0.0:
            out.append(("GROUND", f"the opening of gate {k} reaches {p[2] - 0.5 * height:.2f} m below the ground"))
        for m in range(k + 1, g):
            dist = float(np.linalg.norm(pos[m] - p))
            if not dist >= sep:
                out.append(("CROWDED", f"gates {k} and {m} are {dist:.2f} m apart (< {sep:.2f} m: their frames or "
                                       "min_spacing)"))
    out += [("OBSTACLE", m) for m in _pole_hits(lay, outer_half, outer_half_h)]
    return out
