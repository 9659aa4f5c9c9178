"""AgentContacts: how close each agent is to the other agents racing the same course.

With K agents per env (``Course(..., agents=K)``), agent ``a = e*K + k`` shares env ``e``'s course
with agents ``e*K .. e*K + K - 1``. Each step, per agent, one thread scans those K - 1 others:

* ``distance``: the 3D distance between the bound positions to the nearest other agent of its env
  [m]; ties go to the lower index;
* ``index``: that agent's global index ``e*K + k'`` (-1 when there is none);
* ``contact`` = 1 when ``distance <= 2 * radius`` (two spheres of radius ``radius`` touch).

Agents of different envs never meet (each env is its own world). Only position differences count,
so world-frame and env-frame positions give the same result (the env's agents share its origin);
``origin`` is not read. An agent with a non-finite position takes no part: it is nobody's
neighbour, and its own row is the "none" row (``contact 0, distance FAR, index -1``), as is every
row with K = 1 and every masked row after a reset until the next step. The course geometry is not
read, so invalid courses change nothing. Cost per step: O(K) per agent, O(K^2) per env.
"""

from __future__ import annotations

import warp as wp

from track_gen.tools._common import positive
from track_gen.tools.collision.pose import FAR
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.component import check_name as _name
from track_gen.tools.types import AgentContactsResult

__all__ = ["AgentContacts"]


@wp.kernel
def _agent_contacts(
    reach: float,
    agents: int,
    position: wp.array(dtype=wp.vec3f),
    contact_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    index_out: wp.array(dtype=wp.int32),
):
    """One thread per agent: its nearest other agent of the same env (``reach`` = 2 radius)."""
    a = wp.tid()
    first = (a // agents) * agents
    p = position[a]
    best = float(FAR)
    best_i = int(-1)
    if wp.isfinite(p):
        for k in range(agents):
            b = first + k
            if b != a:
                q = position[b]
                if wp.isfinite(q):
                    d = wp.length(q - p)
                    if d < best:  # strictly nearer: a tie keeps the lower index
                        best = d
                        best_i = b
    contact_out[a] = wp.where(best_i >= 0 and best <= reach, 1, 0)
    distance_out[a] = best
    index_out[a] = best_i


@wp.kernel
def _agent_contacts_reset(
    agents: int,
    mask: wp.array(dtype=wp.int32),
    contact_out: wp.array(dtype=wp.int32),
    distance_out: wp.array(dtype=wp.float32),
    index_out: wp.array(dtype=wp.int32),
):
    a = wp.tid()
    if mask[a // agents] == 0:
        return
    contact_out[a] = 0
    distance_out[a] = FAR
    index_out[a] = -1


class AgentContacts(Component):
    """Contacts between the agents of each env, as spheres of ``radius`` (see the module docstring).

    Args:
        radius: the agent's sphere radius [m], > 0; two agents touch within ``2 * radius``.
        name: the component name (default ``"agent_contacts"``).

    Input: ``position`` [E*K] vec3f. ``result``: an :class:`~track_gen.tools.types.AgentContactsResult`
    of [E*K] arrays, a per-step entry of the StepResult (``res["agent_contacts"]``). Recordable
    (one launch per step, no state between steps).
    """

    name = "agent_contacts"
    inputs = {"position": InputSpec(wp.vec3f)}
    multi_agent = True

    def __init__(self, radius: float, *, name: str = "agent_contacts"):
        self.radius = positive("radius", radius)
        self.name = _name(name)

    def attach(self, ctx) -> None:
        A, dev = ctx.num_agents, ctx.device
        self._agents = ctx.agents
        self.result = AgentContactsResult(contact=wp.zeros(A, dtype=wp.int32, device=dev),
                                          distance=wp.full(A, FAR, dtype=wp.float32, device=dev),
                                          index=wp.full(A, -1, dtype=wp.int32, device=dev))

    def _outputs(self) -> list:
        r = self.result
        return [r.contact, r.distance, r.index]

    def step(self, ctx) -> None:
        wp.launch(_agent_contacts, dim=ctx.num_agents, device=ctx.device,
                  inputs=[2.0 * self.radius, self._agents, self._bound["position"]], outputs=self._outputs())

    def reset(self, ctx, mask) -> None:
        """Masked envs' agents read "no neighbour" until the next step."""
        wp.launch(_agent_contacts_reset, dim=ctx.num_agents, device=ctx.device, inputs=[self._agents, mask],
                  outputs=self._outputs())

    def __repr__(self) -> str:
        return f"AgentContacts(radius={self.radius:g}, name={self.name!r})"
