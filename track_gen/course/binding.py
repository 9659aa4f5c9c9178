"""Binding a course's component inputs: names (positional pose arrays included), routes to each
component (its own name, else the spec's default), checks, then an all-or-nothing bind."""

from __future__ import annotations

import warnings
from typing import Any

import warp as wp

from track_gen.errors import RebindAfterCaptureWarning

__all__ = ["POSE_INPUTS", "Binding"]

#: accepted by every course's ``bind`` (also positionally, in this order)
POSE_INPUTS = ("position", "orientation", "half_extents", "box_position")


class Binding:
    """The :meth:`bind` half of a :class:`~track_gen.course.Course` (a mixin: it reads the course's
    ``_order``, ``_ctx``, ``generator``, ``num_envs``, ``agents``, ``num_agents``, ``device`` and
    capture flags)."""

    def _check_input_defaults(self) -> None:
        declared = set(self._ctx._inputs) | set(POSE_INPUTS)
        for c in self._order:
            for n, spec in (c.inputs or {}).items():
                if spec.default is not None and spec.default not in declared:
                    raise ValueError(
                        f"component {c.name!r}: input {n!r} defaults to {spec.default!r}, which is no input name"
                    )

    def bind(self, *args, **arrays) -> None:
        """Bind every component input at once, by name (``position``, ``orientation``,
        ``half_extents``, ``box_position`` also positionally). Validated, then bound atomically.
        With K agents per env the pose arrays are ``[E*K]``, env-major (agent ``e*K + k``).

        The built-in per-step components also take ``origin`` ([E] vec3f): with it, positions are
        world-frame and each env's course sits at its origin (e.g. Isaac Lab's env origins)."""
        arrays = self._named_inputs(args, arrays)
        routes = self._route_inputs(arrays)
        changed = self._captured_step and any(
            (c._bound or {}).get(n) is not a for c in self._order for n, a in routes[c.name].items()
        )
        done = []
        try:  # all or nothing: a component that refuses its arrays leaves every binding as it was
            for c in self._order:
                done.append((c, c._bound))
                c.bind(routes[c.name])
        except BaseException:
            for c, prev in done:
                c._bound = prev
            raise
        self._bound = dict(arrays)
        self._bind_ok = True
        if changed and not self._rebind_warned:
            self._rebind_warned = True
            warnings.warn("inputs rebound after a graph recorded course.step(): that graph still reads the old "
                          "arrays; record it again", RebindAfterCaptureWarning, stacklevel=2)

    def _named_inputs(self, args, arrays: dict) -> dict:
        """Positional pose arrays named, and every name checked against the declared inputs."""
        if len(args) > len(POSE_INPUTS):
            raise TypeError(f"bind takes at most {len(POSE_INPUTS)} positional arrays {POSE_INPUTS}")
        for name, arr in zip(POSE_INPUTS, args):
            if name in arrays:
                raise TypeError(f"bind: {name!r} given positionally and by name")
            arrays[name] = arr
        declared = self._ctx._inputs
        gen_inputs = getattr(self.generator, "input_info", {}) or {}
        for name in arrays:
            if name in gen_inputs:
                raise TypeError(
                    f"{name!r} is an input of the generator, not of the components: write "
                    f"course.generator.inputs[{name!r}] in place (e.g. wp.copy into it before regenerating)"
                )
            if name not in declared and name not in POSE_INPUTS:
                raise TypeError(f"bind: unknown input {name!r}; component inputs: {sorted(declared)}")
        return arrays

    def _route_inputs(self, arrays: dict) -> dict[str, dict[str, Any]]:
        """Each component's inputs (its own name, else the spec's default name), validated."""
        routes: dict[str, dict[str, Any]] = {}
        missing = []
        for c in self._order:
            r = {}
            for n, spec in (c.inputs or {}).items():
                arr = arrays.get(n)
                if arr is None and spec.default is not None:
                    arr = arrays.get(spec.default)
                if arr is None:
                    if spec.required:
                        missing.append(f"{c.name}.{n}")
                    continue
                self._check_input(c.name, n, spec, arr)
                r[n] = arr
            routes[c.name] = r
        if missing:
            raise TypeError(
                f"bind: missing required input(s) {missing}; a bind replaces every binding, so pass them all again"
            )
        return routes

    def _check_input(self, comp: str, name: str, spec, arr) -> None:
        if not isinstance(arr, wp.array):
            raise TypeError(f"bind: {name!r} (for {comp!r}) must be a wp.array, got {type(arr).__name__}")
        shape = spec.shape(self.num_envs, self.agents)
        if tuple(arr.shape) != shape:
            rows = ""
            if self.agents > 1:
                rows = (f" (E*K = {self.num_envs}*{self.agents} = {self.num_agents} agent rows, env-major)"
                        if spec.per_agent else f" (one row per env, E = {self.num_envs})")
            raise ValueError(f"bind: {name!r} (for {comp!r}) must have shape {shape}{rows}, got {tuple(arr.shape)}")
        if arr.dtype != spec.dtype:
            raise TypeError(
                f"bind: {name!r} (for {comp!r}) must have dtype {getattr(spec.dtype, '__name__', spec.dtype)}, got "
                f"{getattr(arr.dtype, '__name__', arr.dtype)}"
            )
        if wp.get_device(arr.device) != self.device:
            raise ValueError(f"bind: {name!r} is on {arr.device}, the course on {self.device}; move it")
