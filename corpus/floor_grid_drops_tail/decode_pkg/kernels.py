import triton
import triton.language as tl


@triton.jit
def state_decode_kernel(q_ptr, kv_ptr, o_ptr, HD: tl.constexpr, BLOCK_E: tl.constexpr):
    # the whole key width in one arange: HD must be a power of two
    bh = tl.program_id(0)
    e = tl.program_id(1) * BLOCK_E + tl.arange(0, BLOCK_E)
    d = tl.arange(0, HD)
    q = tl.load(q_ptr + bh * HD + d)
    kv = tl.load(kv_ptr + bh * HD * HD + d[:, None] * HD + e[None, :], mask=e[None, :] < HD)
    tl.store(o_ptr + bh * HD + e, tl.sum(q[:, None] * kv, 0), mask=e < HD)
