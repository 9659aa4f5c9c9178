"""Curriculum terms (stable runtime; the curriculum manager is torch in both runtimes).

The curriculum runs at the start of each reset (``_reset_idx``), before the reset events, so a
stage change written here is used by the ``regenerate_course`` of the same reset. It writes a
*dynamic* generator parameter (``course.generator.params[name] = value``): a small device write
between replays; no graph is recorded again.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import torch
import warp as wp

from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["course_difficulty", "course_mixture", "course_schedule"]


def _ended(env, env_ids):
    """(index, ended mask) of a reset's envs: ``env_ids`` as an index into the env's per-env buffers
    (a slice for None) and which of them end an episode (``episode_length_buf > 0``)."""
    idx = slice(None) if env_ids is None else env_ids
    if not isinstance(idx, slice):
        idx = torch.as_tensor(idx, device=env.episode_length_buf.device).to(torch.long)
    return idx, env.episode_length_buf[idx] > 0


class course_schedule(CourseTerm):
    """Step a generator parameter through ``values`` as the success rate allows.

    An episode that ends (an env in ``env_ids`` with ``episode_length_buf > 0``) succeeds when it
    completed ``laps`` laps. Every ``min_episodes`` ended episodes the success rate over them
    decides: ``>= promote`` moves to the next value, ``< demote`` (when given) back to the previous
    one; then the count restarts. The first value is written at the first call.

    Typical schedules: ``param="centerline.size"`` (track size [m], growing) or
    ``param="gate_frames.gate_width"`` (gate opening [m], shrinking). Static parameters and unknown
    names are refused at construction.

    Returns (logged as ``Curriculum/<term>/<key>``): ``level``, ``value``, ``success_rate`` (of the
    current window, NaN before the first ended episode).
    """

    def check(self, param="", values=(), laps=1, promote=0.8, demote=None, min_episodes=64):
        if not isinstance(param, str) or not param:
            raise ValueError(f"param: expected a generator parameter name, got {param!r}")
        try:
            vals = [float(v) for v in values]
        except (TypeError, ValueError):
            raise TypeError(f"values: expected a sequence of numbers, got {values!r}") from None
        if not vals or not all(math.isfinite(v) for v in vals):
            raise ValueError(f"values: expected at least one finite number, got {values!r}")
        if isinstance(laps, bool) or not isinstance(laps, numbers.Integral) or laps < 1:
            raise ValueError(f"laps: expected an int >= 1, got {laps!r}")
        if not (isinstance(promote, numbers.Real) and 0.0 < promote <= 1.0):
            raise ValueError(f"promote: expected a success rate in (0, 1], got {promote!r}")
        if demote is not None and not (isinstance(demote, numbers.Real) and 0.0 <= demote < promote):
            raise ValueError(f"demote: expected None or a rate in [0, promote), got {demote!r}")
        if isinstance(min_episodes, bool) or not isinstance(min_episodes, numbers.Integral) or min_episodes < 1:
            raise ValueError(f"min_episodes: expected an int >= 1, got {min_episodes!r}")
        params = self.ec.course.generator.params
        if param not in params:
            raise ValueError(f"param: unknown generator parameter {param!r}; parameters: {sorted(params)}")
        if not params.is_dynamic(param):
            raise ValueError(f"param: {param!r} is static (it sizes buffers); a curriculum can only move dynamic ones")
        self.values = vals
        self.level = 0
        self.ended = 0
        self.succeeded = 0
        self.rate = float("nan")
        self._started = False

    def _apply(self, param) -> None:
        self.ec.course.generator.params[param] = self.values[self.level]

    def __call__(self, env, env_ids, course_name: str = "course", param: str = "", values: tuple = (),
                 laps: int = 1, promote: float = 0.8, demote: float | None = None, min_episodes: int = 64):
        ec = self.ec
        if not self._started:
            self._started = True
            self._apply(param)
        idx, ended = _ended(env, env_ids)
        n = int(ended.sum())
        if n:
            res = ec.step()
            ok = (ec.torch(res.events.laps)[idx] >= int(laps)) & ended
            self.ended += n
            self.succeeded += int(ok.sum())
            self.rate = self.succeeded / self.ended
            if self.ended >= min_episodes:
                if self.rate >= promote and self.level < len(self.values) - 1:
                    self.level += 1
                    self._apply(param)
                elif demote is not None and self.rate < demote and self.level > 0:
                    self.level -= 1
                    self._apply(param)
                self.ended = self.succeeded = 0
        return {"level": float(self.level), "value": float(self.values[self.level]), "success_rate": self.rate}


class course_difficulty(CourseTerm):
    """Per-env difficulty: each env's next course is harder after a success, easier after a failure.

    The generator's ``difficulty`` knob (:doc:`/user-guide/difficulty`) reads
    ``clamp(params[<stage>.difficulty] + inputs[<stage>.difficulty_offset][e], 0, 1)``; this term
    sets the parameter to 0 and owns the per-env offset, so every env climbs at its own pace and
    nothing is recorded again (the offset is an input array written in place). An episode that
    ends (an env in ``env_ids`` with ``episode_length_buf > 0``) succeeds when it completed ``laps``
    laps: that env's level rises by ``up``; any other ending (a crash, a time-out, a missed gate)
    lowers it by ``down``; levels stay in ``[0, max_level]``, starting at ``start``. The curriculum
    runs before the reset events, so the ``regenerate_course`` of the same reset draws the new level.

    ``revisit`` (a probability, 0 by default) keeps the easier courses in the mix: at each reset an
    env flies, with that probability, a course drawn at a uniform level in ``[0, its level]``
    instead of at its level (the way Isaac Lab's terrain curriculum sends the robots that solve the
    top level back to a random one). Without it a run that climbs to the top trains on the hardest
    courses only, and can forget the easy ones. A revisit's ending does not move the env's level.
    The draws come from a generator of their own, seeded from the env's seed: deterministic, and
    the policy's random stream is untouched.

    Returns (logged as ``Curriculum/<term>/<key>``): ``mean``, ``min``, ``max`` level over all envs
    and the ``success_rate`` of the episodes that ended in this reset (NaN when none did).
    """

    def check(self, up=0.1, down=0.05, laps=1, start=0.0, max_level=1.0, revisit=0.0):
        for name, v, lo in (("up", up, 0.0), ("down", down, 0.0), ("revisit", revisit, 0.0)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (lo <= float(v) <= 1.0):
                raise ValueError(f"{name}: expected {'a probability' if name == 'revisit' else 'a step'} in [0, 1], "
                                 f"got {v!r}")
        if isinstance(laps, bool) or not isinstance(laps, numbers.Integral) or laps < 1:
            raise ValueError(f"laps: expected an int >= 1, got {laps!r}")
        if isinstance(max_level, bool) or not isinstance(max_level, numbers.Real) or not 0.0 <= max_level <= 1.0:
            raise ValueError(f"max_level: expected a level in [0, 1], got {max_level!r}")
        if isinstance(start, bool) or not isinstance(start, numbers.Real) or not 0.0 <= start <= max_level:
            raise ValueError(f"start: expected a level in [0, max_level], got {start!r}")
        gen = self.ec.course.generator
        names = [n for n in getattr(gen, "inputs", {}) if n.endswith(".difficulty_offset")]
        if not names:
            raise ValueError("this course's generator has no difficulty knob (a gates or track generator of "
                             "track_gen >= the difficulty release); use course_schedule for other parameters")
        self.param = names[0].replace(".difficulty_offset", ".difficulty")
        import warp as wp

        self.offset = wp.to_torch(gen.inputs[names[0]])     # [E] float32, written in place (zero copy)
        self.level = torch.zeros_like(self.offset)          # each env's earned level
        self.revisiting = torch.zeros_like(self.offset, dtype=torch.bool)
        self.rng = torch.Generator(device=self.offset.device)
        seed = getattr(self._env.cfg, "seed", None)
        self.rng.manual_seed(0x5EED if seed is None else int(seed) & 0xFFFFFFFF)
        self._started = False

    def __call__(self, env, env_ids, course_name: str = "course", up: float = 0.1, down: float = 0.05,
                 laps: int = 1, start: float = 0.0, max_level: float = 1.0, revisit: float = 0.0):
        ec = self.ec
        if not self._started:
            self._started = True
            ec.course.generator.params[self.param] = 0.0
            self.level.fill_(float(start))
            self.offset.copy_(self.level)
        idx, ended = _ended(env, env_ids)
        rate = float("nan")
        if bool(ended.any()):
            res = ec.step()
            ok = ec.torch(res.events.laps)[idx] >= int(laps)
            level = self.level[idx]
            new = torch.where(ok, level + float(up), level - float(down)).clamp_(0.0, float(max_level))
            moves = ended & ~self.revisiting[idx]
            level = torch.where(moves, new.to(level.dtype), level)
            self.level[idx] = level
            offset = level
            if revisit > 0.0:
                # every env of the reset takes its draws, so the stream does not depend on which ended
                u = torch.rand(level.shape, generator=self.rng, device=level.device, dtype=level.dtype)
                again = torch.rand(level.shape, generator=self.rng, device=level.device) < float(revisit)
                again &= ended
                offset = torch.where(again, u * level, level)
                self.revisiting[idx] = again | (self.revisiting[idx] & ~ended)
            self.offset[idx] = torch.where(ended, offset, self.offset[idx])
            rate = float((ok & ended).sum()) / float(ended.sum())
        return {"mean": float(self.level.mean()), "min": float(self.level.min()), "max": float(self.level.max()),
                "success_rate": rate}


class course_mixture(CourseTerm):
    """Reweight a mixed generator (``PipelineSpec.with_mixture``, e.g. ``presets.gates_real``) toward
    the kinds of course the policy fails: a success-driven curriculum over course kinds.

    Each ended episode (an env in ``env_ids`` with ``episode_length_buf > 0``) counts for the
    mixture component its course was drawn from (``generator.mixture_component``: the curriculum
    runs before the reset's regeneration, so that is the course just flown) and succeeds when it
    completed ``laps`` laps (a time-out is a failure: the course was not finished). Every
    ``min_episodes`` ended episodes, each component seen in that window updates its success rate
    ``r`` (an exponential average with weight ``smoothing`` on the window's rate; the first window
    sets it) and its weight becomes ``w0 * (floor + (1 - floor) * (1 - r))``, ``w0`` its weight in
    the spec: a kind the policy always fails keeps its spec weight, one it always finishes drops
    to ``floor`` of it and stays in the mix, so nothing learned is left unpractised. The weights
    are a device write between replays (:meth:`~track_gen.pipeline.program.Program.set_mixture_weights`):
    no graph is recorded again, and no env's draw depends on another env.

    ``ladder`` (optional) adds a curriculum *inside* kinds: ``{component: {parameter: easy value or
    (lo, hi)}}`` names, per kind, the easy end of some of its ranges (each a parameter the kind's
    spec sets: its spec range is the hard end). Such a kind starts at level 0 (the easy ranges); at
    every window where at least ``min_ladder_episodes`` of its episodes ended, a window success rate
    ``>= promote`` raises its level by ``step`` (to 1 at most), one ``< demote`` lowers it, and its
    ranges become ``easy + level * (spec - easy)`` at both ends (``Program.set_mixture_ranges``: a
    device write between replays, like the weights). A kind nobody can fly yet (a lab arena of
    0.35 m openings, where every early try crashes and hovering pays best) is first met wide and
    gentle, and shrinks as it is mastered; at level 1 it is the spec's kind again.

    Returns (logged as ``Curriculum/<term>/<key>``): ``share_<component>`` (its share of the draws
    now), ``success_<component>`` (its averaged success rate, NaN before its first window) and, for
    a laddered kind, ``level_<component>``.
    """

    def check(self, laps=1, floor=0.3, min_episodes=1024, smoothing=0.5, ladder=None, promote=0.5, demote=0.2,
              step=0.1, min_ladder_episodes=32):
        if isinstance(laps, bool) or not isinstance(laps, numbers.Integral) or laps < 1:
            raise ValueError(f"laps: expected an int >= 1, got {laps!r}")
        for name, v in (("floor", floor), ("smoothing", smoothing)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0.0 < float(v) <= 1.0:
                raise ValueError(f"{name}: expected a number in (0, 1], got {v!r}")
        if isinstance(min_episodes, bool) or not isinstance(min_episodes, numbers.Integral) or min_episodes < 1:
            raise ValueError(f"min_episodes: expected an int >= 1, got {min_episodes!r}")
        gen = self.ec.course.generator
        self.base = dict(getattr(gen, "mixture_weights", {}) or {})
        if not self.base:
            raise ValueError("this course's generator has no mixture (PipelineSpec.with_mixture, e.g. "
                             "presets.gates_real); course_mixture reweights its components")
        self.names = list(self.base)
        n = len(self.names)
        self.component = wp.to_torch(gen.mixture_component)  # [E] int32, zero copy
        self.ended = torch.zeros(n, dtype=torch.float64)
        self.succeeded = torch.zeros(n, dtype=torch.float64)
        self.rate = torch.full((n,), float("nan"), dtype=torch.float64)
        self._check_ladder(gen, ladder, promote, demote, step, min_ladder_episodes)

    def _check_ladder(self, gen, ladder, promote, demote, step, min_ladder_episodes):
        """The easy and hard ends of every laddered kind; writes the easy ranges (level 0)."""
        for name, v in (("promote", promote), ("step", step)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0.0 < float(v) <= 1.0:
                raise ValueError(f"{name}: expected a number in (0, 1], got {v!r}")
        if isinstance(demote, bool) or not isinstance(demote, numbers.Real) or not 0.0 <= float(demote) < promote:
            raise ValueError(f"demote: expected a success rate in [0, promote), got {demote!r}")
        if (isinstance(min_ladder_episodes, bool) or not isinstance(min_ladder_episodes, numbers.Integral)
                or min_ladder_episodes < 1):
            raise ValueError(f"min_ladder_episodes: expected an int >= 1, got {min_ladder_episodes!r}")
        ladder = {} if ladder is None else ladder
        if not isinstance(ladder, Mapping) or not all(isinstance(v, Mapping) and v for v in ladder.values()):
            raise TypeError(f"ladder: expected {{component: {{parameter: easy value or (lo, hi)}}}}, got {ladder!r}")
        self.ladder = {}
        for kind, easy in ladder.items():
            if kind not in self.names:
                raise KeyError(f"ladder: unknown component {kind!r}; components: {self.names}")
            hard = gen.mixture_ranges(kind)
            missing = sorted(set(easy) - set(hard))
            if missing:
                raise KeyError(f"ladder[{kind!r}]: {missing} not set by the component's spec (its hard end); "
                               f"it sets {sorted(hard)}")
            gen.set_mixture_ranges(kind, easy)               # checks every entry, then writes level 0
            self.ladder[kind] = (gen.mixture_ranges(kind), {p: hard[p] for p in easy})
        self.level = dict.fromkeys(self.ladder, 0.0)

    def climb(self, gen, window_ended, window_rate, promote, demote, step, min_ladder_episodes) -> None:
        """Move each laddered kind's level by its window's success and write its ranges."""
        for kind, (easy, hard) in self.ladder.items():
            i = self.names.index(kind)
            if float(window_ended[i]) < min_ladder_episodes:
                continue
            r, old = float(window_rate[i]), self.level[kind]
            new = round(min(1.0, old + step) if r >= promote else max(0.0, old - step) if r < demote else old, 9)
            if new != old:
                self.level[kind] = new
                gen.set_mixture_ranges(kind, {p: tuple(e + new * (h - e) for e, h in zip(easy[p], hard[p]))
                                              for p in hard})

    def weights(self, floor: float) -> dict[str, float]:
        """The weights the current success rates give (a component never seen keeps its spec weight)."""
        out = {}
        for i, name in enumerate(self.names):
            r = float(self.rate[i])
            out[name] = self.base[name] * (1.0 if math.isnan(r) else floor + (1.0 - floor) * (1.0 - r))
        return out

    def __call__(self, env, env_ids, course_name: str = "course", laps: int = 1, floor: float = 0.3,
                 min_episodes: int = 1024, smoothing: float = 0.5, ladder=None, promote: float = 0.5,
                 demote: float = 0.2, step: float = 0.1, min_ladder_episodes: int = 32):
        ec = self.ec
        idx, ended = _ended(env, env_ids)
        if bool(ended.any()):
            res = ec.step()
            ok = (ec.torch(res.events.laps)[idx] >= int(laps)) & ended
            comp = self.component[idx].to(torch.long)
            seen = ended & (comp >= 0)               # an invalid draw has no component worth counting
            n = len(self.names)
            self.ended += torch.bincount(comp[seen], minlength=n).cpu().to(torch.float64)
            self.succeeded += torch.bincount(comp[ok & seen], minlength=n).cpu().to(torch.float64)
            if float(self.ended.sum()) >= min_episodes:
                window = self.succeeded / self.ended.clamp(min=1.0)
                # the first window of a component sets its rate, later ones move it by ``smoothing``
                new = torch.where(torch.isnan(self.rate), window, (1.0 - smoothing) * self.rate + smoothing * window)
                self.rate = torch.where(self.ended > 0, new, self.rate)
                ec.course.generator.set_mixture_weights(self.weights(float(floor)))
                self.climb(ec.course.generator, self.ended, window, float(promote), float(demote), float(step),
                           int(min_ladder_episodes))
                self.ended.zero_()
                self.succeeded.zero_()
        w = ec.course.generator.mixture_weights
        total = sum(w.values())
        out = {f"share_{k}": v / total for k, v in w.items()}
        out.update({f"success_{k}": float(self.rate[i]) for i, k in enumerate(self.names)})
        out.update({f"level_{k}": v for k, v in self.level.items()})
        return out
