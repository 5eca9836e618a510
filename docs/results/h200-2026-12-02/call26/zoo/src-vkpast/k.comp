#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uvec2 n; };
void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n.x; i += step) y[i] = 3.0 * x[i];
  if (gl_GlobalInvocationID.x == 0u) { y[n.x + 2u] = 1.0; }
}
