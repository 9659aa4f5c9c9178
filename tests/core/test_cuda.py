"""Streams, torch graphs and conditional nodes: the fixes of issue 17.

The CPU tests check what has CPU semantics (the stream-join rule, the fallback without
conditional nodes). The tests marked ``cuda`` need a GPU: on a machine without one they are
collected and skipped with the reason "no CUDA device"; ``bash scripts/gpu_check.sh`` runs them.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import warp as wp

import track_gen as tg
import track_gen.course.course as course_mod
from track_gen import exec as tg_exec
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools.centerline import CenterlineFromGates
from track_gen.tools.checkpoints import GateCheckpoints

E = 16
CUDA = "cuda:0"


def gates_course(device, seed=3, stream=None, comps=None):
    gen = tg.GateGenerator(presets.gates(E, device, gate_width=1.0), seeds=seed)
    comps = comps if comps is not None else [GateCheckpoints(), CenterlineFromGates(5)]
    return Course(gen, comps, stream=stream)


def state(course) -> dict[str, bytes]:
    out = {k: v.numpy().tobytes() for k, v in course.generator.outputs().items()}
    out["generation"] = course.generator.generation.numpy().tobytes()
    for c in course.components.values():
        res = c.result
        if dataclasses.is_dataclass(res):
            for f in dataclasses.fields(res):
                a = getattr(res, f.name)
                if isinstance(a, wp.array):
                    out[f"{c.name}.{f.name}"] = a.numpy().tobytes()
    return out


def int_mask(rows, device):
    m = np.zeros(E, np.int32)
    m[list(rows)] = 1
    return wp.array(m, dtype=wp.int32, device=device)


# -- CPU: the stream-join rule (fix 2) ---------------------------------------------------------
class FakeStream:
    def __init__(self, handle, capturing=False):
        self.cuda_stream, self.is_capturing = handle, capturing


@pytest.mark.parametrize(
    "current, stream, plan",
    [
        ("a", "a", (False, False)),          # the same object: nothing to do
        ("a", "a2", (False, False)),         # another object on the same CUDA stream: keep the caller's
        ("a", "b", (True, True)),            # eager, two streams: join both ways
        ("a", "B", (True, False)),           # the course's stream records, the caller's does not: never wait
        ("A", "b", (True, False)),           # the reverse
        ("A", "B", (True, True)),            # both in the capture (a fork): join both ways
    ],
)
def test_stream_plan_joins_only_streams_in_the_same_capture_state(current, stream, plan):
    streams = {"a": FakeStream(1), "a2": FakeStream(1), "b": FakeStream(2), "A": FakeStream(1, True),
               "B": FakeStream(2, True)}
    cur = streams[current]
    st = cur if stream == current else streams[stream]
    assert tg_exec._stream_plan(cur, st) == plan
    assert tg_exec._stream_plan(cur, None) == (False, False)


def test_on_stream_is_a_no_op_on_the_cpu():
    with tg_exec.on_stream(object(), "cpu"):  # never touches the stream object on the CPU
        pass
    with tg_exec.on_stream(None, "cpu"):
        pass
    assert tg_exec.conditional_nodes_supported("cpu")


# -- CPU: no conditional nodes -> full body, one warning (fix 4) -------------------------------
def test_without_conditional_nodes_the_masked_body_runs_in_full_with_one_warning(monkeypatch):
    masks = [int_mask([1, 4, 5], "cpu"), int_mask([], "cpu"), int_mask([0, 15], "cpu")]

    def run(course):
        out = []
        for m in masks:
            for _ in range(2):  # recorded, then replayed
                course.regenerate(mask=m, advance=True)
                out.append(state(course))
        return out

    expected = run(gates_course("cpu"))  # with conditional nodes
    monkeypatch.setattr(course_mod, "conditional_nodes_supported", lambda device: False)
    monkeypatch.setattr(course_mod, "_NO_CONDITIONAL_WARNED", [False])
    calls = []
    real_if = wp.capture_if
    monkeypatch.setattr(wp, "capture_if", lambda *a, **k: (calls.append(1), real_if(*a, **k)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run(gates_course("cpu"))
    assert got == expected
    assert calls == []  # no conditional node was ever requested
    assert [w.category for w in caught] == [tg_exec.ConditionalNodesUnsupportedWarning]
    assert "12.4" in str(caught[0].message)


def test_registered_is_cuda_only():
    with pytest.raises(RuntimeError, match="needs a CUDA device"):
        with tg_exec.registered(device="cpu"):
            pass


# -- CUDA ---------------------------------------------------------------------------------------
@wp.kernel
def _spin(out: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    x = out[i]
    for _k in range(n):
        x = x * 0.999999 + 1.0e-7
    out[i] = x


@pytest.mark.cuda
@pytest.mark.parametrize("conditional", [True, False])
def test_registered_records_into_a_torch_graph(conditional):
    """Fix 1: nothing runs at record time; every replay regenerates."""
    torch = pytest.importorskip("torch")
    course = gates_course(CUDA)
    gen = course.generator.generation
    mask = wp.ones(E, dtype=wp.int32, device=CUDA)
    wp.synchronize_device(CUDA)
    before = gen.numpy().copy()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with tg_exec.registered(conditional=conditional, device=CUDA) as reg:
            course.regenerate(mask=mask, advance=True)
    torch.cuda.synchronize()
    assert reg.restarted == conditional
    np.testing.assert_array_equal(gen.numpy(), before)  # recorded, not run
    for k in (1, 2):
        graph.replay()
        torch.cuda.synchronize()
        np.testing.assert_array_equal(gen.numpy(), before + k)
    mask.zero_()
    wp.synchronize_device(CUDA)
    graph.replay()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(gen.numpy(), before + 2)  # an empty mask: an identity


@pytest.mark.cuda
def test_course_on_its_own_stream_equals_the_default_stream():
    """Fix 2: a course built with stream=S (a slow kernel queued on S first) gives the same bytes."""
    s = wp.Stream(CUDA)
    slow = wp.zeros(1 << 16, dtype=wp.float32, device=CUDA)
    plain, on_s = gates_course(CUDA, seed=5), gates_course(CUDA, seed=5, stream=s)
    wp.synchronize_device(CUDA)
    assert state(plain) == state(on_s)
    masks = [int_mask([2, 3, 9], CUDA), None, int_mask([0], CUDA)]
    for m in masks:
        for _ in range(2):  # first call records the course's graph, the second replays it
            wp.launch(_spin, dim=slow.shape[0], inputs=[slow, 20000], stream=s)
            on_s.regenerate(mask=m, advance=True)
            plain.regenerate(mask=m, advance=True)
            assert state(on_s) == state(plain)  # .numpy() syncs the current stream: joined back
    on_s.reset(mask=masks[0])
    plain.reset(mask=masks[0])
    assert state(on_s) == state(plain)


@pytest.mark.cuda
def test_course_stream_must_take_part_in_the_capture():
    """The "built with stream=" CaptureError; recording on the course's stream works."""
    s = wp.Stream(CUDA)
    course = gates_course(CUDA, stream=s)
    mask = int_mask([1], CUDA)
    with pytest.raises(tg.CaptureError, match="built with stream="):
        with wp.ScopedCapture(device=CUDA):  # records on the device's stream, not on s
            course.regenerate(mask=mask, advance=True)
    before = course.generator.generation.numpy().copy()
    with wp.ScopedStream(s), wp.ScopedCapture(device=CUDA) as cap:
        course.regenerate(mask=mask, advance=True)
    wp.capture_launch(cap.graph, stream=s)
    wp.synchronize_device(CUDA)
    assert (course.generator.generation.numpy() - before).tolist() == [0, 1] + [0] * (E - 2)


@pytest.mark.cuda
def test_without_conditional_nodes_on_cuda(monkeypatch):
    """Fix 4 on CUDA: no capture_if (it would fail), one warning, the same courses."""
    monkeypatch.setattr(wp, "is_conditional_graph_supported", lambda: False)
    monkeypatch.setattr(course_mod, "_NO_CONDITIONAL_WARNED", [False])
    course, ref = gates_course(CUDA, seed=8), gates_course("cpu", seed=8)
    mask_c, mask_h = int_mask([3, 7], CUDA), int_mask([3, 7], "cpu")
    with pytest.warns(tg_exec.ConditionalNodesUnsupportedWarning):
        course.regenerate(mask=mask_c, advance=True)
    course.regenerate(mask=mask_c, advance=True)
    ref.regenerate(mask=mask_h, advance=True)
    ref.regenerate(mask=mask_h, advance=True)
    np.testing.assert_array_equal(course.generator.generation.numpy(), ref.generator.generation.numpy())
    np.testing.assert_array_equal(course.result.valid.numpy(), ref.result.valid.numpy())


@pytest.mark.cuda
@pytest.mark.parametrize("order", ["before", "after"])
def test_gate_checkpoints_follow_the_line_bit_for_bit_on_cuda(order):
    """Fix 5: NVRTC may fuse multiply-adds differently in the two kernels; the bytes must agree."""
    comps = [CenterlineFromGates(6), GateCheckpoints()] if order == "before" else [GateCheckpoints(),
                                                                                    CenterlineFromGates(6)]
    course = gates_course(CUDA, seed=11, comps=comps)

    def follows():
        cp, line = course.checkpoints, course.components["centerline"]
        assert cp.s.numpy().tobytes() == line.gate_s.numpy().tobytes()
        assert cp.length.numpy().tobytes() == line.line.length.numpy().tobytes()

    follows()
    course.regenerate(mask=int_mask([1, 4, 5], CUDA), advance=True)
    follows()
    course.regenerate(advance=True)
    follows()


@pytest.mark.cuda
def test_torch_allocation_after_a_conditional_node_is_refused():
    """Fix 3: the conditional node restarts torch's capture (a new id): torch's graph pool no longer
    serves it, so an allocating torch op after it fails; before it, or with conditional=False, it works."""
    torch = pytest.importorskip("torch")
    course = gates_course(CUDA)
    mask = wp.ones(E, dtype=wp.int32, device=CUDA)
    wp.synchronize_device(CUDA)
    ok = torch.cuda.CUDAGraph()
    with torch.cuda.graph(ok):
        y = torch.ones(1 << 20, device=CUDA) * 2  # allocating ops before the node: fine
        with tg_exec.registered(conditional=False, device=CUDA) as reg:
            course.regenerate(mask=mask, advance=True)
        z = y + 1  # no node, no restart: allocating after is fine
    assert not reg.restarted
    ok.replay()
    torch.cuda.synchronize()
    assert float(z[0]) == 3.0
    bad = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError):
        with torch.cuda.graph(bad):
            with tg_exec.registered(conditional=True, device=CUDA) as reg:
                course.regenerate(mask=mask, advance=True)
            assert reg.restarted
            torch.empty(64 << 20, dtype=torch.uint8, device=CUDA).fill_(1)  # a fresh cudaMalloc under capture
    torch.cuda.synchronize()
