"""Kernel-side requirements: a compile-time assert, an assert in the
kernel, a power of two or a multiple the kernel needs, and a program's group
index that assumes the block divides the group. Original shapes of the
family: the block is capped on the host, the requirement lives in the
jitted function (or a helper it calls)."""

import math

import torch
import triton
import triton.language as tl


def _page_tile(elem_bytes):
    return 16 if elem_bytes >= 2 else 32


@triton.jit
def paged_sum_kernel(cache_ptr, out_ptr, PAGE: tl.constexpr, CHUNK: tl.constexpr):
    # a chunk must stay inside one page of the cache
    tl.static_assert(PAGE % CHUNK == 0)
    offs = tl.arange(0, CHUNK)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(cache_ptr + offs)))


def paged_sum(cache, out, narrow_chunks):
    page = cache.shape[1]
    chunk = _page_tile(cache.element_size())
    if narrow_chunks:
        chunk = min(chunk, page)  # error: SHD101
    paged_sum_kernel[(out.shape[0],)](cache, out, PAGE=page, CHUNK=chunk)


def paged_sum_gcd(cache, out):
    page = cache.shape[1]
    chunk = math.gcd(_page_tile(cache.element_size()), page)
    paged_sum_kernel[(out.shape[0],)](cache, out, PAGE=page, CHUNK=chunk)


@triton.jit
def grouped_rows_kernel(q_ptr, kv_ptr, out_ptr, ROWS_PER_GROUP: tl.constexpr, ROW_TILE: tl.constexpr):
    tile_id = tl.program_id(1)
    tiles_per_group = tl.cdiv(ROWS_PER_GROUP, ROW_TILE)
    group = tile_id // tiles_per_group
    rows = tile_id * ROW_TILE + tl.arange(0, ROW_TILE)
    kv = tl.load(kv_ptr + group)
    tl.store(out_ptr + rows, tl.load(q_ptr + rows) * kv)


def grouped_rows(q, kv, out):
    rows_per_group = q.shape[1] // kv.shape[1]
    row_tile = min(4, rows_per_group)  # error: SHD101
    grid = (q.shape[0], triton.cdiv(q.shape[1], row_tile))
    grouped_rows_kernel[grid](q, kv, out, ROWS_PER_GROUP=rows_per_group, ROW_TILE=row_tile)


def grouped_rows_other_width(q, kv, out, n_tokens):
    # the tiles run over another width than the one capped: only the power
    # of two is at stake, and next_power_of_2 gives it
    rows_per_group = q.shape[1] // kv.shape[1]
    row_tile = min(4, triton.next_power_of_2(n_tokens))
    grouped_rows_kernel[(q.shape[0], 1)](q, kv, out, ROWS_PER_GROUP=rows_per_group, ROW_TILE=row_tile)


@triton.jit
def _tile_load(ptr, TILE: tl.constexpr):
    tl.static_assert(TILE % 16 == 0)
    return tl.load(ptr + tl.arange(0, TILE))


@triton.jit
def copy_tiles_kernel(src_ptr, dst_ptr, TILE: tl.constexpr):
    x = _tile_load(src_ptr + tl.program_id(0) * TILE, TILE)
    tl.store(dst_ptr + tl.program_id(0) * TILE + tl.arange(0, TILE), x)


def copy_tiles(src, dst):
    width = src.shape[-1]
    tile = min(width, 256)  # error: SHD101
    copy_tiles_kernel[(triton.cdiv(src.numel(), tile),)](src, dst, TILE=tile)


@triton.jit
def split_rows_kernel(x_ptr, N: tl.constexpr, SPLIT: tl.constexpr):
    assert N % SPLIT == 0
    pid = tl.program_id(0)
    for i in range(N // SPLIT):
        tl.store(x_ptr + pid * N + i, 0.0)


def clear_rows(x):
    n = x.shape[1]
    split = min(n, 64)  # error: SHD101
    split_rows_kernel[(x.shape[0],)](x, N=n, SPLIT=split)


def clear_rows_even(x):
    n = x.shape[1]
    split = min(n, 64)
    if n % split:
        split = 1
    split_rows_kernel[(x.shape[0],)](x, N=n, SPLIT=split)


def _launch_copy(src, dst, tile):
    copy_tiles_kernel[(triton.cdiv(src.numel(), tile),)](src, dst, TILE=tile)


def copy_tiles_through_launcher(src, dst):
    width = src.shape[-1]
    tile = min(1024, width)  # error: SHD101
    _launch_copy(src, dst, tile)


def copy_tiles_through_launcher_rounded(src, dst):
    width = src.shape[-1]
    tile = min(1024, triton.next_power_of_2(max(width, 16)))
    _launch_copy(src, dst, tile)


def scratch(n):
    return torch.empty(n)


def _tuned_block(dtype):
    return 64 if dtype == torch.float16 else 32


def copy_tiles_narrowed(src, dst, wide_rows):
    # the block narrowed to a constant or to a power of two: the block's
    # own earlier value is the cap, not a width
    tile = _tuned_block(src.dtype)
    if wide_rows:
        tile = min(tile, 32)
    _launch_copy(src, dst, tile)


def copy_tiles_narrowed_to_width(src, dst, tuning):
    tile, n_warps = tuning
    tile = min(tile, triton.next_power_of_2(src.shape[-1]))
    _launch_copy(src, dst, tile)
