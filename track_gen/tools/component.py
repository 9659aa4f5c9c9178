"""The component contract: what a course calls, in which order, with which guarantees.

A component turns the generator's layout and the sim's pose buffers into per-env results.
Five hooks, all with defaults here:

``attach(ctx)``
    once, at course construction: allocate every buffer (static capacities from ``ctx.layout``).
``bind(arrays)``
    store the input arrays the course routes to it (then ``on_bind(arrays)`` for checks).
``on_generate(ctx, mask)``
    inside the regeneration body: refresh per-generation data (checkpoints, bakes) from the
    generator result. ``mask`` is always an [E] int32 array (nonzero: regenerated, never None:
    a regeneration of every env passes the course's own all-ones array, allocated once at
    construction). Rows of other envs must stay byte-identical, and it must not read bound inputs.
``step(ctx)``
    once per env step: read bound inputs, write ``result``. Components that override it are the
    *per-step* components whose result is an entry of :class:`~track_gen.course.StepResult`.
``reset(ctx, mask)``
    put per-env state back to the start for masked envs only (``mask`` as above).

Every hook after ``attach`` must be recordable: no allocation, no host sync, no branching on
device data in Python.

Several agents per env (``Course(..., agents=K)``): the course geometry stays ``[E]``; per-agent
inputs, state and results are ``[E*K]``, env-major (agent ``a = e*K + k`` races env ``a // K``).
A component says it handles that with ``multi_agent = True``: it sizes its per-agent arrays with
``ctx.num_agents``, launches its per-agent kernels over them and reads the course at ``a //
ctx.agents``; masks stay ``[E]`` (a masked env resets all its agents). With K > 1 the course refuses
a component that declares inputs or a ``step`` without ``multi_agent = True``. ``InputSpec(...,
per_agent=False)`` marks an input that stays ``[E]`` (``origin``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Component", "InputSpec", "HOOKS", "check_name"]

HOOKS = ("attach", "bind", "on_generate", "step", "reset")


def check_name(name: Any) -> str:
    """A component name: a non-empty ``str`` (TypeError naming ``name`` otherwise)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name: expected a non-empty str, got {name!r}")
    return name


@dataclass(frozen=True)
class InputSpec:
    """A per-env input a component reads each step.

    Attributes:
        dtype: Warp dtype of one slot (``wp.vec3f``...).
        slots: values per env: the bound array is ``[E]`` when 1, else ``[E, slots]``.
        default: another input's name to route from when this one is not given
            (``box_position`` defaults to ``position``).
        required: ``step()`` refuses to run while a required input is unbound.
        per_agent: one row per agent (``[E*K]`` with K agents per env; ``[E]`` with one), else
            one row per env (``[E]`` whatever K: each env's ``origin``).
    """

    dtype: Any
    slots: int = 1
    default: str | None = None
    required: bool = True
    per_agent: bool = True

    def shape(self, num_envs: int, agents: int = 1) -> tuple[int, ...]:
        """The bound array's shape for ``num_envs`` envs of ``agents`` agents each."""
        rows = num_envs * agents if self.per_agent else num_envs
        return (rows,) if self.slots == 1 else (rows, self.slots)


class Component:
    """Base class with default (no-op) hooks; see the module docstring for the contract.

    Class attributes a subclass sets (or an instance overrides in ``__init__``):
        name: unique within a course; built-in names back course attributes.
        after: names of components that must run before this one.
        source: the name of the component this one reads its geometry from (ordered before it).
        inputs: input name -> :class:`InputSpec`.
        requires / optional: names of components this one reads in ``attach`` (must / may exist).
        topology: generator families this component supports (None: any).
        multi_agent: True when it supports several agents per env (see the module docstring).
    """

    name: str = ""
    after: tuple[str, ...] = ()
    source: str | None = None
    inputs: Mapping[str, InputSpec] = {}
    requires: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    topology: tuple[str, ...] | None = None
    multi_agent: bool = False

    #: per-generation or per-step result (an object with warp arrays); None until attached
    result: Any = None
    _utility: Any = None

    @property
    def utility(self) -> Any:
        """The object the course hands out as ``course.<attribute>`` for a built-in name.

        The component itself by default (``course.localizer`` is the Localizer); a component whose
        users want a helper object rather than the component sets it in ``__init__`` / ``attach``
        (the checkpoint components set their :class:`~track_gen.tools.checkpoints.CheckpointSampler`,
        ``course.checkpoint_sampler``). ``result`` is the data; ``utility`` is what you call.
        """
        return self if self._utility is None else self._utility

    @utility.setter
    def utility(self, value: Any) -> None:
        self._utility = value

    _context = None
    _bound: dict | None = None

    # -- hooks ----------------------------------------------------------------------------------
    def attach(self, ctx) -> None:
        """Allocate buffers; called once by ``ComponentContext.add``."""

    def bind(self, arrays: Mapping[str, Any]) -> None:
        """Store the routed input arrays, then run :meth:`on_bind`."""
        self._bound = dict(arrays)
        self.on_bind(self._bound)

    def on_bind(self, arrays: Mapping[str, Any]) -> None:
        """Check or derive from the newly bound arrays; raising rolls the whole bind back."""

    def on_generate(self, ctx, mask) -> None:
        """Refresh per-generation data of masked envs (``mask``: [E] int32, nonzero = regenerated)."""

    def step(self, ctx) -> None:
        """Per-step work (the base does nothing: per-generation components keep it)."""

    def reset(self, ctx, mask) -> None:
        """Reset per-env state of masked envs."""

    # -- helpers --------------------------------------------------------------------------------
    @property
    def bound(self) -> Mapping[str, Any]:
        """The arrays bound to this component's inputs (read-only view)."""
        return dict(self._bound or {})

    @property
    def attached(self) -> bool:
        return self._context is not None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def overrides_step(component: Any) -> bool:
    """True when ``component`` is a per-step component (its class overrides ``step``)."""
    step = getattr(type(component), "step", None)
    return step is not None and step is not Component.step
