#!/usr/bin/env python
"""Depth images by analytic ray casting (``tools.DepthCamera``) against Warp mesh ray casting of
the same triangles, in one run.

Scene: ``presets.gates(E, "cpu", gate_width=1.0)`` gate courses (seed 0), every gate's four frame
bars plus the ground; camera 64 x 48, 90 degree horizontal fov, near 0.05 m, far 20 m, mounted
0.1 m ahead of the body, pitched down 10 degrees; bodies near each course's start, yawed and
tilted a little. Every method casts the same rays (the camera's pixel rays turned by the same
poses) and they must agree pixel for pixel (the share within 1 mm is printed).

Methods, each timed per step (mean over --reps steps after one warm-up; --rounds rounds visit
every method in turn and the best round is kept):

* **analytic**: ``course.step()`` of a course with only the DepthCamera (exact boxes + plane);
* **mesh (own)**: one ``wp.Mesh`` holding every env's bars (12 triangles per bar) and a ground quad
  per env (2 triangles, covering ``far`` around the course), envs placed on a grid 200 m apart;
  one kernel computes each pixel's ray as the camera does and calls ``wp.mesh_query_ray``;
* **Isaac Lab kernels**: the same mesh cast by Isaac Lab 3.0's own ray-caster kernels as its
  ``RayCaster`` launches them each update (``update_ray_caster_kernel`` for the world rays,
  ``fill_vec3_inf_kernel``, ``raycast_mesh_masked_kernel`` with distances). The ``RayCaster``
  sensor object itself cannot be built kitless here: its ``_initialize_impl`` reads the mesh
  prims from a USD stage and tracks poses through a simulation backend view, neither of which
  exists without a running Isaac Lab scene, so its kernels are driven directly.

Also printed: the BVH build time of that mesh (what a mesh-based caster pays again when the
courses regenerate, or a refit per step for moving gates). Warp runs a CPU launch on one thread,
so rays per second are per core. Run from the repository root::

    PYTHONPATH=. python bench/bench_depth.py                 # E = 1024 (~1-2 min on 2 cores)
    PYTHONPATH=. python bench/bench_depth.py --envs 128 --reps 2
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

W, H, FOV, NEAR, FAR, PITCH, OFFSET = 64, 48, 90.0, 0.05, 20.0, 10.0, (0.1, 0.0, 0.0)
SPACING = 200.0  # env grid pitch of the shared mesh [m]


@wp.kernel
def _mesh_depth(mesh: wp.uint64, pos: wp.array(dtype=wp.vec3f), quat: wp.array(dtype=wp.quatf),
                env_off: wp.array(dtype=wp.vec3f), rays: wp.array(dtype=wp.vec3f), offset: wp.vec3f, far: float,
                depth: wp.array3d(dtype=wp.float32)):
    e, k = wp.tid()
    Wd = depth.shape[2]
    i = k // Wd
    j = k - i * Wd
    q = wp.normalize(quat[e])
    o = pos[e] + env_off[e] + wp.quat_rotate(q, offset)
    d = wp.quat_rotate(q, rays[k])
    out = far
    hit = wp.mesh_query_ray(mesh, o, d, far)
    if hit.result:
        out = hit.t
    depth[e, i, j] = out


def box_triangles(lo, hi):
    """12 triangles of the axis-aligned box [lo, hi] (local frame): vertices [8, 3], faces [12, 3]."""
    v = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    f = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return v, f


def scene_mesh(r, offsets):
    """Every env's gate bars (as FrameCollision / DepthCamera define them) and a ground quad."""
    pos, nrm, cnt = r.pos.numpy(), r.normal.numpy(), r.count.numpy()
    width, height, thick, valid = r.width.numpy(), r.height.numpy(), r.thickness.numpy(), r.valid.numpy()
    verts, faces, n = [], [], 0
    for e in range(len(cnt)):
        off = offsets[e]
        ctr = pos[e, :max(int(cnt[e]), 1)].mean(0) if valid[e] else np.zeros(3)
        ext = (np.abs(pos[e, :int(cnt[e])] - ctr).max() if valid[e] and cnt[e] else 0.0) + FAR + 5.0
        gv = np.array([[-ext, -ext, 0], [ext, -ext, 0], [ext, ext, 0], [-ext, ext, 0]]) + [ctr[0], ctr[1], 0] + off
        verts.append(gv)
        faces.append(np.array([[0, 1, 2], [0, 2, 3]]) + n)
        n += 4
        if not valid[e]:
            continue
        w, h, t = float(width[e]), float(height[e]), float(thick[e])
        ex, ey, ez, hw, hh = w / 2 + t, t / 2, h / 2 + t, w / 2, h / 2
        bars = (((-ex, -ey, hh), (ex, ey, ez)), ((-ex, -ey, -ez), (ex, ey, -hh)),
                ((hw, -ey, -hh), (ex, ey, hh)), ((-ex, -ey, -hh), (-hw, ey, hh)))
        for g in range(int(cnt[e])):
            n2 = nrm[e, g, :2] / np.linalg.norm(nrm[e, g, :2])
            lat = np.array([-n2[1], n2[0]])
            M = np.array([[lat[0], n2[0], 0], [lat[1], n2[1], 0], [0, 0, 1]])  # local -> env
            for lo, hi in bars:
                v, f = box_triangles(lo, hi)
                verts.append(v @ M.T + pos[e, g] + off)
                faces.append(f + n)
                n += 8
    return np.concatenate(verts).astype(np.float32), np.concatenate(faces).astype(np.int32).ravel()


def timed(fn, reps):
    fn()
    wp.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    wp.synchronize()
    return (time.perf_counter() - t) / reps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envs", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=3, help="steps per timing")
    ap.add_argument("--rounds", type=int, default=3, help="rounds over every method; the best is kept")
    args = ap.parse_args(argv)
    wp.config.log_level = getattr(wp, "LOG_WARNING", None) or wp.config.log_level
    wp.init()

    import track_gen as tg
    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets
    from track_gen.tools.depth import camera_rays

    E = args.envs
    gen = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=0)
    cam = tools.DepthCamera(W, H, FOV, NEAR, FAR, offset=OFFSET, pitch_deg=PITCH, post_radius=None)
    course = Course(gen, [cam])
    r = course.result
    rng = np.random.default_rng(0)
    p = r.start_pos.numpy().astype(np.float64) + rng.normal(scale=0.3, size=(E, 3)) * [1, 1, 0.1]
    p[:, 2] = np.maximum(p[:, 2], 0.3)
    yaw = r.start_yaw.numpy() + rng.normal(scale=0.3, size=E)
    pitch, roll = rng.normal(scale=0.1, size=E), rng.normal(scale=0.1, size=E)
    cy, sy, cp, sp, cr, sr = (f(a / 2) for a in (yaw, pitch, roll) for f in (np.cos, np.sin))
    q = np.stack([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
                  cr * cp * cy + sr * sp * sy], -1)
    pos = wp.array(p.astype(np.float32), dtype=wp.vec3f)
    quat = wp.array(q.astype(np.float32), dtype=wp.quatf)
    course.bind(position=pos, orientation=quat)
    rays_n = E * W * H
    gates = int(r.count.numpy()[r.valid.numpy() != 0].mean())
    print(f"E={E}, {W}x{H} rays per env ({rays_n:,} per step), {gates} gates per course on average, "
          f"Warp {wp.config.version}, CPU launches on one thread")

    course.step()
    d_an = cam.result.depth.numpy().copy()

    gx = np.arange(E) % 32
    gy = np.arange(E) // 32
    offsets = np.stack([gx * SPACING, gy * SPACING, np.zeros(E)], -1)
    t0 = time.perf_counter()
    verts, idx = scene_mesh(r, offsets)
    t_tri = time.perf_counter() - t0
    t0 = time.perf_counter()
    mesh = wp.Mesh(points=wp.array(verts, dtype=wp.vec3f), indices=wp.array(idx, dtype=wp.int32))
    wp.synchronize()
    t_bvh = time.perf_counter() - t0
    print(f"mesh: {len(idx) // 3:,} triangles; numpy triangles {t_tri:.2f} s, BVH build {t_bvh:.3f} s")

    body_rays, _ = camera_rays(W, H, FOV, PITCH)
    rays = wp.array(body_rays.astype(np.float32), dtype=wp.vec3f)
    env_off = wp.array(offsets.astype(np.float32), dtype=wp.vec3f)
    d_mesh = wp.zeros((E, H, W), dtype=wp.float32)

    def mesh_step():
        wp.launch(_mesh_depth, dim=(E, W * H), inputs=[mesh.id, pos, quat, env_off, rays, wp.vec3f(*OFFSET), FAR],
                  outputs=[d_mesh])

    mesh_step()
    dm = d_mesh.numpy()
    methods = [("analytic (DepthCamera)", lambda: course.step(), d_an), ("mesh_query_ray (own kernel)", mesh_step, dm)]
    try:
        rk = importlib.import_module("isaaclab.sensors.ray_caster.kernels")
        uk = importlib.import_module("isaaclab.utils.warp.kernels")
        tf = wp.array(np.concatenate([p + offsets, q], 1).astype(np.float32), dtype=wp.transformf)
        mask = wp.array(np.ones(E, bool), dtype=wp.bool)
        off_pos = wp.array(np.tile(np.array(OFFSET, np.float32), (E, 1)), dtype=wp.vec3f)
        off_quat = wp.array(np.tile(np.array([0, 0, 0, 1], np.float32), (E, 1)), dtype=wp.quatf)
        zeros = wp.zeros(E, dtype=wp.vec3f)
        starts_l = wp.zeros((E, W * H), dtype=wp.vec3f)
        dirs_l = wp.array(np.broadcast_to(body_rays.astype(np.float32), (E, W * H, 3)).copy(), dtype=wp.vec3f)
        pos_w, quat_w = wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.quatf)
        starts_w, dirs_w = wp.zeros((E, W * H), dtype=wp.vec3f), wp.zeros((E, W * H), dtype=wp.vec3f)
        hits, dist, nrm = (wp.zeros((E, W * H), dtype=wp.vec3f), wp.zeros((E, W * H), dtype=wp.float32),
                           wp.zeros((E, W * H), dtype=wp.vec3f))

        def isaac_step():
            wp.launch(rk.update_ray_caster_kernel, dim=(E, W * H),
                      inputs=[tf, mask, off_pos, off_quat, zeros, zeros, starts_l, dirs_l, 2],
                      outputs=[pos_w, quat_w, starts_w, dirs_w])
            wp.launch(rk.fill_vec3_inf_kernel, dim=(E, W * H), inputs=[mask, wp.inf, hits])
            dist.fill_(FAR)
            wp.launch(uk.raycast_mesh_masked_kernel, dim=(E, W * H),
                      inputs=[mesh.id, mask, starts_w, dirs_w, FAR, 1, 0, hits, dist, nrm])

        isaac_step()
        methods.append(("Isaac Lab ray-caster kernels", isaac_step, dist.numpy().reshape(E, H, W)))
    except Exception as exc:  # noqa: BLE001 - report why and go on
        print(f"Isaac Lab ray-caster kernels: not run ({type(exc).__name__}: {exc})")

    # rounds visit every method in turn (load bursts from other jobs hit all alike); keep the best
    best = [math.inf] * len(methods)
    for _ in range(args.rounds):
        for m, (_, fn, _) in enumerate(methods):
            best[m] = min(best[m], timed(fn, args.reps))
    t_an = best[0]
    rows = [(name, t, d) for (name, _, d), t in zip(methods, best)]

    print(f"\n{'method':32s} {'ms/step':>9s} {'Mrays/s/core':>13s} {'analytic x':>11s} {'agree<1mm':>10s}")
    for name, t, d in rows:
        agree = np.mean(np.abs(d - d_an) < 1e-3)
        print(f"{name:32s} {t * 1e3:9.1f} {rays_n / t / 1e6:13.2f} {t / t_an:11.2f} {agree:10.4f}")
    print(f"\nmesh BVH build: {t_bvh / t_an:.1f} analytic steps (paid per regeneration by a mesh-based caster)")
    print(f"pixels that hit something (ground or a bar): {np.mean(d_an < FAR):.2%}")

    # for scale: the rest of a racing course's per-step work at the same E (no physics)
    full = Course.gates(presets.gates(E, "cpu", gate_width=1.0), collision=0.05, seeds=0)
    he = wp.array(np.full((E, 2), 0.1, np.float32), dtype=wp.vec2f)
    full.bind(position=pos, orientation=quat, half_extents=he)
    t_full = timed(lambda: full.step(), args.reps)
    print(f"Course.gates step (checkpoints, progress, posts, localizer) at E={E}: {t_full * 1e3:.1f} ms; "
          f"the depth image is {t_an / t_full:.1f}x that")


if __name__ == "__main__":
    main()
