"""The main job: draw a batch of band tracks and gate courses, time them, write a contact sheet.

Run ``bash scripts/main.sh`` (or ``python -m track_gen.demo --help``). Defaults come from
``config/generate.toml``; the device defaults to ``cuda:0`` when Warp sees a GPU, else ``cpu``.
"""

from __future__ import annotations

import argparse
import pathlib
import time
import tomllib

import warp as wp

CONFIG = pathlib.Path(__file__).resolve().parent.parent / "config" / "generate.toml"


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    wp.synchronize()
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    cfg = tomllib.loads(CONFIG.read_text()) if CONFIG.exists() else {}
    ap = argparse.ArgumentParser(prog="python -m track_gen.demo", description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=cfg.get("num_envs", 4096), help="courses per family")
    ap.add_argument("--device", default=None, help="'cpu' or 'cuda:N' (default: cuda:0 if available)")
    ap.add_argument("--seed", type=int, default=cfg.get("seed", 0))
    ap.add_argument("--sheet-envs", type=int, default=cfg.get("sheet_envs", 8), help="panels per family")
    ap.add_argument("--out", default=cfg.get("out", "out"), help="output folder")
    args = ap.parse_args(argv)

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    import track_gen as tg
    from track_gen.plot import contact_sheet

    device = args.device or ("cuda:0" if wp.is_cuda_available() else "cpu")
    print(f"track_gen demo: {args.num_envs} envs per family on {device} (seed {args.seed})", flush=True)
    gens = {}
    for name, gen_cls, cfg_cls, overrides in (
        ("tracks", tg.TrackGenerator, tg.TrackGenConfig, cfg.get("track", {})),
        ("gate courses", tg.GateGenerator, tg.GateGenConfig, cfg.get("gates", {})),
    ):
        t = time.perf_counter()
        g = gen_cls(cfg_cls(num_envs=args.num_envs, device=device, **overrides), seeds=args.seed)
        wp.synchronize()
        build_s = time.perf_counter() - t
        regen_s = _timed(lambda g=g: g.enqueue(advance=True))
        attempts = g.result.attempts.numpy().mean()
        print(
            f"  {name:12s}: valid {g.valid_fraction():7.2%}  mean draws {attempts:4.2f}  "
            f"build+first generation {build_s:6.2f} s  next generation {regen_s * 1e3:8.1f} ms "
            f"({args.num_envs / regen_s:,.0f} courses/s)",
            flush=True,
        )
        gens[name] = g
    path = pathlib.Path(args.out) / "courses.png"
    contact_sheet(gens["tracks"], gens["gate courses"], path, envs=args.sheet_envs,
                  title=f"track_gen: {args.num_envs} envs per family on {device}")
    print(f"  contact sheet: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
