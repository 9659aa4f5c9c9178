"""Course components: the contract (:class:`Component`, :class:`InputSpec`) and the built-ins."""

from track_gen.tools.component import Component, InputSpec

__all__ = ["Component", "InputSpec"]
