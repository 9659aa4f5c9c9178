#!/usr/bin/env python
"""Courses per second of track_gen on the CPU, next to CarRacing-v3 and a plain numpy version.

For each E in --envs and each family (band tracks: the default ``presets.track`` spec, 256
centerline points, full validation; gate courses: ``presets.gates`` with a 1 m gate) it times

* a full regeneration of all E envs (``enqueue(advance=True)``), eager and replayed from a
  captured CPU graph;
* a regeneration of a fixed random 1% of the envs (``enqueue(advance=True, mask=mask)``), eager
  and replayed.

Baselines, measured in the same run:

* CarRacing-v3's own ``_create_track`` as ``reset`` calls it (retries included), tracks/s;
* ``bench/baselines/numpy_track.py`` / ``numpy_gates.py``: our algorithm in plain numpy, one env
  at a time, timed on ``--numpy-envs`` envs and reported per course.

Every time is the best of ``--repeats`` measurements; a measurement repeats the operation until it
has run for at least ``--min-time`` seconds and reports the mean per call. Run from the repository
root::

    PYTHONPATH=. python bench/bench_generate.py            # E = 256, 4096, 16384 (a few minutes)
    PYTHONPATH=. python bench/bench_generate.py --quick    # smoke run (E = 256, short timings)
    PYTHONPATH=. python bench/bench_generate.py --envs 4096 --max-attempts 1   # draw cost alone
    PYTHONPATH=. python bench/bench_generate.py --envs 4096 --difficulty 0 1   # harder courses (issue 14)

``--difficulty D...`` runs each family at each difficulty (gate courses then carry up to
``--obstacles`` pole obstacles, 4 by default) and adds the shape statistics of the last full
regeneration: for gates the share with a self-crossing path, an elevation range >= 3 m, a split-S
pair and obstacles; for tracks the share of hairpin tracks. Targets: gates >= 1000x CarRacing at
difficulty 0 and >= 300x at difficulty 1, tracks >= 200x. ``--families gates_real`` times the
generalist's training mixture (``presets.gates_real``: every scale of real track, poles, take-offs),
target >= 300x, and reports the share of each kind of course.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

TARGETS = {"track": 200.0, "gates": 1000.0, "gates_real": 300.0}  # x CarRacing tracks/s
HARD_GATE_TARGET = 300.0  # x CarRacing for gate courses at difficulty 1
MASK_TARGET = 5.0  # % of a full regeneration
GATE_WIDTH = 1.0
SEEDS = {"track": 42, "gates": 1, "gates_real": 1}


# -- machine ------------------------------------------------------------------------------------

def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_avg() -> str:
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "n/a"


def git_state() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "track_gen"], cwd=ROOT, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return rev + (" + uncommitted changes in track_gen/" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "n/a"


def machine_info() -> dict:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return dict(
        date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        cpu=cpu_model(), cores=os.cpu_count(), usable_cores=usable, python=platform.python_version(),
        numpy=np.__version__, warp=wp.config.version, git=git_state(), load_start=load_avg(),
    )


# -- timing -------------------------------------------------------------------------------------

def best_time(fn, repeats: int, min_time: float) -> tuple[float, int]:
    """(best seconds per call, calls per measurement). The first call warms up and calibrates."""
    t0 = time.perf_counter()
    fn()
    wp.synchronize_device("cpu")
    once = time.perf_counter() - t0
    n = max(1, min(10000, math.ceil(min_time / max(once, 1e-7))))
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        wp.synchronize_device("cpu")
        best = min(best, (time.perf_counter() - t0) / n)
    return best, n


def capture(fn):
    with wp.ScopedCapture(device="cpu") as cap:
        fn()
    return cap.graph


# -- track_gen ----------------------------------------------------------------------------------

def build(family: str, num_envs: int, overrides: dict):
    import track_gen as tg
    from track_gen.pipeline import presets

    overrides = dict(overrides)
    if family == "track":
        overrides.pop("max_obstacles", None)
        return tg.TrackGenerator(presets.track(num_envs, "cpu", **overrides), seeds=SEEDS[family])
    if family == "gates_real":  # the generalist's mixture of real-track scales (it sets its own obstacles)
        overrides.pop("max_obstacles", None)
        overrides.pop("difficulty", None)
        return tg.GateGenerator(presets.gates_real(num_envs, "cpu", **overrides), seeds=SEEDS[family])
    return tg.GateGenerator(presets.gates(num_envs, "cpu", gate_width=GATE_WIDTH, **overrides), seeds=SEEDS[family])


def make_mask(num_envs: int, fraction: float, seed: int = 2024) -> tuple[wp.array, int]:
    k = max(1, int(round(fraction * num_envs)))
    m = np.zeros(num_envs, dtype=np.int32)
    m[np.random.default_rng(seed).choice(num_envs, size=k, replace=False)] = 1
    return wp.array(m, dtype=wp.int32, device="cpu"), k


def bench_ours(family: str, num_envs: int, args, overrides: dict) -> dict:
    t0 = time.perf_counter()
    g = build(family, num_envs, overrides)
    build_s = time.perf_counter() - t0
    mask, k = make_mask(num_envs, args.mask_fraction)
    full = lambda: g.enqueue(advance=True)  # noqa: E731
    part = lambda: g.enqueue(advance=True, mask=mask)  # noqa: E731
    r = dict(family=family, envs=num_envs, mask_envs=k, build_s=build_s)
    r["full_eager_s"], r["full_eager_calls"] = best_time(full, args.repeats, args.min_time)
    # acceptance statistics of the last full regeneration
    attempts = g.result.attempts.numpy()
    r["valid"] = float(g.result.valid.numpy().mean())
    r["draws_per_env"] = float(attempts.mean())
    r["max_draws"] = int(attempts.max())
    graph_full = capture(full)
    r["full_graph_s"], _ = best_time(lambda: wp.capture_launch(graph_full), args.repeats, args.min_time)
    r["mask_eager_s"], _ = best_time(part, args.repeats, args.min_time)
    graph_part = capture(part)
    r["mask_graph_s"], _ = best_time(lambda: wp.capture_launch(graph_part), args.repeats, args.min_time)
    r["rate_eager"] = num_envs / r["full_eager_s"]
    r["rate_graph"] = num_envs / r["full_graph_s"]
    r["mask_pct_eager"] = 100.0 * r["mask_eager_s"] / r["full_eager_s"]
    r["mask_pct_graph"] = 100.0 * r["mask_graph_s"] / r["full_graph_s"]
    r["us_per_draw"] = 1e6 * r["full_eager_s"] / (num_envs * r["draws_per_env"])
    r["validator_agreement"] = ("n/a" if overrides.get("difficulty") or family == "gates_real"
                                else cross_check(family, g, overrides))
    r["difficulty"] = float(overrides.get("difficulty", 0.0))
    r["shapes"] = shape_stats(family, g)
    del g
    return r


def shape_stats(family: str, g) -> str:
    """Shares of the harder shapes in the last full regeneration (the issue-14 metrics)."""
    r = g.result
    v = r.valid.numpy() == 1
    if family == "track":
        return f"hairpin {np.mean((r.shape.numpy() == 2) & v):.1%}"
    if family == "gates_real":
        comp = g.mixture_component.numpy()
        return ", ".join(f"{m[0]} {np.mean(comp == i):.0%}" for i, m in enumerate(g.spec.mixture)) + \
            f", take-off {np.mean(r.start_pos.numpy()[:, 2] == 0.0):.0%}"
    pos, yaw, cnt = r.pos.numpy().astype(np.float64), r.yaw.numpy().astype(np.float64), r.count.numpy()
    closed = r.closed

    def crossing(e):
        q = pos[e, : cnt[e], :2]
        n = len(q)
        legs = n if closed else n - 1
        for i in range(legs):
            for j in range(i + 2, legs):
                if (j + 1) % n == i:
                    continue
                a0, a1, b0, b1 = q[i], q[(i + 1) % n], q[j], q[(j + 1) % n]
                da, db, w = a1 - a0, b1 - b0, b0 - a0
                den = da[0] * db[1] - da[1] * db[0]
                if den != 0.0:
                    t = (w[0] * db[1] - w[1] * db[0]) / den
                    u = (w[0] * da[1] - w[1] * da[0]) / den
                    if 0.0 < t < 1.0 and 0.0 < u < 1.0:
                        return True
        return False

    E = len(v)
    cross = np.mean([v[e] and crossing(e) for e in range(E)])
    z = [pos[e, : cnt[e], 2] for e in range(E)]
    elev = np.mean([v[e] and (z[e].max() - z[e].min()) >= 3.0 for e in range(E)])
    split = np.mean((r.stacked.numpy().any(axis=1)) & v)
    obst = np.mean((r.obstacle_count.numpy() > 0) & v)
    return f"cross {cross:.1%}, elev>=3m {elev:.1%}, split-S {split:.1%}, obstacles {obst:.1%}"


def cross_check(family: str, g, overrides: dict, limit: int = 256) -> str:
    """Run the numpy baseline's validator on our committed courses: it must agree with our status."""
    from track_gen import GateGenConfig, TrackGenConfig

    n = min(limit, g.num_envs)
    status = g.result.status.numpy()[:n]
    agree = 0
    if family == "track":
        from bench.baselines.numpy_track import track_status

        cfg = TrackGenConfig(**overrides)
        xy, hw = g.result.xy.numpy()[:n], g.result.half_width.numpy()[:n]
        for e in range(n):
            s = track_status(xy[e], hw[e], cfg.size, cfg.min_turn_radius, cfg.clearance, cfg.min_length,
                             cfg.max_length)
            agree += int(s == status[e])
    else:
        from bench.baselines.numpy_gates import gates_status

        cfg = GateGenConfig(gate_width=GATE_WIDTH, **overrides)
        pos, yaw, count = g.result.pos.numpy()[:n], g.result.yaw.numpy()[:n], g.result.count.numpy()[:n]
        gh = cfg.gate_height if cfg.gate_height > 0 else cfg.gate_width
        outer_half, bottom = 0.5 * cfg.gate_width + cfg.frame_thickness, 0.5 * gh + cfg.frame_thickness
        for e in range(n):
            c = int(count[e])
            s = gates_status(pos[e, :c], yaw[e, :c], cfg.closed, cfg.size, cfg.min_spacing, cfg.max_spacing,
                             cfg.max_turn, outer_half, bottom)
            agree += int(s == status[e])
    return f"{agree}/{n}"


# -- baselines ----------------------------------------------------------------------------------

def bench_numpy(family: str, args, overrides: dict) -> dict:
    from track_gen import GateGenConfig, TrackGenConfig

    if family == "track":
        from bench.baselines.numpy_track import NumpyTrackGenerator, TrackParams

        gen = NumpyTrackGenerator(TrackParams.from_config(TrackGenConfig(**overrides)))
    else:
        from bench.baselines.numpy_gates import GateParams, NumpyGateGenerator

        gen = NumpyGateGenerator(GateParams.from_config(GateGenConfig(gate_width=GATE_WIDTH, **overrides)))
    n = args.numpy_envs
    best, out = math.inf, []
    for _ in range(args.repeats):
        gen.reseed(7)
        t0 = time.perf_counter()
        out = gen.generate(n)
        best = min(best, time.perf_counter() - t0)
    return dict(family=family, envs=n, seconds=best, rate=n / best, us_per_course=1e6 * best / n,
                valid=float(np.mean([o["valid"] for o in out])),
                draws_per_env=float(np.mean([o["attempts"] for o in out])))


def bench_carracing(args) -> dict | None:
    from bench.baselines import carracing

    ok, msg = carracing.available()
    if not ok:
        print(msg, flush=True)
        return {"skipped": msg}
    r = carracing.measure(args.carracing_tracks, args.repeats, seed=0)
    if args.carracing_resets > 0:
        env = carracing.make_env(0)
        try:
            best = math.inf
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                for i in range(args.carracing_resets):
                    env.reset(seed=1000 + i)
                best = min(best, time.perf_counter() - t0)
            r["resets_per_s"] = args.carracing_resets / best
        finally:
            env.close()
    return r


# -- report -------------------------------------------------------------------------------------

def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def fmt_ms(s: float) -> str:
    return f"{1e3 * s:.3f}" if s < 0.01 else f"{1e3 * s:.2f}" if s < 1 else f"{1e3 * s:.0f}"


def report(info: dict, ours: list[dict], numpy_r: dict, car: dict | None, args) -> str:
    lines = []
    add = lines.append
    add(f"Machine: {info['cpu']}, {info['cores']} cores ({info['usable_cores']} usable); Warp CPU kernels run "
        f"one thread per launch")
    add(f"Date: {info['date']}; python {info['python']}, numpy {info['numpy']}, warp {info['warp']}; "
        f"track_gen {info['git']}")
    add(f"Load average (1/5/15 min): start {info['load_start']}, end {info['load_end']}")
    add(f"Settings: repeats={args.repeats} (best of), min-time={args.min_time}s, mask={args.mask_fraction:.0%}, "
        f"numpy-envs={args.numpy_envs}, carracing-tracks={args.carracing_tracks}"
        + (f", max_attempts={args.max_attempts}" if args.max_attempts else ""))
    add("")
    if car and "skipped" in car:
        add(car["skipped"])
        car = None
    elif car:
        add(f"CarRacing-v3 `_create_track`: {car['tracks_per_s']:.1f} tracks/s (best of "
            f"{[round(x, 1) for x in car['runs_tracks_per_s']]}; {car['tries']} tries for {car['tracks']} tracks, "
            f"{car['tiles_per_track']:.0f} tiles/track)"
            + (f"; full `reset()`: {car['resets_per_s']:.1f}/s" if "resets_per_s" in car else ""))
    else:
        add("CarRacing-v3: skipped (--no-carracing)")
    for fam, r in numpy_r.items():
        add(f"numpy baseline ({fam}): {r['us_per_course']:.0f} us/course = {fmt_rate(r['rate'])} courses/s "
            f"(on {r['envs']} envs; valid {r['valid']:.3f}, {r['draws_per_env']:.2f} draws/env)")
    add("")
    add("| family | difficulty | E | full eager [ms] | full graph [ms] | courses/s eager | courses/s graph | 1% envs "
        "| 1% eager [ms] (% of full) | 1% graph [ms] (% of full) | x CarRacing | x CR reset() | x numpy | valid "
        "| draws/env | us/draw | shapes (of all courses) |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in ours:
        xcar = f"{r['rate_graph'] / car['tracks_per_s']:,.0f}x" if car else "n/a"
        xres = f"{r['rate_graph'] / car['resets_per_s']:,.0f}x" if car and "resets_per_s" in car else "n/a"
        npr = numpy_r.get(r["family"])
        xnp = f"{r['rate_graph'] / npr['rate']:.1f}x" if npr else "n/a"
        add(f"| {r['family']} | {r['difficulty']:g} | {r['envs']} | {fmt_ms(r['full_eager_s'])} "
            f"| {fmt_ms(r['full_graph_s'])} "
            f"| {fmt_rate(r['rate_eager'])} | {fmt_rate(r['rate_graph'])} | {r['mask_envs']} "
            f"| {fmt_ms(r['mask_eager_s'])} ({r['mask_pct_eager']:.1f}%) "
            f"| {fmt_ms(r['mask_graph_s'])} ({r['mask_pct_graph']:.1f}%) | {xcar} | {xres} | {xnp} | {r['valid']:.3f} "
            f"| {r['draws_per_env']:.2f} | {r['us_per_draw']:.1f} | {r['shapes']} |")
    add("")
    add("Targets (reported, not asserted): tracks >= 200x CarRacing, gate courses >= 1000x CarRacing at "
        "difficulty 0 and >= 300x at difficulty 1, 1% mask <= 5% of a full regeneration")

    def verdict(ok):
        return "met" if ok else "MISSED"

    for r in ours:
        parts = []
        if car:
            t = TARGETS[r["family"]]
            if r["family"] == "gates" and r["difficulty"] > 0.0:
                t = HARD_GATE_TARGET
            x = r["rate_graph"] / car["tracks_per_s"]
            xe = r["rate_eager"] / car["tracks_per_s"]
            line = f"{x:,.0f}x CarRacing (eager {xe:,.0f}x) vs {t:.0f}x: {verdict(x >= t)}"
            if "resets_per_s" in car:
                xr = r["rate_graph"] / car["resets_per_s"]
                line += f" (against full reset(): {xr:,.0f}x, {verdict(xr >= t)})"
            parts.append(line)
        pe, pg = r["mask_pct_eager"], r["mask_pct_graph"]
        parts.append(f"1% mask vs {MASK_TARGET:.0f}%: graph {pg:.1f}% {verdict(pg <= MASK_TARGET)}, "
                     f"eager {pe:.1f}% {verdict(pe <= MASK_TARGET)}")
        add(f"- {r['family']} d={r['difficulty']:g} E={r['envs']}: " + "; ".join(parts)
            + f" (numpy validator agrees with ours on {r['validator_agreement']} courses)")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, nargs="+", default=None, help="env counts (default 256 4096 16384)")
    ap.add_argument("--families", nargs="+", choices=("track", "gates", "gates_real"), default=("track", "gates"),
                    help="gates_real: the generalist's training mixture (presets.gates_real), target 300x")
    ap.add_argument("--quick", action="store_true", help="smoke run: E=256, short timings, small baselines")
    ap.add_argument("--repeats", type=int, default=None, help="measurements per number, best kept (default 5)")
    ap.add_argument("--min-time", type=float, default=None, help="seconds per measurement at least (default 0.2)")
    ap.add_argument("--mask-fraction", type=float, default=0.01, help="fraction of envs in the mask (default 0.01)")
    ap.add_argument("--max-attempts", type=int, default=None,
                    help="override max_attempts of both families (ours and numpy), e.g. 1 for the draw cost alone")
    ap.add_argument("--numpy-envs", type=int, default=None, help="envs the numpy baselines generate (default 256)")
    ap.add_argument("--carracing-tracks", type=int, default=None, help="CarRacing tracks per run (default 100)")
    ap.add_argument("--carracing-resets", type=int, default=None,
                    help="CarRacing full reset() calls timed for reference (default 20; 0 skips)")
    ap.add_argument("--no-carracing", action="store_true", help="skip the CarRacing baseline")
    ap.add_argument("--difficulty", type=float, nargs="+", default=None,
                    help="difficulty levels to run (default: the default configs only)")
    ap.add_argument("--obstacles", type=int, default=4,
                    help="pole capacity of gate courses when --difficulty is given (default 4; 0: none)")
    ap.add_argument("--json", type=Path, default=None, help="also write the raw results here")
    args = ap.parse_args(argv)
    quick = args.quick
    args.envs = args.envs or ([256] if quick else [256, 4096, 16384])
    args.repeats = args.repeats or (2 if quick else 5)
    args.min_time = args.min_time if args.min_time is not None else (0.03 if quick else 0.2)
    args.numpy_envs = args.numpy_envs or (32 if quick else 256)
    args.carracing_tracks = args.carracing_tracks or (10 if quick else 100)
    if args.carracing_resets is None:
        args.carracing_resets = 3 if quick else 20

    if hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = wp.LOG_WARNING
    else:
        wp.config.quiet = True
    wp.init()
    info = machine_info()
    print(f"track_gen CPU benchmark: {info['cpu']}, {info['cores']} cores, load {info['load_start']}", flush=True)
    overrides = {"max_attempts": args.max_attempts} if args.max_attempts else {}
    t_start = time.perf_counter()

    car = None
    if not args.no_carracing:
        print("CarRacing-v3 _create_track ...", flush=True)
        car = bench_carracing(args)
    numpy_r = {}
    for fam in (f for f in args.families if f != "gates_real"):   # no numpy version of the mixture
        print(f"numpy baseline ({fam}) ...", flush=True)
        numpy_r[fam] = bench_numpy(fam, args, overrides)
    ours = []
    levels = [None] if args.difficulty is None else args.difficulty
    for num_envs in args.envs:
        for level in levels:
            for fam in args.families:
                kw = dict(overrides)
                if level is not None:
                    kw["difficulty"] = level
                    if fam == "gates" and args.obstacles > 0:
                        kw["max_obstacles"] = args.obstacles
                print(f"track_gen {fam} E={num_envs} difficulty={level or 0:g} ...", flush=True)
                ours.append(bench_ours(fam, num_envs, args, kw))
    info["load_end"] = load_avg()
    info["wall_s"] = time.perf_counter() - t_start
    text = report(info, ours, numpy_r, car, args)
    print()
    print(text)
    print(f"\n(total {info['wall_s']:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(dict(machine=info, ours=ours, numpy=numpy_r, carracing=car,
                                             args={k: (str(v) if isinstance(v, Path) else v)
                                                   for k, v in vars(args).items()}), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
