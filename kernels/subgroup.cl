// The subgroup probe (blocksweep validate, "Subgroups: what each API claims, and what ran").
// One work-group; each work-item writes three words at 3 * its local linear id: the sub-group
// size OpenCL reports, its sub-group id, and how many work-items of its sub-group are active.
// Built with one of two defines, chosen by blocksweep:
//   BLOCKSWEEP_SUBGROUPS  cl_khr_subgroups or OpenCL C 3.0's __opencl_c_subgroups:
//                         get_sub_group_size(), get_sub_group_id(), sub_group_reduce_add(1);
//   BLOCKSWEEP_NV_PTX     NVIDIA (cl_nv_device_attribute_query) without sub-groups: inline
//                         PTX, WARP_SZ, and activemask.b32's bits; warp = local id / WARP_SZ.
// A device with neither does not build it: the #error says why.

#if defined(BLOCKSWEEP_SUBGROUPS)
#if defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#elif !defined(__opencl_c_subgroups)
#error "no sub-groups on this device: neither cl_khr_subgroups nor __opencl_c_subgroups"
#endif
#elif !defined(BLOCKSWEEP_NV_PTX)
#error "build with -DBLOCKSWEEP_SUBGROUPS or -DBLOCKSWEEP_NV_PTX"
#endif

__kernel void subgroup_probe(__global uint *out)
{
    // get_local_linear_id() is OpenCL C 2.0; NVIDIA's compiler is 1.2.
    uint linear = (uint)(get_local_id(0) +
                         get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
#if defined(BLOCKSWEEP_SUBGROUPS)
    uint lanes = sub_group_reduce_add(1u);
    uint size = get_sub_group_size();
    uint id = get_sub_group_id();
#else
    uint mask;
    uint width;
    asm volatile("activemask.b32 %0;" : "=r"(mask));
    asm volatile("mov.u32 %0, WARP_SZ;" : "=r"(width));
    uint lanes = popcount(mask);
    uint size = width;
    uint id = linear / width;
#endif
    out[3 * linear + 0] = size;
    out[3 * linear + 1] = id;
    out[3 * linear + 2] = lanes;
}
