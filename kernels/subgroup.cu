// The subgroup probe (blocksweep validate, "Subgroups: what each API claims, and what ran").
// One block; each thread writes three words at 3 * its linear index: the warp size CUDA
// reports (warpSize), its warp's index in the block (linear index / warpSize: CUDA forms
// warps of consecutive thread indices; %warpid is not stable and is not used), and how many
// lanes of its warp are active, counted from __activemask() at entry.
extern "C" __global__ void subgroup_probe(unsigned int *out)
{
    unsigned int lanes = __popc(__activemask());
    unsigned int linear =
        threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[3 * linear + 0] = (unsigned int)warpSize;
    out[3 * linear + 1] = linear / (unsigned int)warpSize;
    out[3 * linear + 2] = lanes;
}
