"""A playback's numbers as ``summary.json`` and a readable ``summary.md`` table.

- :func:`write_summary`: write both files; :data:`SUMMARY_KEYS`: the keys it knows, in table order.
"""

from __future__ import annotations

import json
import math
import numbers
import pathlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from track_gen_isaac.report.scalars import PathLike

__all__ = ["write_summary", "SUMMARY_KEYS"]

#: Keys :func:`write_summary` expects (each optional; extras are kept), in table order.
SUMMARY_KEYS: dict[str, str] = {
    "task": "registered task id",
    "checkpoint": "the model_<it>.pt played back",
    "num_envs": "parallel envs",
    "steps": "env steps per env played back",
    "episodes": "finished episodes, all envs",
    "gates_per_episode": "mean gates passed per finished episode",
    "gates_per_episode_max": "most gates passed in one episode",
    "lap_rate": "fraction of episodes that completed a lap",
    "crash_rate": "fraction of episodes ended by a crash (terminated)",
    "timeout_rate": "fraction of episodes ended by the time limit",
    "env_steps_per_s": "playback throughput, all envs [env steps/s]",
}
_RATE_KEYS = ("lap_rate", "crash_rate", "timeout_rate")


def _round(x: float) -> float | None:
    """6 significant digits; NaN/inf become None (JSON has no such numbers)."""
    if not math.isfinite(x):
        return None
    return float(f"{x:.6g}")


def _plain(value: Any, where: str) -> Any:
    """JSON-ready copy: numpy scalars/arrays and tensors to Python, floats rounded."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        value = value.item() if value.ndim == 0 else value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _round(float(value))
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{j}]") for j, v in enumerate(value)]
    raise TypeError(f"{where}: cannot write a {type(value).__name__} to JSON")


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value).replace("|", "\\|")


def write_summary(out_dir: PathLike, stats: Mapping[str, Any]) -> tuple[pathlib.Path, pathlib.Path]:
    """Write a playback's numbers as ``summary.json`` and a readable ``summary.md`` table.

    ``stats`` holds any of :data:`SUMMARY_KEYS` (task, checkpoint, num_envs, steps, episodes,
    gates_per_episode, gates_per_episode_max, lap_rate, crash_rate, timeout_rate,
    env_steps_per_s) plus any extra keys, and optionally ``"baselines": {name: {key: value}}``
    (e.g. ``"zero"`` and ``"random"`` actions), which become extra columns next to the policy's.

    Floats are rounded to 6 significant digits (NaN/inf written as null); numpy and torch values
    become plain Python numbers or lists.

    Returns:
        ``(summary.json, summary.md)`` paths.

    Raises:
        TypeError: ``stats`` or a baseline is not a dict, or a value cannot be written to JSON.
        ValueError: a rate (``lap_rate``, ``crash_rate``, ``timeout_rate``) is outside [0, 1].
    """
    if not isinstance(stats, Mapping):
        raise TypeError(f"stats must be a dict, got {type(stats).__name__}")
    data = _plain(dict(stats), "stats")
    baselines = data.pop("baselines", None) or {}
    if not isinstance(baselines, dict) or not all(isinstance(b, dict) for b in baselines.values()):
        raise TypeError(f"stats['baselines'] must be {{name: {{key: value}}}}, got {stats.get('baselines')!r}")
    for name, d in [("policy", data), *baselines.items()]:
        for key in _RATE_KEYS:
            v = d.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} {key} must be a fraction in [0, 1], got {v}")

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "summary.json", out / "summary.md"
    full = dict(data, baselines=baselines) if baselines else data
    json_path.write_text(json.dumps(full, indent=2) + "\n")

    keys = [k for k in SUMMARY_KEYS if k in data or any(k in b for b in baselines.values())]
    keys += [k for k in data if k not in keys]
    for b in baselines.values():
        keys += [k for k in b if k not in keys]
    cols = ["policy", *baselines]
    title = data.get("task") or "playback"
    lines = [f"# Playback summary: {_cell(title)}", ""]
    if data.get("checkpoint") is not None:
        lines += [f"checkpoint: `{data['checkpoint']}`", ""]
    lines.append("| metric | " + " | ".join(cols) + " |")
    lines.append("|---|" + "---:|" * len(cols))
    for k in keys:
        row = [_cell(data.get(k))] + [_cell(b.get(k)) for b in baselines.values()]
        lines.append(f"| {k} | " + " | ".join(row) + " |")
    md_path.write_text("\n".join(lines) + "\n")
    return json_path, md_path
