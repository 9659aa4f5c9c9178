"""FamilyGenerator: what TrackGenerator and GateGenerator share: construction from a flat config or a
spec, the range checks on construction and on every parameter set, and the optional result arrays."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Mapping

import warp as wp

from track_gen.pipeline.program import Program
from track_gen.pipeline.spec import PipelineSpec

__all__ = ["FamilyGenerator", "check_order"]

_CLASS_OF = {"track": "TrackGenerator", "gates": "GateGenerator"}


def check_order(params: Mapping[str, Any], pairs, name=None, value=None) -> None:
    """Refuse ``lo > hi`` for each ``(lo, hi)`` pair of parameter names (with ``name`` set to ``value``)."""
    vals = dict(params)
    if name is not None:
        vals[name] = value
    for lo, hi in pairs:
        if lo in vals and hi in vals and vals[lo] > vals[hi]:
            raise ValueError(f"{lo}={vals[lo]:g} exceeds {hi}={vals[hi]:g}; keep {lo} <= {hi}")


class FamilyGenerator(Program):
    """A Program over a spec of one family, built from that family's flat config or its spec.

    Subclasses set ``family``, ``config_type``, ``required_stages``, ``ordered`` (parameter pairs
    that must satisfy lo <= hi) and ``check_ranges`` (a function that refuses, naming the fields,
    parameter values ``{global name: value}`` that cannot hold together); both are checked at
    construction and on every set, before anything runs.
    """

    family: ClassVar[str]
    config_type: ClassVar[type]
    required_stages: ClassVar[tuple[str, ...]]
    ordered: ClassVar[tuple[tuple[str, str], ...]] = ()
    check_ranges: ClassVar[Callable[[Mapping[str, Any]], None] | None] = None

    def __init__(self, source, *, seeds=None, stream=None, prepare=True, registry=None, out=None, env_offset=0):
        name = type(self).__name__
        if isinstance(source, self.config_type):
            source = source.to_spec()
        fam = source.family if isinstance(source, PipelineSpec) else getattr(source, "family", None)
        if fam in _CLASS_OF and fam != self.family:
            raise TypeError(f"{name}: got a {fam} source; build it with {_CLASS_OF[fam]}")
        if not isinstance(source, PipelineSpec):
            raise TypeError(
                f"{name}: expected a {self.config_type.__name__} or PipelineSpec, got {type(source).__name__}"
            )
        names = {s.name for s in source.stages}
        if not set(self.required_stages) <= names:
            raise ValueError(f"{name}: the spec needs stages {list(self.required_stages)}, has {sorted(names)}")
        super().__init__(source, registry=registry, seeds=seeds, stream=stream, prepare=False, out=out,
                         env_offset=env_offset)
        check_order(self.params, self.ordered)
        if self.check_ranges is not None:
            type(self).check_ranges(dict(self.params))
        if prepare:
            self.prepare()

    def _check_param_set(self, name, value):
        check_order(self.params, self.ordered, name, value)
        if self.check_ranges is not None:
            type(self).check_ranges({**dict(self.params), name: value})

    def _optional(self, name: str, shape, dtype) -> wp.array:
        """The committed output ``name``, or zeros of ``shape`` when the spec has no stage that makes it."""
        r = self._results
        return r[name] if name in r else wp.zeros(shape, dtype=dtype, device=self.device)

    def _obstacle_fields(self) -> dict[str, wp.array]:
        """The ``obstacle_*`` fields of a result: the ``obstacles`` stage's arrays (K = 0 without one)."""
        E = self.num_envs
        return dict(obstacle_pos=self._optional("obstacles.pos", (E, 0), wp.vec3f),
                    obstacle_radius=self._optional("obstacles.radius", (E, 0), wp.float32),
                    obstacle_height=self._optional("obstacles.height", (E, 0), wp.float32),
                    obstacle_count=self._optional("obstacles.count", E, wp.int32))
