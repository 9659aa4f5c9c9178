"""Seed-page rules the code once broke (issue 11): each test here failed on the code before the fix."""

from __future__ import annotations

import copy
import gc
import re
from pathlib import Path

import pytest
import warp as wp

import track_gen as tg
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets

from .components import Named

E = 12
ROOT = Path(__file__).resolve().parents[2]


def track_gen_(**kw):
    return tg.TrackGenerator(presets.track(E, "cpu", **kw), seeds=7)


def gates_gen():
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=7)


def bound_track_course():
    course = Course.track(track_gen_(), checkpoint_spacing=0.6)
    course.bind(position=wp.zeros(E, dtype=wp.vec3f, device="cpu"))
    return course


# -- StepResult: assigning a field changes that instance only ------------------------------------
def test_assigning_a_field_of_a_copy_leaves_the_course_result_alone():
    course = bound_track_course()
    res = course.step()
    events = res["progress"]
    other = copy.copy(res)
    other.events = None
    assert "progress" not in other and other.get("progress") is None
    assert course.step()["progress"] is events and res.events is events  # was: KeyError
    other.events = "x"
    assert other["progress"] == "x" and course.step()["progress"] is events


def test_assigning_a_field_of_the_course_result_leaves_a_copy_alone():
    course = bound_track_course()
    res = course.step()
    events = res["progress"]
    kept = copy.copy(res)
    res.events = None
    try:
        assert kept["progress"] is events
    finally:
        res.events = events


# -- ownership: a takeover outlives the newer course -------------------------------------------------
def test_older_course_stays_refused_after_the_newer_one_is_collected():
    g = track_gen_()
    old = Course(g, [])
    newer = Course(g, [])
    with pytest.raises(RuntimeError, match="driven by another Course"):
        old.step()
    del newer
    gc.collect()
    for call in (old.step, old.reset, old.regenerate, old.enqueue_generate, old.generate):
        with pytest.raises(RuntimeError, match="driven by another Course"):
            call()
    Course(g, []).step()  # rebuilding works


# -- a subclass with the page's __init__ signature serves every route -----------------------------
class PageCourse(Course):
    def __init__(self, generator, components, *, stream=None, prepare=True):
        super().__init__(generator, components, stream=stream, prepare=prepare)
        self.built_by_subclass = True


@pytest.mark.parametrize("route", ["from_config", "positional", "keyword", "preset"])
def test_subclass_with_the_page_init_signature(route):
    cfg = CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=E), seeds=7, checkpoint_spacing=0.6)
    course = {
        "from_config": lambda: PageCourse.from_config(cfg),
        "positional": lambda: PageCourse(cfg),
        "keyword": lambda: PageCourse(config=cfg),
        "preset": lambda: PageCourse.track(tg.TrackGenConfig(num_envs=E), checkpoint_spacing=0.6, seeds=7),
    }[route]()
    assert type(course) is PageCourse and course.built_by_subclass
    assert list(course.components) == ["checkpoints", "progress"]


def test_config_routes_still_refuse_a_config_with_a_generator():
    cfg = CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=E), seeds=7, checkpoint_spacing=0.6)
    with pytest.raises(TypeError, match="not both"):
        Course(track_gen_(), config=cfg)
    with pytest.raises(TypeError, match="not both"):
        Course(cfg, [Named("a")])


# -- a refused construction leaves everything as it was ---------------------------------------------
def test_optional_must_be_a_tuple_of_names():
    class Reader(Named):
        optional = "centerline"  # a bare str: iterating it reads 'c', 'e', ...

    with pytest.raises(TypeError, match="optional must be a tuple of component names"):
        Course(track_gen_(), [Reader("acme.reader")])


def test_refusal_in_add_leaves_earlier_components_reusable():
    g = track_gen_()
    a, b = Named("a"), Named("b")
    with pytest.raises(ValueError, match="requires component 'zzz'"):
        Course(g, [a, b, Named("c", requires=["zzz"])])
    assert not a.attached and not b.attached
    course = Course(g, [a, b])  # was: "already attached to another course"
    assert a.attached and list(course.components) == ["a", "b"]


def test_subclass_init_raising_after_super_takes_nothing_over():
    class Failing(Course):
        def __init__(self, generator, components, *, stream=None, prepare=True):
            super().__init__(generator, components, stream=stream, prepare=prepare)
            raise RuntimeError("subclass refuses")

    g = track_gen_()
    owner = Course(g, [])
    a = Named("a")
    with pytest.raises(RuntimeError, match="subclass refuses"):
        Failing(g, [a])
    assert not a.attached
    owner.step()  # still the generator's driver


def test_failed_gates_preset_leaves_no_guard_on_your_generator():
    g = gates_gen()
    with pytest.raises(ValueError, match="requires component 'nope'"):
        Course.gates(g, collision=0.05, extra=[Named("acme.x", requires=["nope"])])
    g.params["gate_frames.gate_width"] = 0.0  # was: refused by the guard the failed preset left
    g.params["gate_frames.gate_width"] = 1.0
    course = Course.gates(g, collision=0.05)
    with pytest.raises(ValueError, match="never be passed"):
        course.generator.params["gate_frames.gate_width"] = 0.0


def test_gates_config_route_still_guards_the_width():
    cfg = CourseConfig(mode="gates", gen=tg.GateGenConfig(num_envs=E, gate_width=1.0), seeds=7, post_radius=0.05)
    course = Course(cfg)
    with pytest.raises(ValueError, match="never be passed"):
        course.generator.params["gate_frames.gate_width"] = 0.0


# -- the docs say what the sort reads ---------------------------------------------------------------
def test_composing_doc_sorts_on_after_and_source_only():
    text = (ROOT / "docs/user-guide/composing-a-course.rst").read_text()
    section = text.split("Component order\n---------------", 1)[1].split(".. list-table::", 1)[0]
    sort_sentence = re.search(r"The course sorts.*?\.", section, re.S).group(0)
    assert "requires" not in sort_sentence and "optional" not in sort_sentence
    assert "``after``" in section and "``source``" in section
    assert re.search(r"``requires``\s*/\s*``optional``[^.]*never reorder", section, re.S)
