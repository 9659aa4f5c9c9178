"""ComponentContext: how a course attaches components and what their hooks see."""

from __future__ import annotations

from typing import Any

from track_gen.exec import ExecContext
from track_gen.tools.component import InputSpec, overrides_step

__all__ = ["ComponentContext"]


class ComponentContext:
    """The construction-time registry of a course, then the context every hook receives.

    Attributes: ``course``, ``generator``, ``layout``, ``num_envs``, ``agents`` (K per env),
    ``num_agents`` (``E*K``: the rows of every per-agent array), ``device``, ``stream``,
    ``family`` (the generator's family, e.g. ``"track"``), ``exec`` (an
    :class:`~track_gen.exec.ExecContext` for ``generator.enqueue``).
    """

    def __init__(self, course, generator, components=(), agents: int = 1):
        self.course = course
        self._peers = {c.name: c for c in components}
        self.generator = generator
        self.layout = generator.layout
        self.num_envs = int(generator.layout.num_envs)
        self.agents = int(agents)
        self.num_agents = self.num_envs * self.agents
        self.device = generator.device
        self.family = getattr(generator, "family", "custom")
        self._components: dict[str, Any] = {}
        self._inputs: dict[str, tuple[InputSpec, str]] = {}

    @property
    def stream(self):
        return self.course.stream

    @property
    def exec(self) -> ExecContext:
        return ExecContext(self.device, self.course.stream)

    @property
    def result(self):
        """The generator's committed layout (stable arrays)."""
        return self.generator.result

    def component(self, name: str):
        """An already-added component by name (declare it in ``requires`` / ``optional``)."""
        try:
            return self._components[name]
        except KeyError:
            raise KeyError(
                f"no component {name!r} before this one; components so far: {list(self._components)}"
            ) from None

    def has(self, name: str) -> bool:
        return name in self._components

    def peer(self, name: str):
        """Any component of the course by name, attached yet or not (None when absent): read its
        configuration in ``attach``, never its buffers (a later one has none yet)."""
        return self._peers.get(name)

    def _check_agents(self, component) -> None:
        """With K > 1, a component with inputs or a step must declare ``multi_agent = True``."""
        parts = _per_agent_parts(component)
        if self.agents > 1 and parts and not getattr(component, "multi_agent", False):
            raise TypeError(
                f"component {component.name!r} has {' and '.join(parts)} but does not declare multi_agent = True; "
                f"with agents={self.agents} its inputs and per-step results are [E*K] = [{self.num_agents}] "
                f"(agent a = e*K + k races env a // K). Support that and set multi_agent = True (see "
                f"'Writing a component'), or build the course with agents=1"
            )

    def add(self, component) -> None:
        """Check ``component``'s declared reads, topology and inputs, then ``attach`` it.

        A refusal (or an ``attach`` that raises) leaves the context as it was."""
        name = component.name
        requires = _reads(name, "requires", getattr(component, "requires", ()))
        _reads(name, "optional", getattr(component, "optional", ()))  # may be absent, or anywhere (ctx.has)
        for req in requires:
            if req not in self._components:
                if req in self._peers:
                    raise ValueError(
                        f"component {name!r} requires component {req!r}, which runs after it; list {req!r} first "
                        f"or give {name!r} after=({req!r},)"
                    )
                raise ValueError(
                    f"component {name!r} requires component {req!r}, which this course does not have; add it "
                    f"(it runs first)"
                )
        self._check_agents(component)
        topo = getattr(component, "topology", None)
        if topo is not None and self.family not in tuple(topo):
            raise TypeError(
                f"component {name!r} supports generator families {tuple(topo)}, not {self.family!r}; use it "
                f"with a matching generator"
            )
        gen_inputs = getattr(self.generator, "input_info", {}) or {}
        new_inputs: dict[str, tuple[InputSpec, str]] = {}
        for n, spec in (getattr(component, "inputs", {}) or {}).items():
            if not isinstance(spec, InputSpec):
                raise TypeError(f"component {name!r}: input {n!r} must be an InputSpec, got {type(spec).__name__}")
            if n in gen_inputs:
                raise ValueError(
                    f"component {name!r}: input {n!r} is also an input of the generator; rename the component input"
                )
            if n in self._inputs or n in new_inputs:
                other, owner = self._inputs.get(n) or new_inputs[n]
                if (other.dtype, other.slots) != (spec.dtype, spec.slots):
                    raise ValueError(
                        f"input {n!r} is declared as ({_dt(other.dtype)}, slots={other.slots}) by {owner!r} and as "
                        f"({_dt(spec.dtype)}, slots={spec.slots}) by {name!r}; one name needs one dtype and slot count"
                    )
                if other.per_agent != spec.per_agent:
                    raise ValueError(
                        f"input {n!r} is per_agent={other.per_agent} for {owner!r} but per_agent={spec.per_agent} for "
                        f"{name!r}; one name needs one row count"
                    )
            else:
                new_inputs[n] = (spec, name)
        component.attach(self)
        component._context = self
        self._components[name] = component
        self._inputs.update(new_inputs)


def _per_agent_parts(component) -> list[str]:
    """What makes ``component`` per agent: its declared inputs, its ``step``."""
    parts = [f"inputs {sorted(component.inputs)}"] if getattr(component, "inputs", None) else []
    if overrides_step(component):
        parts.append("a step")
    return parts


def _reads(name: str, what: str, names) -> tuple[str, ...]:
    """A ``requires`` / ``optional`` declaration: a sequence of other components' names."""
    if names is None:
        return ()
    if isinstance(names, str) or not isinstance(names, (tuple, list, set, frozenset)):
        raise TypeError(
            f"component {name!r}: {what} must be a tuple of component names, got {names!r}; wrap one: ({names!r},)"
        )
    for n in names:
        if not isinstance(n, str) or not n:
            raise TypeError(f"component {name!r}: {what} holds {n!r}; expected non-empty component names")
        if n == name:
            raise ValueError(f"component {name!r} names itself in {what}")
    return tuple(names)


def _dt(dtype) -> str:
    return getattr(dtype, "__name__", str(dtype))
