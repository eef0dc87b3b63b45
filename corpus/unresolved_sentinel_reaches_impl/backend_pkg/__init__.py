from .common import SparseDecodeImplBase
from .flash import FlashSparseImpl

__all__ = ["FlashSparseImpl", "SparseDecodeImplBase"]
