"""The minimum time along a spline path and its gradient with respect to the control points.

The time is the one of :mod:`track_gen.reference.lap` (forward and backward passes under the point
mass's bounds, :func:`~track_gen.reference.lap.open_profile` from rest or
:func:`~track_gen.reference.lap.periodic_profile` around a loop). Its gradient comes from the
profile's active bounds: at the fastest profile every sample's ``w = v^2`` equals one of its
bounds, (a) its speed limit, (b) the reach from the sample before (full acceleration), or (c) the
brake into the sample after (full braking), each a smooth function of the local geometry and of
one neighbour's ``w``. Differentiating ``w = bound(w, geometry)`` gives a sparse linear system with
at most one off-diagonal entry per row; its transposed solve (the adjoint) carries ``dT/dw`` back
to the per-sample coefficients, then :func:`~track_gen.reference.spline.geometry_vjp` to the control
points. The time is piecewise smooth (the active bounds switch as the path moves); the gradient is
exact within a piece. Cost: one profile plus O(M) numpy work and one sparse solve.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from track_gen.reference.lap import (SampledPath, SpeedProfile, VehicleLimits, open_profile, periodic_profile,
                                    speed_limits)
from track_gen.reference.spline import Geometry, SplineBasis, geometry, geometry_vjp, path_of

__all__ = ["TimeGrad", "lap_time_grad"]

_Z = np.array([0.0, 0.0, 1.0])


@dataclass
class TimeGrad:
    """``time`` [s], ``grad`` [n, 3] its gradient with respect to the control points, ``profile``."""

    time: float
    grad: np.ndarray | None
    profile: SpeedProfile


def lap_time_grad(basis: SplineBasis, X: np.ndarray, limits: VehicleLimits, *, want_grad: bool = True) -> TimeGrad:
    """Minimum time along the spline through ``X`` [n, 3]: a loop's periodic lap when the basis is
    closed, else from rest to the end (any end speed); with its gradient when ``want_grad``."""
    geo = geometry(basis, X)
    path = path_of(basis, geo)
    prof = periodic_profile(path, limits) if basis.closed else open_profile(path, limits, v_start=0.0)
    if not want_grad:
        return TimeGrad(prof.time, None, prof)
    b = _bounds(geo, path, prof, limits, basis.closed)
    act = _active_bounds(b, limits.max_accel)
    lam, g_ds = _adjoint(b, act)
    g_gt, g_kk, g_kh2, g_h_sq, g_dsum = _coefficient_grads(b, act, lam, g_ds, limits)

    # coefficients -> tangent, curvature
    g, t, k, h = limits.gravity, b.t, b.k, b.h
    tz = t[:, 2:3]
    kt = np.sum(k * t, 1, keepdims=True)
    g_t = np.zeros_like(t)
    g_t[:, 2] += g * g_gt
    g_k = 2.0 * k * g_kk[:, None] + 2.0 * h * g_kh2[:, None]
    g_t += -2.0 * g * g_kh2[:, None] * (kt * _Z + tz * k)
    g_t += -2.0 * g * g * g_h_sq[:, None] * tz * (_Z - tz * t)
    grad = geometry_vjp(basis, geo, g_t, g_k, g_dsum)
    return TimeGrad(prof.time, grad, prof)


@dataclass
class _Bounds:
    """Per-sample terms of the profile's bounds on ``w = v^2`` (M samples; pair ``i -> j = i + 1``).

    ``r = sqrt(a^2 - (kk w^2 + kh2 w + h_sq))`` is the acceleration left along the path; ``reach`` bounds
    ``w[j]`` from ``w[i]`` (full acceleration), ``brake`` bounds ``w[i]`` from ``w[j]`` (full braking),
    ``wl`` is the squared speed limit."""

    closed: bool
    v: np.ndarray
    w: np.ndarray
    t: np.ndarray
    k: np.ndarray
    ds: np.ndarray
    h: np.ndarray
    gt: np.ndarray
    kk: np.ndarray
    kh2: np.ndarray
    h_sq: np.ndarray
    wl: np.ndarray
    r: np.ndarray
    i: np.ndarray
    j: np.ndarray
    reach: np.ndarray
    brake: np.ndarray


def _bounds(geo: Geometry, path: SampledPath, prof: SpeedProfile, limits: VehicleLimits, closed: bool) -> _Bounds:
    """The bounds' terms at the profile ``prof`` along ``geo``."""
    M = len(geo.pos)
    v = prof.v[:M]
    w = v * v
    g, a = limits.gravity, limits.max_accel
    t, k, ds = geo.tangent, geo.curvature, geo.chord
    h = g * (_Z - t[:, 2:3] * t)
    gt = g * t[:, 2]
    kk = np.sum(k * k, 1)
    kh2 = 2.0 * np.sum(k * h, 1)
    h_sq = np.sum(h * h, 1)
    wl = speed_limits(path, limits) ** 2
    r = np.sqrt(np.maximum(a * a - (kk * w * w + kh2 * w + h_sq), 0.0))
    i = np.arange(M if closed else M - 1)  # pair i: sample i -> sample j = i + 1 (mod M)
    j = (i + 1) % M
    reach = w[i] + 2.0 * ds * (-gt[i] + r[i])  # bound on w[j]
    brake = w[j] + 2.0 * ds * (gt[j] + r[j])  # bound on w[i]
    return _Bounds(closed, v, w, t, k, ds, h, gt, kk, kh2, h_sq, wl, r, i, j, reach, brake)


@dataclass
class _Active:
    """Which bound holds each sample (``kind``: 0 none, 1 speed limit, 2 reach from the sample before,
    3 brake from the sample after), the reach / brake pairs ``ir -> jr`` and ``jb -> ib``, and ``r``'s
    derivative where it is read (``live``: the sources not at their speed limit)."""

    kind: np.ndarray
    live: np.ndarray
    r_eff: np.ndarray
    dr_dw: np.ndarray
    jr: np.ndarray
    ir: np.ndarray
    jb: np.ndarray
    ib: np.ndarray


def _active_bounds(b: _Bounds, a: float) -> _Active:
    """The bound that holds each sample of the profile (within rounding)."""
    w, i, j = b.w, b.i, b.j
    M = len(w)
    tol = 1e-7 * np.maximum(w, 1.0)
    at_limit = w >= b.wl - tol
    kind = np.zeros(M, np.int8)  # 0: no dependence, 1: speed limit, 2: reach from j-1, 3: brake from j+1
    kind[at_limit] = 1
    r_ok = np.zeros(M, bool)
    r_ok[j] = np.abs(b.reach - w[j]) <= tol[j]
    b_ok = np.zeros(M, bool)
    b_ok[i] = np.abs(b.brake - w[i]) <= tol[i]
    kind[(kind == 0) & r_ok] = 2
    kind[(kind == 0) & b_ok] = 3
    if not b.closed:
        kind[0] = 0  # the standing start: w = 0 whatever the path
    # a sample held by the reach from one that is itself held by the brake from it (both tight:
    # both at their limits within rounding) would close a cycle: drop the reach side there
    src = np.where(kind == 2, (np.arange(M) - 1) % M, np.where(kind == 3, (np.arange(M) + 1) % M, -1))
    loop = (src >= 0) & (src[np.maximum(src, 0)] == np.arange(M))
    kind[loop & (kind == 2)] = 0

    # r' where it is read: a source at its speed limit keeps r = 0 whatever the geometry does
    r_eff = np.maximum(b.r, 1e-6 * a)
    dr_dw = -(2.0 * b.kk * w + b.kh2) / (2.0 * r_eff)
    live = kind != 1  # sources not at their limit carry r's derivatives
    jr = np.nonzero(kind == 2)[0]
    ir = (jr - 1) % M  # pair index of (ir -> jr) is ir
    jb = np.nonzero(kind == 3)[0]
    ib = (jb + 1) % M  # pair index of (jb -> ib) is jb
    return _Active(kind, live, r_eff, dr_dw, jr, ir, jb, ib)


def _adjoint(b: _Bounds, act: _Active) -> tuple[np.ndarray, np.ndarray]:
    """``lam``: dT/dw carried through the bounds' dependencies (the adjoint solve), and ``dT/dds``."""
    v, i, j, ds = b.v, b.i, b.j, b.ds
    M = len(v)
    vpair = v[i] + v[j]
    vpair = np.maximum(vpair, 1e-12)
    g_ds = 2.0 / vpair
    dT_dv = np.zeros(M)
    np.add.at(dT_dv, i, -2.0 * ds / vpair**2)
    np.add.at(dT_dv, j, -2.0 * ds / vpair**2)
    g_w = np.where(v > 1e-9, dT_dv / (2.0 * np.maximum(v, 1e-9)), 0.0)
    if not b.closed:
        g_w[0] = 0.0

    # the adjoint: (I - J)^T lam = g_w, J[j, src] = d bound_j / d w_src
    jr, ir, jb, ib, live, dr_dw = act.jr, act.ir, act.jb, act.ib, act.live, act.dr_dw
    d_r = 1.0 + np.where(live[ir], 2.0 * ds[ir] * dr_dw[ir], 0.0)
    d_r = np.where(b.reach[ir] > 0.0, d_r, 0.0)
    d_b = 1.0 + np.where(live[ib], 2.0 * ds[jb] * dr_dw[ib], 0.0)
    d_b = np.where(b.brake[jb] > 0.0, d_b, 0.0)
    rows = np.concatenate([jr, jb])
    cols = np.concatenate([ir, ib])
    vals = np.concatenate([d_r, d_b])
    A = sp.identity(M, format="csr") - sp.csr_matrix((vals, (rows, cols)), shape=(M, M))
    if len(vals):
        with warnings.catch_warnings():  # a singular system (a dependency cycle): no gradient there
            warnings.simplefilter("ignore")
            lam = np.atleast_1d(spsolve(A.T.tocsc(), g_w))
        lam = np.where(np.isfinite(lam), lam, 0.0)
    else:
        lam = g_w.copy()
    return lam, g_ds


def _coefficient_grads(b: _Bounds, act: _Active, lam: np.ndarray, g_ds: np.ndarray,
                       limits: VehicleLimits) -> tuple[np.ndarray, ...]:
    """The time's gradient with respect to the per-sample coefficients ``gt, kk, kh2, h_sq`` and the
    chord lengths, from the adjoint ``lam`` through each sample's active bound."""
    M = len(b.w)
    w, wl, ds, gt, r, kk, kh2 = b.w, b.wl, b.ds, b.gt, b.r, b.kk, b.kh2
    jr, ir, jb, ib, live, r_eff = act.jr, act.ir, act.jb, act.ib, act.live, act.r_eff
    g_gt = np.zeros(M)
    g_kk = np.zeros(M)
    g_kh2 = np.zeros(M)
    g_h_sq = np.zeros(M)
    g_dsum = g_ds.copy()
    # (1) speed limits (none where a max_speed cap or a straight sample sets them)
    j1 = np.nonzero(act.kind == 1)[0]
    wl1 = wl[j1]
    den = 2.0 * kk[j1] * wl1 + kh2[j1]
    ok = np.isfinite(wl1) & (den > 1e-12)
    if limits.max_speed is not None:
        ok &= wl1 < limits.max_speed**2 * (1 - 1e-12)
    f = np.where(ok, -lam[j1] / np.where(ok, den, 1.0), 0.0)
    np.add.at(g_kk, j1, f * np.where(ok, wl1 * wl1, 0.0))
    np.add.at(g_kh2, j1, f * np.where(ok, wl1, 0.0))
    np.add.at(g_h_sq, j1, f)

    def r_partials(src, pair, lam_dst):
        """Add lam * d(2 ds r_src) / d(coefficients of src) where src carries r's derivatives
        (r^2 = a^2 - (kk w^2 + kh2 w + h_sq))."""
        c = np.where(live[src], lam_dst * 2.0 * ds[pair] * (-0.5 / r_eff[src]), 0.0)
        np.add.at(g_kk, src, c * w[src] ** 2)
        np.add.at(g_kh2, src, c * w[src])
        np.add.at(g_h_sq, src, c)

    # (2) reach: bound_j = w_i + 2 ds_i (-gt_i + r_i)
    lr = lam[jr] * (b.reach[ir] > 0.0)
    np.add.at(g_dsum, ir, lr * 2.0 * (-gt[ir] + np.where(live[ir], r[ir], 0.0)))
    np.add.at(g_gt, ir, lr * -2.0 * ds[ir])
    r_partials(ir, ir, lr)
    # (3) brake: bound_j = w_i + 2 ds_j (gt_i + r_i), i = j + 1
    lb = lam[jb] * (b.brake[jb] > 0.0)
    np.add.at(g_dsum, jb, lb * 2.0 * (gt[ib] + np.where(live[ib], r[ib], 0.0)))
    np.add.at(g_gt, ib, lb * 2.0 * ds[jb])
    r_partials(ib, jb, lb)
    return g_gt, g_kk, g_kh2, g_h_sq, g_dsum
