// y[i] = x[i - 4] + ... + x[i + 4] (indices clamped to the ends), each group staging its
// stretch of x and a 4-element halo on each side in a __local tile, loaded by all its items.
// BUG: `if (i >= n) return;` before the load and the barrier: in the last group the items
// past n never reach barrier() nor load their share of the tile, so the last outputs read
// slots nobody filled. Fix: no early return; guard the global load and the store only.
#define R 4
#define TILE (1024 + 2 * R)  // the largest work-group the sweep launches, and the halo

__kernel void box9(__global const float* x, __global float* y, const ulong n) {
    __local float tile[TILE];
    const uint tid = (uint)get_local_id(0);
    const uint size = (uint)get_local_size(0);
    const long base = (long)get_group_id(0) * size;
    const ulong i = (ulong)base + tid;
    if (i >= n) return;  // BUG: these items skip the barrier and their part of the load
    for (uint j = tid; j < size + 2 * R; j += size) {
        long g = base + (long)j - R;
        g = g < 0 ? 0 : (g >= (long)n ? (long)n - 1 : g);
        tile[j] = x[g];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc = 0.0f;
    for (int k = 0; k <= 2 * R; k++) acc += tile[tid + k];
    y[i] = acc;
}
