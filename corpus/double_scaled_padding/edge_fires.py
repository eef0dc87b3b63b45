"""The same mistake across functions, in place, and with an element size."""

import torch
from vllm.distributed import get_tensor_model_parallel_world_size


class PaddedLoader:
    def __init__(self, tp_size: int) -> None:
        self.tp_size = tp_size

    def _row_padding(self, rows: int, align: int) -> int:
        pad = -(rows // self.tp_size) % align
        return pad * self.tp_size

    def padded_rows(self, rows: int, align: int) -> int:
        return rows + self._row_padding(rows, align) * self.tp_size  # error: SHD503

    def narrow_shard(self, param: torch.Tensor, tp_rank: int, extra_pad: int) -> torch.Tensor:
        shard = param.shape[0] // self.tp_size
        return param.narrow(0, tp_rank * shard, shard + extra_pad * self.tp_size)

    def load(self, param: torch.Tensor, rows: int, align: int, tp_rank: int) -> torch.Tensor:
        pad_all = (-(rows // self.tp_size) % align) * self.tp_size
        return self.narrow_shard(param, tp_rank, pad_all)  # error: SHD503


def byte_delta(src: torch.Tensor, dst: torch.Tensor, n_pad: int) -> int:
    delta_bytes = n_pad * src.element_size()
    return dst.data_ptr() + delta_bytes * src.element_size()  # error: SHD503


def sglang_style(hidden: int, align: int) -> int:
    world = get_tensor_model_parallel_world_size()
    hidden_pad = (-hidden % align) * world
    hidden_pad *= get_tensor_model_parallel_world_size()  # error: SHD503
    return hidden + hidden_pad
