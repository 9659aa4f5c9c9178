"""Build the core course a :class:`~track_gen_isaac.CourseCfg` stands for (not bound to an env).

:func:`build_course` is what :class:`~track_gen_isaac.env_course.EnvCourse` calls (and what the
tests call for a reference course): the procedural generator config, or with ``CourseCfg.layouts``
the layout source (:mod:`track_gen_isaac.course_layouts`), the preset's components, the extras.
"""

from __future__ import annotations

import copy

import track_gen as tg
from track_gen.course import Course
from track_gen.tools import Component

from track_gen_isaac.course_cfg import CourseCfg

__all__ = ["build_course"]


def _make_extra(entry, where: str):
    if isinstance(entry, Component):
        if entry.attached:
            raise ValueError(f"{where}: component {entry.name!r} is already attached to a course; pass a factory")
        return copy.deepcopy(entry)
    if callable(entry):
        comp = entry()
        if not isinstance(comp, Component):
            raise TypeError(f"{where}: factory {entry!r} returned {type(comp).__name__}, not a track_gen Component")
        return comp
    raise TypeError(f"{where}: expected a Component, a component class or a factory, got {entry!r}")


def build_course(cfg: CourseCfg, num_envs: int, device: str, *, seed: int, rank: int = 0) -> Course:
    """The course a CourseCfg stands for, for ``num_envs`` envs (courses) on ``device`` (not bound),
    with ``CourseCfg.agents`` agents racing each.

    Seeds: ``SeedState(num_envs, device, seed, env_offset=rank * num_envs)``.
    """
    from track_gen import tools

    cfg.validate_config()
    E = int(num_envs)
    gen = cfg.course_source(E, device)
    seeds = tg.SeedState(E, device, int(seed), env_offset=int(rank) * E)
    extra = [_make_extra(x, f"CourseCfg.extra[{i}]") for i, x in enumerate(cfg.extra)]
    if cfg.depth_camera is not None:  # cast by the depth observation terms, after the step's resets
        extra.append(cfg.depth_camera.build(cast_on_step=False))
    if cfg.mode == "track":
        if cfg.localizer:
            extra = [tools.TrackLine(), tools.Localizer(warm_window=cfg.localize_window, source="centerline"), *extra]
        return Course.track(gen, checkpoint_spacing=float(cfg.checkpoint_spacing), collision=cfg.collision,
                            max_checkpoints=cfg.max_checkpoints, extra=extra, seeds=seeds, agents=int(cfg.agents))
    collision = cfg.collision
    if collision == "frame":
        collision = tools.FrameCollision(float(cfg.half_height))
    elif collision is not None:
        collision = float(collision)
    return Course.gates(gen, collision=collision, samples_per_gate=int(cfg.samples_per_gate),
                        localize_window=cfg.localize_window, extra=extra, seeds=seeds, agents=int(cfg.agents))
