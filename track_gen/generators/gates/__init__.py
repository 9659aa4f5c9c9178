"""Gate courses: gates along a smooth loop or an open sprint (the ``gates.*`` stage kinds, :class:`GateGenerator`).

Modules, one per stage, each kernel above its launcher: :mod:`layout` (the gates), :mod:`frames`,
:mod:`obstacles`; the checks in :mod:`validity`, :mod:`column` (split-S) and :mod:`checks`
(parameter ranges); the status bits in :mod:`bits`; the config, result and generator in
:mod:`generator`.
"""

from __future__ import annotations

from track_gen.generators.gates.frames import FRAME_PARAMS
from track_gen.generators.gates.generator import (GateGenConfig, GateGenerator, GateResult, GateStatus,
                                                  register_gate_stages)
from track_gen.generators.gates.layout import LAYOUT_PARAMS

__all__ = ["FRAME_PARAMS", "LAYOUT_PARAMS", "GateGenConfig", "GateGenerator", "GateResult", "GateStatus",
           "register_gate_stages"]
