// Waits for a flag the host never sets: past any deadline.
__kernel void hang(__global volatile const uint* flag, __global uint* out, const uint n) {
    while (flag[0] == 0u) {
    }
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        out[i] = i;
    }
}
