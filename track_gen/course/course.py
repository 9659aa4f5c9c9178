"""Course: one generator plus ordered components, one bind, one regeneration body.

The course owns the components, the step and the regeneration body; :mod:`.construction` holds
how every route builds it, :mod:`.binding` its ``bind`` and :mod:`.graphs` the graphs it records of
its own regeneration."""

from __future__ import annotations

import types
import warnings
from typing import Any

import warp as wp

from track_gen.capture import is_capturing, retain
from track_gen.checks import as_bool
from track_gen.course.binding import POSE_INPUTS, Binding
from track_gen.course.components import check_components
from track_gen.course.construction import CourseType, check_generator
from track_gen.course.context import ComponentContext
from track_gen.course.graphs import MAX_GRAPH_VARIANTS, RegenerationGraphs
from track_gen.course.presets import agents_arg, agents_kwargs, finish_preset, gates_parts, track_parts
from track_gen.course.result import StepResult
from track_gen.errors import CaptureError, NotCapturableError
from track_gen.exec import (ConditionalNodesUnsupportedWarning, any_set, check_mask, conditional_enabled,
                            conditional_nodes_supported, mask_to_active, on_stream, unconditional)
from track_gen.tools.component import overrides_step

__all__ = ["Course", "POSE_INPUTS", "MAX_GRAPH_VARIANTS"]

_NO_CONDITIONAL_WARNED = [False]  # ConditionalNodesUnsupportedWarning: once per process


class Course(Binding, metaclass=CourseType):
    """A generator plus an ordered list of components.

    Args:
        generator: a built generator (``TrackGenerator``, ``GateGenerator``, ``Program``, or an object
            with the generator surface). A config or spec is a ``TypeError`` naming the preset.
        components: a sequence of components (run in a stable topological order of after/source).
        agents: K, the agents racing each env's course (default 1). The geometry stays ``[E]``;
            every per-agent input of :meth:`bind` and every per-step result is ``[E*K]``,
            env-major (agent ``a = e*K + k`` races env ``e``); masks stay ``[E]`` (a masked env
            resets all its agents). With K > 1 every component with inputs or a step must declare
            ``multi_agent = True`` (all built-ins do).
        stream: the course's default CUDA stream (the generator's own when None; ignored on CPU).
        prepare: run the regeneration body once now, so every kernel is loaded before you record.

    On every device the course records each regeneration variant into a graph of its own the
    first time it is called outside a capture, and replays it after (Warp records CPU graphs
    too; a CPU replay costs ~0.2 us per launch against ~12 us eager).
    """

    def __init__(self, generator=None, components=(), *, agents: int = 1, stream=None, prepare: bool = True):
        # Course(config) / Course(config=...) arrive here as (generator, components): see _CourseType
        if generator is None:
            raise TypeError("Course: pass a built generator (or a CourseConfig)")
        check_generator(generator)
        self.agents = agents_arg(agents)
        ordered = check_components(components)
        self.generator = generator
        self.stream = stream if stream is not None else getattr(generator, "stream", None)
        self.device = wp.get_device(generator.device)
        self.num_envs = int(generator.layout.num_envs)
        self.num_agents = self.num_envs * self.agents
        E = self.num_envs
        self._ctx = ctx = ComponentContext(self, generator, ordered, agents=self.agents)
        for c in ordered:
            ctx.add(c)
        self._order = ordered
        self._check_input_defaults()
        self.components = types.MappingProxyType({c.name: c for c in ordered})
        self._step_components = [c for c in ordered if overrides_step(c)]
        self._active = wp.zeros(E, dtype=wp.int32, device=self.device)
        self._all = wp.ones(E, dtype=wp.int32, device=self.device)
        self._flag = wp.zeros(1, dtype=wp.int32, device=self.device)
        self._regen_graphs = RegenerationGraphs(self._run_body, self.stream, self.device)
        self._bound: dict[str, Any] = {}
        self._bind_ok = not any(spec.required for c in ordered for spec in (c.inputs or {}).values())
        self._captured_step = False
        self._rebind_warned = False
        self._result = StepResult(valid=generator.result.valid)
        self._refresh_entries()
        self.prepared = False
        if getattr(generator, "prepared", True) is False:
            generator.prepare()
        if prepare:
            self.prepare()
            self._enqueue(False, None)  # on the course's stream, joined to the caller's (as every launch)
        # the generator is taken over by _CourseType once construction (a subclass's too) completed

    def _detach_components(self) -> None:
        """Undo the attachments of a construction that raised: the components become reusable."""
        ctx = self.__dict__.get("_ctx")
        if ctx is not None:
            for c in ctx._components.values():
                if getattr(c, "_context", None) is ctx:
                    c._context = None

    # -- presets and attributes -----------------------------------------------------------------
    @classmethod
    def track(cls, source, *, checkpoint_spacing, collision=None, max_checkpoints=None, extra=(), seeds=None,
              stream=None, prepare=True, agents=1):
        """A band-track course: ``checkpoints`` (Checkpoints), ``progress`` (Progress), ``collision`` when
        given (``"segments"`` / ``"sdf"`` BandCollision, or your component named "collision"), then ``extra``.

        ``source``: a TrackGenConfig or track PipelineSpec (built here with ``seeds=`` / ``stream=``) or
        a built generator (used as is). ``agents``: K agents per env (see :class:`Course`). Every
        argument is checked before anything is built.
        """
        agents = agents_arg(agents)
        generator, comps = track_parts(source, checkpoint_spacing=checkpoint_spacing, collision=collision,
                                       max_checkpoints=max_checkpoints, extra=extra, seeds=seeds, stream=stream)
        course = cls(generator, comps, stream=None, prepare=prepare, **agents_kwargs(agents))
        finish_preset("track", course.generator)
        return course

    @classmethod
    def gates(cls, source, *, collision=None, samples_per_gate=8, localize_window=None, extra=(), seeds=None,
              stream=None, prepare=True, agents=1):
        """A gate course: ``checkpoints`` (GateCheckpoints), ``centerline`` (CenterlineFromGates),
        ``progress``, ``collision`` when given (a post radius -> DiscCollision, or your component named
        "collision", e.g. FrameCollision), ``localizer`` (Localizer on the centerline), then ``extra``.

        The construction ``gate_frames.gate_width`` must be > 0 (or its randomizer's ``lo``), and a later
        scalar set of a width <= 0 is refused. ``agents``: K agents per env (see :class:`Course`).
        """
        agents = agents_arg(agents)
        generator, comps = gates_parts(source, collision=collision, samples_per_gate=samples_per_gate,
                                       localize_window=localize_window, extra=extra, seeds=seeds, stream=stream)
        course = cls(generator, comps, stream=None, prepare=prepare, **agents_kwargs(agents))
        finish_preset("gates", course.generator)  # only now: a refused construction adds no guard
        return course

    @classmethod
    def from_config(cls, config, *, stream=None, prepare=True):
        """The same as ``Course(config)``."""
        return cls(config, stream=stream, prepare=prepare)

    def _utility(self, name: str):
        c = self.components.get(name)
        return None if c is None else c.utility

    progress = property(lambda self: self._utility("progress"), doc="utility of the 'progress' component or None")
    collision = property(lambda self: self._utility("collision"), doc="utility of 'collision' or None")
    heightfield = property(lambda self: self._utility("heightfield"), doc="utility of 'heightfield' or None")
    localizer = property(lambda self: self._utility("localizer"), doc="utility of 'localizer' or None")
    checkpoint_sampler = property(lambda self: self._utility("checkpoints"), doc="utility of 'checkpoints' or None")
    course_line = property(lambda self: self._utility("centerline"), doc="utility of 'centerline' or None")
    props = property(lambda self: self._utility("props"), doc="utility of 'props' or None")
    depth_camera = property(lambda self: self._utility("depth_camera"), doc="utility of 'depth_camera' or None")
    step_result = property(lambda self: self._result, doc="the StepResult step() rewrites in place (readable before it)")

    @property
    def checkpoints(self):
        """The 'checkpoints' component's result (per generation), or None."""
        c = self.components.get("checkpoints")
        return None if c is None else c.result

    @property
    def result(self):
        """The generator's committed layout."""
        return self.generator.result

    @property
    def seeds(self):
        """The generator's SeedState (``course.seeds.seeds`` holds the per-env seeds)."""
        return getattr(self.generator, "seeds", None)

    @property
    def rng(self):
        """The PerEnvSeededRNG the generator was built with, else None."""
        return getattr(self.generator, "rng", None)

    @property
    def context(self):
        """The :class:`ComponentContext` the course passes to every hook (to run one component's hook
        yourself, e.g. ``course.components["localizer"].step(course.context)`` after a reset)."""
        return self._ctx

    @property
    def graph(self):
        """The course's own graph of ``regenerate()`` (None until first recorded)."""
        return self._regen_graphs.main

    @property
    def _graphs(self) -> dict:
        """The recorded regeneration variants by ``(advance, id(mask) or None)`` (:mod:`.graphs`)."""
        return self._regen_graphs.graphs

    # -- ownership ------------------------------------------------------------------------------
    def _take_over(self) -> None:
        """Make this course the generator's driver. The generator keeps this course's token, not a
        reference to it: an older course stays refused even once this one is garbage-collected."""
        self._owner_token = object()
        self.generator._track_gen_course = self._owner_token

    def _check_owner(self) -> None:
        token = getattr(self.generator, "_track_gen_course", None)
        if token is not None and token is not self.__dict__.get("_owner_token"):
            raise RuntimeError(
                "this course's generator is driven by another Course built later over the same generator; use "
                "that course (its components read what it regenerates)"
            )

    # -- stepping -------------------------------------------------------------------------------
    def step(self) -> StepResult:
        """Run every per-step component once; returns the same :class:`StepResult` every call."""
        self._check_owner()
        if not self._bind_ok:
            missing = [f"{c.name}.{n}" for c in self._order for n, s in (c.inputs or {}).items() if s.required]
            raise RuntimeError(f"call bind() before step() (unbound: {missing})")
        if is_capturing(self.device):
            self._check_stream_in_capture()
            self._captured_step = True
            retain(self.device, self, tuple(c._bound for c in self._step_components))
        if self.stream is not None and self.device.is_cuda:
            with on_stream(self.stream, self.device):  # every launch of a course goes to its stream
                for c in self._step_components:
                    c.step(self._ctx)
        else:
            for c in self._step_components:
                c.step(self._ctx)
        return self._result

    def reset(self, mask: wp.array | None = None) -> None:
        """Put every component's per-env state back to the start (masked envs only, each with all its
        agents), in reverse order. ``mask``: [E]."""
        self._check_owner()
        if mask is not None:
            check_mask(mask, self.num_envs, self.device)
        if is_capturing(self.device):
            self._check_stream_in_capture()
        with on_stream(self.stream, self.device):  # a no-op on the CPU and without stream=
            active = self._all
            if mask is not None:
                mask_to_active(mask, self._active)
                active = self._active
            for c in reversed(self._order):
                c.reset(self._ctx, active)

    def _refresh_entries(self) -> None:
        entries = {c.name: c.result for c in self._step_components}
        r = self._result
        object.__setattr__(r, "events", entries.get("progress"))
        object.__setattr__(r, "contacts", entries.get("collision"))
        object.__setattr__(r, "frame", entries.get("localizer"))
        r._set_entries(entries)

    # -- regeneration ---------------------------------------------------------------------------
    def _body_masked(self, advance: bool, mask: wp.array) -> None:
        self.generator.enqueue(self._ctx.exec, advance=advance, mask=mask)
        for c in self._order:
            c.on_generate(self._ctx, self._active)
        for c in reversed(self._order):
            c.reset(self._ctx, self._active)

    def _run_body(self, advance: bool, mask: wp.array | None) -> None:
        """THE regeneration body, enqueued on the current stream (recorded when capturing); callers
        make the course's stream current first (:meth:`_enqueue`, :meth:`.graphs.RegenerationGraphs.run`)."""
        if mask is None:
            self.generator.enqueue(self._ctx.exec, advance=advance, mask=None)
            for c in self._order:
                c.on_generate(self._ctx, self._all)  # components always get an [E] int32 mask
            for c in reversed(self._order):
                c.reset(self._ctx, self._all)
            return
        mask_to_active(mask, self._active)
        capturing = is_capturing(self.device)
        # Eagerly on CUDA, capture_if would copy the flag to the host and sync: run the body in
        # full instead (an exact identity for unmasked envs). On the CPU the flag is read in place.
        use_node = conditional_enabled() and (capturing or self.device.is_cpu)
        if use_node and capturing:
            use_node = self._conditional_node_ok()
        if use_node:
            any_set(self._active, self._flag)
            try:
                wp.capture_if(self._flag, on_true=lambda: self._body_masked(advance, mask))
            except CaptureError:
                raise
            except Exception as exc:
                if not capturing:
                    raise
                names = list(self.components)
                raise CaptureError(
                    f"the masked regeneration body could not be recorded as a conditional node ({exc}); one of the "
                    f"components {names} uses an operation a conditional body cannot hold (a pageable host copy, an "
                    f"event, another stream) in on_generate or reset: track_gen.capture.check_component finds which, "
                    f"or record the call inside track_gen.exec.unconditional()"
                ) from exc
        else:
            self._body_masked(advance, mask)

    def _conditional_node_ok(self) -> bool:
        """Whether the capture recording now can take the conditional node of a masked body."""
        if not conditional_nodes_supported(self.device):
            # A driver / toolkit older than 12.4 has no conditional nodes: wp.capture_if would fail
            # with an error that blames the components. The full body is exact for unmasked envs.
            if not _NO_CONDITIONAL_WARNED[0]:
                _NO_CONDITIONAL_WARNED[0] = True
                warnings.warn(
                    "CUDA conditional graph nodes need a CUDA driver and a Warp build of 12.4+ "
                    "(wp.is_conditional_graph_supported() is False): masked regenerations are recorded with "
                    "their full body (an exact identity for unmasked envs, but no skip when the mask is empty)",
                    ConditionalNodesUnsupportedWarning,
                    stacklevel=4,
                )
            return False
        if self.device.is_cuda and (self.device.captures or {}).get(wp.get_stream(self.device)) is None:
            # wp.capture_if finds the capture by the current stream and must end and restart it
            # there: a stream that only joined someone's capture (a forked side stream) cannot.
            raise CaptureError(
                "a masked regeneration needs a conditional node, which can only be added on the stream a Warp "
                "capture began on; the course's stream only joined the capture. Record on the course's stream "
                "(with wp.ScopedStream(course.stream): ...), or record the call inside track_gen.exec.unconditional()"
            )
        return True

    def _capturable(self) -> bool:
        return getattr(self.generator, "capturable", True)

    def _refuse_in_capture(self) -> None:
        if not self._capturable():
            stages = getattr(self.generator, "_host_stages", [])
            raise NotCapturableError(
                f"the generator runs host stage(s) {stages} (capturable=False); regenerate outside the capture"
            )
        if not self.prepared:
            raise CaptureError(
                "this course was built with prepare=False and is not prepared; call course.prepare() before recording"
            )
        self._check_stream_in_capture()

    def _check_stream_in_capture(self) -> None:
        """Under a CUDA capture, refuse a course whose stream takes no part in it (its launches
        would run now instead of being recorded)."""
        if self.device.is_cuda and self.stream is not None:
            current = wp.get_stream(self.device)
            same = current is self.stream or current.cuda_stream == self.stream.cuda_stream
            if not same and not self.stream.is_capturing:
                raise CaptureError(
                    "this course was built with stream=...; another stream is recording. Record on the course's "
                    "stream, or build the course with stream= the stream you record on"
                )

    def enqueue_generate(self, *, advance: bool = False, mask: wp.array | None = None) -> None:
        """Enqueue the regeneration body on the current stream (into your graph when recording);
        never builds a graph of the course's own."""
        self._check_owner()
        advance = as_bool("enqueue_generate: advance", advance)
        if mask is not None:
            check_mask(mask, self.num_envs, self.device)
        if is_capturing(self.device):
            self._refuse_in_capture()
            retain(self.device, self, mask)
        else:
            self._ensure_prepared()
        self._enqueue(advance, mask)

    def _enqueue(self, advance, mask) -> None:
        # on the course's stream, joined both ways to the caller's (see track_gen.exec.on_stream)
        with on_stream(self.stream, self.device):
            self._run_body(advance, mask)

    def _ensure_prepared(self) -> None:
        if not self.prepared:
            self.prepare()

    def regenerate(self, *, advance: bool = False, mask: wp.array | None = None) -> None:
        """Regenerate the courses of ``mask``'s envs (all when None) and refresh the components.

        ``advance=True`` draws the next generation (a new course); ``False`` rebuilds the current
        one. Outside a capture the course records each ``(advance, mask array)`` variant once and
        replays it; inside your capture it records into your graph.
        """
        self._check_owner()
        advance = as_bool("regenerate: advance", advance)
        if mask is not None:
            check_mask(mask, self.num_envs, self.device)
        if is_capturing(self.device):
            self._refuse_in_capture()
            retain(self.device, self, mask)
            self._enqueue(advance, mask)
            return
        self._ensure_prepared()
        if not self._capturable():
            self._enqueue(advance, mask)
            return
        self._regen_graphs.run(advance, mask)

    def generate(self, seeds: Any = None) -> None:
        """Regenerate every env now; with ``seeds``, reseed first, by whoever owns the seeds: the
        rng when there is one, ``SeedState.set`` on owned seeds, else ``RuntimeError`` (the library
        never writes a bound seed array). Reseeding restarts every env at generation 0."""
        self._check_owner()
        if seeds is not None:
            if is_capturing(self.device):
                raise CaptureError("generate(seeds=...) writes seeds from the host; call it outside the capture")
            rng, state = self.rng, self.seeds
            if rng is not None:
                rng.set(seeds)
            elif state is not None and state.owned:
                state.set(seeds)
            else:
                raise RuntimeError(
                    "generate(seeds=...): the seeds are bound to your array and track_gen never writes it; write "
                    "the array, then call regenerate()"
                )
            gen_counter = getattr(self.generator, "generation", None)
            if gen_counter is not None:
                gen_counter.zero_()
        self.regenerate()

    def prepare(self) -> None:
        """Load every kernel without changing anything: runs the masked body on an all-zero private
        mask (an exact identity). A no-op on a prepared course; refused under a capture."""
        if self.prepared:
            return
        if is_capturing(self.device):
            raise CaptureError(
                "this course was built with prepare=False and is not prepared; call course.prepare() before recording"
            )
        zero = wp.zeros(self.num_envs, dtype=wp.int32, device=self.device)
        with unconditional():  # run (not skip) the body, so that every kernel in it loads
            self._enqueue(False, zero)
        self.prepared = True

    def __repr__(self) -> str:
        agents = "" if self.agents == 1 else f", agents={self.agents}"
        return (f"{type(self).__name__}(generator={type(self.generator).__name__}, components={list(self.components)}"
                f"{agents})")
