"""The Course machinery (seed page rules that need no built-in component), with test components."""

from __future__ import annotations

import collections.abc
import dataclasses
import pprint
import warnings

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen import exec as tg_exec
from track_gen.course import Course, StepResult
from track_gen.errors import CaptureError, NotCapturableError, RebindAfterCaptureWarning
from track_gen.pipeline import ArraySpec, StageRegistry, StageSpec, build, presets
from track_gen.tools import Component, InputSpec

from .components import LOG, BoxReader, LengthCopy, Named, StartDistance

E = 12


def gen(family="track", **kw):
    if family == "track":
        return tg.TrackGenerator(presets.track(E, "cpu", **kw), seeds=7)
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, **kw), seeds=7)


def poses(value=0.0):
    pos = wp.full(E, wp.vec3f(value, 0.0, 0.0), dtype=wp.vec3f, device="cpu")
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device="cpu")
    he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device="cpu")
    return pos, quat, he


def state(course) -> dict[str, bytes]:
    """Generator outputs and every component buffer, as bytes."""
    out = {k: v.numpy().tobytes() for k, v in course.generator.outputs().items()}
    out["valid"] = course.generator.result.valid.numpy().tobytes()
    for c in course.components.values():
        r = c.result
        arrays = [r] if isinstance(r, wp.array) else [getattr(r, f.name) for f in dataclasses.fields(r)] if r else []
        for i, a in enumerate(arrays):
            out[f"{c.name}.{i}"] = a.numpy().tobytes()
    return out


def full_course(g=None):
    return Course(g or gen(), [StartDistance(), LengthCopy(), LengthCopy("acme.double", 2.0, source="acme.length")])


# -- construction ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: gen("track"), lambda: gen("gates"),
    lambda: build(presets.track(E, "cpu"), prepare=False, seeds=7),
])
def test_course_over_any_built_generator(make):
    g = make()
    course = Course(g, [LengthCopy()])
    assert g.prepared and course.prepared
    np.testing.assert_array_equal(course.components["acme.length"].result.numpy(), g.result.length.numpy())


def test_config_or_spec_is_a_type_error_naming_the_preset():
    with pytest.raises(TypeError, match=r"Course.track"):
        Course(tg.TrackGenConfig(num_envs=E))
    with pytest.raises(TypeError, match=r"Course.gates"):
        Course(presets.gates(E, "cpu", gate_width=1.0))
    with pytest.raises(TypeError, match="generator surface"):
        Course(object())


def test_duck_typed_generator():
    inner = gen()

    class MyGen:  # the generator surface, nothing else
        result, layout, device = inner.result, inner.layout, inner.device

        def enqueue(self, ctx=None, *, advance=False, mask=None):
            inner.enqueue(ctx, advance=advance, mask=mask)

    course = Course(MyGen(), [LengthCopy()])
    course.regenerate(advance=True)
    np.testing.assert_array_equal(course.components["acme.length"].result.numpy(), inner.result.length.numpy())
    assert course.seeds is None and course.rng is None


def test_subclass_init_runs():
    class MyCourse(Course):
        def __init__(self, generator, components=(), *, stream=None, prepare=True):
            self.seen = True
            super().__init__(generator, components, stream=stream, prepare=prepare)

    assert MyCourse(gen(), []).seen


# -- components and their order -------------------------------------------------------------------
def test_stable_topological_order_and_phases():
    LOG.clear()
    comps = [Named("c", after=["b"]), Named("a"), Named("b", source="a"), Named("d")]
    course = Course(gen(), comps)
    assert list(course.components) == ["a", "b", "c", "d"]
    assert isinstance(course.components, collections.abc.Mapping)
    with pytest.raises(TypeError):
        course.components["x"] = Named("x")
    attach = [n for n, h in LOG if h == "attach"]
    assert attach == ["a", "b", "c", "d"]
    LOG.clear()
    course.regenerate()
    assert [n for n, h in LOG if h == "on_generate"] == ["a", "b", "c", "d"]
    assert [n for n, h in LOG if h == "reset"] == ["d", "c", "b", "a"]
    LOG.clear()
    course.reset()
    assert LOG == [("d", "reset"), ("c", "reset"), ("b", "reset"), ("a", "reset")]


def test_already_ordered_list_is_kept():
    names = ["z", "y", "x"]
    course = Course(gen(), [Named(n) for n in names])
    assert list(course.components) == names


@pytest.mark.parametrize("comps,exc,match", [
    (lambda: [Named("")], TypeError, "non-empty str"),
    (lambda: [Named(3)], TypeError, "non-empty str"),
    (lambda: [Named("a"), Named("a")], ValueError, "unique"),
    (lambda: [Named("a", after=["nope"])], ValueError, "no such component"),
    (lambda: [Named("a", source="nope")], ValueError, "no such component"),
    (lambda: [Named("a", after=["b"]), Named("b", after=["a"])], ValueError, "cycle"),
    (lambda: [object()], TypeError, "non-empty str"),
    (lambda: Named("a"), TypeError, "sequence"),
])
def test_construction_refusals(comps, exc, match):
    LOG.clear()
    with pytest.raises(exc, match=match):
        Course(gen(), comps())
    assert not [h for _, h in LOG if h == "attach"]  # refused before attaching anything


def test_lacking_hooks_and_reuse():
    class Bare:
        name = "bare"

        def step(self, ctx):
            pass

    with pytest.raises(TypeError, match="subclass track_gen.tools.Component"):
        Course(gen(), [Bare()])
    c = Named("a")
    Course(gen(), [c])
    with pytest.raises(ValueError, match="build a new instance"):
        Course(gen(), [c])


def test_context_add_checks_requires_topology_inputs():
    with pytest.raises(ValueError, match="requires component 'x'"):
        Course(gen(), [Named("a", requires=["x"])])
    with pytest.raises(TypeError, match="families"):
        Course(gen("gates"), [Named("a", topology=("track",))])
    Course(gen("gates"), [Named("a", topology=("gates",))])
    clash = [Named("a", inputs={"position": InputSpec(wp.vec3f)}), Named("b", inputs={"position": InputSpec(wp.vec2f)})]
    with pytest.raises(ValueError, match="one name needs one dtype"):
        Course(gen(), clash)
    with pytest.raises(ValueError, match="no input name"):
        Course(gen(), [Named("a", inputs={"x": InputSpec(wp.vec3f, default="nope")})])


def test_course_attributes_for_absent_builtins_are_none():
    course = Course(gen(), [LengthCopy()])
    for attr in ("progress", "collision", "heightfield", "localizer", "checkpoint_sampler", "course_line", "props",
                 "checkpoints"):
        assert getattr(course, attr) is None
    assert course.seeds is course.generator.seeds


# -- binding --------------------------------------------------------------------------------------
def test_bind_routes_one_array_to_every_declarer_and_defaults():
    course = Course(gen(), [StartDistance(), BoxReader(), Named("mine", inputs={"position": InputSpec(wp.vec3f)})])
    pos, quat, he = poses()
    course.bind(pos, quat, he)  # positional, in the documented order
    assert course.components["acme.dist"].bound["position"] is pos
    assert course.components["mine"].bound["position"] is pos
    box = course.components["acme.box"]
    assert box.bound["box_position"] is pos  # default route
    other = wp.zeros(E, dtype=wp.vec3f)
    course.bind(position=pos, half_extents=he, box_position=other)
    assert box.bound["box_position"] is other  # explicit wins over the route


def test_bind_refusals_change_nothing():
    course = Course(gen(), [StartDistance()])
    pos, quat, he = poses()
    course.bind(position=pos, orientation=quat)  # orientation: accepted, nobody declares it
    cases = [
        (dict(position=pos, speed=pos), TypeError, "unknown input 'speed'"),
        (dict(position=wp.zeros(E + 1, dtype=wp.vec3f)), ValueError, "shape"),
        (dict(position=wp.zeros(E, dtype=wp.vec2f)), TypeError, "dtype vec3f"),
        (dict(position=np.zeros((E, 3))), TypeError, "wp.array"),
    ]
    for kwargs, exc, match in cases:
        with pytest.raises(exc, match=match):
            course.bind(**kwargs)
        assert course.components["acme.dist"].bound["position"] is pos


def test_bind_rolls_back_when_on_bind_raises():
    class Picky(StartDistance):
        name = "picky"

        def on_bind(self, arrays):
            if arrays["position"].ptr % 2 == 0 and getattr(self, "refuse", False):
                raise ValueError("refused by on_bind")

    a, b = StartDistance(), Picky()
    course = Course(gen(), [a, b])
    pos, _, _ = poses()
    course.bind(position=pos)
    b.refuse = True
    new = wp.zeros(E, dtype=wp.vec3f)
    with pytest.raises(ValueError, match="refused by on_bind"):
        course.bind(position=new)
    assert a.bound["position"] is pos and b.bound["position"] is pos


def test_generator_input_is_not_bound_by_the_course():
    g = tg.TrackGenerator(presets.track_from_points(E, "cpu"), seeds=0)
    course = Course(g, [LengthCopy()])
    with pytest.raises(TypeError, match=r"course.generator.inputs\['centerline.points'\] in place"):
        course.bind(**{"centerline.points": g.inputs["centerline.points"]})


def test_step_before_bind_and_rebind_warning():
    course = Course(gen(), [StartDistance()])
    with pytest.raises(RuntimeError, match=r"call bind\(\) before step\(\)"):
        course.step()
    pos, _, _ = poses()
    course.bind(position=pos)
    with wp.ScopedCapture(device="cpu"):
        course.step()
    with pytest.raises(ValueError):  # a refused bind does not use up the warning
        course.bind(position=wp.zeros(E + 1, dtype=wp.vec3f))
    with pytest.warns(RebindAfterCaptureWarning, match="record it again"):
        course.bind(position=wp.zeros(E, dtype=wp.vec3f))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        course.bind(position=pos)  # once only


# -- reading results --------------------------------------------------------------------------------
def test_step_result_entries_and_fields():
    course = Course(gen(), [StartDistance(), LengthCopy()])
    pos, _, _ = poses(1.0)
    course.bind(position=pos)
    res = course.step()
    assert course.step() is res
    assert list(res.keys()) == ["acme.dist"] and "acme.dist" in res and "acme.length" not in res
    assert res["acme.dist"] is course.components["acme.dist"].result
    assert res.events is None and res.contacts is None and res.frame is None
    assert res.valid is course.generator.result.valid
    assert res.get("collision") is None
    with pytest.raises(KeyError, match="entries"):
        res["acme.length"]
    start = course.generator.result.start_pos.numpy()
    np.testing.assert_allclose(res["acme.dist"].dist.numpy(), np.linalg.norm(start - [1, 0, 0], axis=1), rtol=1e-5)


def test_step_result_is_a_dataclass_not_a_mapping():
    res = StepResult(events="E", contacts=None, frame="F", valid=None)
    assert bool(res) and not isinstance(res, collections.abc.Mapping)
    assert isinstance(res, collections.abc.Container) and hasattr(res, "__iter__") and res.__iter__ is None
    with pytest.raises(TypeError):
        iter(res)
    assert dict(**res) == {"progress": "E", "localizer": "F"}
    d = {}
    d.update(res)
    assert d == {"progress": "E", "localizer": "F"}
    assert [f.name for f in dataclasses.fields(res)] == ["events", "contacts", "frame", "valid"]
    assert res == StepResult("E", None, "F", None)
    assert "StepResult(events='E'" in pprint.pformat(res)
    res.contacts = "C"
    assert res["collision"] == "C"
    res.events = None
    assert "progress" not in res
    res._set_entries({**dict(res.items()), "acme.x": 1})
    rep = dataclasses.replace(res, frame="G")
    assert dict(rep.items()) == {"collision": "C", "localizer": "G"}  # the four fields' entries only


def test_step_result_clone_deep_copies():
    course = Course(gen(), [StartDistance()])
    pos, _, _ = poses()
    course.bind(position=pos)
    res = course.step()
    copy = res.clone()
    assert copy["acme.dist"].dist.ptr != res["acme.dist"].dist.ptr
    np.testing.assert_array_equal(copy["acme.dist"].dist.numpy(), res["acme.dist"].dist.numpy())
    assert copy.valid.ptr != res.valid.ptr
    bad = StepResult()
    bad._set_entries({"acme.weird": object()})
    with pytest.raises(TypeError, match="acme.weird"):
        bad.clone()


# -- regeneration ---------------------------------------------------------------------------------
def test_regenerate_records_its_own_graphs():
    course = full_course()
    assert course.graph is None
    course.regenerate()
    assert course.graph is not None
    m = wp.zeros(E, dtype=wp.int32)
    course.regenerate(advance=True)
    course.regenerate(mask=m, advance=True)
    course.regenerate(mask=m, advance=True)
    assert len(course._graphs) == 3
    course.enqueue_generate(advance=True, mask=m)
    assert len(course._graphs) == 3  # enqueue_generate never builds one


def test_graph_variants_are_capped_with_one_warning():
    course = Course(gen(), [LengthCopy()])
    masks = [wp.zeros(E, dtype=wp.int32) for _ in range(20)]
    with pytest.warns(RuntimeWarning, match="run eagerly") as rec:
        for m in masks:
            course.regenerate(mask=m)
    assert len(rec) == 1
    assert len(course._graphs) == 16


@pytest.mark.parametrize("kind", ["zeros", "ones", "random"])
def test_masked_regeneration_contract(kind):
    """All-zero mask: exact identity; any mask: masked envs equal a full regeneration, others unchanged."""
    masked, full = full_course(), full_course()
    m = {"zeros": np.zeros(E, np.int32), "ones": np.ones(E, np.int32),
         "random": (np.random.default_rng(0).random(E) < 0.5).astype(np.int32)}[kind]
    before = state(masked)
    masked.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    full.regenerate(advance=True)
    after, ref = state(masked), state(full)
    for k in before:
        rows_b, rows_a, rows_r = (np.frombuffer(x[k], np.uint8).reshape(E, -1) for x in (before, after, ref))
        assert (rows_a[m == 0] == rows_b[m == 0]).all(), k
        assert (rows_a[m == 1] == rows_r[m == 1]).all(), k


@pytest.mark.parametrize("kind", ["zeros", "ones", "random"])
@pytest.mark.parametrize("unconditional", [False, True])
def test_rl_auto_reset_in_your_own_graph_equals_eager(kind, unconditional):
    """step() + masked regeneration recorded into the user's CPU graph == eager, byte for byte."""
    pos_e, _, _ = poses(0.5)
    pos_g, _, _ = poses(0.5)
    eager, graph = full_course(), full_course()
    eager.bind(position=pos_e)
    graph.bind(position=pos_g)
    m_e, m_g = wp.zeros(E, dtype=wp.int32), wp.zeros(E, dtype=wp.int32)

    def body(course, m):
        course.step()
        course.regenerate(mask=m, advance=True)

    with wp.ScopedCapture(device="cpu") as cap:
        if unconditional:
            with tg_exec.unconditional():
                body(graph, m_g)
        else:
            body(graph, m_g)
    assert graph._graphs == {}  # recorded into the user's graph, not the course's own
    rng = np.random.default_rng(3)
    for it in range(4):
        m = {"zeros": np.zeros(E, np.int32), "ones": np.ones(E, np.int32),
             "random": (rng.random(E) < 0.3).astype(np.int32)}[kind]
        p = rng.normal(size=(E, 3)).astype(np.float32)
        for arr in (m_e, m_g):
            arr.assign(m)
        for arr in (pos_e, pos_g):
            arr.assign(p)
        body(eager, m_e)
        wp.capture_launch(cap.graph)
        assert state(eager) == state(graph), it


def test_host_stage_generator_runs_eagerly_and_refuses_capture():
    reg = StageRegistry()
    reg.register("acme.host", lambda ctx: None, capturable=False, outputs={"n": ArraySpec(wp.int32)})
    import dataclasses as dc

    spec = presets.track(E, "cpu")
    g = build(dc.replace(spec, stages=spec.stages + (StageSpec("host", "acme.host"),)), registry=reg)
    course = Course(g, [LengthCopy()])
    course.regenerate(advance=True)
    assert course.graph is None
    m = wp.zeros(E, dtype=wp.int32)
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(NotCapturableError, match="host stage"):
            course.regenerate(mask=m)
        with pytest.raises(NotCapturableError):
            course.enqueue_generate()


def test_prepare_false_then_capture_refused_and_prepare_is_identity():
    course = Course(gen(), [StartDistance(), LengthCopy()], prepare=False)
    assert not course.prepared
    assert (course.components["acme.length"].result.numpy() == 0).all()  # nothing ran
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(CaptureError, match="prepare=False"):
            course.regenerate()
    pos, _, _ = poses()
    course.bind(position=pos)
    course.step()
    course.step()
    before = state(course)
    course.prepare()
    assert course.prepared and state(course) == before  # even after steps
    course.prepare()
    assert state(course) == before


def test_one_course_per_generator():
    g = gen()
    old = Course(g, [LengthCopy()])
    with pytest.raises(ValueError):
        Course(g, [Named("a"), Named("a")])  # a construction that raises takes nothing over
    old.regenerate()
    new = Course(g, [LengthCopy()])
    for call in (old.step, old.reset, old.regenerate, old.enqueue_generate, old.generate):
        with pytest.raises(RuntimeError, match="driven by another Course"):
            call()
    new.regenerate(advance=True)
    course = Course(g, [LengthCopy()])  # rebuilding works
    course.regenerate()


def test_generate_with_seeds_by_owner():
    owned = Course(gen(), [LengthCopy()])
    owned.generate(seeds=11)
    ref = Course(tg.TrackGenerator(presets.track(E, "cpu"), seeds=11), [LengthCopy()])
    assert state(owned) == state(ref)
    rng = tg.PerEnvSeededRNG(E, 0, device="cpu")
    via = Course(tg.TrackGenerator(presets.track(E, "cpu"), seeds=rng), [LengthCopy()])
    assert via.rng is rng
    via.generate(seeds=11)
    assert state(via) == state(ref)
    bound = Course(tg.TrackGenerator(presets.track(E, "cpu"), seeds=wp.zeros(E, dtype=wp.int32)), [LengthCopy()])
    with pytest.raises(RuntimeError, match="never writes"):
        bound.generate(seeds=11)


def test_reset_writes_masked_envs_only():
    course = Course(gen(), [StartDistance()])
    pos, _, _ = poses()
    course.bind(position=pos)
    for _ in range(3):
        course.step()
    m = np.zeros(E, np.int32)
    m[[1, 4]] = 1
    course.reset(wp.array(m, dtype=wp.int32))
    steps = course.components["acme.dist"].result.steps.numpy()
    assert (steps[m == 1] == 0).all() and (steps[m == 0] == 3).all()


def test_check_component_names_the_offending_hook():
    from track_gen.capture import check_component

    class Leaky(LengthCopy):
        def on_generate(self, ctx, mask):
            self.result.numpy()  # a readback: fine eagerly, not in a graph

    course = Course(gen(), [StartDistance(), LengthCopy(), Leaky("acme.leaky")])
    pos, _, _ = poses()
    course.bind(position=pos)
    check_component(course, names=["acme.dist", "acme.length"])
    with pytest.raises(CaptureError, match="'acme.leaky': on_generate"):
        check_component(course)


def test_a_recorded_graph_keeps_the_course_and_its_arrays_alive():
    import gc
    import weakref

    pos, _, _ = poses(0.25)
    course = full_course()
    course.bind(position=pos)
    m = wp.ones(E, dtype=wp.int32)
    with wp.ScopedCapture(device="cpu") as cap:
        course.step()
        course.regenerate(mask=m, advance=True)
    dist = course.components["acme.dist"].result.dist
    refs = [weakref.ref(x) for x in (course, pos, m)]
    del course, pos, m
    gc.collect()
    assert all(r() is not None for r in refs)
    wp.capture_launch(cap.graph)  # replays over live buffers
    assert np.isfinite(dist.numpy()).all()
    graph = cap.graph
    del cap, graph
    gc.collect()
    assert all(r() is None for r in refs)


def test_bind_refuses_a_missing_required_input():
    course = Course(gen(), [StartDistance(), BoxReader()])
    pos, quat, he = poses()
    with pytest.raises(TypeError, match=r"missing required input\(s\) \['acme.box.half_extents'\]"):
        course.bind(position=pos)
    course.bind(position=pos, half_extents=he)
    with pytest.raises(TypeError, match="pass them all again"):
        course.bind(orientation=quat)
    assert course.components["acme.dist"].bound["position"] is pos


def test_from_config_runs_a_subclass_init():
    class MyCourse(Course):
        def __init__(self, generator, components=(), *, stream=None, prepare=True):
            self.seen = True
            super().__init__(generator, components, stream=stream, prepare=prepare)

    with pytest.raises(ValueError, match="needs checkpoint_spacing"):  # reached the config, not a TypeError
        MyCourse.from_config(tg.course.CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=E)))


def test_utility_defaults_to_the_component():
    c = Named("progress")
    course = Course(gen(), [c])
    assert course.progress is c
    c.utility = "helper"
    assert course.progress == "helper"


def test_registered_needs_cuda():
    with pytest.raises(RuntimeError, match="CUDA device"):
        with tg_exec.registered(device="cpu"):
            pass


def test_context_is_what_the_hooks_receive():
    course = Course(gen(), [StartDistance()])
    assert course.context is course._ctx and course.context.num_envs == E
    pos, _, _ = poses(2.0)
    course.bind(position=pos)
    course.components["acme.dist"].step(course.context)  # one component alone
    assert course.components["acme.dist"].result.steps.numpy().tolist() == [1] * E
