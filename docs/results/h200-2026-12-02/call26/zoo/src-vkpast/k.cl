__kernel void k(__global const float* x, __global float* y, const ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = 3.0f * x[i];
}
