#version 450
// The subgroup probe (blocksweep validate, "Subgroups: what each API claims, and what ran").
// One workgroup; each invocation writes three words at 3 * gl_LocalInvocationIndex: the
// subgroup size Vulkan reports (gl_SubgroupSize), its subgroup's id (gl_SubgroupID), and the
// number of active invocations of its subgroup, counted from a ballot's bits: a driver has
// reported gl_SubgroupSize 32 while 8 invocations ran, so the size alone is not trusted.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) writeonly buffer Out { uint words[]; };
void main() {
    uint lanes = subgroupBallotBitCount(subgroupBallot(true));
    uint i = gl_LocalInvocationIndex;
    words[3u * i + 0u] = gl_SubgroupSize;
    words[3u * i + 1u] = gl_SubgroupID;
    words[3u * i + 2u] = lanes;
}
