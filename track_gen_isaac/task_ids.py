"""Task ids of the registered tasks: the ``-Play-`` variant of a task and its family name."""

from __future__ import annotations

import re

__all__ = ["play_task_of", "task_family"]


def play_task_of(task: str) -> str:
    """The ``-Play-`` variant of a task id (unchanged if it is one already)."""
    if "-Play-" in task:
        return task
    head, sep, ver = task.rpartition("-v")
    if not sep:
        raise ValueError(f"task id {task!r}: expected '<name>-v<version>'")
    return f"{head}-Play-v{ver}"


def task_family(task: str) -> str:
    """``Gates-Race`` of ``TrackGen-Drone-Gates-Race[-Warp][-Play]-v0``; ``Car-Track`` of
    ``TrackGen-Car-Track[-Warp][-Play]-v0`` (the car's families keep their vehicle's name)."""
    return re.sub(r"^TrackGen-(Drone-)?|(-Warp)?(-Play)?-v\d+$", "", task)
