"""Gate shape: the definition gate asks for a padded width's spelling; each
spelling below must still reach the rule (mixed case, a floor spread over
lines with a comment, the product on the floor's left, a parenthesised
rounding function)."""

import torch


def mixed_case(grid: torch.Tensor, Cols_PaDDed: int) -> torch.Tensor:
    rows, cols = grid.shape
    tile = torch.zeros(rows, Cols_PaDDed)
    tile.add_(grid)  # error: SHD501
    return tile


def floor_over_lines(grid: torch.Tensor, step: int) -> torch.Tensor:
    rows, cols = grid.shape
    wide = (cols + step - 1) \
        //  step * step  # rounded up to the step
    tile = torch.empty(rows, wide)
    tile.copy_(grid)  # error: SHD501
    return tile


def product_on_the_left(grid: torch.Tensor, step: int) -> torch.Tensor:
    rows, cols = grid.shape
    tile = torch.zeros(rows, step * ((cols + step - 1) // step))
    tile += grid  # error: SHD501
    return tile


def parenthesised_rounding(grid: torch.Tensor) -> torch.Tensor:
    rows, cols = grid.shape
    tile = torch.zeros(rows, (round_up)(cols, 32))
    tile.copy_(grid)  # error: SHD501
    return tile


def unrelated_floor(grid: torch.Tensor, step: int) -> torch.Tensor:
    # a floor next to a product that rounds nothing up: silent
    rows, cols = grid.shape
    tile = torch.zeros(rows, (cols // step) * step)
    tile.copy_(grid)
    return tile
