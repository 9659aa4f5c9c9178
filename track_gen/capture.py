"""Capture state queries shared by the pipeline, the generators and the course."""

from __future__ import annotations

import warp as wp

from track_gen.errors import CaptureError


def is_capturing(device: wp.context.Device | str | None) -> bool:
    """True while a Warp graph capture records on ``device`` (CPU captures included)."""
    return bool(wp.get_device(device).is_capturing)


def refuse_under_capture(device, what: str, fix: str) -> None:
    """Raise :class:`CaptureError` when ``device`` is recording; ``what`` and ``fix`` form the message."""
    if is_capturing(device):
        raise CaptureError(f"{what} cannot run while a graph capture is recording on {device}; {fix}")
