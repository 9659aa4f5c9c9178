"""The seed page's examples, unchanged but for device="cpu", and the preset rules that need built-ins."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen import TrackGenConfig, TrackGenerator, tools
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets

from .test_course_presets import Spy

E, device = 64, "cpu"


def course_bytes(course) -> dict:
    out = {k: v.numpy().tobytes() for k, v in course.generator.outputs().items()}
    for c in course.components.values():
        r = c.result
        for f in getattr(r, "__dataclass_fields__", {}):
            v = getattr(r, f)
            if isinstance(v, wp.array):
                out[f"{c.name}.{f}"] = v.numpy().tobytes()
    return out


def test_building_a_course_examples():
    # 1. A preset, over a config, a PipelineSpec, or a built generator
    course = Course.track(presets.track(num_envs=E, device=device), checkpoint_spacing=0.6, collision="segments",
                          seeds=42)
    assert list(course.components) == ["checkpoints", "progress", "collision"]
    course = Course.gates(presets.gates(num_envs=E, device=device, gate_width=0.1), collision=0.02, seeds=42)
    assert list(course.components) == ["checkpoints", "centerline", "progress", "collision", "localizer"]
    assert isinstance(course.components["collision"], tools.DiscCollision)
    # 2. Any generator and any components
    gen = TrackGenerator(presets.track(num_envs=E, device=device), seeds=42)
    course = Course(gen, [tools.Checkpoints(0.6, max_checkpoints="auto"), tools.Progress(),
                          tools.BandCollision("segments")])
    # 3. A flat CourseConfig (Course.from_config(config) and Course(config=...) are the same)
    cfg = CourseConfig(mode="track", gen=TrackGenConfig(num_envs=E, device=device), seeds=42, collision="segments",
                       checkpoint_spacing=0.6)
    a, b, c = Course(cfg), Course.from_config(cfg), Course(config=cfg)
    assert course_bytes(a) == course_bytes(b) == course_bytes(c)


def test_binding_and_reading_results_examples():
    pos = wp.zeros(E, dtype=wp.vec3f, device=device)
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device=device)
    he = wp.full(E, wp.vec2f(0.02, 0.01), dtype=wp.vec2f, device=device)
    course = Course.track(presets.track(num_envs=E, device=device), checkpoint_spacing=0.6,
                          extra=[tools.Localizer()], seeds=42)  # no collision
    course.bind(position=pos)  # Progress and Localizer both read it
    boxed = Course.track(presets.track(num_envs=E, device=device), checkpoint_spacing=0.6, collision="segments",
                         seeds=42)
    boxed.bind(position=pos, orientation=quat, half_extents=he)  # + a box collision
    res = course.step()
    assert res["progress"] is res.events  # ProgressEvents (the same object as res.events)
    assert res["localizer"].s is res.frame.s
    assert "collision" not in res and list(res.keys()) == ["progress", "localizer"]
    assert set(dict(**res)) == {"progress", "localizer"}
    assert res.get("collision") is None
    assert res.valid is course.result.valid
    assert course.components["checkpoints"].result is course.checkpoints  # a per-generation result
    assert course.progress is course.components["progress"].utility
    assert course.checkpoint_sampler is course.components["checkpoints"].utility
    assert course.localizer is not None and course.collision is None and course.course_line is None
    assert isinstance(boxed.step().contacts, tools.Contacts)


def test_course_config_entries_are_the_four_fields():
    course = Course(CourseConfig(mode="gates", gen=tg.GateGenConfig(num_envs=E, gate_width=1.0), seeds=1,
                                 post_radius=0.05))
    pos = wp.zeros(E, dtype=wp.vec3f)
    course.bind(position=pos, orientation=wp.full(E, wp.quat_identity(), dtype=wp.quatf),
                half_extents=wp.full(E, wp.vec2f(0.05, 0.05), dtype=wp.vec2f))
    res = course.step()
    assert set(res.keys()) == {"progress", "collision", "localizer"}
    assert res.events is res["progress"] and res.contacts is res["collision"] and res.frame is res["localizer"]


def test_gates_with_an_rng_equals_the_course_config_byte_for_byte():
    cfg = tg.GateGenConfig(num_envs=E, gate_width=1.0)
    rng = tg.PerEnvSeededRNG(E, 7, device=device)
    a = Course.gates(cfg, collision=0.05, seeds=rng)
    b = Course(CourseConfig(mode="gates", gen=cfg, seeds=7, post_radius=0.05))
    assert a.rng is rng and b.rng is None
    assert a.seeds.seeds.numpy().tobytes() == b.seeds.seeds.numpy().tobytes()
    assert course_bytes(a) == course_bytes(b)


def test_seeds_by_owner_through_the_course():
    rng = tg.PerEnvSeededRNG(E, 1, device=device)
    course = Course.track(presets.track(E, device), checkpoint_spacing=0.6, seeds=rng)
    course.generate(seeds=5)
    ref = Course.track(presets.track(E, device), checkpoint_spacing=0.6, seeds=5)
    assert course_bytes(course) == course_bytes(ref)


# -- preset rules that need the built-in components ----------------------------------------------
def test_collision_slot_rules(monkeypatch):
    spy = Spy(monkeypatch)
    with pytest.raises(ValueError, match="must be named 'collision'"):
        Course.track(presets.track(E, device), checkpoint_spacing=0.6,
                     collision=tools.BandCollision("segments", name="walls"))
    with pytest.raises(ValueError, match="must be named 'collision'"):
        Course.gates(presets.gates(E, device, gate_width=1.0), collision=tools.FrameCollision(half_height=0.05,
                                                                                              name="frames"))
    assert spy.built == 0
    c = Course.gates(presets.gates(E, device, gate_width=1.0), collision=tools.FrameCollision(half_height=0.05))
    assert isinstance(c.collision, tools.FrameCollision)
    c = Course.track(presets.track(E, device), checkpoint_spacing=0.6,
                     extra=[tools.BandCollision("segments", name="acme.walls")])
    assert c.collision is None and "acme.walls" in c.components


def test_extra_is_sorted_with_the_presets_own_names_before_building(monkeypatch):
    spy = Spy(monkeypatch)
    used = tools.Localizer(name="acme.used")
    cases = [
        ([tools.Progress()], ValueError, "unique"),
        ([tools.Localizer(source="nope")], ValueError, "no such component"),
    ]
    Course(TrackGenerator(presets.track(4, device)), [used])
    spy.built = 0
    cases.append(([used], ValueError, "build a new instance"))
    for extra, exc, match in cases:
        with pytest.raises(exc, match=match):
            Course.track(presets.track(4, device), checkpoint_spacing=0.6, extra=extra)
        assert spy.built == 0, match


def test_source_family_and_built_generator_rules(monkeypatch):
    with pytest.raises(TypeError, match=r"use Course.gates"):
        Course.track(presets.gates(E, device, gate_width=1.0), checkpoint_spacing=0.6)
    with pytest.raises(TypeError, match=r"use Course.track"):
        Course.gates(tg.TrackGenerator(presets.track(E, device)))
    built = tg.TrackGenerator(presets.track(E, device), seeds=3)
    with pytest.raises(TypeError, match="already built"):
        Course.track(built, checkpoint_spacing=0.6, seeds=3)
    course = Course.track(built, checkpoint_spacing=0.6)
    assert course.generator is built


def test_gate_width_rules(monkeypatch):
    spy = Spy(monkeypatch)
    with pytest.raises(ValueError, match="gate_width is 0"):
        Course.gates(presets.gates(E, device))
    with pytest.raises(ValueError, match="gate_width is 0"):
        Course.gates(tg.GateGenConfig(num_envs=E))
    with pytest.raises(ValueError, match="lo > 0"):
        Course.gates(presets.gates(E, device).with_randomize({"gate_frames.gate_width": (0.0, 1.0)}))
    assert spy.built == 0
    course = Course.gates(presets.gates(E, device).with_randomize({"gate_frames.gate_width": (0.5, 1.0)}))
    w = course.result.width.numpy()
    assert ((w >= 0.5) & (w <= 1.0)).all()
    with pytest.raises(ValueError, match="never be passed"):
        course.generator.params["gate_frames.gate_width"] = 0.0
    built = tg.GateGenerator(presets.gates(E, device, gate_width=1.0))
    Course.gates(built)
    with pytest.raises(ValueError, match="never be passed"):
        built.params["gate_frames.gate_width"] = -0.0
    built.params["gate_frames.gate_width"] = 0.8
    with pytest.raises(ValueError, match="gate_width is 0"):
        Course.gates(tg.GateGenerator(presets.gates(E, device)))


def test_checkpoint_capacity_warns_once_when_the_course_chose_it():
    spec = presets.track(E, device, max_length=12.0, min_length=5.0)  # declared bound 12 m ...
    spec = spec.with_params({"centerline.size": 10.0})
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        course = Course.track(spec, checkpoint_spacing=1.0, max_checkpoints=None, seeds=0)
    cap = course.components["checkpoints"].capacity
    assert cap == 12
    clipped = [w for w in rec if issubclass(w.category, tg.CapacityWarning)]
    assert len(clipped) <= 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", tg.CapacityWarning)
        Course.track(presets.track(E, device), checkpoint_spacing=0.6, max_checkpoints=100, seeds=0)
