"""CourseCfg, the course build, ranks and seeds, and the reset-event order check (no sim)."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

import track_gen as tg
from track_gen import tools

from track_gen_isaac import CourseCfg
from track_gen_isaac.env_course import build_course, course_seed, global_rank


def test_generator_config_is_stored_as_a_dict_and_mode_follows_it():
    cfg = CourseCfg(generator=tg.GateGenConfig(gate_width=0.8, size=12.0, randomize={"gates.min_spacing": (1.5, 2)}))
    assert cfg.mode == "gates"
    assert isinstance(cfg.generator, dict) and cfg.generator["gate_width"] == 0.8
    assert "num_envs" not in cfg.generator and "device" not in cfg.generator
    gen = cfg.generator_config(5, "cpu")
    assert isinstance(gen, tg.GateGenConfig) and (gen.num_envs, gen.device, gen.size) == (5, "cpu", 12.0)
    assert gen.randomize == {"gates.min_spacing": (1.5, 2.0)}
    with pytest.raises(ValueError, match="mode='track' but generator is a GateGenConfig"):
        CourseCfg(mode="track", generator=tg.GateGenConfig(gate_width=1.0))
    plain = CourseCfg(mode="track", generator={"size": 8.0, "min_length": 6.0})
    assert plain.generator_config(3, "cpu").size == 8.0


def test_course_cfg_serializes_and_takes_overrides():
    from isaaclab.utils import configclass

    @configclass
    class Holder:  # as in an env cfg: the CourseCfg is deep-copied and walked by configclass
        course: CourseCfg = CourseCfg(generator=tg.TrackGenConfig(size=9.0), collision="segments")

    h = Holder()
    d = h.to_dict()
    assert d["course"]["generator"]["size"] == 9.0 and d["course"]["mode"] == "track"
    h.from_dict({"course": {"generator": {"size": 11.0}, "collision": "sdf", "half_extents": [0.2, 0.1]}})
    gen = h.course.generator_config(2, "cpu")
    assert gen.size == 11.0 and gen.max_length == tg.TrackGenConfig().max_length
    assert h.course.collision == "sdf"
    assert Holder().course.generator["size"] == 9.0  # instances share nothing


@pytest.mark.parametrize("changes, message", [
    ({"mode": None}, "CourseCfg.mode"),
    ({"collision": "frame"}, "a track takes None, 'segments' or 'sdf'"),
    ({"generator": {"sise": 3.0}}, r"unknown TrackGenConfig field\(s\) \['sise'\]"),
    ({"generator": 3}, "CourseCfg.generator"),
    ({"checkpoint_spacing": 0.0}, "checkpoint_spacing"),
    ({"half_extents": (0.1,)}, "half_extents"),
    ({"half_extents": (0.1, -1.0)}, "half_extents"),
    ({"seed": 1.5}, "seed"),
    ({"asset_name": ""}, "asset_name"),
])
def test_track_cfg_checks(changes, message):
    cfg = CourseCfg(mode="track", generator={})
    for k, v in changes.items():
        setattr(cfg, k, v)
    with pytest.raises((TypeError, ValueError), match=message):
        cfg.validate_config()


@pytest.mark.parametrize("collision", ["segments", -0.1, 0.0, True])
def test_gate_cfg_collision_checks(collision):
    cfg = CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision=collision)
    with pytest.raises(ValueError, match="a gate course takes None, a post radius > 0"):
        cfg.validate_config()


class Marker(tools.Component):
    name = "acme.marker"


def test_build_course_components_and_extras():
    track = build_course(CourseCfg(generator=tg.TrackGenConfig(), collision="sdf", localize_window=4,
                                   extra=[Marker]), 4, "cpu", seed=1)
    assert list(track.components) == ["checkpoints", "progress", "collision", "centerline", "localizer",
                                      "acme.marker"]
    assert track.localizer.warm_window == 4 and track.components["collision"].mode == "sdf"
    inst = Marker()
    cfg = CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision="frame", half_height=0.07, extra=[inst])
    a, b = build_course(cfg, 3, "cpu", seed=1), build_course(cfg, 3, "cpu", seed=1)
    assert type(a.components["collision"]).__name__ == "FrameCollision"
    assert a.components["collision"].half_height == 0.07
    assert a.components["acme.marker"] is not b.components["acme.marker"] is not inst  # one instance per course
    disc = build_course(CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision=0.05), 3, "cpu", seed=1)
    assert type(disc.components["collision"]).__name__ == "DiscCollision"
    assert not build_course(CourseCfg(generator=tg.TrackGenConfig(), localizer=False), 2, "cpu", seed=1).localizer
    attached = CourseCfg(generator=tg.TrackGenConfig())
    attached.extra = [a.components["acme.marker"]]  # (set after construction: configclass deep-copies its args)
    with pytest.raises(ValueError, match="already attached"):
        build_course(attached, 3, "cpu", seed=1)
    with pytest.raises(TypeError, match="not a track_gen Component"):
        build_course(CourseCfg(generator=tg.TrackGenConfig(), extra=[lambda: 3]), 3, "cpu", seed=1)


def test_rank_from_environment(monkeypatch):
    for var in ("RANK", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    assert global_rank() == 0
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert global_rank() == 2
    monkeypatch.setenv("RANK", "5")
    assert global_rank() == 5
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(ValueError, match="RANK='x'"):
        global_rank()


def test_seeds_offset_by_rank_never_overlap():
    cfg = CourseCfg(generator=tg.GateGenConfig(gate_width=1.0))
    E = 6
    courses = [build_course(cfg, E, "cpu", seed=3, rank=r) for r in range(3)]
    seeds = np.concatenate([c.seeds.seeds.numpy() for c in courses])
    np.testing.assert_array_equal(seeds, tg.SeedState(3 * E, "cpu", 3).seeds.numpy())
    assert len(np.unique(seeds)) == 3 * E
    # rank r's env e draws the course env r * E + e draws in one big run
    big = build_course(cfg, 3 * E, "cpu", seed=3)
    np.testing.assert_array_equal(courses[2].result.pos.numpy(), big.result.pos.numpy()[2 * E:])
    assert course_seed(CourseCfg(seed=4), types.SimpleNamespace(seed=9)) == 4
    assert course_seed(CourseCfg(), types.SimpleNamespace(seed=9)) == 9
    assert course_seed(CourseCfg(), types.SimpleNamespace(seed=None)) == 0


def _event_env(order):
    """A stand-in env whose event manager lists reset terms in ``order``."""
    from isaaclab.managers import EventTermCfg

    from track_gen_isaac import mdp

    env = types.SimpleNamespace(cfg=types.SimpleNamespace(course=CourseCfg(generator=tg.TrackGenConfig())),
                                num_envs=2, device="cpu")
    place = mdp.place_at_course_start(EventTermCfg(func=mdp.place_at_course_start, mode="reset"), env)
    funcs = {"place": place, "regen": mdp.regenerate_course, "other": mdp.place_at_checkpoint}
    cfgs = [EventTermCfg(func=funcs[n], mode="reset", params={}) for n in order]
    env.event_manager = types.SimpleNamespace(active_terms={"reset": list(order)},
                                              get_term_cfg=dict(zip(order, cfgs, strict=True)).__getitem__)
    return env, place


def test_place_before_regenerate_is_refused():
    env, place = _event_env(["place", "regen"])
    with pytest.raises(ValueError, match=r"'place' \(place_at_course_start\) is declared before \['regen'\]"):
        place._check_order(env)
    env, place = _event_env(["regen", "place"])
    place._check_order(env)
    env, place = _event_env(["place"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        place._check_order(env)
    assert any("progress state carries over" in str(w.message) for w in caught)


@pytest.mark.parametrize("generator, message", [
    (tg.GateGenConfig(), r"gate_width > 0 \[m\].*got 0.0 \(the GateGenConfig default\).*GateGenConfig\(gate_width="),
    (tg.GateGenConfig(gate_width=-0.5), r"gate_width > 0 \[m\].*got -0.5:"),
    (tg.GateGenConfig(randomize={"gate_frames.gate_width": (0.0, 1.0)}), r"draws from lo=0; .*with lo > 0"),
])
def test_gate_width_is_checked_at_cfg_time(generator, message):
    """A gate course without an opening fails in validate_config (what Isaac Lab calls when it
    validates the env cfg), in the cfg's own terms, not later in the course build."""
    cfg = CourseCfg(generator=generator)
    with pytest.raises(ValueError, match=message) as info:
        cfg.validate_config()
    assert str(info.value).startswith("CourseCfg.generator:") and "presets.gates" not in str(info.value)
    # a randomized width with lo > 0 needs no scalar width; a dict generator is checked the same way
    CourseCfg(generator=tg.GateGenConfig(randomize={"gate_frames.gate_width": (0.5, 1.0)})).validate_config()
    with pytest.raises(ValueError, match="gate_width > 0"):
        CourseCfg(mode="gates", generator={"size": 10.0}).validate_config()


def test_half_height_is_checked_for_every_course():
    cfg = CourseCfg(generator=tg.TrackGenConfig(), half_height=-0.1)
    with pytest.raises(ValueError, match="CourseCfg.half_height"):
        cfg.validate_config()


@pytest.mark.parametrize("course, params, message", [
    (CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision="frame"), {"margin": 0.0}, r"margin: expected a distance"),
    (CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision="frame"), {"margin": True}, r"margin: expected"),
    (CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision="frame"), {"margin": float("nan")}, r"margin: expected"),
    (CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), collision=None), {}, r"env.cfg.course.collision is None"),
])
def test_clearance_penalty_checks_its_parameters_at_construction(course, params, message):
    from isaaclab.managers import RewardTermCfg

    from track_gen_isaac import mdp

    env = types.SimpleNamespace(cfg=types.SimpleNamespace(course=course), num_envs=2, device="cpu")
    with pytest.raises(ValueError, match=r"clearance_penalty\(course_name='course'\): " + message):
        mdp.clearance_penalty(RewardTermCfg(func=mdp.clearance_penalty, params=params), env)
    if params:
        mdp.clearance_penalty(RewardTermCfg(func=mdp.clearance_penalty, params={"margin": 0.25}), env)
