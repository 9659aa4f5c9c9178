"""Baselines that ``bench/bench_generate.py`` times next to track_gen.

* :mod:`bench.baselines.numpy_track` / :mod:`bench.baselines.numpy_gates`: plain numpy, one env at a
  time, of the same algorithms as ``track_gen/generators/track/centerline.py`` and ``gates/layout.py``
  (same steps, same validation definitions, same retry rule; not the same random stream).
* :mod:`bench.baselines.carracing`: Gymnasium CarRacing-v3's own ``_create_track`` (needs Box2D).
"""
