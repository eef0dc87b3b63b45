"""What the prefilter gates settle before libcst parses a file: look-alikes
they reject (the rule is silent on them too) next to shapes they must still
let through. The ast gate replays the rule's own analysis; the facts gate
asks the kernel facts whether a launch reaches a parameter with a need."""

import math

import torch
import triton
import triton.language as tl

# Module constants as the rule reads them: from indented blocks of top-level
# ``if``/``try``, not from a one-line suite.
GROUP = 64
if torch.version.hip: GROUP = torch.cuda.device_count()
SPLITS = 64
try:
    SPLITS = torch.cuda.get_device_properties(0).multi_processor_count
except RuntimeError:
    pass


@triton.jit
def _rows_kernel(x_ptr, n, ROWS: tl.constexpr, CHUNK: tl.constexpr):
    tl.static_assert(n % CHUNK == 0)
    offs = tl.arange(0, ROWS)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def warps_are_a_launch_option(x: torch.Tensor) -> None:
    # a site, but num_warps is no parameter of the kernel: no need reaches it
    n = x.shape[-1]
    block = triton.next_power_of_2(n)
    num_warps = min(max(n // 256, 1), 8)
    _rows_kernel[(1,)](x, n, ROWS=block, CHUNK=block, num_warps=num_warps)


def warps_from_a_power_of_two(x: torch.Tensor) -> None:
    # max(BLOCK // 256, 1) of a power of two is one: not a site
    n = x.shape[-1]
    BLOCK = triton.next_power_of_2(n)
    rows = min(max(BLOCK // 256, 1), 8)
    _rows_kernel[(1,)](x, n, ROWS=rows, CHUNK=BLOCK)


def remainder_padded(x: torch.Tensor) -> None:
    # the kernel needs CHUNK to divide n, and the remainder is looked at
    n = x.shape[-1]
    chunk = min(n, 256)
    if n % chunk:
        x = torch.nn.functional.pad(x, (0, chunk - n % chunk))
    _rows_kernel[(1,)](x, x.shape[-1], ROWS=256, CHUNK=chunk)


def chunk_asserted_by_the_kernel(x: torch.Tensor) -> None:
    n = x.shape[-1]
    chunk = min(n, 256)  # error: SHD101
    _rows_kernel[(1,)](x, n, 256, chunk)


def width_pinned(x: torch.Tensor) -> None:
    n = x.shape[-1]
    if n not in (128, 256):
        raise ValueError(f"unsupported width {n}")
    rows = min(n, 256)
    _rows_kernel[(1,)](x, n, ROWS=rows, CHUNK=rows)


def block_rebuilt(x: torch.Tensor) -> None:
    n = x.shape[-1]
    chunk = min(n, 1024)
    chunk = math.gcd(chunk, n)
    _rows_kernel[(1,)](x, n, ROWS=1024, CHUNK=chunk)


def group_is_a_constant(x: torch.Tensor) -> None:
    # GROUP is 64 for the rule (the one-line suite is not read): min of two
    # constants is not a site
    n = x.shape[-1]
    g = min(GROUP, 32)
    _rows_kernel[(1,)](x, n, ROWS=g, CHUNK=g)


def splits_from_a_guarded_constant(x: torch.Tensor) -> None:
    # SPLITS is also bound in the ``try`` block: no longer a constant
    n = x.shape[-1]
    s = min(SPLITS, 32)  # error: SHD101
    _rows_kernel[(1,)](x, n, ROWS=s, CHUNK=32)


def lowest_set_bit_in_parentheses(x: torch.Tensor) -> None:
    # a power of two, but the rule proves ``w & -w`` by comparing code,
    # and ``(w)`` is not ``w``
    w = x.shape[-1]
    low = min((w) & -w, 64)  # todo-ok: SHD101 parenthesised operand defeats the x & -x proof
    _rows_kernel[(1,)](x, w, ROWS=low, CHUNK=1)
