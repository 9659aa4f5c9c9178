"""One policy from a run's last checkpoints: the element-wise mean of their weights.

Late in a PPO run the policy keeps moving: consecutive checkpoints of one run (50 iterations
apart) fail different courses, and which of them happens to be the last decides much of a
benchmark number (the car task: 0.50 to 0.78 of the validation courses between two checkpoints 50
iterations apart). The checkpoints of the end of one run lie close together on one training path,
so the mean of their weights is itself a good policy -- stochastic weight averaging (Izmailov et
al., "Averaging Weights Leads to Wider Optima and Better Generalization", UAI 2018) applied after
the fact -- and in our measurements a steadier one than any one of them
(``docs/isaac/car-racing.rst``, "Averaged checkpoints").

:func:`average_run` writes ``<run>/model_average.pt`` (rsl_rl's checkpoint layout: the mean of
every floating-point tensor of the actor and critic state dicts, observation normalizers
included; integer tensors, the optimizer state and ``iter`` from the newest checkpoint; the names
of the averaged files under ``averaged_from``). :func:`track_gen_isaac.play.resolve_checkpoint`
picks that file for a run folder when it exists, so playback and evaluation of a run fly the
average; name a ``model_<it>.pt`` to fly one checkpoint.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["AVERAGE_NAME", "STATE_DICTS", "run_checkpoints", "average_checkpoints", "average_run"]

#: the averaged policy's file name in a run folder
AVERAGE_NAME = "model_average.pt"
#: the state dicts of an rsl_rl checkpoint whose floating-point tensors are averaged
STATE_DICTS = ("actor_state_dict", "critic_state_dict")


def run_checkpoints(run_dir: str | Path) -> list[Path]:
    """The run folder's ``model_<iteration>.pt`` files, oldest first (by iteration)."""
    found = []
    for p in Path(run_dir).glob("model_*.pt"):
        tail = p.stem.split("_", 1)[1]
        if tail.isdigit():
            found.append((int(tail), p))
    return [p for _, p in sorted(found)]


def average_checkpoints(paths, out: str | Path) -> Path:
    """Write the mean of the checkpoints ``paths`` (rsl_rl files with the same networks) to ``out``.

    Every floating-point tensor of :data:`STATE_DICTS` is averaged in float64 and stored in its
    own dtype; everything else comes from the last file. ValueError, naming the file, when a file
    lacks a state dict of the first or its keys or shapes differ."""
    import torch

    paths = [Path(p) for p in paths]
    if not paths:
        raise ValueError("average_checkpoints: no checkpoint to average")
    loaded = [torch.load(p, map_location="cpu", weights_only=False) for p in paths]
    ref = loaded[-1]
    merged = dict(ref)
    for key in STATE_DICTS:
        if key not in ref:
            continue
        sd = ref[key]
        for path, ck in zip(paths, loaded):
            other = ck.get(key) if isinstance(ck, dict) else None
            if other is None or set(other) != set(sd):
                raise ValueError(f"{path}: its {key} does not have the keys of {paths[-1].name}'s")
            bad = [k for k, v in sd.items() if torch.is_tensor(v) and tuple(other[k].shape) != tuple(v.shape)]
            if bad:
                raise ValueError(f"{path}: {key}[{bad[0]!r}] has shape {tuple(other[bad[0]].shape)}, "
                                 f"{paths[-1].name}'s {tuple(sd[bad[0]].shape)}")
        merged[key] = {k: (torch.stack([ck[key][k].double() for ck in loaded]).mean(0).to(v.dtype)
                           if torch.is_tensor(v) and v.is_floating_point() else v)
                       for k, v in sd.items()}
    merged["averaged_from"] = [p.name for p in paths]
    out = Path(out)
    torch.save(merged, out)
    return out


def average_run(run_dir: str | Path, last: int = 5) -> Path | None:
    """Average the run's newest ``last`` checkpoints into ``<run_dir>/model_average.pt``; a run with
    fewer averages what it has. ``last`` 1 (or a run of one checkpoint) writes nothing and removes
    an earlier average, so the run folder resolves to its newest checkpoint; returns the file
    written, or None."""
    if isinstance(last, bool) or not isinstance(last, int) or last < 1:
        raise ValueError(f"last: expected an integer >= 1 (checkpoints to average), got {last!r}")
    run_dir = Path(run_dir)
    models = run_checkpoints(run_dir)
    if not models:
        raise FileNotFoundError(f"no model_<iteration>.pt in {run_dir}")
    target = run_dir / AVERAGE_NAME
    chosen = models[-last:]
    if len(chosen) < 2:
        target.unlink(missing_ok=True)
        return None
    return average_checkpoints(chosen, target)
