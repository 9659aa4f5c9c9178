"""CourseConfig: a whole course as flat data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from track_gen.course.presets import agents_arg, gates_parts, track_parts

__all__ = ["CourseConfig"]


@dataclass(frozen=True)
class CourseConfig:
    """A course as data: ``Course(config)``, ``Course(config=config)`` and ``Course.from_config(config)``.

    Attributes:
        mode: ``"track"`` or ``"gates"`` (the preset it stands for).
        gen: the generator's ``TrackGenConfig`` / ``GateGenConfig`` or a ``PipelineSpec``.
        seeds: anything ``TrackGenerator(seeds=)`` takes.
        collision: track only: None, ``"segments"`` or ``"sdf"``.
        post_radius: gates only: None or a post radius > 0 (a ``DiscCollision``).
        checkpoint_spacing: track only (required) [m].
        max_checkpoints: track only: an int >= 3, or None for the automatic capacity.
        samples_per_gate, localize_window: gates only, as for ``Course.gates``.
        agents: agents racing each env's course (K >= 1; per-agent arrays are ``[E*K]``).
    """

    mode: str
    gen: Any
    seeds: Any = None
    collision: str | None = None
    post_radius: float | None = None
    checkpoint_spacing: float | None = None
    max_checkpoints: int | None = None
    samples_per_gate: int = 8
    localize_window: int | None = None
    agents: int = 1

    def parts(self, stream: Any = None):
        """Check, then build (generator, components) exactly as the matching preset does (the course
        built from them gets the preset's finish: ``presets.finish_preset(mode, generator)``)."""
        agents_arg(self.agents)
        if self.mode == "track":
            if self.post_radius is not None:
                raise ValueError("CourseConfig: post_radius is for mode='gates'; a track uses collision=")
            if self.checkpoint_spacing is None:
                raise ValueError("CourseConfig: mode='track' needs checkpoint_spacing (a number > 0) [m]")
            return track_parts(self.gen, checkpoint_spacing=self.checkpoint_spacing, collision=self.collision,
                               max_checkpoints=self.max_checkpoints, seeds=self.seeds, stream=stream)
        if self.mode == "gates":
            if self.collision is not None:
                raise ValueError("CourseConfig: collision is for mode='track'; gates use post_radius=")
            if self.checkpoint_spacing is not None or self.max_checkpoints is not None:
                raise ValueError("CourseConfig: checkpoint_spacing / max_checkpoints are for mode='track'")
            return gates_parts(self.gen, collision=self.post_radius, samples_per_gate=self.samples_per_gate,
                               localize_window=self.localize_window, seeds=self.seeds, stream=stream)
        raise ValueError(f"CourseConfig: mode must be 'track' or 'gates', got {self.mode!r}")
