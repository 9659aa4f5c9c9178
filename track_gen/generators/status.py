"""Why a draw failed: the bits of ``result.status`` (0 is a valid course), one definition each.

The kernels OR these bits together through ``wp.constant`` copies derived from the flags here
(:mod:`track.bits`, :mod:`gates.bits`: ``LENGTH = wp.constant(int(TrackStatus.LENGTH))``...), so
a value lives only here.
"""

from __future__ import annotations

import enum

__all__ = ["GateStatus", "TrackStatus"]


class TrackStatus(enum.IntFlag):
    """Why a track draw failed (bits of ``result.status``; 0 is a valid course)."""

    NONE = 0
    LENGTH = 1
    BOUNDS = 2
    TURN = 4
    OVERLAP = 8
    DEGENERATE = 16
    GROUND = 32
    GRADE = 64
    NONFINITE = 128
    """a NaN or inf in the centerline, half widths, heights or derived length (never valid)"""
    OBSTACLE = 256
    """fewer pole obstacles than the least count of the track's difficulty found a spot that keeps the
    pole rules (inside the band, a passable gap, clear of the start line and of the other poles)"""


class GateStatus(enum.IntFlag):
    """Why a gate-course draw failed (bits of ``result.status``; 0 is a valid course)."""

    NONE = 0
    SPACING = 1
    CROWDED = 2
    TURN = 4
    BOUNDS = 8
    GROUND = 16
    OPENING = 32
    NONFINITE = 64
    """a NaN or inf in the gate poses, path length or start pose (never valid)"""
    CROSSING = 128
    """two legs cross in plan view with less than ``crossing_clearance`` between their heights there"""
    CLIMB = 256
    """a leg climbs or dives more steeply than the climb limit (split-S legs excepted)"""
    STACK = 512
    """a split-S leg whose gates are not stacked (same xy, opposite headings, frames clear vertically)"""
    OBSTACLE = 1024
    """an obstacle breaks its clearance from a gate frame, the course line, the start or another obstacle"""
    COLUMN = 2048
    """a leg of the course line that joins neither gate of a split-S pair passes through the pair's frame
    footprint at a height within the stacked column"""
