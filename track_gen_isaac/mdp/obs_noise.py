"""Counter-based observation noise, the same in both runtimes.

Isaac Lab's ``ObservationTermCfg.noise`` draws from torch's generator in the stable runtime and from
Warp's in the warp runtime, so the two runtimes would see different noise. The racer's observation
terms (:mod:`track_gen_isaac.mdp.racer_observations`) instead add zero-mean Gaussian noise from a
counter-based generator keyed by (seed, env, the env's episode count, the term's calls since that
env's reset, column): a pure function of the env's history, so both runtimes and any replayed
graph draw the same numbers, and an env's draws do not depend on which other envs reset.
"""

from __future__ import annotations

import zlib

import numpy as np
import torch
import warp as wp

__all__ = ["ObsNoise", "check_std"]

wp.set_module_options({"enable_backward": False})


def check_std(name: str, value) -> float:
    """A standard deviation parameter: a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name}: expected a finite number >= 0, got {value!r}")
    return float(value)


@wp.kernel
def obs_noise_kernel(seed: int, std: wp.array(dtype=wp.float32), episode: wp.array(dtype=wp.int32),
                     calls_out: wp.array(dtype=wp.int32), obs_out: wp.array2d(dtype=wp.float32)):
    """out[e, j] += std[j] * N(0, 1), keyed by (seed, e, episode[e], calls[e], j); then calls[e] += 1."""
    e = wp.tid()
    D = obs_out.shape[1]
    s = wp.rand_init(seed + e * 7919 + episode[e] * 104729, calls_out[e] * D)
    for j in range(D):
        n = wp.randn(s)
        obs_out[e, j] = obs_out[e, j] + std[j] * n
    calls_out[e] = calls_out[e] + 1


@wp.kernel
def obs_noise_reset_kernel(mask: wp.array(dtype=wp.bool), episode_out: wp.array(dtype=wp.int32),
                           calls_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if mask[e]:
        episode_out[e] = episode_out[e] + 1
        calls_out[e] = 0


class ObsNoise:
    """Per-column Gaussian noise for one observation term (``std``: [D] host values; all zero: off)."""

    def __init__(self, std, num_envs: int, device, seed: int | None, salt: str):
        std = np.asarray(std, np.float32).reshape(-1)
        self.enabled = bool((std > 0).any())
        self.num_envs = int(num_envs)
        self.device = device
        self.seed = (int(seed or 0) * 1000003 + zlib.crc32(salt.encode())) % (2**31 - 1)
        self.std = wp.array(std, dtype=wp.float32, device=device)
        self.episode = wp.zeros(num_envs, dtype=wp.int32, device=device)
        self.calls = wp.zeros(num_envs, dtype=wp.int32, device=device)
        self._mask_t = torch.zeros(num_envs, dtype=torch.bool, device=device)
        self._mask = wp.from_torch(self._mask_t, dtype=wp.bool)

    def apply(self, out: wp.array) -> None:
        if self.enabled:
            wp.launch(obs_noise_kernel, dim=self.num_envs, inputs=[self.seed, self.std, self.episode],
                      outputs=[self.calls, out], device=self.device)

    def reset(self, env_mask: wp.array | None = None, env_ids=None) -> None:
        """Masked envs (``env_mask``; else ``env_ids``, None: all) start a new noise episode."""
        if env_mask is None:
            if env_ids is None or (isinstance(env_ids, slice) and env_ids == slice(None)):
                self._mask_t.fill_(True)
            else:
                self._mask_t.zero_()
                self._mask_t[torch.as_tensor(env_ids, device=self._mask_t.device, dtype=torch.long)] = True
            env_mask = self._mask
        wp.launch(obs_noise_reset_kernel, dim=self.num_envs, inputs=[env_mask], outputs=[self.episode, self.calls],
                  device=self.device)
