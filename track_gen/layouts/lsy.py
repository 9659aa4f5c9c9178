"""Read lsy_drone_racing's track configs (``[env.track]`` tables of its TOML files) as they are.

What the reader takes (every other table is ignored):

* ``[[env.track.gates]]``: ``pos`` (gate centre [m]) and ``rpy`` (extrinsic x-y-z [rad], as
  ``scipy.spatial.transform.Rotation.from_euler("xyz", rpy)``);
* ``[env.track.gate_size]`` (AIGP files): ``width``, ``height`` (the opening [m]) and ``tolerance``;
  without it, the level files' documented gate: a 0.4 m square opening in a 0.72 m frame
  (frame bars 0.16 m);
* ``[[env.track.obstacles]]``: ``pos``, the pole's **top** (the files say "height is measured from
  the ground to the top"); poles are 0.03 m across (the files' comment), so each becomes a pole of
  radius 0.015 m standing on the ground with height = top z;
* ``[[env.track.drones]]``: the first drone's ``pos`` and ``rpy`` are the start pose.

**Direction of travel.** track_gen gates are passed along their local +x axis. lsy_drone_racing
changed its convention once: up to commit ``23415dc`` (2025-10-20, "Update gate orientation and
pass check") its ``gate_passed`` checked a crossing of the gate's local **y** axis, and the
``DroneRacing-v0`` level files were written for that; from that commit on it checks local **x** and
the level files were rotated by +pi/2. Its ``AIGPDroneRacing-v0`` track files are laid out for
travel along local +x. So:

* ``lsy_axis="x"``: the gate's rotation is taken as it is (our ``rpy`` equals the file's);
* ``lsy_axis="y"``: our rotation is the file's followed by +pi/2 about the gate's own z axis
  (``R = R_file @ Rz(pi/2)``), so our local +x is the file's local +y; an upright gate's yaw is
  ``file yaw + pi/2``, wrapped into (-pi, pi].

Files with ``id = "AIGPDroneRacing-v0"`` default to ``"x"``. Any other file (``DroneRacing-v0``,
``MultiDroneRacing-v0``) needs ``lsy_axis`` spelled out: the file does not say which version of
the convention it was written for, and the reader does not guess.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from track_gen.layouts.types import GateLayout, Poles

__all__ = ["AIGP_ID", "LEVEL_GATE", "LSY_POLE_RADIUS", "read_lsy", "rpy_to_matrix", "matrix_to_rpy"]

AIGP_ID = "AIGPDroneRacing-v0"
#: the level files' gate (their comments): opening 0.4 m, outer 0.72 m -> bars of 0.16 m
LEVEL_GATE = {"width": 0.4, "height": 0.4, "frame_thickness": 0.16}
#: "Obstacles are cylinders with a diameter of 0.03m" (the level files' comment)
LSY_POLE_RADIUS = 0.015
_AXIS_CHANGE = "lsy_drone_racing commit 23415dc (2025-10-20)"


def rpy_to_matrix(rpy) -> np.ndarray:
    """Rotation matrix of extrinsic x-y-z angles: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (float64)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def matrix_to_rpy(m: np.ndarray) -> np.ndarray:
    """Extrinsic x-y-z angles of a rotation matrix (pitch in [-pi/2, pi/2], the others in (-pi, pi])."""
    pitch = -math.asin(max(-1.0, min(1.0, float(m[2, 0]))))
    roll = math.atan2(float(m[2, 1]), float(m[2, 2]))
    yaw = math.atan2(float(m[1, 0]), float(m[0, 0]))
    return np.array([roll, pitch, yaw])


_QUARTER = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # Rz(pi/2), exact


def _vec3(err, tables: list, i: int, key: str, where: str) -> list[float]:
    v = tables[i].get(key) if isinstance(tables[i], dict) else None
    name = f"{where}[{i}].{key}"
    if v is None:
        raise err(name, "a list of 3 numbers, missing")
    if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                          for x in v)):
        raise err(name, f"a list of 3 numbers, got {v!r}")
    return [float(x) for x in v]


def _number(err, table: dict, key: str, where: str) -> float:
    v = table.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise err(f"{where}.{key}", f"a number [m], got {v!r}")
    return float(v)


def read_lsy(doc: dict[str, Any], path: Path, err, lsy_axis: str | None) -> GateLayout:
    """A :class:`GateLayout` from the parsed lsy_drone_racing config ``doc`` (``err(key, expected)``
    builds the error naming the file)."""
    env = doc["env"]
    track = env["track"]
    env_id = env.get("id")
    if lsy_axis is None:
        if env_id != AIGP_ID:
            raise err("env.id", (
                f"lsy_axis='x' or 'y' for this {env_id!r} file: {_AXIS_CHANGE} moved the gate-pass axis of "
                f"DroneRacing-v0 levels from local y to local x (and rotated the level files by +pi/2); pass "
                f"load(path, lsy_axis='x') for files from that commit on, lsy_axis='y' for older ones"))
        lsy_axis = "x"
    if lsy_axis not in ("x", "y"):
        raise ValueError(f"lsy_axis: expected 'x' or 'y', got {lsy_axis!r}")
    gates = track.get("gates")
    if not isinstance(gates, list) or not gates:
        raise err("env.track.gates", f"a non-empty array of tables [[env.track.gates]], got {gates!r}")
    pos = [_vec3(err, gates, i, "pos", "env.track.gates") for i in range(len(gates))]
    rpy = [_vec3(err, gates, i, "rpy", "env.track.gates") for i in range(len(gates))]
    if lsy_axis == "y":
        rpy = [matrix_to_rpy(rpy_to_matrix(a) @ _QUARTER) for a in rpy]
    size = track.get("gate_size")
    if size is None:
        frame = dict(LEVEL_GATE, tolerance=0.0)
        size_text = "gate: 0.4 m opening in a 0.72 m frame (the level files' comment)"
    elif isinstance(size, dict):
        frame = {"width": _number(err, size, "width", "env.track.gate_size"),
                 "height": _number(err, size, "height", "env.track.gate_size"),
                 "frame_thickness": 0.05,
                 "tolerance": _number(err, size, "tolerance", "env.track.gate_size") if "tolerance" in size else 0.0}
        size_text = "gate opening from [env.track.gate_size]; frame bars 0.05 m (not in the file)"
    else:
        raise err("env.track.gate_size", f"a table with width, height, tolerance, got {size!r}")
    obstacles = track.get("obstacles", [])
    if not isinstance(obstacles, list):
        raise err("env.track.obstacles", f"an array of tables [[env.track.obstacles]], got {obstacles!r}")
    tops = np.array([_vec3(err, obstacles, i, "pos", "env.track.obstacles") for i in range(len(obstacles))],
                    dtype=np.float64).reshape(-1, 3)
    heights = tops[:, 2].copy()
    base = tops.copy()
    base[:, 2] = 0.0
    drones = track.get("drones")
    if not isinstance(drones, list) or not drones:
        raise err("env.track.drones", f"an array of tables [[env.track.drones]] (the start pose), got {drones!r}")
    start_pos = _vec3(err, drones, 0, "pos", "env.track.drones")
    start_rpy = _vec3(err, drones, 0, "rpy", "env.track.drones")
    source = (f"{path.name}: lsy_drone_racing config (env.id = {env_id!r}), gates passed along local +{lsy_axis}; "
              f"{size_text}; poles from the tops, 0.03 m across; start = drone 0; one pass (closed = false)")
    return GateLayout(
        pos=np.array(pos), rpy=np.array(rpy), width=frame["width"], height=frame["height"],
        frame_thickness=frame["frame_thickness"], tolerance=frame["tolerance"], closed=False,
        start_pos=start_pos, start_rpy=start_rpy,
        obstacles=Poles(pos=base, radius=np.full(len(base), LSY_POLE_RADIUS), height=heights),
        source=source, name=path.stem,
    )
