"""Old module paths (track_gen.min_time*) keep working for one release: same module, a DeprecationWarning."""

import importlib
import sys
import warnings

import pytest

import track_gen
from track_gen._deprecated import MOVED


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_old_path_is_the_new_module_and_warns(old, new, monkeypatch):
    module = importlib.import_module(new)
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        alias = importlib.import_module(old)
    assert alias is module
    assert module.__name__ == new and module.__spec__.name == new  # the new module keeps its own identity
    assert sys.modules[old] is module
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # later imports hit sys.modules: no second warning
        assert importlib.import_module(old) is module


def test_from_imports_of_old_paths(monkeypatch):
    for old in MOVED:  # as if never imported: no module cached, no attribute on the package
        monkeypatch.delitem(sys.modules, old, raising=False)
        monkeypatch.delattr(track_gen, old.rpartition(".")[2], raising=False)
    with pytest.warns(DeprecationWarning):
        from track_gen.min_time import VehicleLimits, reference_laps
        from track_gen.min_time_path import path_reference_laps
    from track_gen.reference.lap import VehicleLimits as new_limits, reference_laps as new_laps
    from track_gen.reference.path import path_reference_laps as new_path
    assert (VehicleLimits, reference_laps, path_reference_laps) == (new_limits, new_laps, new_path)
    with pytest.warns(DeprecationWarning, match="track_gen.min_time_grad moved"):
        from track_gen import min_time_grad
    assert min_time_grad is importlib.import_module("track_gen.reference.gradient")


def test_no_min_time_module_left_and_unknown_names_still_fail():
    from pathlib import Path
    assert not list(Path(track_gen.__file__).parent.glob("min_time*.py"))
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("track_gen.min_time_nothing")
