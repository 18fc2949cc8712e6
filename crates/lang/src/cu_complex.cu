// memplay's cuComplex.h (toolkit_headers.rs says what it models).
typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;
__host__ __device__ float cuCrealf(cuFloatComplex x) { return x.x; }
__host__ __device__ float cuCimagf(cuFloatComplex x) { return x.y; }
__host__ __device__ cuFloatComplex make_cuFloatComplex(float r, float i) { return make_float2(r, i); }
__host__ __device__ cuComplex make_cuComplex(float r, float i) { return make_float2(r, i); }
__host__ __device__ cuFloatComplex cuConjf(cuFloatComplex x) { return make_float2(x.x, -x.y); }
__host__ __device__ cuFloatComplex cuCaddf(cuFloatComplex x, cuFloatComplex y) {
  return make_float2(x.x + y.x, x.y + y.y);
}
__host__ __device__ cuFloatComplex cuCsubf(cuFloatComplex x, cuFloatComplex y) {
  return make_float2(x.x - y.x, x.y - y.y);
}
__host__ __device__ cuFloatComplex cuCmulf(cuFloatComplex x, cuFloatComplex y) {
  return make_float2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}
__host__ __device__ cuFloatComplex cuCdivf(cuFloatComplex x, cuFloatComplex y) {
  float scale = 1.0f / (fabsf(y.x) + fabsf(y.y));
  float xr = x.x * scale, xi = x.y * scale, yr = y.x * scale, yi = y.y * scale;
  float norm = 1.0f / (yr * yr + yi * yi);
  return make_float2((xr * yr + xi * yi) * norm, (xi * yr - xr * yi) * norm);
}
__host__ __device__ float cuCabsf(cuFloatComplex x) {
  float a = fabsf(x.x), b = fabsf(x.y);
  float big = a > b ? a : b, small = a > b ? b : a;
  float ratio = small / big;
  float m = big * sqrtf(1.0f + ratio * ratio);
  if (big == 0.0f || big > 3.402823466e38f || small > 3.402823466e38f) m = big + small;
  return m;
}
__host__ __device__ cuFloatComplex cuCfmaf(cuFloatComplex x, cuFloatComplex y, cuFloatComplex d) {
  float re = x.x * y.x + d.x, im = x.x * y.y + d.y;
  return make_float2(re - x.y * y.y, im + x.y * y.x);
}
__host__ __device__ double cuCreal(cuDoubleComplex x) { return x.x; }
__host__ __device__ double cuCimag(cuDoubleComplex x) { return x.y; }
__host__ __device__ cuDoubleComplex make_cuDoubleComplex(double r, double i) { return make_double2(r, i); }
__host__ __device__ cuDoubleComplex cuConj(cuDoubleComplex x) { return make_double2(x.x, -x.y); }
__host__ __device__ cuDoubleComplex cuCadd(cuDoubleComplex x, cuDoubleComplex y) {
  return make_double2(x.x + y.x, x.y + y.y);
}
__host__ __device__ cuDoubleComplex cuCsub(cuDoubleComplex x, cuDoubleComplex y) {
  return make_double2(x.x - y.x, x.y - y.y);
}
__host__ __device__ cuDoubleComplex cuCmul(cuDoubleComplex x, cuDoubleComplex y) {
  return make_double2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}
__host__ __device__ cuDoubleComplex cuCdiv(cuDoubleComplex x, cuDoubleComplex y) {
  double scale = 1.0 / (fabs(y.x) + fabs(y.y));
  double xr = x.x * scale, xi = x.y * scale, yr = y.x * scale, yi = y.y * scale;
  double norm = 1.0 / (yr * yr + yi * yi);
  return make_double2((xr * yr + xi * yi) * norm, (xi * yr - xr * yi) * norm);
}
__host__ __device__ double cuCabs(cuDoubleComplex x) {
  double a = fabs(x.x), b = fabs(x.y);
  double big = a > b ? a : b, small = a > b ? b : a;
  double ratio = small / big;
  double m = big * sqrt(1.0 + ratio * ratio);
  if (big == 0.0 || big > 1.79769313486231570e+308 || small > 1.79769313486231570e+308) m = big + small;
  return m;
}
__host__ __device__ cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
  double re = x.x * y.x + d.x, im = x.x * y.y + d.y;
  return make_double2(re - x.y * y.y, im + x.y * y.x);
}
__host__ __device__ cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex x) {
  return make_double2((double)x.x, (double)x.y);
}
__host__ __device__ cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex x) {
  return make_float2((float)x.x, (float)x.y);
}
