"""FamilyGenerator: the shared construction of TrackGenerator and GateGenerator."""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

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

    Subclasses set ``family``, ``config_type``, ``required_stages`` and ``ordered`` (parameter
    pairs that must satisfy lo <= hi, checked at construction and on every set).
    """

    family: ClassVar[str]
    config_type: ClassVar[type]
    required_stages: ClassVar[tuple[str, ...]]
    ordered: ClassVar[tuple[tuple[str, str], ...]] = ()

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
        if prepare:
            self.prepare()

    def _check_param_set(self, name, value):
        check_order(self.params, self.ordered, name, value)
