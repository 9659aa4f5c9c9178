"""The minimum-time reference: the fastest a point mass with a thrust limit flies a course.

The benchmark divides a racer's lap times by these (numpy float64, no Warp):

* :mod:`~track_gen.reference.lap`: the lap time along a fixed path (forward / backward passes
  under the point mass's thrust bound): :func:`~track_gen.reference.lap.reference_laps`.
* :mod:`~track_gen.reference.path`: the lap time over the flown path through a course's openings
  (the path optimised too): :func:`~track_gen.reference.path.path_reference_laps` (needs scipy).
* :mod:`~track_gen.reference.spline`: the path optimiser's fixed-knot cubic spline as linear maps,
  with a reverse-mode gradient of its geometry.
* :mod:`~track_gen.reference.gradient`: the lap time along that spline and its exact gradient with
  respect to the control points (needs scipy).

Only :mod:`~track_gen.reference.lap` is imported here: scipy is not a dependency of the core package
(it comes with the ``isaac`` extra).
"""

from track_gen.reference.lap import LapReference, SampledPath, SpeedProfile, VehicleLimits, reference_laps

__all__ = ["LapReference", "SampledPath", "SpeedProfile", "VehicleLimits", "reference_laps"]
