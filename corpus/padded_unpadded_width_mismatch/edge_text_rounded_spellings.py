"""Text-gate shapes: rounded widths spelled in ways an older text prefilter
missed -- a literal ceiling multiple with no `- 1`, a ceiling-division call
other than `cdiv`, a rounding call wrapped in `int(...)` over several lines
and bound to a name, a shape tuple nested in a call, `randn`, a reduction
method, `out =` with blanks. Each is still a whole-width exchange."""

import torch


def literal_multiple(x: torch.Tensor) -> torch.Tensor:
    rows, width = x.shape
    width_up = (width + 127) // 128 * 128
    buf = torch.zeros(rows, width_up, device=x.device)
    buf.copy_(x)  # error: SHD501
    return buf


def ceil_div_call(x: torch.Tensor, step: int) -> torch.Tensor:
    rows, width = x.shape
    buf = torch.zeros(rows, ceil_div(width, step) * step)
    buf += x  # error: SHD501
    return buf


def wrapped_and_bound(x: torch.Tensor) -> torch.Tensor:
    rows, width = x.shape
    width_up = int(
        round_up(width, 64)
    )
    buf = torch.randn(rows, width_up)
    torch.neg(x, out = buf)  # error: SHD501
    return buf


def nested_shape_then_reduce(x: torch.Tensor) -> torch.Tensor:
    rows, width = x.shape
    buf = torch.empty((rows, int(round_up(width, 16))))
    buf[:, :width] = x
    return buf.max()  # error: SHD501
