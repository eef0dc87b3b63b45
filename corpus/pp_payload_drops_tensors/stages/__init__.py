from .backbone import StageBackbone

__all__ = ["StageBackbone"]
