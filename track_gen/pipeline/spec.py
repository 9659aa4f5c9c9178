"""PipelineSpec: a generator described as data (stages, parameters, randomizers)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from track_gen.checks import as_real, is_number

__all__ = ["StageSpec", "PipelineSpec"]


@dataclass(frozen=True)
class StageSpec:
    """One step of a pipeline.

    Attributes:
        name: instance name, unique in the pipeline; it prefixes the stage's outputs and
            parameters (``"centerline"`` → ``"centerline.xy"``, ``"centerline.size"``).
        kind: the registered stage kind (``"track.centerline"``, ``"acme.bumps"``).
        params: values overriding the kind's defaults, by local name.
        inputs: local input name → global array name, overriding the kind's default sources.
    """

    name: str
    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)
    inputs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PipelineSpec:
    """A whole generator as data; :func:`track_gen.pipeline.build` turns it into a Program.

    Attributes:
        num_envs: E, the number of envs (one course each).
        device: ``"cpu"`` or ``"cuda:N"``.
        stages: the steps, in execution order.
        family: ``"track"``, ``"gates"`` or your own label; course presets check it.
        randomize: global parameter name → ``(lo, hi)``, drawn per env per generation.
        mixture: named components ``(name, weight, {parameter: value or (lo, hi)})``: each env
            draws one component per generation (probability proportional to its weight), and the
            parameters that component names take its value (or a uniform draw in its range) in
            place of their base value or randomizer. Empty: no mixture.
        max_loop_length: the longest course the pipeline can produce [m], or None when it
            declares no bound (sizes checkpoint capacity).
    """

    num_envs: int
    device: str
    stages: tuple[StageSpec, ...]
    family: str = "custom"
    randomize: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    max_loop_length: float | None = None
    mixture: tuple[tuple[str, float, Mapping[str, Any]], ...] = ()

    def with_mixture(self, components: Mapping[str, tuple[float, Mapping[str, Any]]]) -> "PipelineSpec":
        """A copy whose envs each draw one of ``components`` per generation.

        ``components``: name -> ``(weight, {global parameter name: value or (lo, hi)})``, e.g.
        ``{"arena": (0.3, {"gates.size": (3, 6)}), "field": (0.7, {"gates.size": (10, 25)})}``.
        A component's parameters override base values and randomizers for the envs that drew it;
        parameters it does not name keep them. Replaces any mixture the spec had.
        """
        if not isinstance(components, Mapping) or not components:
            raise TypeError("with_mixture: expected a non-empty mapping {name: (weight, {parameter: value or "
                            f"(lo, hi)}})}}, got {components!r}")
        out = []
        for name, comp in components.items():
            what = f"mixture[{name!r}]"
            try:
                weight, values = comp
            except (TypeError, ValueError):
                raise TypeError(f"{what}: expected (weight, {{parameter: value or (lo, hi)}}), got {comp!r}") from None
            if as_real(f"{what} weight", weight) <= 0.0:
                raise ValueError(f"{what} weight: expected a number > 0, got {weight!r}")
            if not isinstance(values, Mapping):
                raise TypeError(f"{what}: expected a mapping of parameters, got {type(values).__name__}")
            ranges = {str(pname): mixture_range(f"{what}[{pname!r}]", v) for pname, v in values.items()}
            out.append((str(name), float(weight), ranges))
        return dataclasses.replace(self, mixture=tuple(out))

    def with_randomize(self, ranges: Mapping[str, tuple[float, float]]) -> "PipelineSpec":
        """A copy that draws each named dynamic parameter uniformly in ``(lo, hi)`` per env per generation."""
        if not isinstance(ranges, Mapping):
            raise TypeError(f"with_randomize: expected a mapping {{name: (lo, hi)}}, got {type(ranges).__name__}")
        merged = dict(self.randomize)
        for name, rng in ranges.items():
            merged[name] = _as_range(name, rng)
        return dataclasses.replace(self, randomize=merged)

    def with_params(self, values: Mapping[str, Any]) -> "PipelineSpec":
        """A copy with construction values of parameters set by global name (``"stage.param"``)."""
        stages = list(self.stages)
        for name, value in values.items():
            stage, _, local = str(name).partition(".")
            idx = [i for i, s in enumerate(stages) if s.name == stage]
            if not idx or not local:
                raise KeyError(f"with_params: no stage named {stage!r} for {name!r}; stages: {[s.name for s in stages]}")
            s = stages[idx[0]]
            stages[idx[0]] = dataclasses.replace(s, params={**s.params, local: value})
        return dataclasses.replace(self, stages=tuple(stages))

    def stage(self, name: str) -> StageSpec:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage named {name!r}; stages: {[s.name for s in self.stages]}")

    def param(self, name: str, registry=None) -> Any:
        """The construction value of a parameter (its override, else the kind's default)."""
        from track_gen.pipeline.registry import default_registry

        stage, _, local = name.partition(".")
        spec = self.stage(stage)
        if local in spec.params:
            return spec.params[local]
        defs = (registry or default_registry()).get(spec.kind).params
        if local not in defs:
            raise KeyError(f"stage {stage!r} ({spec.kind}) has no parameter {local!r}; it has {sorted(defs)}")
        return defs[local].default


def mixture_range(what: str, v: Any) -> tuple[float, float]:
    """A mixture component's value of one parameter as ``(lo, hi)``: a number ``v`` is ``(v, v)``;
    TypeError / ValueError naming ``what`` otherwise (not a pair of numbers, ``lo > hi``)."""
    rng = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(rng) != 2 or not all(is_number(x) for x in rng):
        raise TypeError(f"{what}: expected a number or a pair (lo, hi), got {v!r}")
    lo, hi = (as_real(what, x) for x in rng)
    if not lo <= hi:
        raise ValueError(f"{what}: lo={lo:g} > hi={hi:g}; pass (lo, hi) with lo <= hi")
    return (lo, hi)


def _as_range(name: str, rng: Any) -> tuple[float, float]:
    try:
        lo, hi = rng
    except (TypeError, ValueError):
        raise TypeError(f"randomize[{name!r}]: expected a pair (lo, hi) of numbers, got {rng!r}") from None
    if not (is_number(lo) and is_number(hi)):
        raise TypeError(f"randomize[{name!r}]: expected a pair (lo, hi) of numbers, got {rng!r}")
    lo, hi = as_real(f"randomize[{name!r}] lo", lo), as_real(f"randomize[{name!r}] hi", hi)
    if not lo <= hi:
        raise ValueError(f"randomize[{name!r}]: lo={lo:g} > hi={hi:g}; pass (lo, hi) with lo <= hi")
    return (lo, hi)
