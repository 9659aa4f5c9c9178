"""Collision components: the body's box against band edges, gate posts, gate frames or pole obstacles.

Four per-step components, each named ``"collision"`` (:class:`ObstacleCollision`: ``"obstacles"``)
unless you pass ``name=``; each writes a
:class:`~track_gen.tools.types.Contacts` (``course.step().contacts``):

* :class:`BandCollision` (band tracks): the body's footprint rectangle against the two edges of
  the band, exactly (``mode="segments"``) or from a baked signed-distance grid (``mode="sdf"``).
* :class:`DiscCollision` (gate courses): the footprint against the two posts of every gate,
  vertical discs of a given radius.
* :class:`FrameCollision` (gate courses): the body's 3D box against the four bars of every gate
  frame.
* :class:`ObstacleCollision` (gate courses and band tracks with pole obstacles): the body's 3D box
  against every pole (``result.obstacle_*``); ``Course.gates`` and ``Course.track`` add one, named
  ``"obstacles"``, when the generator has an obstacle stage. :class:`BandCollision` sees the band's
  edges only: on a track with poles, read both components (``course.step().contacts`` is the band's).

Inputs (bind them with ``course.bind``): ``box_position`` [E] vec3f, the box centre (routed from
``position`` unless bound), ``orientation`` [E] quatf (x, y, z, w), ``half_extents`` [E] vec2f,
the half length (body x) and half width (body y) of the box [m], and optionally ``origin`` [E]
vec3f, each env's origin in the world (e.g. Isaac Lab's ``env.scene.env_origins``). The courses
live in each env's own frame: positions are world-frame when ``origin`` is bound (the box centre
used is ``box_position[e] - origin[e]``; a non-finite origin counts as a non-finite position),
env-frame otherwise (this input is not :class:`BandCollision`'s ``origin`` attribute, the SDF
grid's corner). Only the yaw of the orientation is used, ``atan2(2(wz + xy), w^2 + x^2 - y^2 -
z^2)`` (so a quaternion need not be normalized); the absolute values of the half extents are used.

Results, every field [E]: ``clearance`` the signed distance [m] (> 0 free, <= 0 touching or
penetrating), ``hit = clearance <= 0``, ``depth = max(0, -clearance)``, ``normal`` a unit vector
that moves the body away from the obstacle that set ``clearance``, ``index`` that obstacle
(-1 when there is none). Special rows, all documented and per env:

* no obstacle (course ``valid == 0``, zero gates), and every masked row after a reset:
  ``hit 0, depth 0, clearance FAR (1e6 m), normal 0, index -1``;
* a non-finite box position, orientation or half extent: ``hit 1, depth 0, clearance 0,
  normal 0, index -1`` (treat it as a crash). Other envs are never affected.

All kernels run one thread per env (the SDF bake one per env and grid row) and only touch their
env's rows; ``step`` is stateless, so a replayed graph gives the eager result byte for byte.

Several agents per env (``Course(..., agents=K)``): the pose inputs and the Contacts are [E*K]
(``origin`` stays [E]); ``step`` runs one thread per agent ``a`` against the course of env
``a // K``, so agent k's row equals that of a one-agent course given agent k's pose. Agents do
not collide with each other here: that is :class:`~track_gen.tools.AgentContacts`.

Modules: :mod:`.pose` (the inputs, the body's box, the contact rows, the base class),
:mod:`.edges` (the band's edges and the nearest-segment searches both band modes share),
:mod:`.band` (:class:`BandCollision` and its exact ``"segments"`` step), :mod:`.band_sdf` (the
``"sdf"`` bake and step), :mod:`.gates` (:class:`DiscCollision`, :class:`FrameCollision`),
:mod:`.obstacles` (:class:`ObstacleCollision`).
"""

from track_gen.tools.collision.band import BandCollision
from track_gen.tools.collision.gates import DiscCollision, FrameCollision
from track_gen.tools.collision.obstacles import ObstacleCollision
from track_gen.tools.collision.pose import FAR, NAN_POSE_CLEARANCE

__all__ = ["BandCollision", "DiscCollision", "FrameCollision", "ObstacleCollision", "FAR", "NAN_POSE_CLEARANCE"]
