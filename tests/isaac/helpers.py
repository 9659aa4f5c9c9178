"""Shared helpers of the Isaac tests: module-scoped envs, a reference core course, numpy references."""

from __future__ import annotations

import numpy as np
import torch
import warp as wp

from track_gen_isaac.env_course import build_course


def step(env, n=1):
    out = None
    for _ in range(n):
        out = env.step(torch.zeros(env.num_envs, 0, device=env.device))
    return out


def env_frame_pos(env, ec) -> np.ndarray:
    return (ec.asset.data.root_pos_w.torch - env.scene.env_origins).cpu().numpy().copy()


def teleport(env, ec, pos_env: np.ndarray, yaw: np.ndarray | None = None, env_ids=None):
    """Write the robot's root pose (env-frame positions, optional yaw) for ``env_ids`` (all when None)."""
    ids = torch.arange(env.num_envs, device=env.device) if env_ids is None else torch.as_tensor(env_ids)
    pose = ec.asset.data.root_pose_w.torch[ids].clone()
    pose[:, :3] = torch.as_tensor(pos_env, dtype=torch.float32, device=env.device) + env.scene.env_origins[ids]
    if yaw is not None:
        h = 0.5 * torch.as_tensor(yaw, dtype=torch.float32, device=env.device)
        pose[:, 3:7] = torch.stack([torch.zeros_like(h), torch.zeros_like(h), torch.sin(h), torch.cos(h)], -1)
    ec.asset.write_root_pose_to_sim_index(root_pose=pose, env_ids=ids.to(torch.int32))


class Reference:
    """An independent core course with the env course's cfg, seed and rank, bound to contiguous
    env-frame copies of the robot pose (no origin input): what the terms must reproduce."""

    def __init__(self, env, ec):
        self.env, self.ec = env, ec
        E = env.num_envs
        self.course = build_course(ec.cfg, E, ec.device, seed=ec.seed, rank=ec.rank)
        self.pos = wp.zeros(E, dtype=wp.vec3f, device=ec.device)
        self.quat = wp.zeros(E, dtype=wp.quatf, device=ec.device)
        self.mask = wp.zeros(E, dtype=wp.int32, device=ec.device)
        he = np.tile(np.asarray(ec.cfg.half_extents, np.float32), (E, 1))
        self.course.bind(position=self.pos, orientation=self.quat,
                         half_extents=wp.array(he, dtype=wp.vec2f, device=ec.device))
        self.match_generation()

    def match_generation(self):
        """Rebuild every env's course at the env course's generation (courses are a pure function of
        seed and generation, so both must then agree byte for byte)."""
        self.course.generator.generation.assign(self.ec.course.generator.generation.numpy())
        self.course.regenerate(advance=False)

    def sync(self, pos=None, quat=None):
        """Copy the robot's env-frame pose (or the given one) into the reference's pose arrays."""
        self.pos.assign(env_frame_pos(self.env, self.ec) if pos is None else np.asarray(pos, np.float32))
        self.quat.assign(self.ec.asset.data.root_quat_w.torch.cpu().numpy() if quat is None
                         else np.asarray(quat, np.float32))

    def step(self, pos=None, quat=None):
        self.sync(pos, quat)
        return self.course.step()

    def regenerate(self, ids):  # what regenerate_course does for ids
        m = np.zeros(self.env.num_envs, np.int32)
        m[np.asarray(ids)] = 1
        self.mask.assign(m)
        self.course.regenerate(mask=self.mask, advance=True)

    def relocalize(self):
        self.sync()
        self.course.components["localizer"].step(self.course.context)


def arrays_of(obj) -> dict[str, np.ndarray]:
    """Every wp.array field of a dataclass-like result, as numpy."""
    return {k: v.numpy().copy() for k, v in vars(obj).items() if isinstance(v, wp.array)}


def generation_state(course) -> dict[str, np.ndarray]:
    """Everything a regeneration writes: generator outputs, valid, generation, per-generation results."""
    out = {f"gen.{k}": v.numpy().copy() for k, v in course.generator.outputs().items()}
    out["valid"] = course.result.valid.numpy().copy()
    out["generation"] = course.generator.generation.numpy().copy()
    for name in ("checkpoints", "centerline"):
        c = course.components.get(name)
        if c is not None:
            out.update({f"{name}.{k}": v for k, v in arrays_of(c.result).items()})
    return out


def quat_rotate_inv(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate v [..., 3] by the inverse of xyzw quaternions q [..., 4]."""
    xyz, w = -q[..., :3], q[..., 3:4]
    t = 2.0 * np.cross(xyz, v)
    return v + w * t + np.cross(xyz, t)


def yaw_of(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


class Schedule:
    """A deterministic robot motion for comparing runs: each env walks its own course line, some
    faster than others, some off to the side (misses, crashes, off-track), restarting on reset.

    It only reads the env's course and dones, so two runs with the same courses get the same motion.
    """

    LATERAL = np.array([0.0, 0.0, 0.3, 0.0, 0.45, 0.6, 0.0, -2.5], np.float32)  # per env [m]
    SPEED = np.array([1, 2, 3, 1, 2, 3, 2, 1])  # course-line points per env step

    def __init__(self, env, ec):
        self.env, self.ec = env, ec
        self.counter = np.zeros(env.num_envs, np.int64)

    def move(self, k: int):
        line = self.ec.course.course_line.line
        pts, tan, cnt = line.points.numpy(), line.tangent.numpy(), line.count.numpy()
        E = self.env.num_envs
        self.counter += self.SPEED[:E]
        j = self.counter % np.maximum(cnt, 1)
        e = np.arange(E)
        t = tan[e, j]
        lat = np.stack([-t[:, 1], t[:, 0], np.zeros(E)], -1)
        norm = np.linalg.norm(lat, axis=-1, keepdims=True)
        lat = np.where(norm > 0, lat / np.maximum(norm, 1e-9), 0.0)
        wobble = 0.2 * np.sin(0.37 * k + e)  # off the line a little, every env
        pos = pts[e, j] + (self.LATERAL[:E] + wobble)[:, None] * lat
        yaw = np.arctan2(t[:, 1], t[:, 0]) + 0.3 * np.sin(0.11 * k + e)
        teleport(self.env, self.ec, pos.astype(np.float32), yaw.astype(np.float32))

    def done(self, dones: np.ndarray):
        self.counter[dones] = 0


def run_schedule(env, steps: int):
    """Reset, then ``steps`` env steps of :class:`Schedule`; every step's outputs as numpy."""
    from track_gen_isaac import get_course

    obs, _ = env.reset()
    ec = get_course(env)
    sched = Schedule(env, ec)
    out = []
    for k in range(steps):
        sched.move(k)
        obs, rew, term, trunc, extras = step(env)
        rec = {f"obs.{n}": np.array(v.cpu().numpy()) for n, v in obs["policy"].items()}
        rec.update(rew=rew.cpu().numpy().copy(), term=term.cpu().numpy().copy(), trunc=trunc.cpu().numpy().copy(),
                   pos=env_frame_pos(env, ec), gen=ec.course.generator.generation.numpy().copy())
        out.append(rec)
        sched.done(rec["term"] | rec["trunc"])
    return out


def rotate_inv(q, v) -> np.ndarray:
    """``v`` rotated by the inverse of the xyzw quaternion ``q`` (float64): world -> body frame."""
    x, y, z, w = np.asarray(q, np.float64) / np.linalg.norm(q)
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    return R.T @ np.asarray(v, np.float64)
