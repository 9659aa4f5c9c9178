"""Float64 numpy references of the DepthCamera tests: each ray primitive, the pinhole model
written out from its definition, and brute-force images of a course (every primitive, every
pixel)."""

from __future__ import annotations

import math

import numpy as np

BIG = 1.0e30

__all__ = ["BIG", "pixel_rays", "quat_yaw", "ref_box", "ref_cylinder", "ref_plane", "ref_slab", "ref_wall", "rotmat",
           "scene_depth", "scene_ground_only"]


# float64 references (vectorized over rays o, d [R, 3]); each returns t [R] (BIG: no hit)
def ref_slab(o, d, lo, hi):
    t0 = np.full(len(o), -np.inf)
    t1 = np.full(len(o), np.inf)
    for k in range(3):
        with np.errstate(divide="ignore", invalid="ignore"):
            a = (lo[k] - o[:, k]) / d[:, k]
            b = (hi[k] - o[:, k]) / d[:, k]
        zero = d[:, k] == 0
        inside = (o[:, k] >= lo[k]) & (o[:, k] <= hi[k])
        t0 = np.where(zero, np.where(inside, t0, np.inf), np.maximum(t0, np.minimum(a, b)))
        t1 = np.where(zero, np.where(inside, t1, -np.inf), np.minimum(t1, np.maximum(a, b)))
    return t0, t1


def ref_box(o, d, lo, hi, tmin):
    t0, t1 = ref_slab(o, d, np.asarray(lo, float), np.asarray(hi, float))
    hit = t0 <= t1
    return np.where(hit & (t0 >= tmin), t0, np.where(hit & (t1 >= tmin), t1, BIG))


def ref_cylinder(o, d, c, r, z0, z1, tmin):
    m = o[:, :2] - np.asarray(c, float)
    a = (d[:, :2] ** 2).sum(1)
    b = 2 * (m * d[:, :2]).sum(1)
    cc = (m ** 2).sum(1) - r * r
    disc = b * b - 4 * a * cc
    best = np.full(len(o), BIG)
    ok = (a > 0) & (disc >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sq = np.sqrt(np.where(ok, disc, 0))
        for t in ((-b - sq) / (2 * a), (-b + sq) / (2 * a)):
            z = o[:, 2] + t * d[:, 2]
            good = ok & (t >= tmin) & (z >= z0) & (z <= z1)
            best = np.where(good, np.minimum(best, t), best)
        for zc in (z0, z1):
            t = (zc - o[:, 2]) / d[:, 2]
            p = m + t[:, None] * d[:, :2]
            good = (d[:, 2] != 0) & (t >= tmin) & ((p ** 2).sum(1) <= r * r)
            best = np.where(good, np.minimum(best, t), best)
    return best


def ref_plane(o, d, h, tmin):
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (h - o[:, 2]) / d[:, 2]
    return np.where((d[:, 2] != 0) & (t >= tmin), t, BIG)


def ref_wall(o, d, a, b, za, zb, height, tmin):
    a, b = np.asarray(a, float), np.asarray(b, float)
    e = b - a
    den = d[:, 0] * e[1] - d[:, 1] * e[0]
    w = a - o[:, :2]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[:, 0] * e[1] - w[:, 1] * e[0]) / den
        s = (w[:, 0] * d[:, 1] - w[:, 1] * d[:, 0]) / den
    zb0 = za + s * (zb - za)
    z = o[:, 2] + t * d[:, 2]
    good = (den != 0) & (t >= tmin) & (s >= 0) & (s <= 1) & (z >= zb0) & (z <= zb0 + height)
    return np.where(good, t, BIG)


def quat_yaw(yaw, pitch=0.0, roll=0.0):
    """(x, y, z, w) of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    return np.array([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
                     cr * cp * cy + sr * sp * sy])


def rotmat(q):
    x, y, z, w = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def pixel_rays(W, H, fov, pitch):
    """World-independent pinhole rays, written out from the definition: [H, W, 3] unit, body frame."""
    f = (W / 2) / math.tan(math.radians(fov) / 2)
    p = math.radians(pitch)
    out = np.zeros((H, W, 3))
    for i in range(H):
        for j in range(W):
            cam = np.array([1.0, -(j + 0.5 - W / 2) / f, -(i + 0.5 - H / 2) / f])  # x fwd, y left, z up
            c, s = math.cos(p), math.sin(p)
            v = np.array([c * cam[0] + s * cam[2], cam[1], -s * cam[0] + c * cam[2]])  # pitch down by p
            out[i, j] = v / np.linalg.norm(v)
    return out


def scene_depth(c, cam, p, q, body=None, starts=None):
    """Brute-force float64 image of every env: every primitive, every pixel (or every ray of
    ``body`` [R, 3], body frame: then [E, R] distances; ``starts`` [R, 3]: each ray's start
    relative to the mount, body frame, default the mount itself)."""
    r = c.result
    E = len(p)
    shape = (cam.height, cam.width) if body is None else (len(body),)
    if body is None:
        body = pixel_rays(cam.width, cam.height, cam.fov_deg, cam.pitch_deg).reshape(-1, 3)
    out = np.zeros((E,) + shape)
    gates = c.context.family == "gates"
    for e in range(E):
        Rm = rotmat(q[e])
        o = np.broadcast_to(p[e] + Rm @ np.array(cam.offset), body.shape)
        if starts is not None:
            o = o + np.asarray(starts, float) @ Rm.T
        d = body @ Rm.T
        best = ref_plane(o, d, 0.0, cam.near) if cam.ground else np.full(len(d), BIG)
        valid = r.valid.numpy()[e] != 0
        if gates and valid:
            G = min(int(r.count.numpy()[e]), r.pos.shape[1])
            w, h, t = (float(getattr(r, k).numpy()[e]) for k in ("width", "height", "thickness"))
            for g in range(G):
                gp = r.pos.numpy()[e, g].astype(float)
                n = r.normal.numpy()[e, g].astype(float)
                n2 = n[:2] / np.linalg.norm(n[:2])
                lat = np.array([-n2[1], n2[0]])
                M = np.array([[lat[0], lat[1], 0], [n2[0], n2[1], 0], [0, 0, 1]])
                ol, dl = (o - gp) @ M.T, d @ M.T
                ex, ey, ez, hw, hh = w / 2 + t, t / 2, h / 2 + t, w / 2, h / 2
                for lo, hi in (((-ex, -ey, hh), (ex, ey, ez)), ((-ex, -ey, -ez), (ex, ey, -hh)),
                               ((hw, -ey, -hh), (ex, ey, hh)), ((-ex, -ey, -hh), (-hw, ey, hh))):
                    best = np.minimum(best, ref_box(ol, dl, lo, hi, cam.near))
                if cam.post_radius > 0:
                    for s in (1, -1):
                        cc = gp[:2] + s * (w / 2 + t / 2) * lat
                        best = np.minimum(best, ref_cylinder(o, d, cc, cam.post_radius, 0.0, gp[2] + h / 2 + t,
                                                             cam.near))
        opos = getattr(r, "obstacle_pos", None)
        if valid and opos is not None and opos.shape[1] > 0:  # poles, on either family
            for k in range(int(r.obstacle_count.numpy()[e])):
                b = opos.numpy()[e, k].astype(float)
                best = np.minimum(best, ref_cylinder(o, d, b[:2], float(r.obstacle_radius.numpy()[e, k]), b[2],
                                                     b[2] + float(r.obstacle_height.numpy()[e, k]), cam.near))
        if not gates and valid and cam.wall_height > 0:
            xy, hwid, nrm, z = (getattr(r, k).numpy()[e].astype(float) for k in ("xy", "half_width", "normal", "z"))
            for edge in (xy + hwid[:, None] * nrm, xy - hwid[:, None] * nrm):
                for i in range(len(xy)):
                    j = (i + 1) % len(xy)
                    best = np.minimum(best, ref_wall(o, d, edge[i], edge[j], z[i], z[j], cam.wall_height, cam.near))
        out[e] = np.where(best < cam.far, best, cam.far).reshape(shape)
    return out


def scene_ground_only(cam, p, q):
    body = pixel_rays(cam.width, cam.height, cam.fov_deg, cam.pitch_deg).reshape(-1, 3)
    out = []
    for e in range(len(p)):
        Rm = rotmat(q[e])
        o = p[e] + Rm @ np.array(cam.offset)
        dz = (body @ Rm.T)[:, 2]
        with np.errstate(divide="ignore"):
            t = np.where(dz < 0, -o[2] / dz, np.inf)
        out.append(np.where((t >= cam.near) & (t < cam.far), t, cam.far).reshape(cam.height, cam.width))
    return np.stack(out)
