"""Stage definitions and the registry that names them.

A *stage* is a kind of pipeline step: a launch function plus what it declares (parameters,
input and output arrays, capacities). Stage kinds are namespaced (``"track.centerline"``,
``"acme.bumps"``); the ``track``, ``gates`` and ``core`` namespaces belong to track_gen. A stage
registered with ``capturable=False`` runs on the host: the pipeline then runs eagerly and refuses
to be recorded (:class:`~track_gen.errors.NotCapturableError`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import warp as wp

from track_gen.checks import as_real

__all__ = [
    "ParamSpec", "ArraySpec", "StageDef", "StageContext", "StageRegistry", "add_builtin_stages", "default_registry",
    "register_stage",
]

_KIND_RE = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+$")
_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
RESERVED_NAMESPACES = ("track", "gates", "core")


@dataclass(frozen=True)
class ParamSpec:
    """A stage parameter: default, bounds, and whether it is *dynamic* (a device value).

    Dynamic parameters can be set (``generator.params[name] = x``) and randomized per env between
    regenerations without re-recording anything; static ones (``static=True``: counts and
    capacities) are fixed when the pipeline is built.
    """

    default: float
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    static: bool = False
    integer: bool = False
    doc: str = ""

    def bounds_text(self) -> str:
        lo = "-inf" if self.lo is None else f"{self.lo:g}"
        hi = "inf" if self.hi is None else f"{self.hi:g}"
        return f"{'(' if self.lo_open else '['}{lo}, {hi}{')' if self.hi_open else ']'}"

    def check(self, name: str, value: Any) -> float | int:
        """Return ``value`` as a number, or raise naming ``name``, the value and the allowed range."""
        # numbers follow track_gen.checks: numpy scalars welcome, bools refused, float32-finite
        real = as_real(name, value)
        if self.integer:
            if int(real) != real:
                raise ValueError(f"{name}: must be an integer, got {value}")
            value = int(real)
        else:
            value = real
        bad = (
            (self.lo is not None and (value <= self.lo if self.lo_open else value < self.lo))
            or (self.hi is not None and (value >= self.hi if self.hi_open else value > self.hi))
        )
        if bad:
            raise ValueError(f"{name}: {value:g} is outside {self.bounds_text()}; pass a value in that range")
        return value


@dataclass(frozen=True)
class ArraySpec:
    """An array a stage reads or writes: dtype and shape as ``("env",)`` or ``("env", capacity)``.

    ``source`` (inputs only) is the global array name read by default, e.g. ``"centerline.xy"``.
    An input whose source no earlier stage writes becomes a *generator input*: a stable array
    the user writes in place (``generator.inputs[name]``).
    """

    dtype: Any
    shape: tuple[str, ...] = ("env",)
    source: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class StageDef:
    kind: str
    launch: Callable[["StageContext"], None]
    params: Mapping[str, ParamSpec] = field(default_factory=dict)
    inputs: Mapping[str, ArraySpec] = field(default_factory=dict)
    outputs: Mapping[str, ArraySpec] = field(default_factory=dict)
    capacities: Callable[[Mapping[str, Any]], Mapping[str, int]] | None = None
    reads: tuple[str, ...] = ()
    capturable: bool = True
    doc: str = ""


class StageContext:
    """What one stage sees when it launches: stable arrays, so every launch is recordable.

    ``active`` ([E] int32) flags the envs being regenerated: a stage must leave every other env's
    rows alone (the commit would discard them anyway). ``valid`` ([E] int32) starts at 1 for
    active envs; a stage clears it when its output is unusable.
    """

    def __init__(self, program, stage_name: str, static: Mapping[str, Any], inputs, outputs, key: int):
        self._program = program
        self.name = stage_name
        self.static = dict(static)
        self._inputs = inputs
        self._outputs = outputs
        self.key = key

    num_envs = property(lambda self: self._program.num_envs)
    device = property(lambda self: self._program.device)
    active = property(lambda self: self._program._active)
    seeds = property(lambda self: self._program.seeds.seeds)
    generation = property(lambda self: self._program.generation)
    valid = property(lambda self: self._program._valid_work)

    def param(self, name: str) -> wp.array:
        """Per-env values ([E] float32) of a dynamic parameter: local (``"size"``) or global name."""
        full = name if "." in name else f"{self.name}.{name}"
        return self._program._params.values_of(full)

    def input(self, name: str) -> wp.array:
        return self._inputs[name]

    def output(self, name: str) -> wp.array:
        return self._outputs[name]

    def capacity(self, name: str) -> int:
        return self._program.layout.capacities[name]


#: the functions that register the built-in stage kinds (``track.*``, ``gates.*``) into a registry.
#: ``track_gen.generators`` adds them when it is imported (``import track_gen`` does): the pipeline
#: never imports the generators, which are built on it.
_BUILTIN_STAGES: list[Callable[["StageRegistry"], None]] = []


def add_builtin_stages(registrar: Callable[["StageRegistry"], None]) -> None:
    """Have every ``StageRegistry()`` (and the default registry) start with what ``registrar`` registers."""
    _BUILTIN_STAGES.append(registrar)
    if _default is not None:
        registrar(_default)


class StageRegistry:
    """Stage kinds by name. ``StageRegistry()`` starts with the built-in stages."""

    def __init__(self, *, empty: bool = False):
        self._defs: dict[str, StageDef] = {}
        if not empty:
            for registrar in _BUILTIN_STAGES:
                registrar(self)

    def register(
        self,
        kind: str,
        launch: Callable | None = None,
        *,
        params: Mapping[str, ParamSpec] | None = None,
        inputs: Mapping[str, ArraySpec] | None = None,
        outputs: Mapping[str, ArraySpec] | None = None,
        capacities: Callable | None = None,
        reads: tuple[str, ...] = (),
        capturable: bool = True,
        replace: bool = False,
        _builtin: bool = False,
    ):
        """Register a stage kind; usable as a decorator of its launch function."""
        if launch is None:
            return lambda fn: self.register(
                kind, fn, params=params, inputs=inputs, outputs=outputs, capacities=capacities, reads=reads,
                capturable=capturable, replace=replace, _builtin=_builtin,
            )
        if not isinstance(kind, str) or not _KIND_RE.match(kind):
            raise ValueError(
                f"stage kind {kind!r} must be namespaced lowercase, e.g. 'acme.bumps' (namespace.name)"
            )
        if kind.split(".")[0] in RESERVED_NAMESPACES and not _builtin:
            raise ValueError(
                f"stage kind {kind!r}: the namespaces {RESERVED_NAMESPACES} belong to track_gen; "
                f"use your own, e.g. 'acme.{kind.split('.', 1)[1]}'"
            )
        if kind in self._defs and not replace:
            raise ValueError(f"stage kind {kind!r} is already registered; pass replace=True to override it")
        if not callable(launch):
            raise TypeError(f"stage {kind!r}: launch must be callable, got {type(launch).__name__}")
        for group, names in (("params", params or {}), ("inputs", inputs or {}), ("outputs", outputs or {})):
            for n in names:
                if not isinstance(n, str) or not _NAME_RE.match(n):
                    raise ValueError(f"stage {kind!r}: {group} name {n!r} must be a lowercase identifier")
        for n, spec in (params or {}).items():
            if not isinstance(spec, ParamSpec):
                raise TypeError(f"stage {kind!r}: param {n!r} must be a ParamSpec, got {type(spec).__name__}")
            spec.check(f"{kind}.{n} default", spec.default)
        self._defs[kind] = StageDef(
            kind, launch, dict(params or {}), dict(inputs or {}), dict(outputs or {}), capacities, tuple(reads),
            bool(capturable), (launch.__doc__ or "").strip(),
        )
        return launch

    def get(self, kind: str) -> StageDef:
        try:
            return self._defs[kind]
        except KeyError:
            raise KeyError(f"unknown stage kind {kind!r}; registered: {sorted(self._defs)}") from None

    def __contains__(self, kind: str) -> bool:
        return kind in self._defs

    def kinds(self) -> list[str]:
        return sorted(self._defs)

    def copy(self) -> "StageRegistry":
        new = StageRegistry(empty=True)
        new._defs = dict(self._defs)
        return new


_default: StageRegistry | None = None


def default_registry() -> StageRegistry:
    """The process-wide registry (built-ins plus whatever :func:`register_stage` added)."""
    global _default
    if _default is None:
        _default = StageRegistry()
    return _default


def register_stage(kind: str, launch: Callable | None = None, **kwargs):
    """Register a stage kind in the default registry (decorator or call)."""
    return default_registry().register(kind, launch, **kwargs)
