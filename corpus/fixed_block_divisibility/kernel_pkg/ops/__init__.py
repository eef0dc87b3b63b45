from .tiles import tiled_quant_kernel

__all__ = ["tiled_quant_kernel"]
