// out[y][x] = in[y][x] + x for a width x height row-major image, one element per invocation.
// BUG: the guard tests the flat index. An invocation at (x >= width, y) has the flat index of
// (x - width, y + 1), passes, and overwrites that element with a value for a column that
// does not exist. The right guard is `x < width && y < height`.
// Check: glslangValidator -V --target-env vulkan1.1 k.comp
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, set = 0, binding = 0) readonly restrict buffer In { float src[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { float dst[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
} params;

void main() {
    const uint x = gl_GlobalInvocationID.x;
    const uint y = gl_GlobalInvocationID.y;
    const uint idx = y * params.width + x;
    if (idx < params.width * params.height) {
        dst[idx] = src[idx] + float(x);
    }
}
