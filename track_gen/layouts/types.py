"""Course layouts as plain numpy data: :class:`GateLayout`, :class:`TrackLayout`, :class:`Poles`.

Every array is float32 (the precision the device computes in), in metres and radians, in the
course's own frame (z up). A gate's orientation is ``rpy``: roll, pitch, yaw as *extrinsic* x-y-z
rotations (``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``); the gate is passed along its local +x axis, its
opening spans local y (``width``) and z (``height``). An upright gate (roll = pitch = 0) is passed
along ``(cos yaw, sin yaw, 0)``: the course gate's ``yaw`` and ``normal``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from track_gen.checks import as_real, is_number
from track_gen.layouts.writer import write_layout

__all__ = ["ANGLE_LIMIT", "COORD_LIMIT", "MIN_SIZE", "scale_factor", "GateLayout", "LayoutFieldError", "LayoutFieldTypeError",
           "Poles", "TrackLayout"]

#: the largest |coordinate| [m] float32 keeps to 1 mm (within +-2**15 m its rounding error is <= 2**-10 m)
COORD_LIMIT = 32768.0
#: the largest |angle| [rad] a layout holds (wrap anything larger into (-pi, pi])
ANGLE_LIMIT = 2.0 * math.pi
#: the smallest opening, band half width, pole radius or pole height [m]: the 1 mm a layout resolves
MIN_SIZE = 1e-3

_LOCAL_ORIGIN = ("float32, the precision the device computes in, keeps 1 mm only within +-32768 m of the origin: "
                 "shift the layout to a local origin (subtract one reference point, e.g. the first gate's x and y, "
                 "from every position: gates, start and poles)")


class _FieldProblem(Exception):
    """What a refused layout field carries: ``field`` (the file key, e.g. ``"gates.height"``), ``index`` (the
    gate, point or pole, or None), ``expected`` and ``got`` (texts), and ``owner`` (who was being built)."""

    def __init__(self, field: str, expected: str, got: str, index: int | None = None, owner: str = "",
                 fix: str = ""):
        self.field, self.expected, self.got, self.index, self.owner, self.fix = field, expected, got, index, owner, fix
        at = field + (f"[{index}]" if index is not None else "")
        who, hint = f"{owner}: " if owner else "", f"; {fix}" if fix else ""
        super().__init__(f"{who}{at}: expected {expected}, got {got}{hint}")


class LayoutFieldError(_FieldProblem, ValueError):
    """A layout field with a value outside its rule (non-finite, out of range, wrong shape)."""


class LayoutFieldTypeError(_FieldProblem, TypeError):
    """A layout field of the wrong type (None, text, booleans, a ragged list)."""


def _numbers(what: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array of real numbers (no bool, None, text), else a field error naming ``what``."""
    if value is None or isinstance(value, (str, bytes)):
        raise LayoutFieldTypeError(what, "numbers", f"{type(value).__name__} {value!r}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise LayoutFieldTypeError(what, "numbers in a regular array (rows of equal length)", repr(value)) from None
    if arr.dtype == object:
        flat = arr.reshape(-1)
        for i, x in enumerate(flat):
            if not is_number(x):
                raise LayoutFieldTypeError(what, "numbers", f"{type(x).__name__} {x!r}",
                                           index=i if arr.ndim else None)
        try:
            arr = np.array([float(x) for x in flat], dtype=np.float64).reshape(arr.shape)
        except OverflowError:
            raise LayoutFieldError(what, "finite numbers", "an integer too large for a float") from None
    elif arr.dtype.kind == "b":
        raise LayoutFieldTypeError(what, "numbers, not booleans", repr(value))
    elif arr.dtype.kind not in "iuf":
        raise LayoutFieldTypeError(what, "numbers", f"an array of {arr.dtype}: {value!r}")
    return arr.astype(np.float64)


def _shaped(what: str, arr: np.ndarray, shape: tuple[int | None, ...]) -> None:
    if arr.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, arr.shape)):
        want = "[" + ", ".join("N" if s is None else str(s) for s in shape) + "]"
        raise LayoutFieldError(what, f"an array of shape {want}", f"shape {arr.shape}")


def _fmt(values: np.ndarray) -> str:
    """Numbers as the shortest decimals that name them (``691234.35``, ``0.0``, ``nan``)."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 0:
        return repr(float(v))
    return "[" + ", ".join(repr(float(x)) for x in v.reshape(-1)) + "]"


def _first_bad(bad: np.ndarray) -> int | None:
    """The row (or entry) of the first True of ``bad``; None for a 0-d array."""
    if bad.ndim == 0:
        return None
    return int(np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))[0])


def _checked(what: str, value: Any, shape: tuple[int | None, ...], rule: str, *, broadcast: int | None = None
             ) -> np.ndarray:
    """``value`` as a float32 array of ``shape`` (one number is broadcast to ``broadcast`` entries) whose every
    entry keeps ``rule``:

    * ``"coord"``: a position [m] with ``|x| <= COORD_LIMIT`` (float32 keeps it to 1 mm);
    * ``"angle"``: an angle [rad] with ``|a| <= ANGLE_LIMIT``;
    * ``"size"``: a size [m] in ``[MIN_SIZE, COORD_LIMIT]``;
    * ``"margin"``: a size [m] in ``[0, COORD_LIMIT]`` (frame thickness, tolerance).
    """
    arr = _numbers(what, value)
    one = broadcast is not None and arr.ndim == 0  # one number for every entry: no index in messages
    if one:
        arr = np.full(broadcast, arr, dtype=np.float64)
    _shaped(what, arr, shape)

    def refuse(bad: np.ndarray, expected: str, fix: str = "") -> None:
        i = _first_bad(bad)
        got = arr if i is None else arr[i]
        raise LayoutFieldError(what, expected, _fmt(got), index=None if one else i, fix=fix)

    bad = ~np.isfinite(arr)
    if bad.any():
        refuse(bad, "finite numbers (nan and inf are refused)")
    with np.errstate(over="ignore"):  # beyond float32: refused below, as out of range
        f32 = arr.astype(np.float32)
    fix = ""
    if rule == "coord":
        bad, expected, fix = np.abs(arr) > COORD_LIMIT, f"positions within +-{COORD_LIMIT:g} m", _LOCAL_ORIGIN
    elif rule == "angle":
        bad, expected = np.abs(arr) > ANGLE_LIMIT, ("angles within +-2 pi [rad] (wrap them into (-pi, pi])")
    elif rule == "size":
        bad = (f32 < MIN_SIZE) | (arr > COORD_LIMIT)
        expected = f"a size of at least {MIN_SIZE:g} m and at most {COORD_LIMIT:g} m"
    elif rule == "margin":
        bad, expected = (f32 < 0.0) | (arr > COORD_LIMIT), f"a length of 0 to {COORD_LIMIT:g} m"
    else:  # pragma: no cover - a programming error
        raise AssertionError(rule)
    if bad.any():
        refuse(bad, expected, fix)
    return f32


def _flag(what: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise LayoutFieldTypeError(what, "True or False", f"{type(value).__name__} {value!r}")
    return bool(value)


def _text(what: str, value: Any) -> str:
    if not isinstance(value, str):
        raise LayoutFieldTypeError(what, "a string", f"{type(value).__name__} {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise LayoutFieldError(what, "text a UTF-8 file can hold", f"{value!r} (a lone surrogate)") from None
    return value


def _owned(owner: str, check) -> None:
    """Run ``check()``, naming ``owner`` in a field error it raises."""
    try:
        check()
    except _FieldProblem as exc:
        if exc.owner:
            raise
        exc.owner = owner
        exc.args = (f"{owner}: {exc.args[0]}",)
        raise


def _same(a, b) -> bool:
    """Exact equality of two float32 arrays, NaNs equal to NaNs and -0.0 told from 0.0 (byte equality)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def scale_factor(value: Any) -> float:
    """A length factor: a finite number > 0, else TypeError / ValueError naming ``scale``."""
    s = as_real("scale", value)
    if s <= 0.0:
        raise ValueError(f"scale: expected a length factor > 0 (e.g. 0.1 for a 1/10-scale car), got {value!r}")
    return s


def _scaled_source(source: str, s: float) -> str:
    return f"{source} (lengths x {s:g})" if source else f"lengths x {s:g}"


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
        self.check()

    def check(self) -> "Poles":
        """Check every field (finite, in range, right shape) and store it as float32; returns self.

        Raises :class:`LayoutFieldError` (a ValueError) or :class:`LayoutFieldTypeError` naming the field."""
        _owned("Poles", self._check)
        return self

    def _check(self) -> None:
        self.pos = _checked("obstacles.pos", self.pos, (None, 3), "coord")
        m = self.pos.shape[0]
        self.radius = _checked("obstacles.radius", self.radius, (m,), "size", broadcast=m)
        self.height = _checked("obstacles.height", self.height, (m,), "size", broadcast=m)
        top = self.pos[:, 2].astype(np.float64) + self.height
        if m and np.any(top <= 0.0):
            j = int(np.flatnonzero(top <= 0.0)[0])
            raise LayoutFieldError("obstacles.pos", "a pole reaching above the ground (base z + height > 0)",
                                   f"base z {self.pos[j, 2]:g} m + height {self.height[j]:g} m = {top[j]:g} m: "
                                   "the pole is entirely underground", index=j)

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
        self.check()

    def check(self) -> "GateLayout":
        """Check every field (finite, in range, right shape) and store arrays as float32; returns self.

        Called when the layout is built (and by ``replace``, ``save`` and the generator presets, so a
        layout edited in place is checked again). Raises :class:`LayoutFieldError` (a ValueError) or
        :class:`LayoutFieldTypeError` (a TypeError) naming the field, the gate and what was expected."""
        name = self.name if isinstance(self.name, str) and self.name else ""
        _owned(f"GateLayout {name!r}" if name else "GateLayout", self._check)
        return self

    def _check(self) -> None:
        self.source, self.name = _text("source", self.source), _text("name", self.name)
        self.pos = _checked("gates.pos", self.pos, (None, 3), "coord")
        g = self.pos.shape[0]
        if g < 1:
            raise LayoutFieldError("gates.pos", "at least one gate", "0 gates")
        self.rpy = _checked("gates.rpy", self.rpy, (g, 3), "angle")
        self.width = _checked("gates.width", self.width, (g,), "size", broadcast=g)
        self.height = _checked("gates.height", self.height, (g,), "size", broadcast=g)
        self.frame_thickness = _checked("gates.frame_thickness", self.frame_thickness, (g,), "margin", broadcast=g)
        self.tolerance = _checked("gates.tolerance", self.tolerance, (g,), "margin", broadcast=g)
        self.start_pos = _checked("start.pos", self.start_pos, (3,), "coord")
        if self.start_pos[2] < 0.0:
            raise LayoutFieldError("start.pos", "a start on or above the ground (z >= 0)",
                                   f"z = {self.start_pos[2]:g} m")
        self.start_rpy = _checked("start.rpy", self.start_rpy, (3,), "angle")
        self.closed = _flag("closed", self.closed)
        if self.closed and g < 2:
            raise LayoutFieldError("closed", "false for a single gate (a loop needs at least 2 gates: a one-gate "
                                   "loop has length 0)", "true")
        if not isinstance(self.obstacles, Poles):
            raise LayoutFieldTypeError("obstacles", "a Poles", type(self.obstacles).__name__)
        self.obstacles._check()

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

    def scaled(self, scale: float) -> "GateLayout":
        """A copy with every length (positions, openings, frames, tolerances, poles) times ``scale``;
        angles unchanged. ``source`` notes the factor."""
        s = scale_factor(scale)

        def f(a):
            return np.asarray(a, np.float64) * s

        o = self.obstacles
        poles = Poles(pos=f(o.pos), radius=f(o.radius), height=f(o.height))
        return self.replace(pos=f(self.pos), width=f(self.width), height=f(self.height),
                            frame_thickness=f(self.frame_thickness), tolerance=f(self.tolerance),
                            start_pos=f(self.start_pos), obstacles=poles, source=_scaled_source(self.source, s))

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
        self.check()

    def check(self) -> "TrackLayout":
        """Check every field (finite, in range, right shape) and store arrays as float32; returns self.

        Raises :class:`LayoutFieldError` (a ValueError) or :class:`LayoutFieldTypeError` naming the field."""
        name = self.name if isinstance(self.name, str) and self.name else ""
        _owned(f"TrackLayout {name!r}" if name else "TrackLayout", self._check)
        return self

    def _check(self) -> None:
        self.source, self.name = _text("source", self.source), _text("name", self.name)
        self.centerline = _checked("track.centerline", self.centerline, (None, 3), "coord")
        n = self.centerline.shape[0]
        if n < 3:
            raise LayoutFieldError("track.centerline", "at least 3 points", f"{n}")
        self.half_width = _checked("track.half_width", self.half_width, (n,), "size", broadcast=n)
        self.closed = _flag("closed", self.closed)
        xy = self.centerline[:, :2].astype(np.float64)
        loop = float(np.linalg.norm(np.diff(np.concatenate([xy, xy[:1]]), axis=0), axis=1).sum())
        if loop < MIN_SIZE:
            raise LayoutFieldError("track.centerline", f"a loop at least {MIN_SIZE:g} m long in plan view (x, y)",
                                   f"{loop:g} m")

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

    def scaled(self, scale: float) -> "TrackLayout":
        """A copy with every length (centerline, half widths) times ``scale``; ``source`` notes the factor."""
        s = scale_factor(scale)
        return self.replace(centerline=self.centerline.astype(np.float64) * s,
                            half_width=self.half_width.astype(np.float64) * s, source=_scaled_source(self.source, s))

    def __eq__(self, other) -> bool:
        if not isinstance(other, TrackLayout):
            return NotImplemented
        return (_same(self.centerline, other.centerline) and _same(self.half_width, other.half_width)
                and self.closed == other.closed and self.source == other.source)

    def __repr__(self) -> str:
        return f"TrackLayout({self.label()!r}, {self.num_points} points, closed={self.closed})"
