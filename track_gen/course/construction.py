"""How every route builds a :class:`~track_gen.course.Course`: the generator check and the
metaclass that resolves ``Course(config)`` before any ``__init__`` runs, makes construction atomic
and hands the generator over once it completed."""

from __future__ import annotations

from track_gen.course.config import CourseConfig
from track_gen.course.presets import agents_kwargs, finish_preset
from track_gen.generators.gates import GateGenConfig
from track_gen.generators.track import TrackGenConfig
from track_gen.pipeline.spec import PipelineSpec

__all__ = ["CourseType", "check_generator"]

#: the attributes a course checks a generator for before anything else (the full surface: docs, producer-protocol)
GENERATOR_SURFACE = ("result", "layout", "enqueue", "device")


def check_generator(generator) -> None:
    if isinstance(generator, TrackGenConfig) or (isinstance(generator, PipelineSpec) and generator.family == "track"):
        raise TypeError("Course takes a built generator; for a TrackGenConfig or a track spec use Course.track(source, ...)")
    if isinstance(generator, GateGenConfig) or (isinstance(generator, PipelineSpec) and generator.family == "gates"):
        raise TypeError("Course takes a built generator; for a GateGenConfig or a gate spec use Course.gates(source, ...)")
    if isinstance(generator, PipelineSpec):
        raise TypeError("Course takes a built generator; build the spec first: pipeline.build(spec)")
    missing = [a for a in GENERATOR_SURFACE if not hasattr(generator, a)]
    if missing:
        raise TypeError(
            f"Course: {type(generator).__name__} lacks the generator surface {missing}; pass a TrackGenerator, a "
            f"GateGenerator, a Program, or an object with {list(GENERATOR_SURFACE)}"
        )


def _config_call(generator=None, components=(), *, stream=None, prepare=True, config=None, agents=None):
    """The arguments of ``Course(config)`` / ``Course(config=...)``, bound as ``Course.__init__`` did."""
    if agents is not None:
        raise TypeError("Course(config): the agents come from the config; pass CourseConfig(..., agents=K)")
    return generator, components, stream, prepare, config


class CourseType(type):
    """Every way of building a course ends in ``cls(generator, components, stream=..., prepare=...)``.

    ``Course(config)`` / ``Course(config=config)`` are resolved here, before any ``__init__`` runs,
    so a subclass's ``__init__(generator, components, *, stream=None, prepare=True)`` serves the
    config route too. Construction is atomic: when ``__init__`` (a subclass's included) raises,
    every component it attached is detached again and the generator is not taken over.
    """

    def __call__(cls, *args, **kwargs):
        mode = None
        if kwargs.get("config") is not None or (args and isinstance(args[0], CourseConfig)):
            generator, components, stream, prepare, config = _config_call(*args, **kwargs)
            if isinstance(generator, CourseConfig):
                generator, config = None, generator
            if generator is not None or tuple(components):
                raise TypeError("Course: pass a CourseConfig alone, or a generator and components, not both")
            if not isinstance(config, CourseConfig):
                raise TypeError(f"config: expected a CourseConfig, got {type(config).__name__}")
            generator, components = config.parts(stream=stream)
            # stream= configured the generator the config built; the course uses the generator's
            args, mode = (generator, components), config.mode
            kwargs = {"stream": None, "prepare": prepare, **agents_kwargs(config.agents)}
        else:
            kwargs.pop("config", None)
        course = cls.__new__(cls, *args, **kwargs)
        if not isinstance(course, cls):
            return course
        try:
            course.__init__(*args, **kwargs)
        except BaseException:
            course._detach_components()
            raise
        if mode is not None:
            finish_preset(mode, course.generator)
        course._take_over()
        return course
