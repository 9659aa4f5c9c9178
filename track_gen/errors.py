"""Exception and warning types of track_gen.

Every refusal names the argument, the value and the fix; a refused call changes nothing.
"""

from __future__ import annotations


class TrackGenError(Exception):
    """Base class of the errors that only track_gen raises."""


class CaptureError(TrackGenError, RuntimeError):
    """A call that cannot be recorded was made while a graph capture is recording."""


class NotCapturableError(CaptureError):
    """A pipeline holds a host stage (registered with ``capturable=False``) and a capture is recording."""


class TrackGenWarning(UserWarning):
    """Base class of track_gen's warnings (filter them with this category)."""


class CapacityWarning(TrackGenWarning):
    """A capacity chosen by the library clips some env's course."""


class ResolutionWarning(TrackGenWarning):
    """A baked grid does not cover the largest course the generator can draw."""


class RebindAfterCaptureWarning(TrackGenWarning):
    """Inputs were rebound after a graph recorded a call that reads the old ones."""
