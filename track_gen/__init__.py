"""track_gen: procedural race courses for massively parallel RL, on NVIDIA Warp.

Every env gets its own course (a closed band track or a gate course), regenerated on device for
just the envs you mask, recordable into a graph. See ``docs/`` for the guide.
"""

from track_gen.errors import (
    CapacityWarning,
    CaptureError,
    NotCapturableError,
    RebindAfterCaptureWarning,
    ResolutionWarning,
    TrackGenError,
    TrackGenWarning,
)
from track_gen.exec import ExecContext
# importing the generators registers their stage kinds and families in track_gen.pipeline
from track_gen.generators.gates import GateGenConfig, GateGenerator, GateResult, GateStatus
from track_gen.generators.track import TrackGenConfig, TrackGenerator, TrackResult, TrackStatus
from track_gen.rng import PerEnvSeededRNG, SeedState
from track_gen import layouts, tools
from track_gen._deprecated import install as _install_moved_modules

_install_moved_modules()  # old module paths (track_gen.min_time*, ...) for one release, with a DeprecationWarning

__version__ = "0.1.0"

__all__ = [
    "layouts", "tools", "CapacityWarning", "CaptureError", "ExecContext", "GateGenConfig", "GateGenerator", "GateResult", "GateStatus",
    "NotCapturableError", "PerEnvSeededRNG", "RebindAfterCaptureWarning", "ResolutionWarning", "SeedState",
    "TrackGenConfig", "TrackGenError", "TrackGenWarning", "TrackGenerator", "TrackResult", "TrackStatus",
]
