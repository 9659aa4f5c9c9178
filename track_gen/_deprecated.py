"""Old module paths that keep working for one release, with a ``DeprecationWarning``.

The modules moved (no file is left at the old path), so an import hook on ``sys.meta_path``
resolves each old name to the new module itself: ``import track_gen.min_time`` warns once (the
first import; later ones hit ``sys.modules``) and gives ``track_gen.reference.lap``, the same
module object, so classes, functions and module state are shared.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    "track_gen.min_time": "track_gen.reference.lap",
    "track_gen.min_time_path": "track_gen.reference.path",
    "track_gen.min_time_spline": "track_gen.reference.spline",
    "track_gen.min_time_grad": "track_gen.reference.gradient",
}


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name as the module at its new path (imported, not copied) and warns."""

    def __init__(self, new: str):
        self.new = new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # stacklevel 2 names the importing line: warnings skips the import machinery's frames
        warnings.warn(f"{spec.name} moved to {self.new}; the old path goes away in the next release",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set the alias's spec on the module: give it its own back
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED` (and nothing else)."""

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
