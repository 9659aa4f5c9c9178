"""Gymnasium CarRacing-v3's own track generation, timed as ``reset`` runs it.

``CarRacing.reset`` destroys the previous road, then calls ``_create_track()`` until it returns
True (a draw fails when the generated loop does not close well). We do the same, timing only the
``_create_track()`` calls (failed tries included): tracks/s = successful tracks / seconds spent in
``_create_track``. Destroying the previous road's Box2D bodies and clearing ``road_poly`` (which
``reset`` also does) happen outside the timer, and the car is not rebuilt, so this is the
generator's cost alone, a slight upper bound on what ``reset`` achieves.
"""

from __future__ import annotations

import time

INSTALL_HINT = (
    "CarRacing baseline skipped: Box2D is not installed. Install the benchmark extras into this venv with\n"
    "    <venv>/bin/pip install -r bench/requirements.txt\n"
    "(that is `pip install \"gymnasium[box2d]\"`; Box2D 2.3.10 ships wheels for Python 3.12 on Linux x86_64,\n"
    "elsewhere first `pip install swig` so Box2D can build from source)."
)


def available() -> tuple[bool, str]:
    """(True, "") when CarRacing can be built, else (False, a message telling how to install it)."""
    try:
        import Box2D  # noqa: F401
    except ImportError:
        return False, INSTALL_HINT
    try:
        import pygame  # noqa: F401  (car_racing.py imports it at module level)
    except ImportError:
        return False, INSTALL_HINT.replace("Box2D is not installed", "pygame is not installed")
    try:
        import gymnasium  # noqa: F401
    except ImportError:
        return False, "CarRacing baseline skipped: gymnasium is not installed (pip install \"gymnasium[box2d]\")."
    return True, ""


def make_env(seed: int = 0):
    """A CarRacing-v3 env (unwrapped) after one ``reset(seed=...)``: its Box2D world and
    ``np_random`` are set up, as ``_create_track`` needs."""
    import gymnasium as gym

    env = gym.make("CarRacing-v3").unwrapped
    env.reset(seed=seed)
    return env


def _clear_road(env) -> None:
    for body in env.road or ():
        env.world.DestroyBody(body)
    env.road = []
    env.road_poly = []


def time_tracks(env, num_tracks: int, seed: int) -> dict:
    """Generate ``num_tracks`` tracks the way ``reset`` does; reseeds ``np_random`` first, so
    repeated calls with the same seed do the same work."""
    from gymnasium.utils import seeding

    env.np_random, _ = seeding.np_random(seed)
    busy = 0.0
    tries = 0
    tiles = 0
    for _ in range(num_tracks):
        _clear_road(env)
        while True:
            tries += 1
            t0 = time.perf_counter()
            ok = env._create_track()
            busy += time.perf_counter() - t0
            if ok:
                break
            _clear_road(env)
        tiles += len(env.track)
    return dict(tracks=num_tracks, tries=tries, seconds=busy, tracks_per_s=num_tracks / busy,
                tiles_per_track=tiles / num_tracks)


def measure(num_tracks: int = 30, repeats: int = 3, seed: int = 0) -> dict:
    """Best of ``repeats`` runs of ``num_tracks`` tracks (the same seed each run)."""
    env = make_env(seed)
    try:
        runs = [time_tracks(env, num_tracks, seed + 1) for _ in range(repeats)]
    finally:
        _clear_road(env)
        env.close()
    best = max(runs, key=lambda r: r["tracks_per_s"])
    best["runs_tracks_per_s"] = [r["tracks_per_s"] for r in runs]
    return best
