from .kernels import fused_scale_kernel, tile_norm_kernel

__all__ = ["fused_scale_kernel", "tile_norm_kernel"]
