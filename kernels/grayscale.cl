// Planar RGB -> grayscale, the kernel of the Day-10 block-size sweep, in OpenCL C 1.2.
//
// The OpenCL twin of kernels/grayscale.cu: same two entry points, same arguments, same
// arithmetic. blocksweep-opencl embeds this file (include_str!) and builds it with
// clBuildProgram at run time, so it must stand alone: no #include.
//
// One program per kernel: blocksweep-opencl builds each kernel as its own program, the first
// time it is used, with -D BLOCKSWEEP_ONE_KERNEL -D BLOCKSWEEP_KERNEL_<entry>, so that opening
// the backend compiles only the sweep's kernel (a driver that generates code at
// clBuildProgram, as NVIDIA's does, takes longer the more kernels a program holds). Without
// those defines the file builds all five, as benches/opencl builds it. Each kernel is wrapped
// in its own #if ... #endif; a new kernel needs the same (crates/opencl/src/kernel/mod.rs
// checks).

// The weights are Rec. 601 luma (0.299, 0.587, 0.114), written out as literals in both
// kernels: blocksweep_core::WEIGHTS holds the same three, and a test checks the sources.

// The seed's kernel: a grid-stride loop, correct for any grid and block size. In OpenCL terms
// blockIdx.x is get_group_id(0), blockDim.x get_local_size(0), threadIdx.x get_local_id(0)
// and gridDim.x get_num_groups(0). Index arithmetic is in ulong so that neither the stride
// nor the pixel index can wrap on a large frame.
#if !defined(BLOCKSWEEP_ONE_KERNEL) || defined(BLOCKSWEEP_KERNEL_grayscale)
__kernel void grayscale(__global const float* r, __global const float* g,
                        __global const float* b, __global float* out, const ulong n) {
    const ulong step = (ulong)get_num_groups(0) * (ulong)get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * (ulong)get_local_size(0) + (ulong)get_local_id(0);
         i < n; i += step) {
        out[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i];
    }
}
#endif

// One pixel per work-item, guarded: correct only when groups * local size >= n. It exists so
// that tests can launch it one work-group short and watch verification catch the unwritten
// pixels. The same index expression as above (not get_global_id, which adds the global offset).
#if !defined(BLOCKSWEEP_ONE_KERNEL) || defined(BLOCKSWEEP_KERNEL_grayscale_one_per_thread)
__kernel void grayscale_one_per_thread(__global const float* r, __global const float* g,
                                       __global const float* b, __global float* out,
                                       const ulong n) {
    const ulong i = (ulong)get_group_id(0) * (ulong)get_local_size(0) + (ulong)get_local_id(0);
    if (i < n) {
        out[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i];
    }
}
#endif

// ---------------------------------------------------------------------------------------------
// The lab kernels (docs/lab.md), twins of those in kernels/grayscale.cu: block shape, local
// memory and registers. Each computes the same grayscale value for every pixel, so the lab
// verifies them like the seed's kernel.

// The 2-D kernel of the shape sweep: `width` pixels by `height` rows, row-major, a grid-stride
// loop in each dimension, launched with work_dim 2. get_local_id(0) varies fastest within a
// work-group, so a work-group narrower than the sub-group spreads one sub-group over several
// rows. (Which work-items form a sub-group is the implementation's choice in OpenCL; every GPU
// driver we know of takes them in this order.)
#if !defined(BLOCKSWEEP_ONE_KERNEL) || defined(BLOCKSWEEP_KERNEL_grayscale_2d)
__kernel void grayscale_2d(__global const float* r, __global const float* g,
                           __global const float* b, __global float* out, const uint width,
                           const uint height) {
    const ulong step_x = (ulong)get_num_groups(0) * (ulong)get_local_size(0);
    const ulong step_y = (ulong)get_num_groups(1) * (ulong)get_local_size(1);
    for (ulong y = (ulong)get_group_id(1) * (ulong)get_local_size(1) + (ulong)get_local_id(1);
         y < height; y += step_y) {
        const ulong row = y * width;
        for (ulong x = (ulong)get_group_id(0) * (ulong)get_local_size(0) + (ulong)get_local_id(0);
             x < width; x += step_x) {
            out[row + x] = 0.299f * r[row + x] + 0.587f * g[row + x] + 0.114f * b[row + x];
        }
    }
}
#endif

// Local memory of a size chosen at launch: a __local argument set with clSetKernelArg(index 6,
// bytes, NULL), `words` floats. The work-group fills all of it with the three weights,
// repeated, meets at a barrier every work-item reaches (never inside a divergent branch), then
// each work-item reads its weights from there. A size above CL_DEVICE_LOCAL_MEM_SIZE is
// refused by the driver. Launched with 1-D work-groups; `words` must be at least 3.
#if !defined(BLOCKSWEEP_ONE_KERNEL) || defined(BLOCKSWEEP_KERNEL_grayscale_shared)
__kernel void grayscale_shared(__global const float* r, __global const float* g,
                               __global const float* b, __global float* out, const ulong n,
                               const uint words, __local float* scratch) {
    if (words < 3) {
        return;  // uniform: every work-item leaves, none waits at the barrier
    }
    for (uint k = (uint)get_local_id(0); k < words; k += (uint)get_local_size(0)) {
        scratch[k] = k % 3 == 0 ? 0.299f : (k % 3 == 1 ? 0.587f : 0.114f);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // A different triple for each work-item, so that every part of the array is read.
    const uint j = 3 * ((uint)get_local_id(0) % (words / 3));
    const float wr = scratch[j];
    const float wg = scratch[j + 1];
    const float wb = scratch[j + 2];
    const ulong step = (ulong)get_num_groups(0) * (ulong)get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * (ulong)get_local_size(0) + (ulong)get_local_id(0);
         i < n; i += step) {
        out[i] = wr * r[i] + wg * g[i] + wb * b[i];
    }
}
#endif

// Register-heavy: the seed's kernel plus, per pixel, a chain of CHAIN values all live at once
// (made first to last, consumed last to first), so that the compiler needs about CHAIN more
// registers per work-item. NVIDIA's driver then reports a CL_KERNEL_WORK_GROUP_SIZE below
// CL_DEVICE_MAX_WORK_GROUP_SIZE and refuses the largest work-group. The host passes salt = 0;
// (h | 1) is odd, so every pixel gets its grayscale value, but the compiler cannot know.
#define CHAIN 96

#if !defined(BLOCKSWEEP_ONE_KERNEL) || defined(BLOCKSWEEP_KERNEL_grayscale_registers)
__kernel void grayscale_registers(__global const float* r, __global const float* g,
                                  __global const float* b, __global float* out, const ulong n,
                                  const uint salt) {
    const ulong step = (ulong)get_num_groups(0) * (ulong)get_local_size(0);
    for (ulong i = (ulong)get_group_id(0) * (ulong)get_local_size(0) + (ulong)get_local_id(0);
         i < n; i += step) {
        const float gray = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i];
        uint v[CHAIN];
        v[0] = as_uint(gray) ^ salt;
#pragma unroll
        for (int k = 1; k < CHAIN; ++k) {
            v[k] = v[k - 1] * 0x9E3779B1u + (uint)k;
        }
        uint h = salt;
#pragma unroll
        for (int k = CHAIN - 1; k >= 0; --k) {
            h = (h ^ v[k]) * 0x85EBCA6Bu;
        }
        out[i] = (h | 1u) == salt ? 0.0f : gray;
    }
}
#endif
