"""Read lsy_drone_racing's track configs (``[env.track]`` tables of its TOML files) as they are.

What the reader takes (tables outside ``[env.track]`` -- simulation, deployment, disturbances --
are not the track's and are not read; inside it, every key must be one of these, and a misspelled
one is refused with the nearest known name):

* ``[[env.track.gates]]``: ``pos`` (gate centre [m]) and ``rpy`` (extrinsic x-y-z [rad], as
  ``scipy.spatial.transform.Rotation.from_euler("xyz", rpy)``);
* ``[env.track.gate_size]`` (AIGP files): ``width``, ``height`` (the opening [m]) and ``tolerance``;
  without it, the level files' documented gate: a 0.4 m square opening in a 0.72 m frame
  (frame bars 0.16 m);
* ``[[env.track.obstacles]]``: ``pos``, the pole's **top** (the files say "height is measured from
  the ground to the top"); poles are 0.03 m across (the files' comment), so each becomes a pole of
  radius 0.015 m standing on the ground with height = top z;
* ``[[env.track.drones]]``: the first drone's ``pos`` and ``rpy`` are the start pose; ``vel`` and
  ``ang_vel``, when given, must be zero (a layout's start is at rest: a moving start is refused, not
  dropped);
* ``randomize`` (a boolean) and ``safety_limits`` (``pos_limit_low``, ``pos_limit_high``): checked,
  not used (the layout is the nominal track).

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

from track_gen.layouts.filekeys import FileErrors, _short, real, reals
from track_gen.layouts.types import GateLayout, Poles, _checked, _FieldProblem

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


#: the keys of [env.track] and of its tables (lsy_drone_racing's track configs)
TRACK_KEYS = ("gates", "obstacles", "drones", "gate_size", "randomize", "safety_limits")
ITEM_KEYS = {"gates": ("pos", "rpy"), "obstacles": ("pos",), "drones": ("pos", "rpy", "vel", "ang_vel")}
GATE_SIZE_KEYS = ("width", "height", "tolerance")
LIMIT_KEYS = ("pos_limit_low", "pos_limit_high")


def _items(err: FileErrors, track: dict, name: str, required: bool) -> list[dict]:
    """The array of tables ``[[env.track.<name>]]``, each with known keys only."""
    key = f"env.track.{name}"
    items = track.get(name, None if required else [])
    if not isinstance(items, list) or (required and not items):
        raise err(key, f"a non-empty array of tables [[{key}]], got {_short(items)}")
    for i, item in enumerate(items):
        err.check_keys(item, f"{key}[{i}]", ITEM_KEYS[name], f"keys of [[{key}]]")
    return items


def _vec3(err: FileErrors, items: list[dict], i: int, key: str, where: str) -> list[float]:
    name = f"{where}[{i}].{key}"
    if key not in items[i]:
        raise err(name, "a list of 3 numbers, missing")
    return reals(err, name, items[i][key], 3)


def _number(err: FileErrors, table: dict, key: str, where: str) -> float:
    if key not in table:
        raise err(f"{where}.{key}", "a number [m], missing")
    return real(err, f"{where}.{key}", table[key])


def _lsy_key(exc: _FieldProblem) -> str:
    """The lsy_drone_racing key a layout field came from."""
    i = exc.index
    item = {"gates.pos": ("gates", "pos"), "gates.rpy": ("gates", "rpy"), "obstacles.pos": ("obstacles", "pos"),
            "obstacles.height": ("obstacles", "pos")}.get(exc.field)
    if item is not None:
        return f"env.track.{item[0]}" + (f"[{i}].{item[1]}" if i is not None else "")
    return {"gates.width": "env.track.gate_size.width", "gates.height": "env.track.gate_size.height",
            "gates.tolerance": "env.track.gate_size.tolerance", "start.pos": "env.track.drones[0].pos",
            "start.rpy": "env.track.drones[0].rpy"}.get(exc.field, f"env.track ({exc.field})")


def read_lsy(doc: dict[str, Any], path: Path, err: FileErrors, lsy_axis: str | None) -> GateLayout:
    """A :class:`GateLayout` from the parsed lsy_drone_racing config ``doc`` (``err(key, expected)``
    builds the error naming the file, the key and its line)."""
    env = doc["env"]
    track = err.check_keys(env["track"], "env.track", TRACK_KEYS, "keys of [env.track]")
    env_id = env.get("id")
    if lsy_axis is None:
        if env_id != AIGP_ID:
            raise err("env.id", (
                f"lsy_axis='x' or 'y' for this {_short(env_id)} file: {_AXIS_CHANGE} moved the gate-pass axis of "
                f"DroneRacing-v0 levels from local y to local x (and rotated the level files by +pi/2); pass "
                f"load(path, lsy_axis='x') for files from that commit on, lsy_axis='y' for older ones"))
        lsy_axis = "x"
    if lsy_axis not in ("x", "y"):
        raise ValueError(f"lsy_axis: expected 'x' or 'y', got {lsy_axis!r}")
    if "randomize" in track and not isinstance(track["randomize"], bool):
        raise err("env.track.randomize", f"true or false, got {_short(track['randomize'])}")
    if "safety_limits" in track:
        limits = err.check_keys(track["safety_limits"], "env.track.safety_limits", LIMIT_KEYS,
                                "keys of [env.track.safety_limits]")
        for key, v in limits.items():
            reals(err, f"env.track.safety_limits.{key}", v, 3)
    gates = _items(err, track, "gates", required=True)
    pos = [_vec3(err, gates, i, "pos", "env.track.gates") for i in range(len(gates))]
    rpy = [_vec3(err, gates, i, "rpy", "env.track.gates") for i in range(len(gates))]
    with err.fields(_lsy_key):  # the file's angles, before any turn: finite and within +-2 pi
        checked_rpy = _checked("gates.rpy", np.array(rpy, dtype=np.float64).reshape(-1, 3), (None, 3), "angle")
    if lsy_axis == "y":
        rpy = [matrix_to_rpy(rpy_to_matrix(a) @ _QUARTER) for a in rpy]
    else:
        rpy = checked_rpy
    size = track.get("gate_size")
    if size is None:
        frame = dict(LEVEL_GATE, tolerance=0.0)
        size_text = "gate: 0.4 m opening in a 0.72 m frame (the level files' comment)"
    else:
        size = err.check_keys(size, "env.track.gate_size", GATE_SIZE_KEYS, "keys of [env.track.gate_size]")
        frame = {"width": _number(err, size, "width", "env.track.gate_size"),
                 "height": _number(err, size, "height", "env.track.gate_size"),
                 "frame_thickness": 0.05,
                 "tolerance": _number(err, size, "tolerance", "env.track.gate_size") if "tolerance" in size else 0.0}
        size_text = "gate opening from [env.track.gate_size]; frame bars 0.05 m (not in the file)"
    obstacles = _items(err, track, "obstacles", required=False)
    tops = np.array([_vec3(err, obstacles, i, "pos", "env.track.obstacles") for i in range(len(obstacles))],
                    dtype=np.float64).reshape(-1, 3)
    for i, top in enumerate(tops):
        if not top[2] > 0.0:
            raise err(f"env.track.obstacles[{i}].pos", f"a pole's top above the ground (z > 0: the file gives the "
                                                         f"top of each pole), got z = {top[2]!r}: the pole would be "
                                                         "entirely underground")
    heights = tops[:, 2].copy()
    base = tops.copy()
    base[:, 2] = 0.0
    drones = _items(err, track, "drones", required=True)
    for i in range(len(drones)):
        for key in ("pos", "rpy"):
            _vec3(err, drones, i, key, "env.track.drones")
        for key in ("vel", "ang_vel"):
            if key in drones[i] and any(reals(err, f"env.track.drones[{i}].{key}", drones[i][key], 3)):
                raise err(f"env.track.drones[{i}].{key}", f"[0, 0, 0] (a layout's start is at rest; a moving start "
                                                           f"would be dropped), got {_short(drones[i][key])}")
    start_pos = _vec3(err, drones, 0, "pos", "env.track.drones")
    start_rpy = _vec3(err, drones, 0, "rpy", "env.track.drones")
    source = (f"{path.name}: lsy_drone_racing config (env.id = {env_id!r}), gates passed along local +{lsy_axis}; "
              f"{size_text}; poles from the tops, 0.03 m across; start = drone 0; one pass (closed = false)")
    with err.fields(_lsy_key):
        return GateLayout(
            pos=np.array(pos), rpy=np.array(rpy), width=frame["width"], height=frame["height"],
            frame_thickness=frame["frame_thickness"], tolerance=frame["tolerance"], closed=False,
            start_pos=start_pos, start_rpy=start_rpy,
            obstacles=Poles(pos=base, radius=np.full(len(base), LSY_POLE_RADIUS), height=heights),
            source=source, name=path.stem,
        )
