"""Sphinx configuration of the track_gen docs (offline: no intersphinx, no downloads)."""

from __future__ import annotations

project = "track_gen"
author = "track_gen developers"
copyright = "track_gen developers"
release = version = "0.1"

extensions: list[str] = []  # prose pages; built-in Sphinx only, nothing fetched from the network
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []
nitpicky = False
highlight_language = "python"
pygments_style = "sphinx"

html_theme = "alabaster"
html_static_path = ["_static"]
html_title = "track_gen"
html_theme_options = {
    "description": "Procedural race courses for massively parallel RL on NVIDIA Warp",
    "fixed_sidebar": True,
    "page_width": "1100px",
}
