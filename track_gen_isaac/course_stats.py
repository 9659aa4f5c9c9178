"""Per-episode course statistics in ``env.extras["log"]``, the way Isaac Lab logs ``Episode_Reward/*``.

For the envs that reset, the mean over them of what each episode reached:

* ``Episode_Course/checkpoints``: checkpoints (gates) passed in the episode (``events.total``);
* ``Episode_Course/laps``: laps completed (a finished sprint counts as one; ``events.laps``);
* ``Episode_Course/progress_m``: distance travelled along the course [m] (``events.progress``).

How (no host sync, in both runtimes):

* **every course step** one kernel (:func:`snapshot_kernel`) copies those three per-env values into
  the course's own ``[E, 3]`` snapshot, right after the step: a reset event zeroes the progress
  state before the managers log, the snapshot keeps the episode's last values;
* **at a reset** one masked kernel sums the snapshot rows of the reset envs (and zeroes them, so
  an env reset twice without a step in between logs zeros), a one-thread kernel divides by their
  count into a ``[3]`` float32 array of means (0 when no env is masked). Stable runtime: a torch
  copy of it goes into ``env.extras["log"]`` (fresh tensors each reset, as the reward manager
  does); warp runtime: persistent 0-d views of it are returned by the course's *stats term*
  (the first course reward term; Isaac Lab's warp reward manager merges a class term's reset
  extras into its log), replayed inside the recorded reset stage.

Lap times are not logged: the core's progress component does not time laps.
"""

from __future__ import annotations

import torch
import warp as wp

__all__ = ["EpisodeStats", "STAT_KEYS", "snapshot_kernel", "reduce_kernel", "mean_kernel"]

wp.set_module_options({"enable_backward": False})

#: the ``extras["log"]`` keys, in the order of the snapshot's columns
STAT_KEYS = ("Episode_Course/checkpoints", "Episode_Course/laps", "Episode_Course/progress_m")
K = len(STAT_KEYS)


@wp.kernel
def snapshot_kernel(total: wp.array(dtype=wp.int32), laps: wp.array(dtype=wp.int32),
                    progress: wp.array(dtype=wp.float32), snapshot_out: wp.array2d(dtype=wp.float32)):
    """The episode so far of every env: checkpoints passed, laps, progress [m]."""
    e = wp.tid()
    snapshot_out[e, 0] = float(total[e])
    snapshot_out[e, 1] = float(laps[e])
    snapshot_out[e, 2] = progress[e]


@wp.kernel
def reduce_kernel(mask: wp.array(dtype=wp.bool), snapshot_out: wp.array2d(dtype=wp.float32),
                  sums_out: wp.array(dtype=wp.float32)):
    """``sums = [count, sum of each column]`` over the masked envs, whose rows are then zeroed."""
    e = wp.tid()
    if not mask[e]:
        return
    wp.atomic_add(sums_out, 0, 1.0)
    for k in range(snapshot_out.shape[1]):
        wp.atomic_add(sums_out, k + 1, snapshot_out[e, k])
        snapshot_out[e, k] = 0.0


@wp.kernel
def mean_kernel(sums: wp.array(dtype=wp.float32), means_out: wp.array(dtype=wp.float32)):
    """``means[k] = sums[k + 1] / sums[0]`` (0 without a masked env)."""
    n = sums[0]
    for k in range(means_out.shape[0]):
        v = float(0.0)
        if n > 0.0:
            v = sums[k + 1] / n
        means_out[k] = v


class EpisodeStats:
    """The snapshot, the reduction and the log entries of one env course (``EnvCourse.stats``)."""

    def __init__(self, num_envs: int, device: str):
        self.num_envs, self.device = int(num_envs), device
        self.snapshot = wp.zeros((self.num_envs, K), dtype=wp.float32, device=device)
        self.mask = wp.zeros(self.num_envs, dtype=wp.bool, device=device)
        self.sums = wp.zeros(K + 1, dtype=wp.float32, device=device)
        self.means = wp.zeros(K, dtype=wp.float32, device=device)
        self._means_t = wp.to_torch(self.means)
        self._mask_t = wp.to_torch(self.mask)
        self.views = {key: self._means_t[i] for i, key in enumerate(STAT_KEYS)}
        self._logged_into = None  # stable runtime: the log dict last written (one reduction per reset)

    def snapshot_events(self, events) -> None:
        """After a course step: the episode so far of every env into :attr:`snapshot`. Recordable."""
        wp.launch(snapshot_kernel, dim=self.num_envs, inputs=[events.total, events.laps, events.progress],
                  outputs=[self.snapshot], device=self.device)

    def reduce(self, mask: wp.array) -> None:
        """The means over the envs of the [E] bool ``mask`` into :attr:`means`; their rows zeroed. Recordable."""
        self.sums.zero_()
        wp.launch(reduce_kernel, dim=self.num_envs, inputs=[mask], outputs=[self.snapshot, self.sums],
                  device=self.device)
        wp.launch(mean_kernel, dim=1, inputs=[self.sums], outputs=[self.means], device=self.device)

    def log_stable(self, env, env_ids) -> None:
        """Stable runtime, from a course term's ``reset(env_ids)``: reduce over ``env_ids`` and write
        the means into ``env.extras["log"]``, once per reset (the log dict is new at every reset)."""
        log = getattr(env, "extras", {}).get("log")
        if not isinstance(log, dict) or log is self._logged_into:
            return
        self._logged_into = log
        m = self._mask_t
        if env_ids is None or isinstance(env_ids, slice):
            m.zero_()
            m[slice(None) if env_ids is None else env_ids] = True
        else:
            ids = torch.as_tensor(env_ids, device=m.device)
            m.zero_()
            if ids.numel():
                m.index_fill_(0, ids.to(torch.long).reshape(-1), True)
        self.reduce(self.mask)
        means = self._means_t.clone()
        log.update({key: means[i] for i, key in enumerate(STAT_KEYS)})
