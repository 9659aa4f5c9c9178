"""track_gen_isaac: track_gen courses as an Isaac Lab 3.0 extension.

Metadata only for now: the terms, assets and tasks arrive with the Isaac Lab issues.
"""

__version__ = "0.1.0"
