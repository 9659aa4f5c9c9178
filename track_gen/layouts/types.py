"""Course layouts as plain numpy data: :class:`GateLayout`, :class:`TrackLayout`, :class:`Poles`.

Every array is float32 (the precision the device computes in), in metres and radians, in the
course's own frame (z up). A gate's orientation is ``rpy``: roll, pitch, yaw as *extrinsic* x-y-z
rotations (``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``); the gate is passed along its local +x axis, its
opening spans local y (``width``) and z (``height``). An upright gate (roll = pitch = 0) is passed
along ``(cos yaw, sin yaw, 0)``: the course gate's ``yaw`` and ``normal``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from track_gen.layouts.writer import write_layout

__all__ = ["GateLayout", "Poles", "TrackLayout"]


def _f32(what: str, value, shape: tuple[int | None, ...]) -> np.ndarray:
    """``value`` as a float32 array of ``shape`` (None: any length), else ValueError naming ``what``."""
    try:
        arr = np.array(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: expected numbers, got {value!r}") from None
    if arr.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, arr.shape)):
        want = "[" + ", ".join("N" if s is None else str(s) for s in shape) + "]"
        raise ValueError(f"{what}: expected an array of shape {want}, got shape {arr.shape}")
    return arr


def _per_item(what: str, value, n: int) -> np.ndarray:
    """One number or ``n`` numbers as a float32 [n] array."""
    arr = np.array(value, dtype=np.float32)
    if arr.ndim == 0:
        return np.full(n, arr, dtype=np.float32)
    return _f32(what, arr, (n,))


def _same(a, b) -> bool:
    """Exact equality of two float32 arrays, NaNs equal to NaNs and -0.0 told from 0.0 (byte equality)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@dataclass(eq=False)
class Poles:
    """Pole obstacles: vertical cylinders standing on the ground.

    ``pos`` [M, 3] is the centre of each pole's **base** (its bottom, usually z = 0), ``radius``
    [M] and ``height`` [M] (from the base to the top) in metres. lsy_drone_racing files give the
    pole's *top*; the reader converts (base z = top z - height).
    """

    pos: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.float32))
    radius: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    height: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))

    def __post_init__(self) -> None:
        self.pos = _f32("obstacles.pos", self.pos, (None, 3))
        m = self.pos.shape[0]
        self.radius = _per_item("obstacles.radius", self.radius, m)
        self.height = _per_item("obstacles.height", self.height, m)

    def __len__(self) -> int:
        return int(self.pos.shape[0])

    def __eq__(self, other) -> bool:
        if not isinstance(other, Poles):
            return NotImplemented
        return all(_same(getattr(self, n), getattr(other, n)) for n in ("pos", "radius", "height"))


@dataclass(eq=False)
class GateLayout:
    """A gate course as data: G gates, a start pose, optional pole obstacles.

    Attributes:
        pos: [G, 3] gate centres [m].
        rpy: [G, 3] gate orientations, extrinsic x-y-z [rad]; passed along local +x.
        width, height: [G] inner opening [m] (one number is broadcast to every gate).
        frame_thickness: [G] frame bar thickness [m]: the outer frame is ``width + 2 t`` wide.
        closed: True for a loop (after the last gate comes gate 0 again), False for one pass.
        start_pos: [3] start position [m]; start_rpy: [3] start orientation (the vehicle's body
            x axis points along its heading), extrinsic x-y-z [rad].
        tolerance: [G] how far a real gate may sit from its nominal pose [m] (lsy_drone_racing's
            ``gate_size.tolerance``); evaluation tools use it as jitter. 0 when unknown.
        obstacles: :class:`Poles`.
        source: where the layout comes from (free text: file, repository, commit, converter).
        name: a short label (the file stem when loaded), used in warnings.
    """

    pos: np.ndarray
    rpy: np.ndarray
    width: np.ndarray
    height: np.ndarray
    frame_thickness: np.ndarray = 0.05
    closed: bool = True
    start_pos: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))
    start_rpy: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))
    tolerance: np.ndarray = 0.0
    obstacles: Poles = field(default_factory=Poles)
    source: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        self.pos = _f32("gates.pos", self.pos, (None, 3))
        g = self.pos.shape[0]
        if g < 1:
            raise ValueError("gates.pos: a gate layout needs at least one gate, got 0")
        self.rpy = _f32("gates.rpy", self.rpy, (g, 3))
        self.width = _per_item("gates.width", self.width, g)
        self.height = _per_item("gates.height", self.height, g)
        self.frame_thickness = _per_item("gates.frame_thickness", self.frame_thickness, g)
        self.tolerance = _per_item("gates.tolerance", self.tolerance, g)
        self.start_pos = _f32("start.pos", self.start_pos, (3,))
        self.start_rpy = _f32("start.rpy", self.start_rpy, (3,))
        if not isinstance(self.closed, (bool, np.bool_)):
            raise TypeError(f"closed: expected True or False, got {self.closed!r}")
        self.closed = bool(self.closed)
        if not isinstance(self.obstacles, Poles):
            raise TypeError(f"obstacles: expected a Poles, got {type(self.obstacles).__name__}")
        self.source, self.name = str(self.source), str(self.name)

    @property
    def num_gates(self) -> int:
        return int(self.pos.shape[0])

    @property
    def yaw(self) -> np.ndarray:
        """[G] float32 gate headings [rad]: the direction of passage of an upright gate (``rpy[:, 2]``)."""
        return self.rpy[:, 2].copy()

    @property
    def start_yaw(self) -> np.float32:
        return np.float32(self.start_rpy[2])

    def label(self) -> str:
        return self.name or self.source or "<unnamed layout>"

    def replace(self, **changes) -> "GateLayout":
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def save(self, path: str | Path) -> Path:
        """Write this layout in the track_gen layout format (TOML, version 1); returns the path."""
        return write_layout(self, path)

    def __eq__(self, other) -> bool:
        if not isinstance(other, GateLayout):
            return NotImplemented
        arrays = ("pos", "rpy", "width", "height", "frame_thickness", "start_pos", "start_rpy", "tolerance")
        return (all(_same(getattr(self, n), getattr(other, n)) for n in arrays) and self.closed == other.closed
                and self.obstacles == other.obstacles and self.source == other.source)

    def __repr__(self) -> str:
        poles = len(self.obstacles)
        return f"GateLayout({self.label()!r}, {self.num_gates} gates, closed={self.closed}, {poles} poles)"


@dataclass(eq=False)
class TrackLayout:
    """A band track as data: a closed centerline with a half width.

    Attributes:
        centerline: [N, 3] points in order along the direction of travel [m] (z: height; 0 for flat).
        half_width: [N] band half width at each point [m] (one number is broadcast).
        closed: True (band tracks are loops; an open one cannot be used as a track course).
        source, name: as for :class:`GateLayout`.
    """

    centerline: np.ndarray
    half_width: np.ndarray
    closed: bool = True
    source: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        self.centerline = _f32("track.centerline", self.centerline, (None, 3))
        n = self.centerline.shape[0]
        if n < 3:
            raise ValueError(f"track.centerline: a track layout needs at least 3 points, got {n}")
        self.half_width = _per_item("track.half_width", self.half_width, n)
        if not isinstance(self.closed, (bool, np.bool_)):
            raise TypeError(f"closed: expected True or False, got {self.closed!r}")
        self.closed = bool(self.closed)
        self.source, self.name = str(self.source), str(self.name)

    @property
    def num_points(self) -> int:
        return int(self.centerline.shape[0])

    def label(self) -> str:
        return self.name or self.source or "<unnamed layout>"

    def replace(self, **changes) -> "TrackLayout":
        return dataclasses.replace(self, **changes)

    def save(self, path: str | Path) -> Path:
        """Write this layout in the track_gen layout format (TOML, version 1); returns the path."""
        return write_layout(self, path)

    def __eq__(self, other) -> bool:
        if not isinstance(other, TrackLayout):
            return NotImplemented
        return (_same(self.centerline, other.centerline) and _same(self.half_width, other.half_width)
                and self.closed == other.closed and self.source == other.source)

    def __repr__(self) -> str:
        return f"TrackLayout({self.label()!r}, {self.num_points} points, closed={self.closed})"
