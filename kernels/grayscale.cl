// Planar RGB -> grayscale, the kernel of the Day-10 block-size sweep, in OpenCL C 1.2.
//
// The OpenCL twin of kernels/grayscale.cu: same two entry points, same arguments, same
// arithmetic. blocksweep-opencl embeds this file (include_str!) and builds it with
// clBuildProgram at run time, so it must stand alone: no #include.

// The weights are Rec. 601 luma (0.299, 0.587, 0.114), written out as literals in both
// kernels: blocksweep_core::WEIGHTS holds the same three, and a test checks the sources.

// The seed's kernel: a grid-stride loop, correct for any grid and block size. In OpenCL terms
// blockIdx.x is get_group_id(0), blockDim.x get_local_size(0), threadIdx.x get_local_id(0)
// and gridDim.x get_num_groups(0). Index arithmetic is in ulong so that neither the stride
// nor the pixel index can wrap on a large frame.
__kernel void grayscale(__global const float* r, __global const float* g,
                        __global const float* b, __global float* out, const ulong n) {
    const ulong step = (ulong)get_num_groups(0) * (ulong)get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * (ulong)get_local_size(0) + (ulong)get_local_id(0);
         i < n; i += step) {
        out[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i];
    }
}

// One pixel per work-item, guarded: correct only when groups * local size >= n. It exists so
// that tests can launch it one work-group short and watch verification catch the unwritten
// pixels. The same index expression as above (not get_global_id, which adds the global offset).
__kernel void grayscale_one_per_thread(__global const float* r, __global const float* g,
                                       __global const float* b, __global float* out,
                                       const ulong n) {
    const ulong i = (ulong)get_group_id(0) * (ulong)get_local_size(0) + (ulong)get_local_id(0);
    if (i < n) {
        out[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i];
    }
}
