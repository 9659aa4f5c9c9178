"""The rules of a gate layout as it is: the device's status bits against the host explainer that names
the gates (``generators.layouts.explain``), on every public lsy_drone_racing / AIGP file and on random
perturbations of the shipped layouts; a real gate may stand on the ground (its lower bar at or below it)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import track_gen as tg
from track_gen import layouts as L
from track_gen.generators.layouts.explain import explain_gate_layout
from track_gen.generators.layouts.gates import RULE_LIMITS
from track_gen.generators.status import GateStatus
from track_gen.pipeline import presets

DATA = Path(__file__).resolve().parents[1] / "data" / "lsy"


def device_and_host(lay: L.GateLayout, **kw) -> tuple[set[str], set[str], list]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gen = tg.GateGenerator(presets.gates_from_layouts([lay], 1, "cpu", **kw), seeds=0)
    status = int(gen.result.status.numpy()[0])
    bits = {f.name for f in GateStatus if f.value and status & f.value}
    limits = {n: float(gen.params[f"gates.{n}"]) for n in RULE_LIMITS}
    why = explain_gate_layout(lay, **limits)
    return bits, {r for r, _ in why}, why


def public_layouts():
    for p in sorted(DATA.glob("*.toml")):
        yield p, L.load(p, lsy_axis="x" if "level" in p.name else None)


def test_every_public_file_flies_but_the_randomized_level3():
    """AlphaPilot and TII track 2 have gates whose lower bar stands on the ground: flyable; level 3
    holds placeholder positions (its gates are drawn at run time): refused, naming each rule."""
    for path, lay in public_layouts():
        bits, named, why = device_and_host(lay)
        assert bits == named, (path.name, bits, why)
        if path.stem == "level3":
            assert {"CROWDED", "OBSTACLE"} <= bits
            assert any("gates 0 and 1" in w for r, w in why if r == "CROWDED")
        else:
            assert not bits, (path.name, why)


def test_a_gate_standing_on_the_ground_is_valid_and_one_in_the_ground_is_not():
    lay = L.load(L.shipped()["aigp_tii_real_track1"])
    pos = lay.pos.copy()
    pos[0, 2] = 0.5 * lay.height[0] + 0.01     # the opening just above the ground, the bar below it
    assert device_and_host(lay.replace(pos=pos)) == (set(), set(), [])
    pos[0, 2] = 0.5 * lay.height[0] - 0.05     # the opening itself in the ground
    bits, named, why = device_and_host(lay.replace(pos=pos))
    assert bits == named == {"GROUND"} and "gate 0" in why[0][1]


def test_the_explainer_agrees_with_the_device_on_perturbed_layouts():
    rng = np.random.default_rng(7)
    checked = 0
    for name, path in L.shipped().items():
        base = L.load(path)
        for _ in range(12):
            pos = base.pos + rng.normal(0.0, [1.5, 1.5, 0.8], base.pos.shape).astype(np.float32)
            yaw = base.rpy.copy()
            yaw[:, 2] += rng.normal(0.0, 0.8, len(yaw)).astype(np.float32)
            lay = base.replace(pos=pos, rpy=yaw)
            kw = {"max_turn": 1.2, "max_climb": 0.6, "min_spacing": 1.0, "max_spacing": 12.0, "crossing_clearance": 0.5}
            bits, named, why = device_and_host(lay, **kw)
            assert bits == named, (name, bits, why)
            checked += bool(bits)
    assert checked > 10   # most perturbed layouts break some rule: the comparison is not vacuous
