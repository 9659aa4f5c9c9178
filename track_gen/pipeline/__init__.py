"""Generators as data: specs, stage registry, build, presets."""

from track_gen.pipeline.program import Capacities, Program, ProgramResult, build
from track_gen.pipeline.registry import (
    ArraySpec,
    ParamSpec,
    StageContext,
    StageDef,
    StageRegistry,
    default_registry,
    register_stage,
)
from track_gen.pipeline.spec import PipelineSpec, StageSpec
from track_gen.pipeline import presets

__all__ = [
    "ArraySpec", "Capacities", "ParamSpec", "PipelineSpec", "Program", "ProgramResult", "StageContext", "StageDef",
    "StageRegistry", "StageSpec", "build", "default_registry", "presets", "register_stage",
]


def __getattr__(name: str):
    """``Layout``: the deprecated name of :class:`Capacities` (one release)."""
    if name == "Layout":
        import warnings

        warnings.warn("track_gen.pipeline.Layout is deprecated: use track_gen.pipeline.Capacities "
                      "(the same class; generator.layout keeps its name)", DeprecationWarning, stacklevel=2)
        return Capacities
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
