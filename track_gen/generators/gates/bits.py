"""The gate-course failure bits as Warp constants: each a copy of its :class:`GateStatus` flag (the one
definition, in :mod:`track_gen.generators.status`), for the kernels to OR into ``status``."""

from __future__ import annotations

import warp as wp

from track_gen.generators.status import GateStatus

SPACING = wp.constant(int(GateStatus.SPACING))
CROWDED = wp.constant(int(GateStatus.CROWDED))
TURN = wp.constant(int(GateStatus.TURN))
BOUNDS = wp.constant(int(GateStatus.BOUNDS))
GROUND = wp.constant(int(GateStatus.GROUND))
OPENING = wp.constant(int(GateStatus.OPENING))
NONFINITE = wp.constant(int(GateStatus.NONFINITE))
CROSSING = wp.constant(int(GateStatus.CROSSING))
CLIMB = wp.constant(int(GateStatus.CLIMB))
STACK = wp.constant(int(GateStatus.STACK))
OBSTACLE = wp.constant(int(GateStatus.OBSTACLE))
COLUMN = wp.constant(int(GateStatus.COLUMN))
