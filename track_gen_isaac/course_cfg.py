"""CourseCfg: a track_gen course declared in an Isaac Lab env cfg.

Put one on the env cfg as an attribute (``course`` by default) and the course terms of
:mod:`track_gen_isaac.mdp` build the course from it on first use, once per env instance
(:func:`track_gen_isaac.env_course.get_course`)::

    @configclass
    class MyEnvCfg(ManagerBasedRLEnvCfg):
        course: CourseCfg = CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision=0.05,
                                      half_extents=(0.1, 0.1))
        ...

The generator config is stored as a plain dict of its fields (``TrackGenConfig`` /
``GateGenConfig`` are frozen dataclasses, which ``@configclass`` cannot hold: its post-init
writes into every nested dataclass). A dict also serializes with the env cfg and takes Hydra
overrides (``env.course.generator.size=12``). ``num_envs`` and ``device`` are always taken from
the env at build time.

A course can fly real (or exported) layouts instead of procedural ones: ``layouts=`` takes files,
a folder, ``GateLayout`` / ``TrackLayout`` objects or a list of them, and ``layout_options`` the
keyword overrides of ``presets.gates_from_layouts`` / ``track_from_layouts``
(:mod:`track_gen_isaac.course_layouts`); ``generator`` is then not used.

``depth_camera=DepthCameraCfg(...)`` adds a ``tools.DepthCamera`` (named ``"depth_camera"``) for the
depth observation terms (:mod:`track_gen_isaac.mdp.depth`), which cast it when the observations are
computed.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

from isaaclab.utils import configclass

__all__ = ["CourseCfg", "DepthCameraCfg", "MODES"]

#: the course presets a CourseCfg stands for
MODES = ("track", "gates")

_TRACK_COLLISIONS = (None, "segments", "sdf")


def _generator_classes():
    from track_gen.generators.gates import GateGenConfig
    from track_gen.generators.track import TrackGenConfig

    return {"track": TrackGenConfig, "gates": GateGenConfig}


def _as_dict(gen) -> dict:
    """The fields of a TrackGenConfig / GateGenConfig as a plain dict (num_envs/device dropped)."""
    out = {}
    for f in dataclasses.fields(gen):
        if f.name in ("num_envs", "device"):
            continue
        v = getattr(gen, f.name)
        if f.name == "randomize":
            v = {str(k): tuple(float(x) for x in r) for k, r in dict(v).items()}
        out[f.name] = v
    return out


@configclass
class DepthCameraCfg:
    """A per-env depth camera on the course: the arguments of ``track_gen.tools.DepthCamera``
    (their meaning and limits are its own; docs: "Depth without a renderer"), checked by
    :meth:`CourseCfg.validate_config` with errors naming ``CourseCfg.depth_camera.<field>``.

    The course gets it as the component ``"depth_camera"`` with ``cast_on_step=False``: the depth
    observation terms (``mdp.depth_flat`` / ``mdp.depth_image``) cast it when the observations are
    computed, after the step's resets, so every observation shows the pose and course the policy
    acts on."""

    width: int = 16
    """Image width [pixels]."""
    height: int = 12
    """Image height [pixels]."""
    fov_deg: float = 90.0
    """Horizontal field of view [deg]."""
    near: float = 0.05
    """Surfaces nearer than this are ignored [m]."""
    far: float = 10.0
    """Depth of a pixel that sees nothing [m] (> near)."""
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Mount position in the body frame (x forward, y left, z up) [m]."""
    pitch_deg: float = 0.0
    """Downward pitch of the optical axis [deg]."""
    convention: str = "distance"
    """``"distance"`` (along the ray) or ``"z"`` (along the optical axis)."""
    wall_height: float = 0.3
    """Band tracks: the walls' height [m] (0: none)."""
    post_radius: Any = "auto"
    """Gate posts: ``"auto"`` (the course's disc collision radius, if any), a radius [m], or None."""
    ground: bool = True
    """Cast against the ground plane."""
    ring: int = 0
    """Range rays in the body's xy plane (0: none)."""
    grid: Any = None
    """(rows, cols) of parallel range rays (None: none)."""
    grid_spacing: float = 0.1
    """Distance between neighbouring grid rays [m]."""
    grid_direction: tuple[float, float, float] = (0.0, 0.0, -1.0)
    """The grid rays' direction in the body frame (default down: a height scan)."""

    def build(self, cast_on_step: bool = False):
        """The ``tools.DepthCamera`` (unattached) this cfg stands for; TypeError / ValueError naming
        ``CourseCfg.depth_camera.<field>`` on bad values."""
        from track_gen.tools import DepthCamera

        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        try:
            return DepthCamera(**fields, cast_on_step=cast_on_step, name="depth_camera")
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"CourseCfg.depth_camera.{exc}") from None


@configclass
class CourseCfg:
    """One procedural course per env, following one scene entity.

    Every field is checked by :meth:`validate_config` -- which Isaac Lab calls when it validates
    the env cfg (at env construction), and the course build calls again -- with an error naming
    the field, the value and the fix.
    """

    mode: str | None = None
    """``"track"`` (a band track: ``Course.track``) or ``"gates"`` (a gate course: ``Course.gates``).
    None: taken from ``generator`` when that is a ``TrackGenConfig`` / ``GateGenConfig``."""

    generator: Any = None
    """The generator: a ``track_gen.TrackGenConfig`` / ``GateGenConfig`` (turned into a dict of its
    fields at construction) or a dict of such fields (missing ones take the config's defaults).
    ``num_envs`` and ``device`` are filled from the env at build time. A gate course needs a
    ``gate_width`` > 0 (or a ``"gate_frames.gate_width"`` randomizer with lo > 0): checked by
    :meth:`validate_config` (``GateGenConfig``'s default width is 0)."""

    collision: Any = None
    """Track: None, ``"segments"`` or ``"sdf"`` (``BandCollision``). Gates: None, a post radius
    > 0 [m] (``DiscCollision``) or ``"frame"`` (``FrameCollision`` with :attr:`half_height`)."""

    checkpoint_spacing: float = 1.0
    """Track only: distance between checkpoints along the centerline [m]."""

    max_checkpoints: int | None = None
    """Track only: checkpoint capacity (None: sized from the generator's ``max_length``)."""

    samples_per_gate: int = 8
    """Gates only: course-line points per leg between two gates (>= 2)."""

    localize_window: int | None = None
    """The localizer's warm window (None: exact global search every step)."""

    localizer: bool = True
    """Track only: add a ``TrackLine`` ("centerline") and a ``Localizer`` ("localizer") so that the
    track frame and lookahead observations work (a gate course always has both)."""

    half_extents: tuple[float, float] = (0.1, 0.1)
    """Half length (body x) and half width (body y) of the robot's box footprint [m]."""

    half_height: float = 0.05
    """Vertical half extent of the robot's box [m]; used by ``collision="frame"``, and on a track
    course as the default ``z_offset`` of ``place_at_course_start`` / ``place_at_checkpoint`` (the
    box then stands on the ground)."""

    asset_name: str = "robot"
    """The scene entity the course follows (its ``root_pos_w`` / ``root_quat_w``)."""

    agents: int = 1
    """K, the agents racing each course (``Course(..., agents=K)``): the env's ``num_envs`` Isaac Lab
    envs are ``num_envs / K`` races, env ``a`` is agent ``a % K`` of race ``a // K`` (env-major, as
    the course's rows), one drone each. The course is generated once per race; every per-step
    result is per agent. K > 1 needs ``num_envs`` divisible by K and the K envs of a race at one
    origin (``scene.env_spacing = 0``), and course terms that support it (``multi_agent``); the
    duel task (:mod:`~track_gen_isaac.tasks.drone_duel`) is built on it. 1 (default): one drone per
    course, as before."""

    seed: int | None = None
    """Course seed. None: ``env.cfg.seed`` (0 when that is None too). Hashed with the env's global
    index ``rank * num_envs + e``, so ranks of a distributed run never share courses."""

    extra: list = []
    """More components, appended after the preset's own. Each entry is a component class or a
    zero-argument factory (called once per env instance), or an unattached component instance
    (deep-copied per env instance: a component belongs to one course)."""

    layouts: Any = None
    """Real (or exported) layouts as the course source instead of ``generator``: a layout file
    (``track_gen.layouts`` format or an lsy_drone_racing config), a folder of them, a
    ``GateLayout`` / ``TrackLayout``, or a list of these (kept as strings and dicts of plain
    numbers, so the cfg copies and serializes). Each env flies one of the K layouts (a per-env draw
    at each regeneration, or ``layout_options["assign"]``), its gates equal to the layout's float32
    numbers unless randomized. ``mode`` follows the layouts' kind. Stored as a list (override it
    with a list: ``env.course.layouts=[a.toml,b.toml]``). None: the procedural ``generator``."""

    layout_options: dict = {}
    """With ``layouts``: keyword overrides of ``presets.gates_from_layouts`` /
    ``track_from_layouts`` -- ``assign`` (one layout index per env), ``shift``, ``rotate``,
    ``jitter_pos``, ``jitter_height``, ``jitter_yaw``, ``size``, ``max_gates``, ``max_obstacles``,
    ``max_attempts``, ``randomize`` ... -- plus ``lsy_axis`` (``"x"`` / ``"y"``) for lsy_drone_racing
    level files."""

    layout_recenter: bool = False
    """With ``layouts``: shift each layout in x and y so that the middle of its plan-view bounding box
    is at the env origin. False (default): the layout's own frame is the env frame (numbers as in
    the file); a layout wider than ``env_spacing`` then overlaps its neighbours' space, which is
    harmless where envs do not touch (the drone tasks)."""

    depth_camera: DepthCameraCfg | None = None
    """A per-env depth camera (:class:`DepthCameraCfg`), the component ``"depth_camera"`` that the
    depth observation terms read. None: no camera."""

    debug_vis: bool = False
    """Draw the course with Isaac Lab markers (:mod:`track_gen_isaac.debug_vis`): gate frames and
    course-line points, world frame, refreshed on the host before a marker-capable visualizer
    draws (e.g. ``--visualizer newton``). Off by default; headless, nothing is drawn and the
    markers cost nothing per step."""

    def __post_init__(self):
        self._convert_layouts()
        gen = self.generator
        classes = _generator_classes()
        for mode, cls in classes.items():
            if isinstance(gen, cls):
                if self.mode is None:
                    self.mode = mode
                elif self.mode != mode:
                    raise ValueError(
                        f"CourseCfg: mode={self.mode!r} but generator is a {cls.__name__} (a {mode!r} config); "
                        f"drop mode= or pass a matching generator"
                    )
                self.generator = _as_dict(gen)
                return

    def _convert_layouts(self) -> None:
        """Layout objects -> dicts, paths -> strings, and ``mode`` from the layouts' kind when known."""
        from pathlib import Path

        lays = self.layouts
        if lays is None:
            return
        from track_gen_isaac.course_layouts import layout_kind, layout_to_dict

        def plain(x):
            if isinstance(x, Path):
                return str(x)
            if hasattr(x, "num_gates") or hasattr(x, "num_points"):  # GateLayout / TrackLayout
                if self.mode is None:
                    self.mode = layout_kind(x)
                return layout_to_dict(x)
            if isinstance(x, dict) and self.mode is None and x.get("kind") in MODES:
                self.mode = x["kind"]
            return x

        # always a list (one type, so that ``from_dict`` / Hydra overrides replace it with a list)
        self.layouts = [plain(x) for x in (lays if isinstance(lays, (list, tuple)) else [lays])]

    def load_layouts(self) -> list:
        """The layouts of :attr:`layouts` (numpy ``GateLayout`` / ``TrackLayout``, recentred when
        :attr:`layout_recenter`); sets :attr:`mode` from their kind when it is None."""
        from track_gen_isaac.course_layouts import layout_kind, load_layouts

        self._convert_layouts()
        opts = self.layout_options if self.layout_options is not None else {}
        if not isinstance(opts, dict):
            raise TypeError(f"CourseCfg.layout_options: expected a dict of presets.gates_from_layouts / "
                            f"track_from_layouts keywords, got {type(opts).__name__}")
        lays = load_layouts(self.layouts, opts.get("lsy_axis"), bool(self.layout_recenter))
        kind = layout_kind(lays[0])
        if self.mode is None:
            self.mode = kind
        elif self.mode != kind:
            raise ValueError(f"CourseCfg.layouts: {lays[0].label()!r} is a {'gate' if kind == 'gates' else 'band-track'} "
                             f"layout but mode={self.mode!r}; pass {kind} layouts or mode={kind!r}")
        return lays

    def _validate_layouts(self) -> None:
        from track_gen_isaac.course_layouts import layout_spec

        if not isinstance(self.layout_recenter, bool):
            raise TypeError(f"CourseCfg.layout_recenter: expected True or False, got {self.layout_recenter!r}")
        lays = self.load_layouts()
        assign = (self.layout_options or {}).get("assign")
        layout_spec(self, len(assign) if assign is not None else 1, "cpu", layouts=lays)  # checks every option

    # -- checks ---------------------------------------------------------------------------------
    def validate_config(self) -> None:
        """Check every field; raises TypeError / ValueError naming the field and the fix."""
        if self.layouts is not None:
            self._validate_layouts()
        if self.mode not in MODES:
            raise ValueError(
                f"CourseCfg.mode: expected 'track' or 'gates', got {self.mode!r} (or pass a TrackGenConfig / "
                f"GateGenConfig as generator=, which sets it)"
            )
        gen = self.generator
        if gen is None:
            gen = {}
        if not isinstance(gen, dict):
            raise TypeError(
                f"CourseCfg.generator: expected a TrackGenConfig / GateGenConfig or a dict of their fields, got "
                f"{type(gen).__name__}"
            )
        cls = _generator_classes()[self.mode]
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(gen) - names) if self.layouts is None else []
        if unknown:
            raise ValueError(f"CourseCfg.generator: unknown {cls.__name__} field(s) {unknown}; fields: {sorted(names)}")
        if self.mode == "track":
            if self.collision not in _TRACK_COLLISIONS:
                raise ValueError(
                    f"CourseCfg.collision: a track takes None, 'segments' or 'sdf', got {self.collision!r}"
                )
            _positive("checkpoint_spacing", self.checkpoint_spacing)
        else:
            c = self.collision
            ok = c is None or c == "frame" or (
                isinstance(c, numbers.Real) and not isinstance(c, bool) and math.isfinite(c) and c > 0
            )
            if not ok:
                raise ValueError(
                    f"CourseCfg.collision: a gate course takes None, a post radius > 0 [m] or 'frame', got {c!r}"
                )
            if self.layouts is None:  # a layout carries its own opening
                _check_gate_width(gen, cls)
        _nonnegative("half_height", self.half_height)
        he = self.half_extents
        try:
            hx, hy = (float(v) for v in he)
        except (TypeError, ValueError):
            raise TypeError(f"CourseCfg.half_extents: expected (half length, half width) [m], got {he!r}") from None
        if not (math.isfinite(hx) and math.isfinite(hy) and hx >= 0 and hy >= 0):
            raise ValueError(f"CourseCfg.half_extents: expected two finite values >= 0 [m], got {he!r}")
        if isinstance(self.agents, bool) or not isinstance(self.agents, numbers.Integral) or self.agents < 1:
            raise ValueError(f"CourseCfg.agents: expected an int >= 1 (drones per course), got {self.agents!r}")
        if not isinstance(self.asset_name, str) or not self.asset_name:
            raise TypeError(f"CourseCfg.asset_name: expected a scene entity name, got {self.asset_name!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral)):
            raise TypeError(f"CourseCfg.seed: expected an int or None, got {self.seed!r}")
        if not isinstance(self.debug_vis, bool):
            raise TypeError(f"CourseCfg.debug_vis: expected True or False, got {self.debug_vis!r}")
        if not isinstance(self.extra, (list, tuple)):
            raise TypeError(f"CourseCfg.extra: expected a list of components or factories, got {self.extra!r}")
        if self.depth_camera is not None:
            if not isinstance(self.depth_camera, DepthCameraCfg):
                raise TypeError(f"CourseCfg.depth_camera: expected a track_gen_isaac.DepthCameraCfg or None, got "
                                f"{type(self.depth_camera).__name__}")
            self.depth_camera.build()  # checks every field (nothing is allocated before attach)

    def course_source(self, num_envs: int, device: str):
        """What ``Course.gates`` / ``Course.track`` build from: :meth:`generator_config`, or with
        :attr:`layouts` the ``presets.gates_from_layouts`` / ``track_from_layouts`` spec."""
        if self.layouts is None:
            return self.generator_config(num_envs, device)
        from track_gen_isaac.course_layouts import layout_spec

        self.validate_config()
        return layout_spec(self, num_envs, device, layouts=self.load_layouts())

    def generator_config(self, num_envs: int, device: str):
        """The ``TrackGenConfig`` / ``GateGenConfig`` for ``num_envs`` envs on ``device``."""
        self.validate_config()
        cls = _generator_classes()[self.mode]
        fields = dict(self.generator or {})
        if "randomize" in fields:
            fields["randomize"] = {str(k): tuple(float(x) for x in r) for k, r in dict(fields["randomize"]).items()}
        return cls(**fields, num_envs=int(num_envs), device=str(device))


def _check_gate_width(gen: dict, cls) -> None:
    """A gate course needs an opening: ``gate_width`` > 0, or a ``"gate_frames.gate_width"``
    randomizer whose lo is > 0 (GateGenConfig's default width, 0, is refused here, at cfg time)."""
    default = next(f.default for f in dataclasses.fields(cls) if f.name == "gate_width")
    width = gen.get("gate_width", default)
    rng = dict(gen.get("randomize") or {}).get("gate_frames.gate_width")
    fix = ("pass GateGenConfig(gate_width=1.0, ...) (or generator={'gate_width': 1.0, ...}), or randomize it: "
           "GateGenConfig(..., randomize={'gate_frames.gate_width': (lo, hi)}) with lo > 0")
    if rng is not None:
        try:
            lo = float(tuple(rng)[0])
        except (TypeError, ValueError, IndexError):
            raise TypeError(f"CourseCfg.generator: randomize['gate_frames.gate_width'] must be (lo, hi) [m], "
                            f"got {rng!r}") from None
        if not lo > 0:
            raise ValueError(f"CourseCfg.generator: randomize['gate_frames.gate_width'] draws from lo={lo:g}; a gate "
                             f"with no opening can never be passed: {fix}")
        return
    if isinstance(width, bool) or not isinstance(width, numbers.Real) or not (math.isfinite(width) and width > 0):
        raise ValueError(f"CourseCfg.generator: a gate course needs gate_width > 0 [m] (the gates' opening), got "
                         f"{width!r}{' (the GateGenConfig default)' if width == default else ''}: {fix}")


def _positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"CourseCfg.{name}: expected a finite number > 0, got {value!r}")


def _nonnegative(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value >= 0):
        raise ValueError(f"CourseCfg.{name}: expected a finite number >= 0, got {value!r}")
