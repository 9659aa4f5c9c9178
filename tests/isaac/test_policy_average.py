"""The averaged policy of a run's last checkpoints (track_gen_isaac.policy_average): the mean against
a float64 numpy reference, which files are averaged, what a run folder resolves to, refusals. The
car's main-job test (test_car_task.py) averages a real run's checkpoints and flies the average."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from track_gen_isaac.main_job import main as main_job
from track_gen_isaac.play import resolve_checkpoint
from track_gen_isaac.policy_average import AVERAGE_NAME, average_checkpoints, average_run, run_checkpoints


def _checkpoint(rng: np.random.Generator, it: int, width: int = 4) -> dict:
    """An rsl_rl-shaped checkpoint: float weights, an int64 counter, optimizer state, iteration."""
    def sd(out: int) -> dict:
        return {"obs_normalizer._mean": torch.tensor(rng.normal(size=(1, 3)), dtype=torch.float32),
                "obs_normalizer.count": torch.tensor(int(rng.integers(1, 1000))),
                "mlp.0.weight": torch.tensor(rng.normal(size=(width, 3)), dtype=torch.float32),
                "mlp.0.bias": torch.tensor(rng.normal(size=width), dtype=torch.float64),
                "mlp.2.weight": torch.tensor(rng.normal(size=(out, width)), dtype=torch.float32)}
    return {"actor_state_dict": sd(2), "critic_state_dict": sd(1), "optimizer_state_dict": {"step": it},
            "iter": it, "infos": None}


def _run(tmp_path, iterations, seed=0) -> dict[int, dict]:
    rng = np.random.default_rng(seed)
    cks = {it: _checkpoint(rng, it) for it in iterations}
    for it, ck in cks.items():
        torch.save(ck, tmp_path / f"model_{it}.pt")
    return cks


def test_the_average_is_the_mean_of_every_float_tensor_and_the_rest_is_the_newest_checkpoints(tmp_path):
    cks = _run(tmp_path, (0, 50, 100, 150))
    out = average_checkpoints([tmp_path / f"model_{it}.pt" for it in (50, 100, 150)], tmp_path / "avg.pt")
    got = torch.load(out, map_location="cpu", weights_only=False)
    for key in ("actor_state_dict", "critic_state_dict"):
        for name, last in cks[150][key].items():
            if last.is_floating_point():
                ref = np.mean([cks[it][key][name].double().numpy() for it in (50, 100, 150)], axis=0)
                assert got[key][name].dtype == last.dtype  # stored in its own dtype
                np.testing.assert_allclose(got[key][name].double().numpy(), ref, rtol=1e-6, atol=1e-7)
            else:  # an integer counter is not averaged: the newest checkpoint's
                assert torch.equal(got[key][name], last)
    assert got["iter"] == 150 and got["optimizer_state_dict"] == {"step": 150}
    assert got["averaged_from"] == ["model_50.pt", "model_100.pt", "model_150.pt"]


def test_a_run_averages_its_newest_checkpoints_by_iteration_and_resolves_to_the_average(tmp_path):
    _run(tmp_path, (0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 600, 650, 699))
    (tmp_path / "model_best.pt").write_bytes(b"not a checkpoint")  # not an iteration: never averaged
    assert [p.name for p in run_checkpoints(tmp_path)][-3:] == ["model_600.pt", "model_650.pt", "model_699.pt"]
    assert resolve_checkpoint(tmp_path).name == "model_699.pt"  # no average yet: the newest
    out = average_run(tmp_path, last=5)
    assert out == tmp_path / AVERAGE_NAME
    got = torch.load(out, map_location="cpu", weights_only=False)
    assert got["averaged_from"] == [f"model_{it}.pt" for it in (500, 550, 600, 650, 699)]
    assert resolve_checkpoint(tmp_path) == out  # a run folder flies its average
    assert resolve_checkpoint(tmp_path / "model_650.pt").name == "model_650.pt"  # a named file is that file
    # averaging again reads model_<it>.pt only, never the earlier average
    assert torch.load(average_run(tmp_path, last=2), weights_only=False)["averaged_from"] == ["model_650.pt",
                                                                                               "model_699.pt"]
    # last=1 removes the average: the run folder flies its newest checkpoint again
    assert average_run(tmp_path, last=1) is None and not out.exists()
    assert resolve_checkpoint(tmp_path).name == "model_699.pt"


def test_a_short_run_averages_what_it_has(tmp_path):
    _run(tmp_path, (0, 1))
    got = torch.load(average_run(tmp_path, last=5), weights_only=False)
    assert got["averaged_from"] == ["model_0.pt", "model_1.pt"]
    (tmp_path / "model_0.pt").unlink()
    assert average_run(tmp_path, last=5) is None and not (tmp_path / AVERAGE_NAME).exists()  # one checkpoint


@pytest.mark.parametrize("last", [0, -1, True, 2.0, "5"])
def test_bad_counts_are_refused(tmp_path, last):
    _run(tmp_path, (0, 1))
    with pytest.raises(ValueError, match="last: expected an integer >= 1"):
        average_run(tmp_path, last=last)


def test_checkpoints_of_different_networks_are_refused_naming_the_file(tmp_path):
    rng = np.random.default_rng(3)
    torch.save(_checkpoint(rng, 0), tmp_path / "model_0.pt")
    torch.save(_checkpoint(rng, 1, width=5), tmp_path / "model_1.pt")
    with pytest.raises(ValueError, match=r"model_0.pt: actor_state_dict\['mlp.0.weight'\] has shape \(4, 3\)"):
        average_run(tmp_path)
    ck = _checkpoint(rng, 2)
    del ck["critic_state_dict"]["mlp.0.bias"]
    torch.save(ck, tmp_path / "model_0.pt")
    torch.save(_checkpoint(rng, 1), tmp_path / "model_1.pt")
    with pytest.raises(ValueError, match="model_0.pt: its critic_state_dict does not have the keys"):
        average_run(tmp_path)
    with pytest.raises(ValueError, match="no checkpoint to average"):
        average_checkpoints([], tmp_path / "x.pt")


def test_a_run_without_checkpoints_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model_<iteration>.pt"):
        average_run(tmp_path)
    with pytest.raises(FileNotFoundError, match="no model_<iteration>.pt"):
        resolve_checkpoint(tmp_path)


def test_the_main_job_refuses_an_average_of_no_checkpoint(capsys):
    with pytest.raises(SystemExit) as exc:
        main_job(["--average", "0"])
    assert exc.value.code == 2 and "--average: expected an integer >= 1" in capsys.readouterr().err
