"""Gate-course parameter ranges that cannot hold together: refused when a generator is built
(and when a parameter is set), naming the fields, instead of a silent ``valid = 0`` everywhere."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["check_gate_ranges"]

#: a split-S stacks its gates 1.1 * max(min_spacing, outer frame height) + up to 0.4 m apart
SPLIT_GAP_SLACK = 0.4


def check_gate_ranges(v: Mapping[str, Any]) -> None:
    """Raise ValueError when the gate parameters ``v`` (global names) contradict each other."""
    shares = [v.get(f"gates.{n}_share", 0.0) for n in ("figure8", "hairpin", "split_s", "shuttle")]
    if sum(shares) > 1.0 + 1e-6:
        raise ValueError(
            f"gates.figure8_share + gates.hairpin_share + gates.split_s_share + gates.shuttle_share = "
            f"{sum(shares):g} > 1; the shares "
            f"of the shapes at difficulty 1 must sum to at most 1 (the rest are loops)"
        )
    width = float(v.get("gate_frames.gate_width", 0.0))
    thick = float(v.get("gate_frames.frame_thickness", 0.0))
    gh = float(v.get("gate_frames.gate_height", 0.0)) or width
    if v.get("gates.split_s_share", 0.0) > 0.0 and "gates.hard_max_spacing" in v:
        gap = 1.1 * max(v["gates.hard_min_spacing"], gh + 2.0 * thick) + SPLIT_GAP_SLACK
        if v["gates.hard_max_spacing"] < gap:
            raise ValueError(
                f"gates.split_s_share={v['gates.split_s_share']:g} stacks gates up to {gap:g} m apart, more than "
                f"gates.hard_max_spacing={v['gates.hard_max_spacing']:g}; raise gates.hard_max_spacing or set "
                f"gates.split_s_share=0"
            )
    if "obstacles.hard_count_max" not in v:
        return  # no procedural obstacle stage (e.g. the poles of imported layouts)
    cap = v["obstacles.max_obstacles"]
    for n in ("count_max", "hard_count_max"):
        if v[f"obstacles.{n}"] > cap:
            raise ValueError(f"obstacles.{n}={v[f'obstacles.{n}']:g} exceeds obstacles.max_obstacles={cap}; "
                             f"keep it <= the capacity")
    need = 2.0 * (v["obstacles.radius_max"] + v["obstacles.clearance"]) + width + 2.0 * thick
    for n in ("gates.size", "gates.hard_size"):
        if v[n] <= need:
            raise ValueError(
                f"obstacles.clearance={v['obstacles.clearance']:g} with obstacles.radius_max="
                f"{v['obstacles.radius_max']:g} and a {width:g} m gate needs a square wider than {need:g} m, but "
                f"{n}={v[n]:g}; lower the clearance or the radius, or enlarge {n}"
            )
