"""Course components: the contract (:class:`Component`, :class:`InputSpec`) and the built-ins."""

from track_gen.tools.centerline import CenterlineFromGates, TrackLine
from track_gen.tools.collision import BandCollision, DiscCollision, FrameCollision
from track_gen.tools.checkpoints import CheckpointSampler, Checkpoints, GateCheckpoints
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.heightfield import HeightField, HeightFieldBake
from track_gen.tools.localizer import Localizer
from track_gen.tools.progress import Progress
from track_gen.tools.props import PARK_POSITION, Props, PropSet
from track_gen.tools.types import CheckpointSet, Contacts, CourseLine, ProgressEvents, TrackFrame

__all__ = [
    "BandCollision", "DiscCollision", "FrameCollision", "CenterlineFromGates", "CheckpointSampler", "CheckpointSet", "Checkpoints", "Component", "Contacts",
    "CourseLine", "GateCheckpoints", "HeightField", "HeightFieldBake", "InputSpec", "Localizer", "PARK_POSITION", "Progress", "ProgressEvents", "PropSet", "Props", "TrackFrame", "TrackLine",
]
