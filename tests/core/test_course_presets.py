"""Course.track / Course.gates / CourseConfig: the checks that run before anything is built."""

from __future__ import annotations

import pytest
import warp as wp

import track_gen as tg
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets

E = 8


class Spy:
    """Counts generator constructions, to prove a refused preset built nothing."""

    def __init__(self, monkeypatch):
        self.built = 0
        for cls in (tg.TrackGenerator, tg.GateGenerator):
            orig = cls.__init__

            def counting(obj, *a, __orig=orig, **k):
                self.built += 1
                return __orig(obj, *a, **k)

            monkeypatch.setattr(cls, "__init__", counting)


TRACK_ARG_CASES = [
    (dict(checkpoint_spacing=0), ValueError, "checkpoint_spacing: must be > 0"),
    (dict(checkpoint_spacing=-1.0), ValueError, "checkpoint_spacing"),
    (dict(checkpoint_spacing=True), TypeError, "checkpoint_spacing"),
    (dict(checkpoint_spacing="1"), TypeError, "checkpoint_spacing"),
    (dict(checkpoint_spacing=0.6, collision=True), ValueError, "collision must be None, 'segments', 'sdf'"),
    (dict(checkpoint_spacing=0.6, collision="boxes"), ValueError, "'boxes'"),
    (dict(checkpoint_spacing=0.6, collision=3.0), TypeError, "collision"),
    (dict(checkpoint_spacing=0.6, max_checkpoints=2), ValueError, "max_checkpoints: must be >= 3"),
    (dict(checkpoint_spacing=0.6, max_checkpoints=4.0), TypeError, "max_checkpoints"),
    (dict(checkpoint_spacing=0.6, extra=tg.tools.Component()), TypeError, "extra: expected a sequence"),
]


@pytest.mark.parametrize("kwargs,exc,match", TRACK_ARG_CASES)
def test_track_preset_argument_checks(monkeypatch, kwargs, exc, match):
    spy = Spy(monkeypatch)
    with pytest.raises(exc, match=match):
        Course.track(presets.track(E, "cpu"), **kwargs)
    assert spy.built == 0


GATE_ARG_CASES = [
    (dict(collision=True), ValueError, "post radius"),
    (dict(collision="posts"), ValueError, "post radius"),
    (dict(collision=0.0), ValueError, "must be > 0"),
    (dict(collision=-0.1), ValueError, "must be > 0"),
    (dict(samples_per_gate=1), ValueError, "samples_per_gate: must be >= 2"),
    (dict(localize_window=0), ValueError, "localize_window: must be >= 1"),
    (dict(extra=tg.tools.Component()), TypeError, "extra"),
]


@pytest.mark.parametrize("kwargs,exc,match", GATE_ARG_CASES)
def test_gate_preset_argument_checks(monkeypatch, kwargs, exc, match):
    spy = Spy(monkeypatch)
    with pytest.raises(exc, match=match):
        Course.gates(presets.gates(E, "cpu", gate_width=1.0), **kwargs)
    assert spy.built == 0


def test_course_config_refusals():
    with pytest.raises(ValueError, match="mode must be"):
        Course(CourseConfig(mode="oval", gen=tg.TrackGenConfig(num_envs=E)))
    with pytest.raises(ValueError, match="needs checkpoint_spacing"):
        Course(CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=E)))
    with pytest.raises(ValueError, match="post_radius is for mode='gates'"):
        Course(CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=E), checkpoint_spacing=1, post_radius=0.1))
    with pytest.raises(ValueError, match="collision is for mode='track'"):
        Course(config=CourseConfig(mode="gates", gen=tg.GateGenConfig(num_envs=E, gate_width=1), collision="sdf"))
    with pytest.raises(TypeError, match="not both"):
        Course(CourseConfig(mode="gates", gen=tg.GateGenConfig(num_envs=E)), [tg.tools.Component()])
    with pytest.raises(TypeError, match="expected a CourseConfig"):
        Course(config={"mode": "track"})
