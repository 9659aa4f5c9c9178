"""Chicanes on band tracks (``centerline.chicanes``): raised-cosine sideways bumps added to the resampled
centre line. Checked against a float64 reference of one bump, against the chicane-free draw of the same
attempt (the chicanes have their own random stream, so the rest of the line is unchanged), against the
validity rules' numpy reference, and pinned: the default ``chicanes = 0`` draws what it drew before."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.generators.track.centerline import MAX_CHICANES, chicane_bump
from track_gen.pipeline import presets

from .reference import band_reference
from .test_validity import check_tracks


def bump_reference(xy: np.ndarray, c: int, w: int, amp: float) -> np.ndarray:
    """float64: points ``c - w + 1 .. c + w - 1`` moved along the left normal at ``c`` by the raised cosine."""
    out = np.asarray(xy, np.float64).copy()
    n = len(out)
    t = out[(c + 1) % n] - out[(c - 1) % n]
    t /= np.linalg.norm(t)
    nrm = np.array([-t[1], t[0]])
    for j in range(-w + 1, w):
        out[(c + j) % n] += nrm * amp * 0.5 * (1.0 + np.cos(np.pi * j / w))
    return out


@wp.kernel
def _bump_kernel(xy: wp.array2d(dtype=wp.vec2f), c: wp.array(dtype=wp.int32), w: wp.array(dtype=wp.int32),
                 amp: wp.array(dtype=wp.float32), n: int):
    e = wp.tid()
    chicane_bump(xy, e, n, c[e], w[e], amp[e])


def test_one_bump_matches_the_float64_reference():
    rng = np.random.default_rng(0)
    E, n = 64, 200
    xy = np.cumsum(rng.normal(size=(E, n, 2)) * 0.1 + np.array([0.3, 0.0]), axis=1).astype(np.float32)
    c = rng.integers(0, n, E).astype(np.int32)          # wraps past both ends too
    w = rng.integers(2, 40, E).astype(np.int32)
    amp = rng.uniform(-2.0, 2.0, E).astype(np.float32)
    a = wp.array(xy, dtype=wp.vec2f)
    wp.launch(_bump_kernel, dim=E, inputs=[a, wp.array(c), wp.array(w), wp.array(amp), n])
    for e in range(E):
        np.testing.assert_allclose(a.numpy()[e], bump_reference(xy[e], c[e], w[e], amp[e]), atol=2e-5, err_msg=str(e))


def car(E, seed=3, **kw):
    return tg.TrackGenerator(presets.track_car(E, "cpu", **kw), seeds=seed)


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of each run of True in ``mask`` (no run wraps: the start line keeps none)."""
    edge = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)))


def test_chicanes_bump_the_chicane_free_line_and_nothing_else():
    """Envs valid at their first draw with and without chicanes share the draw: their lines differ by at
    most ``floor(chicanes) + 1`` bumps, each along one direction with the raised-cosine profile of an
    offset within its bounds, clear of the start line."""
    E, kw = 48, dict(chicanes=3.5, chicane_length=5.0, chicane_offset=1.0)
    plain, chic = car(E, chicanes=0.0, randomize={}), car(E, **kw, randomize={})
    n = plain.result.xy.shape[1]
    first = (plain.result.attempts.numpy() == 1) & (chic.result.attempts.numpy() == 1)
    assert first.sum() >= 8
    bumps = 0
    for e in np.flatnonzero(first):
        d = chic.result.xy.numpy()[e].astype(np.float64) - plain.result.xy.numpy()[e]
        mag = np.linalg.norm(d, axis=1)
        found = runs(mag > 1e-4)
        assert 1 <= len(found) <= 4 <= MAX_CHICANES, (e, found)
        for a, b in found:
            assert a >= n // 32, (e, a)
            w = (b - a + 1) // 2
            c = a + w - 1
            u = d[c] / mag[c]
            assert np.allclose(u[0] * d[a:b, 1] - u[1] * d[a:b, 0], 0.0, atol=2e-4), e  # one direction
            amp = mag[c]
            assert amp <= 1.0 + 1e-4
            j = np.arange(a, b) - c
            np.testing.assert_allclose(mag[a:b], amp * 0.5 * (1 + np.cos(np.pi * j / w)), atol=3e-4, err_msg=str(e))
            bumps += 1
    assert bumps >= 2 * first.sum()


def test_chicanes_turn_tighter_within_the_rules():
    """More of the line turns tight with chicanes, and every valid track still passes the validity
    rules' numpy reference (the turn-radius rule included)."""
    kw = dict(chicanes=4.0, chicane_length=2.5, chicane_offset=0.5, max_attempts=64)
    gen = tg.TrackGenerator(presets.track(400, "cpu", **kw), seeds=42)
    valid, _ = check_tracks(gen)
    assert valid.mean() > 0.95
    plain = tg.TrackGenerator(presets.track(400, "cpu"), seeds=42)

    def tight_share(g):
        r = g.result
        k = np.abs(r.curvature.numpy()[r.valid.numpy() == 1])
        return (k > 1.0).mean()

    assert tight_share(gen) > 2.0 * tight_share(plain), (tight_share(gen), tight_share(plain))
    r = gen.result
    for e in range(8):  # the derived outputs follow the bumped line
        _, _, s_ref, k_ref, _ = band_reference(r.xy.numpy()[e].astype(np.float64))
        np.testing.assert_allclose(r.s.numpy()[e], s_ref, atol=1e-5 * s_ref[-1], rtol=0)
        np.testing.assert_allclose(r.curvature.numpy()[e], k_ref, atol=1e-4, rtol=1e-4)


#: sha256 of draws recorded with the generator before chicanes existed (commit 8e502e1): the default
#: ``chicanes = 0`` must leave every draw alone
BEFORE_CHICANES = {"track": "105e99558c00dfe27d6babf307faf803e7d067ff96fd9b57370d5b47952e25c0",
                   "track_car": "fc9da304a35c8dcfd33e5d1df5e3d909ccc7cfc9eda8abb6892d7efca29db533"}


def _pin(g) -> str:
    h = hashlib.sha256()
    for n in ("xy", "half_width", "s", "length", "attempts", "status", "valid", "shape"):
        h.update(np.ascontiguousarray(getattr(g.result, n).numpy()).tobytes())
    return h.hexdigest()


def test_no_chicanes_draw_what_was_drawn_before():
    assert _pin(tg.TrackGenerator(presets.track(64, "cpu", difficulty=0.6), seeds=3)) == BEFORE_CHICANES["track"]
    assert _pin(tg.TrackGenerator(presets.track_car(32, "cpu", chicanes=0.0, randomize={}), seeds=3)) == BEFORE_CHICANES["track_car"]


def test_chicane_parameters_are_checked():
    with pytest.raises(ValueError, match="chicanes"):
        presets.track(4, "cpu", chicanes=MAX_CHICANES + 1.0)
    with pytest.raises(ValueError, match="chicane_length"):
        presets.track(4, "cpu", chicane_length=0.0)
    with pytest.raises(ValueError, match="chicane_offset"):
        presets.track(4, "cpu", chicane_offset=-1.0)
    with pytest.raises(TypeError, match="chicanes"):
        presets.track_from_points(4, "cpu", control_points=8, chicanes=2.0)
