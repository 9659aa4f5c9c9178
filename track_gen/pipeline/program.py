"""Program: a built pipeline with the generator surface.

Construction allocates everything (stage outputs, committed results, generator inputs,
parameters, seeds, generation counters); :meth:`Program.enqueue` is then a fixed list of
launches that never allocates, never syncs and never branches on device data, so it records
into a graph (CPU or CUDA) and replays with whatever the mask, seeds and parameters hold.

One regeneration, in order::

    mask -> active flags        (which envs regenerate)
    advance: generation += 1    (active envs only)
    valid = 1                   (active envs, working copy)
    resolve parameters          (base value or per-env draw)
    stages, in spec order       (write working buffers of active envs)
    masked commit               (copy active rows of every output into the result)

The commit is what makes a masked regeneration exact: result rows of inactive envs are never
written, whatever a stage did to its working buffers.
"""

from __future__ import annotations

import math
import warnings

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import warp as wp

from track_gen.capture import is_capturing
from track_gen.checks import INT32_MAX, as_bool, as_int
from track_gen.errors import CaptureError, NotCapturableError
from track_gen.exec import ExecContext, check_mask, mask_to_active, on_stream
from track_gen.pipeline.params import ParamTable, Params, Randomizers
from track_gen.pipeline.registry import ArraySpec, StageContext, StageRegistry, default_registry
from track_gen.pipeline.spec import PipelineSpec, StageSpec, mixture_range
from track_gen.rng import name_key, resolve_seeds

__all__ = ["Capacities", "Program", "ProgramResult", "build", "register_family"]


@dataclass(frozen=True)
class Capacities:
    """Static array capacities of a program: E and the sizes its stages declared (``points``,
    ``gates``...), read as attributes (``capacities.points``).

    A generator exposes it as ``generator.layout`` (and a component's context as ``ctx.layout``):
    that attribute name is part of the generator surface a course drives, so it stays. The class
    was named ``Layout`` before; that name is a deprecated alias (it reads like a course layout,
    :class:`track_gen.layouts.GateLayout`, which it is not)."""

    num_envs: int
    capacities: Mapping[str, int] = field(default_factory=dict)
    max_loop_length: float | None = None

    def __getattr__(self, name: str) -> int:
        caps = object.__getattribute__(self, "capacities")
        if name in caps:
            return caps[name]
        raise AttributeError(f"Capacities has no capacity {name!r}; capacities: {sorted(caps)}")


class ProgramResult:
    """Committed outputs by global name (``result["centerline.xy"]``) plus ``valid`` ([E] int32)."""

    def __init__(self, arrays: Mapping[str, wp.array], valid: wp.array):
        self._arrays = dict(arrays)
        self.valid = valid

    def __getitem__(self, name: str) -> wp.array:
        try:
            return self._arrays[name]
        except KeyError:
            raise KeyError(f"no output {name!r}; outputs: {sorted(self._arrays)}") from None

    def __contains__(self, name) -> bool:
        return name in self._arrays

    def keys(self):
        return self._arrays.keys()

    def __repr__(self) -> str:
        return f"ProgramResult({sorted(self._arrays)} + valid)"


@wp.kernel
def _advance(active: wp.array(dtype=wp.int32), generation: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if active[e] != 0:
        generation[e] = generation[e] + 1


@wp.kernel
def _begin(active: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if active[e] != 0:
        valid[e] = 1


@wp.kernel
def _commit_rows(active: wp.array(dtype=wp.int32), src: wp.array2d(dtype=wp.int32), dst: wp.array2d(dtype=wp.int32)):
    e = wp.tid()
    if active[e] == 0:
        return
    for j in range(src.shape[1]):
        dst[e, j] = src[e, j]


def _rows(arr: wp.array) -> wp.array:
    """View a contiguous [E, ...] array of 4-byte scalars/vectors as [E, words] int32.

    The commit copies raw words with one non-generic kernel: Warp 1.17's CPU graph replay ran a
    dtype-generic (``Any``) kernel with the wrong overload for vector dtypes (measured here:
    vec2f rows garbled on replay, float32 rows intact), and one kernel is cheaper anyway.
    """
    words = arr.size * wp.types.type_size_in_bytes(arr.dtype) // 4
    assert arr.is_contiguous and wp.types.type_size_in_bytes(arr.dtype) % 4 == 0
    return wp.array(ptr=arr.ptr, dtype=wp.int32, shape=(arr.shape[0], words // arr.shape[0]), device=arr.device,
                    copy=False)


class Program:
    """A built pipeline: the generator surface over any :class:`PipelineSpec`.

    Args:
        spec: the pipeline.
        registry: where stage kinds are looked up (default: :func:`default_registry`).
        seeds: anything :class:`~track_gen.rng.SeedState` takes, a ``SeedState`` or a
            ``PerEnvSeededRNG``.
        stream: default CUDA stream of :meth:`enqueue` (ignored on CPU).
        prepare: run one regeneration now (loads every kernel; fills the result).
        out: global output name (or ``"valid"``) → an array of yours to commit into.
        env_offset: global index of env 0, for int seeds in distributed runs.
    """

    family = "custom"

    def __init__(
        self,
        spec: PipelineSpec,
        *,
        registry: StageRegistry | None = None,
        seeds: Any = None,
        stream: Any = None,
        prepare: bool = True,
        out: Mapping[str, wp.array] | None = None,
        env_offset: int = 0,
    ):
        if not isinstance(spec, PipelineSpec):
            raise TypeError(f"spec: expected a PipelineSpec, got {type(spec).__name__}")
        registry = registry or default_registry()
        if isinstance(spec.num_envs, (bool, np.bool_)):
            raise ValueError(f"num_envs: expected an int >= 1, got {spec.num_envs!r}")
        num_envs = as_int("num_envs", spec.num_envs, 1, INT32_MAX)
        try:
            device = wp.get_device(spec.device)
        except Exception as exc:
            raise ValueError(f"device: {spec.device!r} is not a Warp device ({exc}); use 'cpu' or 'cuda:N'") from None
        if not spec.stages:
            raise ValueError("stages: a pipeline needs at least one stage")
        self.spec = spec
        self.registry = registry
        self.num_envs = E = num_envs
        self.device = device
        self.stream = stream
        defs, values, specs = self._check_stages(spec, registry)
        self._check_randomize(spec, specs)
        self._check_mixture(spec, specs)
        self._params = ParamTable(specs, values, spec.randomize, E, device, spec.mixture)
        self._guards: dict[str, list] = {}
        self.params = Params(self._params, on_set=self._run_guards)
        self.randomizers = Randomizers(self._params, on_set=self._run_range_guards)
        self.seeds, self.rng = resolve_seeds(seeds, E, device, env_offset)
        self.generation = wp.zeros(E, dtype=wp.int32, device=device)
        self._active = wp.zeros(E, dtype=wp.int32, device=device)
        self._valid_work = wp.zeros(E, dtype=wp.int32, device=device)
        self._host_stages = [s.name for s, d in zip(spec.stages, defs) if not d.capturable]
        self._allocate(spec, defs, values, out or {})
        self.prepared = False
        if prepare:
            self.prepare()

    # -- construction -------------------------------------------------------------------------
    def _check_stages(self, spec, registry):
        defs, values, specs, caps = [], {}, {}, {}
        seen: set[str] = set()
        for st in spec.stages:
            if not isinstance(st, StageSpec):
                raise TypeError(f"stages: expected StageSpec entries, got {type(st).__name__}")
            if not isinstance(st.name, str) or not st.name.isidentifier():
                raise ValueError(f"stage name {st.name!r} must be an identifier")
            if st.name in seen:
                raise ValueError(f"stage name {st.name!r} appears twice; names are unique in a pipeline")
            seen.add(st.name)
            d = registry.get(st.kind)
            unknown = set(st.params) - set(d.params)
            if unknown:
                raise KeyError(
                    f"stage {st.name!r} ({st.kind}) has no parameter(s) {sorted(unknown)}; it has {sorted(d.params)}"
                )
            local = {}
            for n, ps in d.params.items():
                v = ps.check(f"{st.name}.{n}", st.params.get(n, ps.default))
                values[f"{st.name}.{n}"] = v
                specs[f"{st.name}.{n}"] = ps
                local[n] = v
            if d.capacities is not None:
                for cap, size in d.capacities(local).items():
                    if caps.setdefault(cap, int(size)) != int(size):
                        raise ValueError(f"capacity {cap!r} declared as {caps[cap]} and {size} by two stages")
            defs.append(d)
        for st, d in zip(spec.stages, defs):
            for r in d.reads:
                if r not in values:
                    raise KeyError(f"stage {st.name!r} ({st.kind}) reads parameter {r!r}, which no stage declares")
        self._caps = caps
        return defs, values, specs

    def _check_randomize(self, spec, specs):
        for name, (lo, hi) in spec.randomize.items():
            _check_range_entry("randomize", f"randomize[{name!r}]", name, lo, hi, specs, "cannot be drawn per env")

    def _check_mixture(self, spec, specs):
        for cname, _, ranges in spec.mixture:
            for name, (lo, hi) in ranges.items():
                what = f"mixture[{cname!r}][{name!r}]"
                _check_range_entry(what, what, name, lo, hi, specs, _MIXTURE_STATIC)

    @property
    def mixture_component(self) -> wp.array:
        """[E] int32: the mixture component each env drew at its last generation (an index into
        ``spec.mixture``; -1 without a mixture)."""
        return self._params.component

    @property
    def mixture_weights(self) -> dict[str, float]:
        """The mixture's current component weights, name -> weight (a copy; empty without a mixture).
        They start as the spec's; :meth:`set_mixture_weights` changes them."""
        return dict(zip(self._params.mixture_names, self._params.mixture_weights))

    def set_mixture_weights(self, weights: Mapping[str, float]) -> None:
        """Reweight the mixture for the generations to come: ``weights`` maps component names to
        numbers > 0 (relative, like the spec's; components left out keep theirs). A device write
        of the cumulative weights, made between replays (refused under capture): recorded graphs
        read the new weights at their next replay, nothing is recorded again. Which component an
        env draws still depends only on its seed, its generation and the weights (a curriculum
        that changes them changes the draws that follow, as it should)."""
        names = self._mixture_names("set_mixture_weights")
        if not isinstance(weights, Mapping):
            raise TypeError(f"set_mixture_weights: expected a mapping {{component: weight}}, got {weights!r}")
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise KeyError(f"set_mixture_weights: unknown components {unknown}; components: {names}")
        new = dict(self.mixture_weights)
        for name, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0.0:
                raise ValueError(f"set_mixture_weights: {name!r} weight must be a finite number > 0, got {w!r}")
            new[name] = float(w)
        self._params.set_mixture_weights([new[n] for n in names])

    def mixture_ranges(self, component: str) -> dict[str, tuple[float, float]]:
        """The ``(lo, hi)`` ranges component ``component`` draws its parameters from now (a copy; a
        fixed value reads as ``(v, v)``). They start as the spec's; :meth:`set_mixture_ranges` changes them."""
        return self._params.mixture_ranges(self._component_index(component, "mixture_ranges"))

    def set_mixture_ranges(self, component: str, ranges: Mapping[str, Any]) -> None:
        """Change what one component draws for the generations to come: ``ranges`` maps dynamic
        parameter names to a value or ``(lo, hi)``, each checked as the spec's mixture is (a name
        the component did not set joins it); the others keep theirs. A device write between replays
        (refused under capture): recorded graphs draw from the new ranges at their next replay,
        nothing is recorded again -- a curriculum inside one kind of course (e.g. a lab arena's
        openings shrinking as the policy masters them). Nothing is written if any entry is refused."""
        c = self._component_index(component, "set_mixture_ranges")
        if not isinstance(ranges, Mapping):
            raise TypeError(f"set_mixture_ranges: expected a mapping {{parameter: value or (lo, hi)}}, got {ranges!r}")
        checked = {}
        for name, v in ranges.items():
            what = f"set_mixture_ranges[{component!r}][{name!r}]"
            lo, hi = mixture_range(what, v)
            _check_range_entry(what, what, name, lo, hi, self._params.specs, _MIXTURE_STATIC)
            self._run_range_guards(name, lo, hi)
            checked[name] = (lo, hi)
        self._params.set_mixture_ranges(c, checked)

    def _mixture_names(self, what: str) -> list[str]:
        """The mixture's component names; ValueError naming ``what`` without a mixture."""
        names = self._params.mixture_names
        if not names:
            raise ValueError(f"{what}: this generator has no mixture (PipelineSpec.with_mixture)")
        return names

    def _component_index(self, component: str, what: str) -> int:
        names = self._mixture_names(what)
        if component not in names:
            raise KeyError(f"{what}: unknown component {component!r}; components: {names}")
        return names.index(component)

    def _check_param_set(self, name: str, value) -> None:
        """Hook for families with cross-parameter rules (raises before anything is written)."""

    def add_param_guard(self, name: str, guard) -> None:
        """Run ``guard(name, value)`` before every ``params[name] = value`` (and on both ends of a
        ``randomizers[name] = (lo, hi)``); it raises to refuse."""
        if name not in self.params:
            raise KeyError(f"unknown parameter {name!r}")
        self._guards.setdefault(name, []).append(guard)

    def _run_guards(self, name: str, value) -> None:
        self._check_param_set(name, value)
        for guard in self._guards.get(name, ()):
            guard(name, value)

    def _run_range_guards(self, name: str, lo: float, hi: float) -> None:
        """A randomizer range passes a parameter's guards when both of its ends do."""
        for guard in self._guards.get(name, ()):
            guard(name, lo)
            guard(name, hi)

    def _shape(self, a: ArraySpec, what: str) -> tuple[int, ...]:
        dims = []
        for d in a.shape:
            if d == "env":
                dims.append(self.num_envs)
            elif d in self._caps:
                dims.append(self._caps[d])
            else:
                raise ValueError(f"{what}: capacity {d!r} is declared by no stage; capacities: {sorted(self._caps)}")
        return tuple(dims)

    def _allocate(self, spec, defs, values, out):
        dev = self.device
        work: dict[str, wp.array] = {}
        kinds: dict[str, ArraySpec] = {}
        self.inputs: dict[str, wp.array] = {}
        self.input_info: dict[str, ArraySpec] = {}
        self._contexts = []
        for st, d in zip(spec.stages, defs):
            ins = {}
            for local, a in d.inputs.items():
                src = st.inputs.get(local, a.source or f"{st.name}.{local}")
                shape = self._shape(a, f"{st.name}.{local}")
                if src in work:
                    if kinds[src].dtype != a.dtype or tuple(work[src].shape) != shape:
                        raise ValueError(f"stage {st.name!r} reads {src!r} as {a}, but it is {kinds[src]}")
                    ins[local] = work[src]
                else:
                    if src not in self.inputs:
                        self.inputs[src] = wp.zeros(shape, dtype=a.dtype, device=dev)
                        self.input_info[src] = a
                    ins[local] = self.inputs[src]
            outs = {}
            for local, a in d.outputs.items():
                name = f"{st.name}.{local}"
                outs[local] = work[name] = wp.zeros(self._shape(a, name), dtype=a.dtype, device=dev)
                kinds[name] = a
            static = {n: values[f"{st.name}.{n}"] for n, ps in d.params.items() if ps.static}
            self._contexts.append((d, StageContext(self, st.name, static, ins, outs, name_key(st.name))))
        self._work = work
        unknown = set(out) - set(work) - {"valid"}
        if unknown:
            raise KeyError(f"out: unknown output(s) {sorted(unknown)}; outputs: {sorted(work)} and 'valid'")
        results = {}
        for name, arr in work.items():
            results[name] = self._out_array(out, name, arr) if name in out else wp.zeros_like(arr)
        valid = self._out_array(out, "valid", self._valid_work) if "valid" in out else wp.zeros_like(self._valid_work)
        self._results = results
        self._valid = valid
        self._commit_pairs = [(_rows(work[n]), _rows(results[n])) for n in work] + [
            (_rows(self._valid_work), _rows(valid))
        ]
        self._result = self._make_result()
        self.layout = Capacities(self.num_envs, dict(self._caps), self.spec.max_loop_length)

    def _out_array(self, out, name, like: wp.array) -> wp.array:
        arr = out[name]
        if not isinstance(arr, wp.array):
            raise TypeError(f"out[{name!r}]: expected a wp.array, got {type(arr).__name__}")
        if arr.dtype != like.dtype or tuple(arr.shape) != tuple(like.shape):
            raise ValueError(
                f"out[{name!r}]: expected shape {tuple(like.shape)} dtype {like.dtype.__name__}, got "
                f"{tuple(arr.shape)} {getattr(arr.dtype, '__name__', arr.dtype)}"
            )
        if wp.get_device(arr.device) != self.device or not arr.is_contiguous:
            raise ValueError(f"out[{name!r}]: must be a contiguous array on {self.device}")
        return arr

    def _make_result(self):
        return ProgramResult(self._results, self._valid)

    # -- the generator surface ----------------------------------------------------------------
    @property
    def result(self):
        """The committed layout arrays and ``valid`` ([E] int32); stable arrays, rewritten in place."""
        return self._result

    @property
    def capturable(self) -> bool:
        """False when a stage runs on the host (the program then refuses to be recorded)."""
        return not self._host_stages

    def prepare(self) -> None:
        """Load every kernel by running one full regeneration (idempotent; refused under capture)."""
        if self.prepared:
            return
        if is_capturing(self.device):
            raise CaptureError(
                "this generator was built with prepare=False and is not prepared yet; call prepare() "
                "before recording"
            )
        self.prepared = True
        self.enqueue(advance=False, mask=None)

    def enqueue(self, ctx: ExecContext | None = None, *, advance: bool = False, mask: wp.array | None = None) -> None:
        """Regenerate the courses of ``mask``'s envs (all when None) on ``ctx``'s stream.

        ``advance=True`` moves those envs to their next generation (a new course); ``False``
        rebuilds their current one (e.g. after a parameter change). Recordable: nothing here
        allocates, syncs or reads device data on the host.
        """
        if ctx is not None and not isinstance(ctx, ExecContext):
            raise TypeError(
                f"enqueue: ctx must be an ExecContext or None, got {type(ctx).__name__} {ctx!r}; the device is "
                "fixed when the generator is built; pass advance= and mask= by keyword"
            )
        advance = as_bool("enqueue: advance", advance)
        if mask is not None:
            check_mask(mask, self.num_envs, self.device)
        capturing = is_capturing(self.device)
        if capturing and self._host_stages:
            raise NotCapturableError(
                f"stage(s) {self._host_stages} run on the host (capturable=False); call enqueue outside the "
                f"capture, or register the stage with Warp kernels"
            )
        if capturing and not self.prepared:
            raise CaptureError(
                "this generator was built with prepare=False and is not prepared yet; call prepare() before recording"
            )
        self.prepared = True
        stream = ctx.stream if ctx is not None and ctx.stream is not None else self.stream
        # on_stream, not wp.ScopedStream(stream): the default sync_enter=True makes a capturing stream
        # wait on a non-capturing one (an invalidated capture), and nothing joined the caller back
        with on_stream(stream, self.device), wp.ScopedDevice(self.device):
            E = self.num_envs
            mask_to_active(mask, self._active)
            if advance:
                wp.launch(_advance, dim=E, inputs=[self._active, self.generation])
            wp.launch(_begin, dim=E, inputs=[self._active, self._valid_work])
            self._params.resolve(self._active, self.seeds.seeds, self.generation)
            for d, sctx in self._contexts:
                d.launch(sctx)
            for src, dst in self._commit_pairs:
                if mask is None:  # every row is active: one bulk copy per array
                    wp.copy(dst, src)
                else:
                    wp.launch(_commit_rows, dim=E, inputs=[self._active, src, dst])

    def generate(self, seeds: Any = None) -> None:
        """Regenerate every env now; with ``seeds``, reseed first (by the seeds' owner) and restart
        every env at generation 0, so a seed alone determines its course."""
        if seeds is not None:
            if is_capturing(self.device):
                raise CaptureError("generate(seeds=...) writes seeds from the host; call it outside the capture")
            if self.rng is not None:
                self.rng.set(seeds)
            elif self.seeds.owned:
                self.seeds.set(seeds)
            else:
                raise RuntimeError(
                    "generate(seeds=...): the seeds are bound to your array and track_gen never writes it; "
                    "write the array, then regenerate"
                )
            self.generation.zero_()
        self.enqueue(advance=False, mask=None)

    def param_values(self, name: str) -> wp.array:
        """The per-env values ([E] float32) of a dynamic parameter used by each env's current course
        (the base value, or its draw when randomized). A stable array, rewritten by regenerations."""
        return self._params.values_of(name)

    def outputs(self) -> dict[str, wp.array]:
        """Every committed output by global name (plugin stages' outputs included)."""
        return dict(self._results)

    def valid_fraction(self) -> float:
        """Fraction of envs whose current course is valid (reads back: not for a captured path)."""
        return float(self._valid.numpy().mean())

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(family={self.spec.family!r}, num_envs={self.num_envs}, device={self.device}, "
            f"stages={[s.name for s in self.spec.stages]})"
        )


def build(
    spec: PipelineSpec,
    *,
    registry: StageRegistry | None = None,
    prepare: bool = True,
    out: Mapping[str, wp.array] | None = None,
    seeds: Any = None,
    stream: Any = None,
    env_offset: int = 0,
) -> Program:
    """Build ``spec`` into a :class:`Program` (a :class:`TrackGenerator` / :class:`GateGenerator`
    for the ``"track"`` / ``"gates"`` families)."""
    cls = _FAMILY_CLASSES.get(getattr(spec, "family", None), Program)
    return cls(spec, registry=registry, prepare=prepare, out=out, seeds=seeds, stream=stream, env_offset=env_offset)


#: the Program subclass :func:`build` makes for a spec's family. ``track_gen.generators`` registers
#: ``"track"`` and ``"gates"`` when it is imported: the pipeline never imports the generators.
_FAMILY_CLASSES: dict[str, type[Program]] = {}


def register_family(family: str, cls: type[Program]) -> None:
    """Have :func:`build` make a ``cls`` for specs of ``family``."""
    if not (isinstance(cls, type) and issubclass(cls, Program)):
        raise TypeError(f"register_family: expected a Program subclass, got {cls!r}")
    _FAMILY_CLASSES[family] = cls


def __getattr__(name: str):
    """``Layout``: the deprecated name of :class:`Capacities` (one release)."""
    if name == "Layout":
        warnings.warn("track_gen.pipeline.program.Layout is deprecated: use track_gen.pipeline.Capacities "
                      "(the same class; generator.layout keeps its name)", DeprecationWarning, stacklevel=2)
        return Capacities
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: why a static parameter cannot be in a mixture range
_MIXTURE_STATIC = "cannot differ per env; set it on the spec"


def _check_range_entry(where: str, label: str, name: str, lo: float, hi: float, specs, static_why: str) -> None:
    """A per-env range (a randomizer's or a mixture component's) of parameter ``name`` against the
    program's parameters: known, dynamic, both ends within its bounds. Errors name ``where``
    (unknown, static: ``static_why``) or ``label`` (an end out of bounds)."""
    if name not in specs:
        raise KeyError(f"{where}: unknown parameter {name!r}; parameters: {sorted(specs)}")
    if specs[name].static:
        raise ValueError(f"{where}: {name} is static and {static_why}")
    specs[name].check(f"{label} lo", lo)
    specs[name].check(f"{label} hi", hi)
