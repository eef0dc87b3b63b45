"""A width only used under a condition that proves the divisibility: the
caller passes the tensor only when its last dimension is a multiple of the
cap (through a ContextVar, or a plain argument), or the function tests it
itself. And the look-alikes where nothing proves it."""

from contextvars import ContextVar

import triton
import triton.language as tl

_fused_input: ContextVar[object | None] = ContextVar("fused_input", default=None)
_unchecked_input: ContextVar[object | None] = ContextVar("unchecked_input", default=None)


@triton.jit
def chunked_cast_kernel(x_ptr, out_ptr, WIDTH: tl.constexpr, CHUNK: tl.constexpr):
    offs = tl.program_id(0) * WIDTH + tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.float16))


def _cast_rows(out, staged):
    if staged is not None:
        width = staged.shape[-1]
        src = staged
    else:
        width, src = 64, out
    chunk = min(4096, width)
    chunked_cast_kernel[(out.shape[0],)](src, out, WIDTH=width, CHUNK=chunk)


def _cast_rows_unchecked(out, staged):
    width = staged.shape[-1]
    chunk = min(4096, width)  # error: SHD101
    chunked_cast_kernel[(out.shape[0],)](staged, out, WIDTH=width, CHUNK=chunk)


def _cast_rows_direct(out, staged):
    width = staged.shape[-1]
    chunk = min(4096, width)
    chunked_cast_kernel[(out.shape[0],)](staged, out, WIDTH=width, CHUNK=chunk)


def forward(x, out, fuse):
    wide = fuse and x.is_contiguous() and x.shape[-1] % 8192 == 0
    token = _fused_input.set(x if wide else None)
    try:
        _cast_rows(out, _fused_input.get())
    finally:
        _fused_input.reset(token)
    _unchecked_input.set(x)
    _cast_rows_unchecked(out, _unchecked_input.get())
    _cast_rows_direct(out, x if x.shape[-1] % 4096 == 0 else None)


def cast_if_aligned(x, out):
    width = x.shape[-1]
    if width % 4096 == 0:
        chunk = min(width, 4096)
        chunked_cast_kernel[(x.shape[0],)](x, out, WIDTH=width, CHUNK=chunk)
