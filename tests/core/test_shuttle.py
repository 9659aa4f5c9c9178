"""The shuttle course shape (``gates.shuttle_share``): a meander of lanes joined by U-turns, so that
consecutive gates stand side by side facing opposite ways. Checked on the control polygon (the
construction, independent of rotation, mirror image and scale), on the gates (U-turn legs, the
validity rules' numpy reference) and on the share rule."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import track_gen as tg
from track_gen.pipeline import presets

from .reference import gate_violations
from .test_difficulty import gate_kwargs

#: the lanes a shuttle gets from its control points (shapes.shuttle_lanes): the most whose corners
#: fit (2 lanes + 3 for an odd count, 2 lanes + 2 for an even one)
LANES = {5: 1, 6: 2, 8: 2, 9: 3, 10: 4, 12: 4, 13: 5}


def shuttles(E, n=10, d=1.0, seeds=1, **kw):
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, difficulty=d, control_points=n, figure8_share=0.0,
                                          hairpin_share=0.0, split_s_share=0.0, shuttle_share=1.0, max_turn=2.9,
                                          hard_max_turn=2.9, **kw), seeds=seeds)


def corners_ref(lanes: int, w: float, n: int) -> np.ndarray:
    """float64 reference of a shuttle's control polygon in lane units (lane length 1, spacing ``w``):
    the lanes, the closure (odd: outer side on the right and a return lane, even: outer side on
    the left), the spare points evenly down the outer side."""
    pts = []
    for k in range(lanes):
        xs = (0.0, 1.0) if k % 2 == 0 else (1.0, 0.0)
        pts += [(xs[0], k * w), (xs[1], k * w)]
    top = (lanes - 1) * w
    side = [(1.0 + w, top), (1.0 + w, -w)] if lanes % 2 else [(-w, top), (-w, 0.0)]
    spare = n - (2 * lanes + 2 + lanes % 2)
    a, b = np.array(side[0]), np.array(side[1])
    pts += [side[0]] + [tuple(a + (b - a) * (j + 1) / (spare + 1)) for j in range(spare)] + [side[1]]
    if lanes % 2:
        pts.append((0.0, -w))
    return np.array(pts, np.float64)


def edge_lengths(pts: np.ndarray) -> np.ndarray:
    """Lengths of the closed polygon's edges over the longest one (the same for any rotation,
    mirror image, scale and translation)."""
    d = np.linalg.norm(np.roll(pts, -1, axis=0) - pts, axis=1)
    return d / d.max()


def distance_to(refs: np.ndarray, pts: np.ndarray) -> float:
    """Smallest largest difference between ``pts``' edge lengths and a reference's, over every
    reference row, start index and sense of travel."""
    d = edge_lengths(pts)
    variants = [np.roll(x, -i) for x in (d, np.roll(d[::-1], -1)) for i in range(len(d))]
    return min(float(np.abs(refs - v).max(axis=1).min()) for v in variants)


def reference_rows(lanes: int, n: int, count: int) -> np.ndarray:
    grid = np.linspace(0.085, 0.38, count)          # lane spacing: 0.12..0.3 of the lane, +-25 %
    return np.array([edge_lengths(corners_ref(lanes, w, n)) for w in grid])


@pytest.mark.parametrize("n", sorted(LANES))
def test_the_control_polygon_matches_the_reference_meander(n):
    g = shuttles(16, n=n)
    ctrl = g.outputs()["gates.control"].numpy().astype(np.float64)
    assert (g.result.shape.numpy() == 4).all()
    refs = reference_rows(LANES[n], n, 2951)
    for c in ctrl:
        assert distance_to(refs, c) < 2e-3


def test_the_star_loop_is_not_a_meander():
    g = tg.GateGenerator(presets.gates(16, "cpu", gate_width=1.0, control_points=10), seeds=1)
    refs = reference_rows(4, 10, 301)
    for c in g.outputs()["gates.control"].numpy().astype(np.float64):
        assert distance_to(refs, c) > 0.05


def test_fewer_than_five_points_draw_a_thin_loop():
    g = shuttles(32, n=4)
    assert (g.result.shape.numpy() == 4).all() and g.result.valid.numpy().mean() > 0.5


def test_shuttle_courses_turn_back_between_gates_and_keep_the_rules():
    E = 512
    g = shuttles(E, seeds=2)
    r = g.result
    v, cnt, pos, yaw = r.valid.numpy() == 1, r.count.numpy(), r.pos.numpy(), r.yaw.numpy()
    assert v.mean() >= 0.8
    loops = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, difficulty=1.0, control_points=10,
                                           figure8_share=0.0, hairpin_share=0.0, split_s_share=0.0), seeds=2).result

    def back_share(res):
        ok, c, y = res.valid.numpy() == 1, res.count.numpy(), res.yaw.numpy()
        turns = [np.abs((np.diff(y[e, :c[e]]) + np.pi) % (2 * np.pi) - np.pi) for e in np.flatnonzero(ok)]
        t = np.concatenate(turns + [np.abs((y[e, 0] - y[e, c[e] - 1] + np.pi) % (2 * np.pi) - np.pi)[None]
                                    for e in np.flatnonzero(ok)])
        return (t > 2.5).mean()

    assert back_share(r) > 3.0 * back_share(loops), (back_share(r), back_share(loops))
    # every valid shuttle course keeps every gate rule (the numpy reference of the validity rules)
    d = 1.0
    for e in np.flatnonzero(v)[:64]:
        assert not gate_violations(pos[e], yaw[e], int(cnt[e]), **gate_kwargs(g, e, d)), e


#: sha256 of a difficulty-0.7 draw's arrays, recorded with the generator before the shuttle existed
#: (commit d891a6e): the default ``shuttle_share = 0`` must leave every other shape's draw alone
BEFORE_SHUTTLE = "2858e9ea1072cc84f0b5a49ec2541e762ff76b31c62870b99e80e0d2db1bb47d"


def test_a_zero_share_draws_what_it_drew_before():
    a = tg.GateGenerator(presets.gates(128, "cpu", gate_width=1.0, difficulty=0.7), seeds=5)
    h = hashlib.sha256()
    for n in ("pos", "yaw", "count", "status", "shape", "start_pos"):
        h.update(np.ascontiguousarray(getattr(a.result, n).numpy()).tobytes())
    assert h.hexdigest() == BEFORE_SHUTTLE
    assert np.bincount(a.result.shape.numpy()).tolist() == [47, 35, 13, 33]


def test_shares_over_one_are_refused_naming_the_shuttle():
    with pytest.raises(ValueError, match="shuttle_share"):
        tg.GateGenerator(presets.gates(4, "cpu", gate_width=1.0, shuttle_share=0.2), seeds=0)


# ---------------------------------------------------------------------------------------------
# gates at the U-turns (gates.uturn_gates)

#: sha256 of a shuttle draw (share 1, 10 control points, difficulty 1, seeds 5) recorded before
#: ``uturn_gates`` existed (commit 8e502e1): a share of 0 must leave it alone
BEFORE_UTURN = "ccbf8d8f9b17fd38d430705c22c4918ceabacb463bea2064c06b4a01085cfdc0"


def _pin(g) -> str:
    h = hashlib.sha256()
    for n in ("pos", "yaw", "count", "status", "shape", "start_pos"):
        h.update(np.ascontiguousarray(getattr(g.result, n).numpy()).tobytes())
    return h.hexdigest()


def test_a_zero_uturn_share_draws_the_shuttle_it_drew_before():
    assert _pin(shuttles(128, seeds=5)) == BEFORE_UTURN


def bspline_span(ctrl: np.ndarray, k: int, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 points and tangents of a closed uniform cubic B-spline's span ``k`` at ``t`` (basis form)."""
    n = len(ctrl)
    c0, c1, c2, c3 = (ctrl[(k + i) % n].astype(np.float64) for i in (-1, 0, 1, 2))
    t = t[:, None]
    p = ((1 - t) ** 3 * c0 + (3 * t ** 3 - 6 * t ** 2 + 4) * c1 + (-3 * t ** 3 + 3 * t ** 2 + 3 * t + 1) * c2
         + t ** 3 * c3) / 6.0
    d = (-3 * (1 - t) ** 2 * c0 + (9 * t ** 2 - 12 * t) * c1 + (-9 * t ** 2 + 6 * t + 3) * c2 + 3 * t ** 2 * c3) / 6.0
    return p, d


@pytest.mark.parametrize("n", [8, 10, 12])
def test_uturn_gates_stand_on_the_lanes_of_the_reference_spline(n):
    """Every gate of a U-turn course lies on its lane's spline span (a float64 B-spline) in the half the
    rule names and heads along it (no yaw jitter); lane pairs face opposite ways across each turn-back."""
    g = shuttles(96, n=n, seeds=4, uturn_gates=1.0, yaw_jitter=0.0, min_gates=2, max_gates=12)
    r = g.result
    lanes = LANES[n]
    ctrl, pos, yaw, cnt = g.outputs()["gates.control"].numpy(), r.pos.numpy(), r.yaw.numpy(), r.count.numpy()
    assert (cnt == 2 * lanes).all()
    t_half = np.linspace(0.0, 0.5, 2001)
    back = []
    for e in range(g.num_envs):
        fits = []
        for rev in (0, 1):  # the draw's point order is not an output: one of the two must fit every gate
            ok = True
            for j in range(lanes):
                a = 2 * j if rev == 0 else n - 2 - 2 * (lanes - 1 - j)
                for side in (0, 1):
                    p, d = bspline_span(ctrl[e], a, 0.1 + 0.4 * side + 0.8 * t_half)
                    i = np.argmin(np.linalg.norm(p - pos[e, 2 * j + side, :2], axis=1))
                    yaw_ref = np.arctan2(d[i, 1], d[i, 0])
                    ok &= np.linalg.norm(p[i] - pos[e, 2 * j + side, :2]) < 2e-3
                    ok &= abs((yaw[e, 2 * j + side] - yaw_ref + np.pi) % (2 * np.pi) - np.pi) < 5e-3
            fits.append(ok)
        assert any(fits), e
        y = yaw[e, :cnt[e]]
        back += list(np.abs((y[2::2] - y[1:-1:2] + np.pi) % (2 * np.pi) - np.pi))
    assert np.median(back) > 2.5, np.median(back)


def test_uturn_courses_keep_the_rules_and_fall_back_below_min_gates():
    g = shuttles(256, seeds=6, uturn_gates=1.0, min_gates=3, max_gates=12)
    r = g.result
    v, cnt, pos, yaw = r.valid.numpy() == 1, r.count.numpy(), r.pos.numpy(), r.yaw.numpy()
    assert v.mean() >= 0.5 and (cnt == 8).all()
    for e in np.flatnonzero(v)[:64]:
        assert not gate_violations(pos[e], yaw[e], int(cnt[e]), **gate_kwargs(g, e, 1.0)), e
    # 8 control points hold 2 lanes (4 gates), fewer than min_gates = 6: gates evenly along the path instead
    few = shuttles(64, n=8, seeds=6, uturn_gates=1.0, min_gates=6, max_gates=10).result.count.numpy()
    assert (few >= 6).all()
