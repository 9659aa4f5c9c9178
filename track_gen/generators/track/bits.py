"""The band-track failure bits as Warp constants: each a copy of its :class:`TrackStatus` flag (the one
definition, in :mod:`track_gen.generators.status`), for the kernels to OR into ``status``."""

from __future__ import annotations

import warp as wp

from track_gen.generators.status import TrackStatus

LENGTH = wp.constant(int(TrackStatus.LENGTH))
BOUNDS = wp.constant(int(TrackStatus.BOUNDS))
TURN = wp.constant(int(TrackStatus.TURN))
OVERLAP = wp.constant(int(TrackStatus.OVERLAP))
DEGENERATE = wp.constant(int(TrackStatus.DEGENERATE))
GROUND = wp.constant(int(TrackStatus.GROUND))
GRADE = wp.constant(int(TrackStatus.GRADE))
NONFINITE = wp.constant(int(TrackStatus.NONFINITE))
OBSTACLE = wp.constant(int(TrackStatus.OBSTACLE))
