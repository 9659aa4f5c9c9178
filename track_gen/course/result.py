"""StepResult: what ``course.step()`` returns (the same instance every call)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import warp as wp

__all__ = ["StepResult"]

# The fields that are entries, and the component names they stand for.
FIELD_ENTRIES = {"events": "progress", "contacts": "collision", "frame": "localizer"}


@dataclass
class StepResult:
    """Per-step results: four fields plus read-only access to every per-step entry by name.

    ``events`` is ``res["progress"]``, ``contacts`` ``res["collision"]``, ``frame``
    ``res["localizer"]`` (None when absent); ``valid`` is the generator's live ``[E]`` int32 valid
    array. It behaves like a dataclass (``fields``, ``==``, ``replace``, repr), not like a
    ``Mapping``: ``iter(res)`` raises (use ``keys()`` / ``items()``), but ``res[name]``, ``in``,
    ``get``, ``**res`` and ``dict(res.items())`` work.
    """

    events: Any = None
    contacts: Any = None
    frame: Any = None
    valid: Any = None

    __iter__ = None  # not iterable: a mapping-like view would hide that this is a dataclass

    def __post_init__(self) -> None:
        entries = {}
        for f, name in FIELD_ENTRIES.items():
            v = getattr(self, f)
            if v is not None:
                entries[name] = v
        object.__setattr__(self, "_entries", entries)

    def __setattr__(self, key: str, value: Any) -> None:
        object.__setattr__(self, key, value)
        name = FIELD_ENTRIES.get(key)
        if name is not None and "_entries" in self.__dict__:
            # a new dict, never an edit in place: copy.copy(res) shares the dict with res, and
            # assigning a field changes that instance only
            entries = dict(self._entries)
            if value is None:
                entries.pop(name, None)
            else:
                entries[name] = value
            object.__setattr__(self, "_entries", entries)

    def _set_entries(self, entries: dict[str, Any]) -> None:
        object.__setattr__(self, "_entries", dict(entries))

    # -- read-only mapping access ----------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a per-step entry; entries: {list(self._entries)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def keys(self):
        return self._entries.keys()

    def items(self):
        return self._entries.items()

    def values(self):
        return self._entries.values()

    def get(self, name: str, default: Any = None) -> Any:
        return self._entries.get(name, default)

    def __bool__(self) -> bool:
        return True

    # -- copies --------------------------------------------------------------------------------
    def clone(self) -> "StepResult":
        """A deep copy of every entry and of ``valid`` (allocates: call it outside your graph)."""
        copies = {name: _clone(name, v) for name, v in self._entries.items()}
        out = StepResult(
            **{f: copies.get(name) for f, name in FIELD_ENTRIES.items()},
            valid=None if self.valid is None else _clone("valid", self.valid),
        )
        out._set_entries(copies)
        return out


def _clone(name: str, value: Any) -> Any:
    if isinstance(value, wp.array):
        return wp.clone(value)
    if hasattr(value, "clone") and callable(value.clone):
        return value.clone()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if isinstance(v, wp.array):
                changes[f.name] = wp.clone(v)
        return dataclasses.replace(value, **changes)
    raise TypeError(
        f"StepResult.clone: cannot copy the entry of component {name!r} ({type(value).__name__}); give its "
        f"result a clone() method or make it a dataclass of wp.arrays"
    )
