"""What the depth kernels cast against and from, bundled as Warp structs, and the per-ray casts
both kernels share.

:class:`Scene` holds one course's primitives (gate frames and posts, pole obstacles, band walls,
the ground); :class:`CameraPose` the per-step pose inputs. :func:`gate_shape`, :func:`ray_frame` and
:func:`post_centre` are the one gate cast: :func:`cast_ray` (per range ray) casts a whole gate
with :func:`ray_gate`, the image kernel casts the frame and each post over the row's pixels
that their bounds leave. :func:`camera_origin` is the one pose check of both kernels.
"""

from __future__ import annotations

import warp as wp

from track_gen.math import finite_quat, unit_lateral_xy
from track_gen.tools._common import env_position, gates_in_use
from track_gen.tools.collision.edges import chunk_range, edge_pt
from track_gen.tools.collision.pose import POSE_LIMIT
from track_gen.tools.depth.rays import ray_aabb2, ray_cylinder, ray_gate_frame, ray_plane_z, ray_wall, sphere_misses

__all__ = ["CameraPose", "GateShape", "Scene", "camera_origin", "cast_ray", "gate_shape", "ray_gate", "ray_pole",
           "ray_walls", "ray_frame", "post_centre", "post_top", "scene_counts"]

@wp.struct
class Scene:
    """One course's primitives, per env. A family's absent parts have their flag 0 (``has_gates``,
    ``has_obstacles``, ``wall_height`` 0) and one-element placeholders that are never read."""

    valid: wp.array(dtype=wp.int32)
    ground: int  # cast against the plane z = 0
    has_gates: int
    gate_pos: wp.array2d(dtype=wp.vec3f)
    gate_normal: wp.array2d(dtype=wp.vec3f)
    gate_count: wp.array(dtype=wp.int32)
    gate_width: wp.array(dtype=wp.float32)
    gate_height: wp.array(dtype=wp.float32)
    gate_thickness: wp.array(dtype=wp.float32)
    post_radius: float  # 0: no posts
    has_obstacles: int
    obstacle_pos: wp.array2d(dtype=wp.vec3f)
    obstacle_radius: wp.array2d(dtype=wp.float32)
    obstacle_height: wp.array2d(dtype=wp.float32)
    obstacle_count: wp.array(dtype=wp.int32)
    wall_height: float  # 0: no band walls
    left: wp.array2d(dtype=wp.vec2f)
    right: wp.array2d(dtype=wp.vec2f)
    boxes: wp.array2d(dtype=wp.vec4f)  # the edges' chunk boxes
    ground_z: wp.array2d(dtype=wp.float32)  # the band's ground height per centreline point
    chunk_len: int  # K: segments per chunk
    chunks: int  # C: chunks per edge


@wp.struct
class CameraPose:
    """The per-step pose inputs, one row per agent (``agents`` per env; agent ``a`` sees the course
    of env ``a // agents``): the body positions (env frame, or world frame minus ``origin[env]``
    when ``has_origin``), orientations, and the optional ``render`` mask (``has_render``)."""

    agents: int
    position: wp.array(dtype=wp.vec3f)
    origin: wp.array(dtype=wp.vec3f)
    has_origin: int
    orientation: wp.array(dtype=wp.quatf)
    render: wp.array(dtype=wp.int32)
    has_render: int


@wp.struct
class GateShape:
    """Gate g of an env: centre, unit horizontal lateral, opening width and height, bar thickness,
    and the radius of a sphere about the centre that holds the frame (with slack)."""

    pos: wp.vec3f
    lat: wp.vec2f
    width: float
    height: float
    thickness: float
    radius: float


@wp.func
def camera_origin(pose: CameraPose, a: int, e: int, offset: wp.vec3f):
    """Agent a's camera (in env e): whether it is cast at all (``render``), whether its pose is usable
    (finite, within POSE_LIMIT, a non-zero quaternion), the unit orientation and the mount position."""
    if pose.has_render != 0:
        if pose.render[a] == 0:
            return False, False, wp.quatf(0.0, 0.0, 0.0, 1.0), wp.vec3f(0.0, 0.0, 0.0)
    p = env_position(pose.position, pose.origin, pose.has_origin, a, e)
    q = pose.orientation[a]
    n2 = wp.dot(q, q)
    lim = wp.max(wp.max(wp.abs(p[0]), wp.abs(p[1])), wp.abs(p[2]))
    if not (wp.isfinite(p) and finite_quat(q) and wp.isfinite(n2) and n2 > 0.0 and lim <= POSE_LIMIT):
        return True, False, q, p
    q = q / wp.sqrt(n2)
    return True, True, q, p + wp.quat_rotate(q, offset)


@wp.func
def gate_shape(gate_pos: wp.array2d(dtype=wp.vec3f), gate_normal: wp.array2d(dtype=wp.vec3f),
               gate_width: wp.array(dtype=wp.float32), gate_height: wp.array(dtype=wp.float32),
               gate_thickness: wp.array(dtype=wp.float32), e: int, g: int) -> GateShape:
    """Gate g of env e (``lat`` zero for a gate without a horizontal normal: skip it). The
    per-ray functions here take the arrays they read, not a :class:`Scene`: Warp passes a struct
    to a function by value, and a copy of the whole scene per ray costs more than the ray."""
    s = GateShape()
    s.pos = gate_pos[e, g]
    s.lat = unit_lateral_xy(gate_normal[e, g])
    s.width = gate_width[e]
    s.height = gate_height[e]
    s.thickness = gate_thickness[e]
    w = s.width
    h = s.height
    t = s.thickness
    rad = wp.sqrt((0.5 * w + t) * (0.5 * w + t) + (0.5 * h + t) * (0.5 * h + t) + 0.25 * t * t)
    s.radius = rad * 1.001 + 1.0e-4  # slack: rounding (and |d| = 1 +- ulp) never culls a hit
    return s


@wp.func
def post_centre(gate: GateShape, side: int) -> wp.vec2f:
    """The xy centre of the gate's post on +lateral (side 0) or -lateral (side 1)."""
    sg = 1.0 - 2.0 * float(side)
    return wp.vec2f(gate.pos[0], gate.pos[1]) + (sg * (0.5 * gate.width + 0.5 * gate.thickness)) * gate.lat


@wp.func
def post_top(gate: GateShape) -> float:
    """The height of the gate's posts: the frame's top."""
    return gate.pos[2] + 0.5 * gate.height + gate.thickness


@wp.func
def ray_frame(o: wp.vec3f, d: wp.vec3f, gate: GateShape, tmin: float, best: float) -> float:
    """The nearest surface ``t`` in ``[tmin, best)`` of the gate frame's bars along the unit ray
    ``o + t d``, else ``best``: its bounding sphere first, then the bars in the gate's frame."""
    if sphere_misses(o, d, gate.pos, gate.radius, tmin, best):
        return best
    lat = gate.lat
    w = gate.width
    h = gate.height
    t = gate.thickness
    nh = wp.vec2f(lat[1], -lat[0])  # the unit horizontal normal
    r = o - gate.pos
    ol = wp.vec3f(r[0] * lat[0] + r[1] * lat[1], r[0] * nh[0] + r[1] * nh[1], r[2])
    dl = wp.vec3f(d[0] * lat[0] + d[1] * lat[1], d[0] * nh[0] + d[1] * nh[1], d[2])
    return ray_gate_frame(ol, dl, 0.5 * w + t, 0.5 * t, 0.5 * h + t, 0.5 * w, 0.5 * h, tmin, best)


@wp.func
def ray_gate(o: wp.vec3f, d: wp.vec3f, gate: GateShape, post_r: float, tmin: float, best: float) -> float:
    """The nearest surface ``t`` in ``[tmin, best)`` of the whole gate (its posts when ``post_r > 0``,
    then its frame) along the unit ray ``o + t d``, else ``best``. Every part is a min over exact
    hits, so the image kernel, which casts each part over its own culled pixels, gets the same bits."""
    if post_r > 0.0:
        top = post_top(gate)
        for s in range(2):
            best = wp.min(best, ray_cylinder(o, d, post_centre(gate, s), post_r, 0.0, top, tmin))
    return ray_frame(o, d, gate, tmin, best)


@wp.func
def ray_pole(o: wp.vec3f, d: wp.vec3f, base: wp.vec3f, radius: float, height: float, tmin: float) -> float:
    """``t >= tmin`` where the ray meets the pole obstacle (base centre, radius, height), else BIG."""
    return ray_cylinder(o, d, wp.vec2f(base[0], base[1]), radius, base[2], base[2] + height, tmin)


@wp.func
def ray_walls(o: wp.vec3f, d: wp.vec3f, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
              boxes: wp.array2d(dtype=wp.vec4f), ground_z: wp.array2d(dtype=wp.float32), wall_h: float, K: int,
              C: int, e: int, tmin: float, best: float) -> float:
    """The nearest band wall ``t`` in ``[tmin, best)`` (else ``best``): the edges' chunk boxes,
    then the segments of the chunks the ray crosses."""
    N = left.shape[1]
    for ch in range(2 * C):
        u0, u1 = ray_aabb2(o, d, boxes[e, ch])
        if u0 > u1 or u1 < tmin or u0 >= best:
            continue
        side, i0, i1 = chunk_range(ch, K, C, N)
        a = edge_pt(left, right, e, side, i0)
        for s in range(i0, i1):
            s1 = (s + 1) % N
            b2 = edge_pt(left, right, e, side, s1)
            best = wp.min(best, ray_wall(o, d, a, b2, ground_z[e, s], ground_z[e, s1], wall_h, tmin))
            a = b2
    return best


@wp.func
def scene_counts(valid: int, has_gates: int, gate_count: int, gate_cap: int, has_obstacles: int, obstacle_count: int,
                 obstacle_cap: int, wall_h: float):
    """What the casts visit in one env: its gates in use (0 on a course without gates), its pole
    obstacles (0 on an invalid course or without poles), and whether its band walls are cast."""
    G = int(0)
    if has_gates != 0:
        G = gates_in_use(valid, gate_count, gate_cap)
    n_obs = int(0)
    if has_obstacles != 0 and valid != 0:
        n_obs = wp.clamp(obstacle_count, 0, obstacle_cap)
    return G, n_obs, wall_h > 0.0 and valid != 0


@wp.func
def cast_ray(o: wp.vec3f, d: wp.vec3f, tmin: float, best: float, e: int, scene: Scene) -> float:
    """The nearest surface ``t`` in ``[tmin, best)`` of env e's scene along the unit ray
    ``o + t d`` (``best`` when none): the image kernel's primitives, for one ray."""
    if scene.ground != 0:
        best = wp.min(best, ray_plane_z(o, d, 0.0, tmin))
    G, n_obs, walls = scene_counts(scene.valid[e], scene.has_gates, scene.gate_count[e], scene.gate_pos.shape[1],
                                   scene.has_obstacles, scene.obstacle_count[e], scene.obstacle_pos.shape[1],
                                   scene.wall_height)
    for g in range(G):
        gate = gate_shape(scene.gate_pos, scene.gate_normal, scene.gate_width, scene.gate_height, scene.gate_thickness,
                          e, g)
        if gate.lat[0] == 0.0 and gate.lat[1] == 0.0:
            continue
        best = ray_gate(o, d, gate, scene.post_radius, tmin, best)
    for m in range(n_obs):
        best = wp.min(best, ray_pole(o, d, scene.obstacle_pos[e, m], scene.obstacle_radius[e, m],
                                     scene.obstacle_height[e, m], tmin))
    if walls:
        best = ray_walls(o, d, scene.left, scene.right, scene.boxes, scene.ground_z, scene.wall_height, scene.chunk_len,
                         scene.chunks, e, tmin, best)
    return best
