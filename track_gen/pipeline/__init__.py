"""Generators as data: specs, stage registry, build, presets."""

from track_gen.pipeline.program import Layout, Program, ProgramResult, build
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
    "ArraySpec", "Layout", "ParamSpec", "PipelineSpec", "Program", "ProgramResult", "StageContext", "StageDef",
    "StageRegistry", "StageSpec", "build", "default_registry", "presets", "register_stage",
]
