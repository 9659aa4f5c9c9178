"""The graphs a course records of its own regeneration: one per ``(advance, mask array)`` variant,
recorded the first time it is called outside a capture and replayed after (Warp records CPU
graphs too). Kept apart from the course, as Newton keeps allocation apart from the work: the course
owns the regeneration body, :class:`RegenerationGraphs` only records and replays it."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import warp as wp

from track_gen.exec import on_stream

__all__ = ["MAX_GRAPH_VARIANTS", "RegenerationGraphs"]

#: graphs a course records besides ``course.graph``; further variants run eagerly
MAX_GRAPH_VARIANTS = 16


class RegenerationGraphs:
    """A course's recorded regeneration variants, by ``(advance, id(mask) or None)``.

    Args:
        run_body: ``run_body(advance, mask)`` enqueues the regeneration body on the current stream.
        stream: the stream it is recorded and replayed on (None: the current one).
        device: the course's device.
    """

    def __init__(self, run_body: Callable[[bool, Any], None], stream, device):
        self._run_body = run_body
        self.stream = stream
        self.device = device
        self.graphs: dict[tuple, Any] = {}
        self._refs: dict[tuple, Any] = {}  # keeps each mask array (and so its id) alive
        self._variant_warned = False

    @property
    def main(self):
        """The graph of ``regenerate()`` (None until first recorded)."""
        return self.graphs.get((False, None))

    def run(self, advance: bool, mask) -> None:
        """Replay the variant's graph, recording it first; past :data:`MAX_GRAPH_VARIANTS` variants
        besides ``course.graph``, run the body eagerly (with one ``RuntimeWarning``)."""
        key = (bool(advance), None if mask is None else id(mask))
        graph = self.graphs.get(key)
        if graph is None:
            variants = sum(1 for k in self.graphs if k != (False, None))
            if key != (False, None) and variants >= MAX_GRAPH_VARIANTS:
                if not self._variant_warned:
                    self._variant_warned = True
                    warnings.warn(
                        f"this course already holds {MAX_GRAPH_VARIANTS} regeneration graphs besides course.graph; "
                        f"further (advance, mask) variants run eagerly. Reuse the same mask array",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                with on_stream(self.stream, self.device):
                    self._run_body(advance, mask)
                return
            graph = self._record(advance, mask)
            self.graphs[key] = graph
            self._refs[key] = mask
        with on_stream(self.stream, self.device):  # replayed on the course's stream, joined back
            wp.capture_launch(graph)

    def _record(self, advance, mask):
        # The course's stream becomes the current one *before* the capture begins on it: a capture
        # on a stream that is not current records nothing (every launch, capture_if included, goes
        # to the current stream and runs at record time).
        with on_stream(self.stream, self.device), wp.ScopedCapture(device=self.device) as cap:
            self._run_body(advance, mask)
        return cap.graph
