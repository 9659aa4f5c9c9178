"""The checks and the order of a course's components, before anything is attached.

Used by ``Course.__init__`` and by the presets (which check ``extra`` together with their own
components before building a generator). Depends on nothing else of the course package.
"""

from __future__ import annotations

from collections.abc import Sequence

from track_gen.tools.component import HOOKS, Component

__all__ = ["check_components", "sort_components"]


def sort_components(components: Sequence) -> list:
    """Stable topological order over ``after`` / ``source`` names.

    Among components whose dependencies are met, the earliest in the given order runs first, so
    an already-ordered list is kept as is. Raises ValueError on an unknown name or a cycle.
    """
    names = [c.name for c in components]
    index = {n: i for i, n in enumerate(names)}
    deps: list[set[int]] = []
    for c in components:
        d = set()
        wanted = list(getattr(c, "after", ()) or ())
        if getattr(c, "source", None) is not None:
            wanted.append(c.source)
        for n in wanted:
            if n not in index:
                raise ValueError(
                    f"component {c.name!r} names {n!r} in after/source, but the course has no such component; "
                    f"components: {names}"
                )
        for n in wanted:
            if index[n] == index[c.name]:
                raise ValueError(f"component {c.name!r} cannot run after itself")
            d.add(index[n])
        deps.append(d)
    done: list[int] = []
    placed: set[int] = set()
    while len(done) < len(components):
        ready = [i for i in range(len(components)) if i not in placed and deps[i] <= placed]
        if not ready:
            cycle = [names[i] for i in range(len(components)) if i not in placed]
            raise ValueError(f"components {cycle} form a cycle through after/source; break it")
        done.append(ready[0])
        placed.add(ready[0])
    return [components[i] for i in done]


def check_components(components) -> list:
    """Check a sequence of components (names, hooks, not attached yet), then sort it.

    Raises before anything is attached: TypeError for a non-sequence, a bad name or a missing
    hook; ValueError for a duplicate name, an attached component, an unknown after/source or a cycle.
    """
    if isinstance(components, Component) or not isinstance(components, Sequence) or isinstance(components, str):
        raise TypeError(
            f"components must be a sequence of components, got {type(components).__name__}; wrap a single one: [c]"
        )
    comps = list(components)
    seen: set[str] = set()
    for c in comps:
        name = getattr(c, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"component {c!r}: name must be a non-empty str, got {name!r}")
        if name in seen:
            raise ValueError(f"two components are named {name!r}; names are unique within a course")
        seen.add(name)
        lacking = [h for h in HOOKS if not callable(getattr(c, h, None))]
        if lacking:
            raise TypeError(
                f"component {name!r} lacks {lacking}; subclass track_gen.tools.Component for the default hooks"
            )
        if getattr(c, "_context", None) is not None:
            raise ValueError(
                f"component {name!r} is already attached to another course or context; build a new instance"
            )
    return sort_components(comps)
