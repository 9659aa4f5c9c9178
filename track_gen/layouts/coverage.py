"""Does a course distribution cover a real layout? :func:`coverage` measures it, feature by feature.

A policy trained on procedural courses can only be expected to fly a real track whose local
geometry it has seen: its gate openings, the lengths of its legs, its heights, climbs and turns,
where it starts. :func:`coverage` draws ``num_envs`` courses of a source (a config, a spec or a
built generator), measures the same features on the valid courses and on the layout, and calls a
feature *inside* when every one of the layout's values lies in the distribution's central range
(its 0.5th to 99.5th percentile by default), widened by ``tolerance`` (1 %) of its width on each
side: a continuous distribution almost never draws exactly the edge value a real track has (a
straight leg turns by exactly 0 rad). A layout is *covered* when every feature is inside.

The features of a gate course (per course, per gate or per leg; a leg joins consecutive gates,
and on a loop the last gate to the first):

==================  =========  ==========================================================
``opening``         per gate   opening width [m]
``leg_length``      per leg    distance between consecutive gate centres [m]
``gate_height``     per gate   gate centre above the ground [m]
``climb``           per leg    height change from a gate to the next [m] (signed)
``turn``            per leg    heading change from a gate to the next [rad], in [0, pi]
``start_distance``  per course start position to the first gate's centre [m]
``start_height``    per course start position above the ground [m]
``num_gates``       per course gates in the course
``pole_radius``     per pole   (only when the layout has poles) pole radius [m]
``pole_height``     per pole   (only when the layout has poles) pole height [m]
==================  =========  ==========================================================

Features one at a time miss combinations: a distribution can hold 0.4 m openings, sub-metre legs
and half turns, yet almost never all three in one leg. So each leg of a gate layout is also
measured jointly, by its **support**: the share of the distribution's legs that are like it,
within a box in (opening of the gate it enters, length, turn, entry angle, exit angle, climb)
(:data:`LEG_BOX`). The entry angle is the angle between the leg's plan direction and the axis of
the gate it enters, the exit angle the same at the gate it leaves (0 when the gate faces along
the leg, pi / 2 when it stands side on); legs shorter than :data:`MIN_PLAN` in plan view (stacked
gates) have no direction and are matched without both angles. A leg is *supported* when its
support is at least ``min_support`` (0.1 % of the legs); a layout is :attr:`Coverage.supported`
when it is covered and every leg is supported. On the shipped layouts and the generalist racer,
the legs with support below 0.02 % are where its zero-shot runs stop (``docs/isaac/drone-racing.rst``).

A band-track layout (:class:`TrackLayout`, e.g. a race circuit) is measured against a band-track
source by the features of :mod:`track_gen.layouts.band_features`: half width, curvature, straight
lengths, corners per 100 m and loop length.

This reads generated courses back to the host: a tool for choosing a training distribution, not
for a training loop.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from track_gen.checks import as_int, as_real
from track_gen.layouts.band_features import BAND_FEATURES, band_course_features, band_features, straight_curvature
from track_gen.layouts.types import GateLayout, TrackLayout

__all__ = ["Coverage", "Feature", "coverage", "gate_features", "course_features", "leg_features",
           "course_leg_features", "leg_support", "FEATURES", "LEG_FEATURES", "LEG_BOX", "MIN_PLAN", "MIN_SUPPORT"]

#: gate-course features, in table order, with their unit
FEATURES: dict[str, str] = {
    "opening": "m", "leg_length": "m", "gate_height": "m", "climb": "m", "turn": "rad",
    "start_distance": "m", "start_height": "m", "num_gates": "", "pole_radius": "m", "pole_height": "m",
}
_POLE_FEATURES = ("pole_radius", "pole_height")

#: the columns of a leg's joint description (:func:`leg_features`), with their unit
LEG_FEATURES: dict[str, str] = {"opening": "m", "leg_length": "m", "turn": "rad", "entry": "rad", "exit": "rad",
                                "climb": "m"}
#: half sides of the box that counts a distribution's leg as like a layout's leg: ``("rel", f)`` a
#: share ``f`` of the layout's value, ``("abs", d)`` a distance ``d`` in the feature's unit
LEG_BOX: dict[str, tuple[str, float]] = {"opening": ("rel", 0.25), "leg_length": ("rel", 0.25), "turn": ("abs", 0.4),
                                         "entry": ("abs", 0.4), "exit": ("abs", 0.4), "climb": ("abs", 0.5)}
#: plan length [m] below which a leg has no direction (stacked gates): its entry and exit are NaN
MIN_PLAN = 0.2
#: default least support of a leg [share of the distribution's legs]
MIN_SUPPORT = 1e-3


@dataclass(frozen=True)
class Feature:
    """One feature: the layout's value(s) against the distribution's central range ``[lo, hi]``."""

    name: str
    values: np.ndarray
    """the layout's values (float64; one per gate, leg, pole or course)"""
    lo: float
    hi: float
    unit: str = ""
    tolerance: float = 0.01
    """share of the range's width ``hi - lo`` by which a value may lie beyond either end"""

    def _in(self) -> np.ndarray:
        slack = self.tolerance * (self.hi - self.lo)
        return (self.values >= self.lo - slack) & (self.values <= self.hi + slack)

    @property
    def inside(self) -> bool:
        """True when every value of the layout lies in ``[lo, hi]`` widened by ``tolerance`` (a feature
        with no value is inside; a distribution with no value covers nothing)."""
        return bool(np.all(self._in()))

    @property
    def outside_values(self) -> np.ndarray:
        """The layout's values outside the (widened) range."""
        return self.values[~self._in()]


@dataclass(frozen=True)
class Coverage:
    """The result of :func:`coverage`: ``features`` by name, ``outside`` names, ``covered``."""

    layout: str
    source: str
    features: dict[str, Feature]
    num_courses: int
    """valid courses of the distribution the ranges come from"""
    percentiles: tuple[float, float]
    legs: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, len(LEG_FEATURES))))
    """the layout's legs, one row each, columns :data:`LEG_FEATURES` (gate layouts; empty for band tracks)"""
    leg_support: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    """per leg, the share of the distribution's legs inside its :data:`LEG_BOX`"""
    min_support: float = MIN_SUPPORT

    @property
    def unsupported_legs(self) -> list[int]:
        """Indices of the legs (leg i joins gate i to the next) whose support is below ``min_support``."""
        return [int(i) for i in np.flatnonzero(self.leg_support < self.min_support)]

    @property
    def supported(self) -> bool:
        """Covered feature by feature *and* every leg supported jointly (the stricter verdict)."""
        return self.covered and not self.unsupported_legs

    @property
    def outside(self) -> list[str]:
        """Names of the features with a layout value outside the distribution's range."""
        return [n for n, f in self.features.items() if not f.inside]

    @property
    def covered(self) -> bool:
        return not self.outside

    def __str__(self) -> str:
        lo_q, hi_q = self.percentiles
        head = (f"coverage of {self.layout} by {self.source} ({self.num_courses} valid courses, "
                f"range = {lo_q:g}th..{hi_q:g}th percentile): "
                + ("covered" if self.covered else f"NOT covered ({', '.join(self.outside)})"))
        rows = [("feature", "layout", "range", "inside")]
        for f in self.features.values():
            unit = f" {f.unit}" if f.unit else ""
            if f.values.size:
                vals = f"{f.values.min():.3g}..{f.values.max():.3g}" if f.values.size > 1 else f"{f.values[0]:.3g}"
            else:
                vals = "-"
            rows.append((f.name, vals + unit, f"[{f.lo:.3g}, {f.hi:.3g}]{unit}",
                         "yes" if f.inside else f"no: {', '.join(f'{v:.3g}' for v in f.outside_values[:4])}"))
        text = head + "\n" + _table(rows)
        if self.leg_support.size:
            bad = self.unsupported_legs
            text += (f"\nlegs, jointly: {'every leg supported' if not bad else f'{len(bad)} unsupported'} "
                     f"(support = share of the distribution's legs like it; least {100 * self.min_support:.2g} %)\n")
            rows = [("leg", *LEG_FEATURES, "support")]
            for i, (leg, sup) in enumerate(zip(self.legs, self.leg_support)):
                rows.append((str(i), *(("-" if np.isnan(v) else f"{v:.3g}") for v in leg),
                             f"{100 * sup:.3f} %" + ("" if sup >= self.min_support else "  no")))
            text += _table(rows)
        return text


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _wrap(a: np.ndarray) -> np.ndarray:
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def gate_features(pos, yaw, width, start_pos, closed: bool, pole_radius=(), pole_height=()) -> dict[str, np.ndarray]:
    """The features of one gate course from its numbers (float64 arrays by feature name).

    ``pos`` [G, 3] gate centres, ``yaw`` [G] headings, ``width`` [G] (or one number) openings,
    ``start_pos`` [3]; ``closed`` adds the leg from the last gate back to the first.
    """
    pos = np.asarray(pos, np.float64).reshape(-1, 3)
    g = pos.shape[0]
    legs = leg_features(pos, yaw, width, closed)
    col = {n: legs[:, i].copy() for i, n in enumerate(LEG_FEATURES)}
    start = np.asarray(start_pos, np.float64).reshape(3)
    return {
        "opening": np.broadcast_to(np.asarray(width, np.float64), (g,)).copy(),
        "leg_length": col["leg_length"],
        "gate_height": pos[:, 2].copy(),
        "climb": col["climb"],
        "turn": col["turn"],
        "start_distance": np.array([np.linalg.norm(pos[0] - start)]) if g else np.zeros(0),
        "start_height": np.array([start[2]]),
        "num_gates": np.array([float(g)]),
        "pole_radius": np.asarray(pole_radius, np.float64).reshape(-1),
        "pole_height": np.asarray(pole_height, np.float64).reshape(-1),
    }


def _layout_features(layout: GateLayout) -> dict[str, np.ndarray]:
    return gate_features(layout.pos, layout.yaw, layout.width, layout.start_pos, layout.closed,
                         layout.obstacles.radius, layout.obstacles.height)


def course_features(result) -> dict[str, np.ndarray]:
    """The features pooled over the valid courses of a gate generator's ``result`` (host numpy)."""
    valid = result.valid.numpy() != 0
    count, pos, yaw = result.count.numpy(), result.pos.numpy(), result.yaw.numpy()
    width, start = result.width.numpy(), result.start_pos.numpy()
    has_poles = result.obstacle_pos is not None and result.obstacle_pos.shape[1] > 0
    if has_poles:
        pcount, prad, phgt = (result.obstacle_count.numpy(), result.obstacle_radius.numpy(),
                              result.obstacle_height.numpy())
    pooled: dict[str, list[np.ndarray]] = {n: [] for n in FEATURES}
    for e in np.flatnonzero(valid):
        n = int(count[e])
        m = int(pcount[e]) if has_poles else 0
        feats = gate_features(pos[e, :n], yaw[e, :n], width[e], start[e], bool(result.closed),
                              prad[e, :m] if m else (), phgt[e, :m] if m else ())
        for k, v in feats.items():
            pooled[k].append(v)
    return {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in pooled.items()}


def leg_features(pos, yaw, width, closed: bool) -> np.ndarray:
    """The legs of one gate course, one row each, columns :data:`LEG_FEATURES` (float64).

    ``opening`` is that of the gate the leg enters; ``entry`` / ``exit`` are NaN for a leg shorter
    than :data:`MIN_PLAN` in plan view."""
    pos = np.asarray(pos, np.float64).reshape(-1, 3)
    yaw = np.asarray(yaw, np.float64).reshape(-1)
    g = pos.shape[0]
    nxt = np.r_[np.arange(1, g), [0]] if (closed and g > 1) else np.arange(1, g)
    cur = np.arange(nxt.size)
    leg = pos[nxt] - pos[cur]
    plan = np.hypot(leg[:, 0], leg[:, 1])
    heading = np.arctan2(leg[:, 1], leg[:, 0])
    entry = np.where(plan >= MIN_PLAN, np.abs(_wrap(heading - yaw[nxt])), np.nan)
    exit_ = np.where(plan >= MIN_PLAN, np.abs(_wrap(heading - yaw[cur])), np.nan)
    opening = np.broadcast_to(np.asarray(width, np.float64).reshape(-1), (g,))[nxt]
    return np.stack([opening, np.linalg.norm(leg, axis=1), np.abs(_wrap(yaw[nxt] - yaw[cur])), entry, exit_,
                     leg[:, 2]], axis=1).reshape(-1, len(LEG_FEATURES))


def course_leg_features(result) -> np.ndarray:
    """The legs of every valid course of a gate generator's ``result``, stacked (host numpy)."""
    valid = result.valid.numpy() != 0
    count, pos, yaw, width = result.count.numpy(), result.pos.numpy(), result.yaw.numpy(), result.width.numpy()
    rows = [leg_features(pos[e, :count[e]], yaw[e, :count[e]], width[e], bool(result.closed))
            for e in np.flatnonzero(valid)]
    return np.concatenate(rows) if rows else np.zeros((0, len(LEG_FEATURES)))


def leg_support(legs: np.ndarray, dist: np.ndarray, box: dict[str, tuple[str, float]] | None = None) -> np.ndarray:
    """Per row of ``legs``, the share of the rows of ``dist`` inside its box (:data:`LEG_BOX`); a NaN
    feature of the leg (no direction) is not tested, a NaN feature of a distribution's leg never
    matches a finite one."""
    box = LEG_BOX if box is None else box
    legs = np.asarray(legs, np.float64).reshape(-1, len(LEG_FEATURES))
    dist = np.asarray(dist, np.float64).reshape(-1, len(LEG_FEATURES))
    out = np.zeros(legs.shape[0])
    if dist.shape[0] == 0:
        return out
    for i, leg in enumerate(legs):
        like = np.ones(dist.shape[0], bool)
        for j, name in enumerate(LEG_FEATURES):
            if np.isnan(leg[j]):
                continue
            kind, half = box[name]
            like &= np.abs(dist[:, j] - leg[j]) <= (half * abs(leg[j]) if kind == "rel" else half)
        out[i] = like.mean()
    return out


def _as_layout(layout) -> GateLayout | TrackLayout:
    from track_gen.layouts.reader import load

    if isinstance(layout, (str, Path)):
        layout = load(layout)
    if not isinstance(layout, (GateLayout, TrackLayout)):
        raise TypeError(f"coverage: layout must be a GateLayout, a TrackLayout or a layout file, got "
                        f"{type(layout).__name__}")
    return layout


#: the sources of each generator family, as errors name them
_SOURCES = {"gates": "a GateGenConfig, a PipelineSpec or a GateGenerator",
            "track": "a TrackGenConfig, a PipelineSpec or a TrackGenerator"}


def _draw(source: Any, num_envs: int, seed: int, family: str):
    """A generator of ``num_envs`` envs of ``family`` drawn from ``source`` (config, spec or built generator)."""
    from track_gen.generators import GateGenerator, TrackGenerator
    from track_gen.pipeline.spec import PipelineSpec

    if hasattr(source, "to_spec"):        # a flat config (GateGenConfig, TrackGenConfig)
        spec = source.to_spec()
    elif isinstance(source, PipelineSpec):
        spec = source
    elif hasattr(source, "spec") and hasattr(source, "params"):  # a built generator: its live values
        gen = source
        live = {n: gen.params[n] for n in gen.params if gen.params.is_dynamic(n)}
        spec = gen.spec.with_params(live)
        spec = dataclasses.replace(spec, randomize=dict(gen.randomizers))
    else:
        raise TypeError(f"coverage: source must be {_SOURCES[family]}, got {type(source).__name__}")
    if spec.family != family:
        want = "a gate layout needs a gate-course source" if family == "gates" else \
            "a band-track layout needs a band-track source (presets.track, a TrackGenConfig, ...)"
        raise ValueError(f"coverage: source draws {spec.family!r} courses; {want}")
    spec = dataclasses.replace(spec, num_envs=num_envs)
    return (GateGenerator if family == "gates" else TrackGenerator)(spec, seeds=seed)


def coverage(layout, source, *, num_envs: int = 4096, seed: int = 0,
             percentiles: tuple[float, float] = (0.5, 99.5), tolerance: float = 0.01,
             min_support: float = MIN_SUPPORT) -> Coverage:
    """How well the courses of ``source`` cover ``layout``, feature by feature.

    Args:
        layout: a :class:`GateLayout`, a :class:`TrackLayout` or a layout file (read with
            :func:`track_gen.layouts.load`; load it yourself to pass ``scale=``).
        source: for a gate layout a ``GateGenConfig``, a gate ``PipelineSpec`` (e.g.
            ``presets.gates_real(...)``) or a built ``GateGenerator`` (its current parameter values and
            randomizers); for a band track the same of the track family (``TrackGenConfig``,
            ``presets.track(...)``, a ``TrackGenerator``).
        num_envs: courses drawn (the valid ones count).
        seed: seed of the draw.
        percentiles: the central range of the distribution that counts as covered.
        tolerance: share of that range's width a layout value may lie beyond either end.
        min_support: a gate layout's leg is supported when at least this share of the
            distribution's legs lie in its :data:`LEG_BOX` (see :attr:`Coverage.supported`).

    Returns:
        :class:`Coverage`: ``.features`` (name -> :class:`Feature` with the layout's ``values``,
        the distribution's ``lo`` / ``hi`` and ``inside``), ``.outside``, ``.covered``; for a gate
        layout also ``.legs``, ``.leg_support``, ``.unsupported_legs`` and ``.supported``;
        ``str()`` is a table (and one of the legs).
    """
    lay = _as_layout(layout)
    num_envs = as_int("num_envs", num_envs, lo=1)
    seed = as_int("seed", seed, lo=0)
    try:
        lo_q, hi_q = (float(p) for p in percentiles)
    except (TypeError, ValueError):
        raise TypeError(f"percentiles: expected a pair (lo, hi) in [0, 100], got {percentiles!r}") from None
    if not 0.0 <= lo_q <= hi_q <= 100.0:
        raise ValueError(f"percentiles: expected 0 <= lo <= hi <= 100, got {percentiles!r}")
    tolerance = as_real("tolerance", tolerance)
    if tolerance < 0.0:
        raise ValueError(f"tolerance: expected a share >= 0 of the range's width, got {tolerance!r}")
    min_support = as_real("min_support", min_support)
    if not 0.0 <= min_support <= 1.0:
        raise ValueError(f"min_support: expected a share in [0, 1] of the distribution's legs, got {min_support!r}")
    family = "track" if isinstance(lay, TrackLayout) else "gates"
    gen = _draw(source, num_envs, seed, family)
    ncourses = int((gen.result.valid.numpy() != 0).sum())
    if ncourses == 0:
        raise ValueError(f"coverage: none of the {num_envs} drawn courses is valid; fix the source before "
                         "measuring what it covers")
    if family == "track":
        straight = straight_curvature(lay.half_width)
        mine = band_features(lay.centerline[:, :2], lay.half_width, straight)
        dist, table = band_course_features(gen.result, straight), BAND_FEATURES
    else:
        mine, dist, table = _layout_features(lay), course_features(gen.result), FEATURES
    features: dict[str, Feature] = {}
    for name, unit in table.items():
        if name in _POLE_FEATURES and mine[name].size == 0:
            continue   # poles count only where the layout has them
        d = dist[name]
        lo, hi = (float(v) for v in np.percentile(d, (lo_q, hi_q))) if d.size else (np.nan, np.nan)
        features[name] = Feature(name, mine[name], lo, hi, unit, tolerance)
    src = getattr(source, "name", None) or type(source).__name__
    if family == "track":
        return Coverage(lay.label(), src, features, ncourses, (lo_q, hi_q), min_support=min_support)
    legs = leg_features(lay.pos, lay.yaw, lay.width, lay.closed)
    support = leg_support(legs, course_leg_features(gen.result))
    return Coverage(lay.label(), src, features, ncourses, (lo_q, hi_q), legs, support, min_support)
