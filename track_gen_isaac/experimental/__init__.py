"""track_gen_isaac for Isaac Lab's warp-first runtime (``ManagerBasedRLEnvWarp``).

``track_gen_isaac.experimental.mdp`` holds the warp twins of ``track_gen_isaac.mdp``: the same
names and parameters, with the warp managers' signatures (``out`` arrays, ``env_mask``), every
term a fixed list of Warp launches so its manager stage can be recorded once and replayed.

:func:`register_warp_frontend` (called once, below, when this package is imported; importing
``track_gen_isaac.mdp`` or ``track_gen_isaac.experimental.mdp`` imports it)
declares the twins to Isaac Lab's :class:`~isaaclab_experimental.envs.frontend.WarpFrontend` the
way Isaac Lab declares its own: ``MIRROR_ROOTS["track_gen_isaac"] = "track_gen_isaac.experimental"``
(``track_gen_isaac.mdp.X`` is mirrored to ``track_gen_isaac.experimental.mdp.X``) and
``"track_gen_isaac.experimental"`` among ``WARP_ROOT_PREFIXES`` (symbols defined there are
warp-origin). Both are class attributes the frontend reads at call time, so no Isaac Lab code is
patched. A stable env cfg with ``track_gen_isaac.mdp`` terms then runs in
``ManagerBasedRLEnvWarp`` (and ``isaaclab train --frontend warp``) with its terms swapped to
these twins; a cfg may also name the twins directly.
"""

from __future__ import annotations

#: the package the stable terms live in, and the package of their warp twins
STABLE_ROOT = "track_gen_isaac"
WARP_ROOT = "track_gen_isaac.experimental"


def register_warp_frontend() -> bool:
    """Declare the warp twins to ``WarpFrontend`` (idempotent). False when Isaac Lab's experimental
    package is not importable (then there is no warp runtime to declare them to)."""
    try:
        from isaaclab_experimental.envs.frontend import WarpFrontend
    except ImportError:  # pragma: no cover - isaaclab_experimental ships with isaaclab 3.0
        return False
    if WarpFrontend.MIRROR_ROOTS.get(STABLE_ROOT) != WARP_ROOT:
        WarpFrontend.MIRROR_ROOTS = {**WarpFrontend.MIRROR_ROOTS, STABLE_ROOT: WARP_ROOT}
    if WARP_ROOT not in WarpFrontend.WARP_ROOT_PREFIXES:
        WarpFrontend.WARP_ROOT_PREFIXES = (*WarpFrontend.WARP_ROOT_PREFIXES, WARP_ROOT)
    return True


register_warp_frontend()
