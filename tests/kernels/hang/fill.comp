#version 450
// The same output as the others would give, written at once (the API that keeps its rows).
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer Flag { uint flag[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
        o[i] = i;
    }
}
