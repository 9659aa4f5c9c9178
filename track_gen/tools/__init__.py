"""Course components: the contract (:class:`Component`, :class:`InputSpec`) and the built-ins.

This package holds the components a :class:`~track_gen.course.Course` runs, one module (or, for
collision, one package) per family:

===================  =================================================================================
``component``        the contract: :class:`Component`, :class:`InputSpec`, the hooks
``types``            the result types (:class:`CheckpointSet`, :class:`CourseLine`, :class:`Contacts`...)
``checkpoints``      :class:`Checkpoints`, :class:`GateCheckpoints`, :class:`CheckpointSampler`
``centerline``       :class:`CenterlineFromGates`, :class:`TrackLine` (course lines)
``progress``         :class:`Progress` (passes, misses, laps, continuous progress)
``agent_contacts``   :class:`AgentContacts` (agents of one env near each other)
``standings``        :class:`Standings` (race order and gap to the leader of each env's agents)
``collision/``       :class:`BandCollision`, :class:`DiscCollision`, :class:`FrameCollision`, :class:`ObstacleCollision`
``localizer``        :class:`Localizer` (the track frame)
``heightfield``      :class:`HeightFieldBake`
``props``            :class:`Props` (scene object transforms)
``depth/``           :class:`DepthCamera` (depth images ray cast against the course)
``_common``          rules and device helpers two or more components share (private)
===================  =================================================================================

Device math shared beyond the components (finite checks, the lateral axis, yaw, jitter, the
``BIG`` sentinel) lives in :mod:`track_gen.math`.

Conventions of the kernels here:

* **Masks.** ``on_generate(ctx, mask)`` and ``reset(ctx, mask)`` always receive an ``[E]`` int32
  array (nonzero: act on this env), never None: the course passes its own all-ones array for a
  call without a mask. A masked kernel takes it as its first argument, ``mask``, and returns
  early for ``mask[e] == 0``.
* **Arguments**, as mujoco_warp orders them: parameters (scalars, sizes, constants), then inputs,
  then outputs. Every array a kernel (or a function it calls) writes ends in ``_out`` (``hit_out``,
  ``s_out``), per-env state it reads and writes too (``prev_out``, noted in the docstring); an input
  that shares its name with an output has no suffix (``s`` in, ``s_out`` out). Wide sets travel as
  Warp structs (``Scene``, ``BodyBox``, ``CheckpointArrays``), a written one as ``<name>_out``
  (``contacts_out``, ``checkpoints_out``). Half extents are ``half_w`` / ``half_h`` (never ``hh``,
  which once meant a half height in one module and a full height in another).
* **Agents.** With K agents per env (``Course(..., agents=K)``) per-agent arrays are ``[E*K]``,
  env-major; a per-agent kernel runs one thread per agent ``a`` and reads the course at
  ``e = a // K``; masked per-agent kernels test ``mask[a // K]``. Every component here declares
  ``multi_agent = True``.
* **Utility.** ``course.<name>`` returns the component's ``utility``: the component itself,
  except for the checkpoint components (their :class:`CheckpointSampler`).
"""

from track_gen.tools.agent_contacts import AgentContacts
from track_gen.tools.centerline import CenterlineFromGates, TrackLine
from track_gen.tools.collision import BandCollision, DiscCollision, FrameCollision, ObstacleCollision
from track_gen.tools.checkpoints import CheckpointSampler, Checkpoints, GateCheckpoints
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.depth import DepthCamera, DepthResult
from track_gen.tools.heightfield import HeightField, HeightFieldBake
from track_gen.tools.localizer import Localizer
from track_gen.tools.progress import Progress
from track_gen.tools.props import PARK_POSITION, Props, PropSet
from track_gen.tools.standings import Standings
from track_gen.tools.types import (AgentContactsResult, CheckpointSet, Contacts, CourseLine, ProgressEvents,
                                   StandingsResult, TrackFrame)

__all__ = [
    "AgentContacts", "AgentContactsResult", "Standings", "StandingsResult",
    "BandCollision", "DiscCollision", "FrameCollision", "ObstacleCollision", "CenterlineFromGates", "CheckpointSampler", "CheckpointSet",
    "Checkpoints", "Component", "Contacts", "CourseLine", "GateCheckpoints", "HeightField", "HeightFieldBake",
    "DepthCamera", "DepthResult",
    "InputSpec", "Localizer", "PARK_POSITION", "Progress", "ProgressEvents", "PropSet", "Props", "TrackFrame",
    "TrackLine",
]
