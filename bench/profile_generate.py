#!/usr/bin/env python
"""Where a regeneration's CPU time goes: per launch, and inside the draw kernels.

1. Each launch of one full ``enqueue(advance=True)`` timed alone (mask -> active, advance, begin,
   parameter resolve, every stage, the commit), for both families.
2. The band-track centerline kernel split into draw (control points, spline, arc-length
   resampling) and validation: the kernel with ``max_attempts=1`` (every draw is resampled and
   validated once) against ``track.validity.track_status`` alone on the same courses, and
   ``track_status`` with the overlap test skipped (an impossible ``min_length`` makes it return
   before the pairwise test). The same for gate courses with ``gates_status``.
3. How many segment pairs the band self-overlap test measures per course, counted with the numpy
   baseline's chunk culling (16-segment chunks, box test only): an upper bound on the kernel's
   work, which uses 12-segment chunks and skips more pairs (``track_validity.band_overlaps``).

Uses Program internals (``_contexts``, ``_commit_pairs``...) to time launches one by one: a
profiling aid, not an API. Run: ``PYTHONPATH=. python bench/profile_generate.py [--envs 4096]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

from track_gen.generators.gates import validity as GK  # noqa: E402
from track_gen.generators.track import validity as TK  # noqa: E402


@wp.kernel
def _track_status_only(xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), n: int, size: float,
                       min_turn_radius: float, clearance: float, min_length: float, max_length: float,
                       out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    out[e] = TK.track_status(xy, hw, e, n, size, min_turn_radius, clearance, min_length, max_length)


@wp.kernel
def _gates_status_only(pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32),
                       count: wp.array(dtype=wp.int32), closed: int, size: float, min_spacing: float,
                       max_spacing: float, max_turn: float, outer_half: float, bottom: float,
                       stacked: wp.array2d(dtype=wp.int32), max_climb: float, crossing_clearance: float,
                       out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    out[e] = GK.gates_status(pos, yaw, e, count[e], closed, size, min_spacing, max_spacing, max_turn, outer_half,
                             bottom, stacked, max_climb, crossing_clearance)


def best(fn, repeats=3, min_time=0.1) -> float:
    fn()
    wp.synchronize_device("cpu")
    t0 = time.perf_counter()
    fn()
    wp.synchronize_device("cpu")
    n = max(1, math.ceil(min_time / max(time.perf_counter() - t0, 1e-7)))
    out = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        wp.synchronize_device("cpu")
        out = min(out, (time.perf_counter() - t0) / n)
    return out


def launches(g, E):
    """(name, fn) for every launch of one full enqueue(advance=True), in order."""
    from track_gen.exec import mask_to_active
    from track_gen.pipeline import program as P

    ones = wp.ones(E, dtype=wp.int32, device="cpu")
    out = [
        ("mask -> active", lambda: mask_to_active(ones, g._active)),
        ("advance", lambda: wp.launch(P._advance, dim=E, inputs=[g._active, g.generation], device="cpu")),
        ("begin", lambda: wp.launch(P._begin, dim=E, inputs=[g._active, g._valid_work], device="cpu")),
        ("resolve params", lambda: g._params.resolve(g._active, g.seeds.seeds, g.generation)),
    ]
    for d, sctx in g._contexts:
        out.append((f"stage {sctx.name}" if hasattr(sctx, "name") else "stage", lambda d=d, s=sctx: d.launch(s)))

    def commit():
        for src, dst in g._commit_pairs:
            wp.launch(P._commit_rows, dim=E, inputs=[g._active, src, dst], device="cpu")

    out.append((f"commit ({len(g._commit_pairs)} launches)", commit))
    return out


def per_launch(g, E):
    mask_to_all = launches(g, E)
    mask_to_all[0][1]()
    rows = [(name, best(fn)) for name, fn in mask_to_all]
    full = best(lambda: g.enqueue(advance=True))
    print(f"  one full enqueue: {1e3 * full:.2f} ms ({1e6 * full / E:.1f} us/env)")
    for name, t in rows:
        print(f"    {name:<28} {1e3 * t:9.3f} ms  {100 * t / full:5.1f}%")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=4096)
    args = ap.parse_args(argv)
    if hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = wp.LOG_WARNING
    wp.init()
    import track_gen as tg
    from track_gen.pipeline import presets

    E = args.envs
    print(f"E = {E}; load {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}")

    print("\n[1] band tracks, default preset: launches of one full regeneration")
    g = tg.TrackGenerator(presets.track(E, "cpu"), seeds=42)
    per_launch(g, E)
    att = g.result.attempts.numpy()
    print(f"  draws/env {att.mean():.2f} (max {att.max()}), valid {g.valid_fraction():.3f}")
    del g

    print("\n[2] band tracks, max_attempts=1: draw vs validation (per course)")
    cfg = tg.TrackGenConfig()
    g1 = tg.TrackGenerator(presets.track(E, "cpu", max_attempts=1), seeds=42)
    cl = [(d, s) for d, s in g1._contexts][0]
    t_center = best(lambda: cl[0].launch(cl[1]))
    xy, hw = g1.result.xy, g1.result.half_width
    n = xy.shape[1]
    st = wp.zeros(E, dtype=wp.int32, device="cpu")
    args_ok = [xy, hw, n, cfg.size, cfg.min_turn_radius, cfg.clearance, cfg.min_length, cfg.max_length, st]
    args_skip = [xy, hw, n, cfg.size, cfg.min_turn_radius, cfg.clearance, 1.0e9, 2.0e9, st]
    t_status = best(lambda: wp.launch(_track_status_only, dim=E, inputs=args_ok, device="cpu"))
    t_pointwise = best(lambda: wp.launch(_track_status_only, dim=E, inputs=args_skip, device="cpu"))
    valid1 = g1.valid_fraction()
    print(f"  centerline kernel, one draw:   {1e6 * t_center / E:7.1f} us/course (valid {valid1:.3f})")
    print(f"    draw + spline + resampling:  {1e6 * (t_center - t_status) / E:7.1f} us")
    print(f"    track_status:                {1e6 * t_status / E:7.1f} us")
    print(f"      length/bounds/turn loops:  {1e6 * t_pointwise / E:7.1f} us")
    print(f"      band self-overlap test:    {1e6 * (t_status - t_pointwise) / E:7.1f} us")

    from bench.baselines import numpy_track as NT

    xs, hs = xy.numpy().astype(np.float64), hw.numpy().astype(np.float64)
    pairs, chunk_pairs = [], []
    for e in range(min(E, 256)):
        c = count_pairs(xs[e], hs[e], cfg.min_turn_radius, cfg.clearance, NT)
        if c is not None:
            pairs.append(c[0])
            chunk_pairs.append(c[1])
    if pairs:
        nc = math.ceil(n / NT.CHUNK)
        print(f"  overlap test: {np.mean(chunk_pairs):.1f} of {nc * (nc + 1) // 2} chunk pairs survive the box "
              f"test; {np.mean(pairs):.0f} segment pairs measured per course (of {n * (n - 1) // 2})")
    del g1

    print("\n[3] gate courses (gate_width=1): launches of one full regeneration")
    gg = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=1)
    per_launch(gg, E)
    att = gg.result.attempts.numpy()
    print(f"  draws/env {att.mean():.2f} (max {att.max()}), valid {gg.valid_fraction():.3f}")
    del gg

    print("\n[4] gate courses, max_attempts=1: draw vs validation (per course)")
    gc = tg.GateGenConfig(gate_width=1.0)
    g1 = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, max_attempts=1), seeds=1)
    lay = g1._contexts[0]
    t_layout = best(lambda: lay[0].launch(lay[1]))
    r = g1.result
    gh = gc.gate_height if gc.gate_height > 0 else gc.gate_width
    t_gs = best(lambda: wp.launch(_gates_status_only, dim=E, inputs=[
        r.pos, r.yaw, r.count, int(gc.closed), gc.size, gc.min_spacing, gc.max_spacing, gc.max_turn,
        0.5 * gc.gate_width + gc.frame_thickness, 0.5 * gh + gc.frame_thickness, r.stacked, gc.max_climb,
        gc.crossing_clearance, st], device="cpu"))
    print(f"  layout kernel, one draw:       {1e6 * t_layout / E:7.1f} us/course (valid {g1.valid_fraction():.3f})")
    print(f"    draw + spline + gate walk:   {1e6 * (t_layout - t_gs) / E:7.1f} us")
    print(f"    gates_status:                {1e6 * t_gs / E:7.1f} us")
    return 0


def count_pairs(xy, hw, min_turn_radius, clearance, NT):
    """(segment pairs measured, chunk pairs kept) by the overlap test of a valid-so-far course."""
    n = len(xy)
    lb = np.linalg.norm(np.roll(xy, -1, axis=0) - xy, axis=1)
    total, wmax = lb.sum(), hw.max()
    big_r = max(min_turn_radius, wmax)
    gmin = int(math.ceil(math.pi * (big_r + clearance) / (total / n)))
    if 2 * gmin > n:
        return None
    C = NT.CHUNK
    nc = (n + C - 1) // C
    reach = 2.0 * wmax + clearance
    ext = np.concatenate([xy, xy[:1]], axis=0)
    ext = np.concatenate([ext, np.repeat(ext[-1:], nc * C + 1 - len(ext), axis=0)], axis=0)
    win = np.lib.stride_tricks.sliding_window_view(ext, C + 1, axis=0)[::C]
    lo, hi = win.min(axis=2), win.max(axis=2)
    ca, cb = np.triu_indices(nc)
    dx = np.maximum(np.maximum(lo[ca, 0] - hi[cb, 0], lo[cb, 0] - hi[ca, 0]), 0.0)
    dy = np.maximum(np.maximum(lo[ca, 1] - hi[cb, 1], lo[cb, 1] - hi[ca, 1]), 0.0)
    near = dx * dx + dy * dy <= reach * reach
    measured = 0
    for a, b in zip(ca[near], cb[near]):
        i = np.arange(a * C, min(a * C + C, n))[:, None]
        j = np.arange(b * C, min(b * C + C, n))[None, :]
        gap = np.minimum(j - i, n - (j - i))
        measured += int(((j > i) & (gap >= gmin)).sum())
    return measured, int(near.sum())


if __name__ == "__main__":
    sys.exit(main())
