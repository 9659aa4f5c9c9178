"""The default device of the Isaac Lab side: ``cuda:0`` when torch sees a GPU, else ``cpu``."""

from __future__ import annotations

__all__ = ["default_device"]


def default_device() -> str:
    """cuda:0 when torch sees a GPU, else cpu (torch is imported on call, not with this module)."""
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"
