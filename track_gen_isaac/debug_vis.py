"""Debug visualization of a course: gate frames and course-line points as Isaac Lab markers.

``CourseCfg(debug_vis=True)`` gives the env's course a :class:`CourseDebugVis` (built with the
course, :func:`~track_gen_isaac.env_course.get_course`). It follows Isaac Lab's ``debug_vis``
pattern of command terms and assets, kitless:

* two :class:`isaaclab.markers.VisualizationMarkers` groups, ``"gates"`` (gate courses: four
  unit-cuboid bars per gate slot, scaled to the gate's opening and bar thickness, as
  :class:`~track_gen.tools.FrameCollision` sees them) and ``"line"`` (small spheres at up to
  ``line_points`` course-line points per env);
* an entry in the simulation's marker registry (``env.sim.vis_marker_registry``), whose callback
  :meth:`CourseDebugVis._debug_vis_callback` re-reads the course on the host. Isaac Lab calls it
  from ``sim.render()``, outside any captured graph, and **only while a marker-capable visualizer
  is active** (e.g. ``--visualizer newton``). Headless, nothing calls it and nothing is drawn, so
  the per-step cost is zero; with ``debug_vis=False`` (the default) nothing is created at all.

Marker layout: env-major, a fixed number of markers per env (``4 * G`` bars, ``K`` points), so a
regenerated env only rewrites its own rows; slots an env does not use (gates >= its count, points
>= its line's count, an invalid course) get scale 0 at the env origin. Isaac Lab's Newton backend
reads such a dense ``(num_envs, markers_per_env)`` batch per env.

The pure functions :func:`gate_marker_poses` / :func:`line_marker_poses` compute the marker
arrays from a track_gen ``Course`` and the env origins (world frame = origin + env-frame course
position); :func:`marker_poses` does it for an :class:`~track_gen_isaac.env_course.EnvCourse`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import warp as wp

__all__ = [
    "MarkerPoses", "CourseDebugVis", "gate_marker_poses", "line_marker_poses", "marker_poses",
    "MIN_BAR", "LINE_POINTS", "POINT_RADIUS",
]

#: smallest drawn bar thickness [m] (a course with thickness 0 still shows its gates)
MIN_BAR = 0.02
#: default course-line points drawn per env
LINE_POINTS = 64
#: radius of a course-line sphere [m]
POINT_RADIUS = 0.04

_GATE_COLOR = (1.0, 0.45, 0.0)
_LINE_COLOR = (0.0, 0.75, 1.0)


@dataclass
class MarkerPoses:
    """One marker group for E envs, M markers each, world frame, float32.

    ``translations`` [E, M, 3] [m]; ``orientations`` [E, M, 4] quaternions (x, y, z, w);
    ``scales`` [E, M, 3] (0 hides a marker).
    """

    translations: np.ndarray
    orientations: np.ndarray
    scales: np.ndarray

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The arrays as (E * M, .) rows, env-major (what ``VisualizationMarkers.visualize`` takes)."""
        return (self.translations.reshape(-1, 3), self.orientations.reshape(-1, 4), self.scales.reshape(-1, 3))

    def env_changed(self, other: "MarkerPoses") -> np.ndarray:
        """[E] bool: envs whose markers differ from ``other``'s."""
        return np.array([(a != b).reshape(a.shape[0], -1).any(axis=1) for a, b in
                         zip(self._arrays(), other._arrays())]).any(axis=0)

    def _arrays(self):
        return (self.translations, self.orientations, self.scales)


def _origins(origins, num_envs: int) -> np.ndarray:
    o = np.asarray(origins, dtype=np.float32)
    if o.shape != (num_envs, 3):
        raise ValueError(f"origins: expected shape ({num_envs}, 3) (one env origin per env [m]), got {o.shape}")
    return o


def gate_marker_poses(course, origins, *, min_thickness: float = MIN_BAR) -> MarkerPoses:
    """Four bars per gate slot of a gate course (``course.result`` a ``GateResult``), world frame.

    Per gate ``g`` of env ``e`` (centre ``p = origins[e] + pos[e, g]``, yaw ``psi``, normal
    ``n = (cos psi, sin psi, 0)``, lateral ``l = (-sin psi, cos psi, 0)``, opening ``w`` x ``h``,
    bar thickness ``t = max(thickness, min_thickness)``), bars ``4g + k``, each rotated by ``psi``
    about z (unit cuboids scaled along (n, l, z)):

    * k = 0 / 1: top / bottom bar at ``p +- (h/2 + t/2) z``, scale ``(t, w + 2t, t)`` (spans the corners);
    * k = 2 / 3: posts at ``p +- (w/2 + t/2) l``, scale ``(t, t, h)``.

    Slots ``g >= count[e]`` (all of them on an invalid course) get scale 0 at the env origin.
    Returns [E, 4G, .] arrays.
    """
    r = course.result
    if not hasattr(r, "yaw") or not hasattr(r, "thickness"):
        raise TypeError(f"gate_marker_poses: expected a gate course (a GateResult), got {type(r).__name__}")
    pos = r.pos.numpy().astype(np.float32)
    E, G = pos.shape[:2]
    o = _origins(origins, E)
    yaw = r.yaw.numpy().astype(np.float32)
    n_used = np.clip(r.count.numpy(), 0, G) * (r.valid.numpy() != 0)
    used = np.arange(G)[None, :] < n_used[:, None]  # [E, G]
    w = r.width.numpy().astype(np.float32)[:, None]
    h = r.height.numpy().astype(np.float32)[:, None]
    t = np.maximum(r.thickness.numpy().astype(np.float32), np.float32(min_thickness))[:, None]
    c, s = np.cos(yaw), np.sin(yaw)
    zero, one = np.zeros_like(yaw), np.ones_like(yaw)
    lat = np.stack([-s, c, zero], -1)  # [E, G, 3]
    up = np.stack([zero, zero, one], -1)
    dz = (0.5 * h + 0.5 * t)[..., None] * up
    dl = (0.5 * w + 0.5 * t)[..., None] * lat
    offsets = np.stack([dz, -dz, dl, -dl], axis=2)  # [E, G, 4, 3]
    tt = np.broadcast_to(t, yaw.shape)
    bar = np.stack([tt, np.broadcast_to(w + 2.0 * t, yaw.shape), tt], -1)  # [E, G, 3]
    post = np.stack([tt, tt, np.broadcast_to(h, yaw.shape)], -1)
    scales = np.stack([bar, bar, post, post], axis=2)
    half = 0.5 * yaw
    quat = np.stack([zero, zero, np.sin(half), np.cos(half)], -1)
    trans = o[:, None, None, :] + pos[:, :, None, :] + offsets
    # unused slots: hidden at the env origin, identity rotation
    trans = np.where(used[..., None, None], trans, o[:, None, None, :])
    scales = np.where(used[..., None, None], scales, 0.0)
    quat = np.where(used[..., None], quat, np.array([0.0, 0.0, 0.0, 1.0], np.float32))
    quat = np.broadcast_to(quat[:, :, None, :], (E, G, 4, 4))
    return MarkerPoses(trans.reshape(E, 4 * G, 3).astype(np.float32),
                       np.ascontiguousarray(quat.reshape(E, 4 * G, 4), dtype=np.float32),
                       scales.reshape(E, 4 * G, 3).astype(np.float32))


def _line_source(course) -> tuple[np.ndarray, np.ndarray]:
    """([E, N, 3] env-frame points, [E] count) of the course's line."""
    line = course.course_line
    if line is not None:
        ln = line.line
        return ln.points.numpy().astype(np.float32), ln.count.numpy()
    r = course.result
    if hasattr(r, "xy") and hasattr(r, "z"):  # a band track without a TrackLine: the generator's centerline
        xy, z = r.xy.numpy(), r.z.numpy()
        pts = np.concatenate([xy, z[..., None]], -1).astype(np.float32)
        count = np.where(r.valid.numpy() != 0, pts.shape[1], 0)
        return pts, count
    raise TypeError(f"line_marker_poses: the course has no course line ('centerline') and no track centerline "
                    f"({type(r).__name__})")


def line_marker_poses(course, origins, *, max_points: int = LINE_POINTS) -> MarkerPoses:
    """Up to ``max_points`` course-line points per env, world frame (``origins[e] +`` point).

    The line is ``course.course_line.line`` (gate courses; tracks with ``CourseCfg.localizer``),
    else a band track's own centerline (``course.result.xy`` / ``z``, all points of a valid
    course). With ``n`` points in use and ``K = min(max_points, N)`` slots: ``n <= K`` shows
    points ``0..n-1`` in slots ``0..n-1``; ``n > K`` shows point ``floor(i * n / K)`` in slot
    ``i``. Other slots: scale 0 at the env origin. Returns [E, K, .] arrays (identity rotation).
    """
    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) or max_points < 1:
        raise ValueError(f"max_points: expected an int >= 1, got {max_points!r}")
    pts, count = _line_source(course)
    E, N = pts.shape[:2]
    o = _origins(origins, E)
    K = min(int(max_points), N)
    n = np.clip(count.astype(np.int64), 0, N)[:, None]  # [E, 1]
    i = np.arange(K)[None, :]
    idx = np.where(n > K, (i * n) // K, i)  # [E, K]
    shown = i < n
    idx = np.where(shown, idx, 0)
    trans = o[:, None, :] + np.take_along_axis(pts, idx[..., None], axis=1)
    trans = np.where(shown[..., None], trans, o[:, None, :])
    scales = np.where(shown[..., None], np.float32(1.0), np.float32(0.0)) * np.ones((1, 1, 3), np.float32)
    quat = np.zeros((E, K, 4), np.float32)
    quat[..., 3] = 1.0
    return MarkerPoses(trans.astype(np.float32), quat, scales.astype(np.float32))


def marker_poses(ec, *, max_points: int = LINE_POINTS, min_thickness: float = MIN_BAR) -> dict[str, MarkerPoses]:
    """Every marker group of an EnvCourse: ``{"gates": ..., "line": ...}`` for a gate course,
    ``{"line": ...}`` for a track; world frame (the course's env origins added)."""
    origins = ec.origin.numpy()
    out = {}
    if ec.mode == "gates":
        out["gates"] = gate_marker_poses(ec.course, origins, min_thickness=min_thickness)
    out["line"] = line_marker_poses(ec.course, origins, max_points=max_points)
    return out


class CourseDebugVis:
    """The debug markers of one env course (see the module docstring).

    Args:
        env: the Isaac Lab env; its ``sim.vis_marker_registry`` calls :meth:`_debug_vis_callback`.
        ec: the :class:`~track_gen_isaac.env_course.EnvCourse` to draw.
        line_points: course-line points per env (``K``); point_radius: their sphere radius [m].
        min_thickness: smallest drawn bar thickness [m].

    Attributes:
        markers: ``{"gates": VisualizationMarkers, "line": ...}`` (no ``"gates"`` on a track).
        poses: the :class:`MarkerPoses` last pushed, per group.
        updates: host-side updates so far (construction included).
        enabled: whether the callback is registered and the markers visible.
    """

    def __init__(self, env, ec, *, line_points: int = LINE_POINTS, point_radius: float = POINT_RADIUS,
                 min_thickness: float = MIN_BAR):
        import isaaclab.sim as sim_utils
        from isaaclab.markers import VisualizationMarkers, VisualizationMarkersCfg

        if isinstance(line_points, bool) or not isinstance(line_points, (int, np.integer)) or line_points < 1:
            raise ValueError(f"line_points: expected an int >= 1, got {line_points!r}")
        for name, v in (("point_radius", point_radius), ("min_thickness", min_thickness)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v <= 0:
                raise ValueError(f"{name}: expected a finite number > 0 [m], got {v!r}")
        self._env = weakref.ref(env)
        self._ec = weakref.ref(ec)
        self.line_points, self.min_thickness = int(line_points), float(min_thickness)
        self.num_envs = int(ec.num_envs)
        root = f"/Visuals/TrackGen/{ec.name}"
        protos = {}
        if ec.mode == "gates":
            protos["gates"] = sim_utils.CuboidCfg(
                size=(1.0, 1.0, 1.0), visual_material=sim_utils.PreviewSurfaceCfg(diffuse_color=_GATE_COLOR))
        protos["line"] = sim_utils.SphereCfg(
            radius=float(point_radius), visual_material=sim_utils.PreviewSurfaceCfg(diffuse_color=_LINE_COLOR))
        self.markers = {
            group: VisualizationMarkers(VisualizationMarkersCfg(prim_path=f"{root}/{group}", markers={group: proto}))
            for group, proto in protos.items()
        }
        self.poses: dict[str, MarkerPoses] = {}
        self.updates = 0
        self.enabled = False
        self._debug_vis_handle = None  # the registry's id of our callback (Isaac Lab's debug_vis protocol)
        self.update()
        self.set_debug_vis(True)

    @property
    def env(self):
        env = self._env()
        if env is None:
            raise RuntimeError("the env these markers were built for is gone")
        return env

    @property
    def ec(self):
        ec = self._ec()
        if ec is None:
            raise RuntimeError("the course these markers were built for is gone")
        return ec

    def compute(self) -> dict[str, MarkerPoses]:
        """The marker arrays of the course as it is now (host copies; no side effects)."""
        return marker_poses(self.ec, max_points=self.line_points, min_thickness=self.min_thickness)

    def update(self) -> np.ndarray:
        """Re-read the course, push every group to the markers, return the env ids whose markers moved
        (all envs on the first update). Host-side: refused while a graph is being captured."""
        ec = self.ec
        if wp.get_device(ec.device).is_capturing:
            raise RuntimeError("CourseDebugVis.update reads the course on the host; call it outside graph capture")
        new = self.compute()
        if self.poses:
            changed = np.zeros(self.num_envs, bool)
            for group, p in new.items():
                changed |= p.env_changed(self.poses[group])
        else:
            changed = np.ones(self.num_envs, bool)
        self.poses = new
        for group, p in new.items():
            t, q, s = p.flat()
            m = p.translations.shape[1]
            env_ids = np.repeat(np.arange(self.num_envs, dtype=np.int32), m)
            self.markers[group].visualize(translations=t, orientations=q, scales=s, environment_ids=env_ids)
        self.updates += 1
        return np.flatnonzero(changed)

    def set_debug_vis(self, debug_vis: bool) -> None:
        """Show (register the per-render callback) or hide (unregister it) the markers."""
        if not isinstance(debug_vis, bool):
            raise TypeError(f"debug_vis: expected True or False, got {debug_vis!r}")
        registry = self.env.sim.vis_marker_registry
        for m in self.markers.values():
            m.set_visibility(debug_vis)
        if debug_vis:
            if self._debug_vis_handle is None:
                self._debug_vis_handle = registry.add_debug_vis_callback(self)
        else:
            registry.clear_debug_vis_callback(self)
        self.enabled = debug_vis

    def _debug_vis_callback(self, event) -> None:
        """Called by ``sim.render()`` before marker-capable visualizers draw (never headless)."""
        del event
        self.update()

    def __repr__(self) -> str:
        return (f"CourseDebugVis(groups={list(self.markers)}, num_envs={self.num_envs}, enabled={self.enabled}, "
                f"updates={self.updates})")
