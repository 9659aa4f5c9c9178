"""track_gen_isaac: track_gen courses as an Isaac Lab 3.0 extension.

* :class:`CourseCfg` (``track_gen_isaac.course_cfg``): declare a course on an env cfg.
* :func:`get_course` (``track_gen_isaac.env_course``): the env's course, built once per env instance,
  bound zero-copy to a scene entity's root pose buffers.
* ``track_gen_isaac.mdp``: observation, reward, termination, event and curriculum terms.

Imports are lazy, so ``import track_gen_isaac`` does not import Isaac Lab.
"""

__version__ = "0.1.0"

_LAZY = {
    "CourseCfg": ("track_gen_isaac.course_cfg", "CourseCfg"),
    "DepthCameraCfg": ("track_gen_isaac.course_cfg", "DepthCameraCfg"),
    "EnvCourse": ("track_gen_isaac.env_course", "EnvCourse"),
    "get_course": ("track_gen_isaac.env_course", "get_course"),
    "global_rank": ("track_gen_isaac.env_course", "global_rank"),
}

__all__ = ["CourseCfg", "DepthCameraCfg", "EnvCourse", "get_course", "global_rank", "__version__"]


def __getattr__(name):
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'track_gen_isaac' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value
