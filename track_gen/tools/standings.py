"""Standings: the race order of the agents of each env, and each one's gap to the leader.

With K agents per env (``Course(..., agents=K)``) the agents ``e*K .. e*K + K - 1`` race env
``e``'s course. Each step, after :class:`~track_gen.tools.Progress` (the component it reads, named
``"progress"`` unless you pass ``progress=``), per agent:

* ``rank`` (int32, 0 = leading): the number of agents of its env ahead of it. Agent ``b`` is ahead
  of agent ``a`` when ``(laps, total, lap_position)`` of ``b`` is larger, compared in that order
  (laps completed, then checkpoints passed since reset, then the arc length along the course line
  within the lap, :attr:`Progress.lap_position`), or equal with ``b < a``. The ranks of an env are
  therefore ``0 .. K-1``, each once.
* ``gap`` (float32 [m], >= 0): how far the leader (rank 0) is ahead along the course line,
  ``(laps_leader - laps) * lap_length + (lap_position_leader - lap_position)``, clamped at 0
  (``lap_length`` counts on loops only; a sprint's laps count 0 m). The lap and within-lap parts
  are kept apart, so large lap counts do not swamp the difference.

The values are Progress's after this step (so an agent that crosses its next checkpoint moves up
in the same step). After a reset every masked env's agents read ``rank = k`` (their index in the
env) and ``gap = 0`` until the next step, which is what a step right after the reset gives. An
invalid course (Progress reports nothing) ranks its agents by index with gap 0. With K = 1 every
rank and gap is 0. Cost per step: O(K) per agent (one thread each), O(K^2) per env.
"""

from __future__ import annotations

import warp as wp

from track_gen.tools.component import Component
from track_gen.tools.component import check_name as _name
from track_gen.tools.types import StandingsResult

__all__ = ["Standings"]


@wp.func
def _ahead(laps_b: int, total_b: int, x_b: float, b: int, laps_a: int, total_a: int, x_a: float, a: int) -> bool:
    """Whether agent b is ahead of agent a: larger (laps, total, lap position), ties to the lower index."""
    if laps_b != laps_a:
        return laps_b > laps_a
    if total_b != total_a:
        return total_b > total_a
    if x_b != x_a:
        return x_b > x_a
    return b < a


@wp.kernel
def _standings(
    agents: int,
    laps: wp.array(dtype=wp.int32),
    total: wp.array(dtype=wp.int32),
    lap_position: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    closed: wp.array(dtype=wp.int32),
    rank_out: wp.array(dtype=wp.int32),
    gap_out: wp.array(dtype=wp.float32),
):
    """One thread per agent: its rank among the ``agents`` of its env and its gap to the leader."""
    a = wp.tid()
    e = a // agents
    first = e * agents
    la = laps[a]
    ta = total[a]
    xa = lap_position[a]
    rank = int(0)
    lead = first
    for k in range(agents):
        b = first + k
        if _ahead(laps[b], total[b], lap_position[b], b, la, ta, xa, a):
            rank += 1
        if k > 0 and _ahead(laps[b], total[b], lap_position[b], b, laps[lead], total[lead], lap_position[lead],
                            lead):
            lead = b
    lap_len = float(0.0)
    if closed[e] != 0:
        lap_len = length[e]
    gap = float(laps[lead] - la) * lap_len + (lap_position[lead] - xa)
    rank_out[a] = rank
    gap_out[a] = wp.max(gap, 0.0)


@wp.kernel
def _standings_reset(agents: int, mask: wp.array(dtype=wp.int32), rank_out: wp.array(dtype=wp.int32),
                     gap_out: wp.array(dtype=wp.float32)):
    a = wp.tid()
    if mask[a // agents] == 0:
        return
    rank_out[a] = a - (a // agents) * agents
    gap_out[a] = 0.0


class Standings(Component):
    """Rank and gap to the leader of every agent in its env's race (see the module docstring).

    Args:
        progress: the name of the :class:`~track_gen.tools.Progress` component it reads (it
            must come first in the course; every preset has one named ``"progress"``).
        name: the component name (default ``"standings"``).

    ``result``: a :class:`~track_gen.tools.types.StandingsResult` of [E*K] arrays, a per-step
    entry of the StepResult (``res["standings"]``). No inputs of its own; recordable (one launch
    per step).

    Raises:
        ValueError: at course construction, when the course has no component named ``progress``
            (or it runs after this one).
        TypeError: when that component is not a Progress (no ``laps``, ``total``, ``lap_position``).
    """

    name = "standings"
    multi_agent = True

    def __init__(self, *, progress: str = "progress", name: str = "standings"):
        self.progress = _name(progress)
        self.name = _name(name)
        self.requires = (self.progress,)

    def attach(self, ctx) -> None:
        prog = ctx.component(self.progress)
        arrays = [getattr(prog, f, None) for f in ("laps", "total", "lap_position")]
        cps = getattr(prog, "checkpoint_set", None)
        if not all(isinstance(x, wp.array) for x in arrays) or cps is None:
            raise TypeError(
                f"{self.name!r}: component {self.progress!r} must be a tools.Progress (standings read its laps, "
                f"total, lap_position and checkpoint_set), got {type(prog).__name__}"
            )
        A, dev = ctx.num_agents, ctx.device
        if any(tuple(x.shape) != (A,) for x in arrays):
            raise ValueError(f"{self.name!r}: {self.progress!r} must hold one row per agent ({A}), got "
                             f"{[tuple(x.shape) for x in arrays]}")
        self._agents = ctx.agents
        self._inputs = [*arrays, cps.length, cps.closed]
        self.result = StandingsResult(rank=wp.zeros(A, dtype=wp.int32, device=dev),
                                      gap=wp.zeros(A, dtype=wp.float32, device=dev))

    def step(self, ctx) -> None:
        wp.launch(_standings, dim=ctx.num_agents, device=ctx.device, inputs=[self._agents, *self._inputs],
                  outputs=[self.result.rank, self.result.gap])

    def reset(self, ctx, mask) -> None:
        """Masked envs' agents read ``rank = k``, ``gap = 0`` until the next step."""
        wp.launch(_standings_reset, dim=ctx.num_agents, device=ctx.device, inputs=[self._agents, mask],
                  outputs=[self.result.rank, self.result.gap])

    def __repr__(self) -> str:
        return f"Standings(progress={self.progress!r}, name={self.name!r})"
