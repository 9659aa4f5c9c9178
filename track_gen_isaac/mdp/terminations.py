"""Termination terms (stable runtime): [E] bool from the course's StepResult.

Terminations are computed first in ``ManagerBasedRLEnv.step`` (right after physics), so the
first course termination term usually steps the course for the whole env step. Each term's
:meth:`launch` (one kernel, shared with the warp twin) writes its flags.
"""

from __future__ import annotations

import numbers

import warp as wp

from track_gen_isaac.mdp._base import CourseTerm
from track_gen_isaac.mdp._off_track import OffTrackTerm

__all__ = ["collided", "off_track", "laps_done", "gate_missed", "invalid_course"]

wp.set_module_options({"enable_backward": False})


@wp.kernel
def int_at_least_kernel(k: int, src: wp.array(dtype=wp.int32), done_out: wp.array(dtype=wp.bool)):
    """out = src >= k (k = 1: the 0 / 1 flags of the course's events and contacts)."""
    e = wp.tid()
    done_out[e] = src[e] >= k


class _at_least(CourseTerm):
    """A per-step int of the course's StepResult (``<group>.<field>``) >= ``k``; per agent."""

    multi_agent = True

    out_dtype = wp.bool
    group, field = "events", ""

    def launch(self, out, k=1):
        ec = self.ec
        src = getattr(getattr(self.read(), self.group), self.field)
        wp.launch(int_at_least_kernel, dim=ec.num_envs, inputs=[int(k), src], outputs=[out], device=ec.device)


@wp.kernel
def any_hit_kernel(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), done_out: wp.array(dtype=wp.bool)):
    """out = a >= 1 or b >= 1 (the course's own contacts, or a pole obstacle's)."""
    e = wp.tid()
    done_out[e] = a[e] >= 1 or b[e] >= 1


class collided(_at_least):
    """The robot's box touches an obstacle of the course (``contacts.hit``), or one of its pole
    obstacles when the generator draws them (the ``obstacles`` entry that ``Course.gates`` adds).
    Needs ``CourseCfg.collision``."""

    group, field = "contacts", "hit"

    def check(self):
        if self.course_cfg.collision is None:
            raise ValueError(f"env.cfg.{self.course_name}.collision is None: the course has no collision component")

    def launch(self, out, k=1):
        ec = self.ec
        res = self.read()  # once: in the warp runtime the owner term's read steps the course
        if "obstacles" not in res:
            wp.launch(int_at_least_kernel, dim=ec.num_envs, inputs=[int(k), res.contacts.hit], outputs=[out],
                      device=ec.device)
            return
        wp.launch(any_hit_kernel, dim=ec.num_envs, inputs=[res.contacts.hit, res["obstacles"].hit], outputs=[out],
                  device=ec.device)

    def __call__(self, env, course_name: str = "course"):
        return self.compute()


class off_track(OffTrackTerm):
    """Off the band (track) or farther than ``max_distance`` from the course line (gates); see
    :class:`~track_gen_isaac.mdp.rewards.off_track_penalty`."""

    out_dtype = wp.bool

    def __call__(self, env, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        return self.compute(margin=margin, max_distance=max_distance)


class laps_done(_at_least):
    """``laps`` laps completed since reset (a finished sprint counts as one)."""

    field = "laps"

    def check(self, laps=1):
        if isinstance(laps, bool) or not isinstance(laps, numbers.Integral) or laps < 1:
            raise ValueError(f"laps: expected an int >= 1, got {laps!r}")

    def launch(self, out, laps=1):
        super().launch(out, k=laps)

    def __call__(self, env, course_name: str = "course", laps: int = 1):
        return self.compute(laps=laps)


class gate_missed(_at_least):
    """This step crossed the next checkpoint's (gate's) plane outside its opening (``events.missed``)."""

    field = "missed"

    def __call__(self, env, course_name: str = "course"):
        return self.compute()


@wp.kernel
def int_is_zero_kernel(agents: int, src: wp.array(dtype=wp.int32), done_out: wp.array(dtype=wp.bool)):
    """out[a] = src[a // agents] == 0 (a per-course flag, for each agent of the course)."""
    a = wp.tid()
    done_out[a] = src[a // agents] == 0


class invalid_course(CourseTerm):
    """The env's course failed validation (``valid == 0``): nothing to race on; reset to redraw it.
    With K agents per course, every agent of the course."""

    multi_agent = True

    out_dtype = wp.bool

    def launch(self, out):
        ec = self.ec
        wp.launch(int_is_zero_kernel, dim=ec.num_envs, inputs=[ec.agents, self.read().valid], outputs=[out],
                  device=ec.device)

    def __call__(self, env, course_name: str = "course"):
        return self.compute()
