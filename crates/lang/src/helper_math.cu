// memplay's helper_math.h (toolkit_headers.rs says what it models).
#define MP_OP2(T, M, OP) \
  __host__ __device__ T operator OP(T a, T b) { return M(a.x OP b.x, a.y OP b.y); } \
  __host__ __device__ T operator OP(T a, float s) { return M(a.x OP s, a.y OP s); } \
  __host__ __device__ T operator OP(float s, T a) { return M(s OP a.x, s OP a.y); }
#define MP_OP3(T, M, OP) \
  __host__ __device__ T operator OP(T a, T b) { return M(a.x OP b.x, a.y OP b.y, a.z OP b.z); } \
  __host__ __device__ T operator OP(T a, float s) { return M(a.x OP s, a.y OP s, a.z OP s); } \
  __host__ __device__ T operator OP(float s, T a) { return M(s OP a.x, s OP a.y, s OP a.z); }
#define MP_OP4(T, M, OP) \
  __host__ __device__ T operator OP(T a, T b) { return M(a.x OP b.x, a.y OP b.y, a.z OP b.z, a.w OP b.w); } \
  __host__ __device__ T operator OP(T a, float s) { return M(a.x OP s, a.y OP s, a.z OP s, a.w OP s); } \
  __host__ __device__ T operator OP(float s, T a) { return M(s OP a.x, s OP a.y, s OP a.z, s OP a.w); }
#define MP_FUN(T) \
  __host__ __device__ float length(T v) { return sqrtf(dot(v, v)); } \
  __host__ __device__ T normalize(T v) { return v * rsqrtf(dot(v, v)); } \
  __host__ __device__ T lerp(T a, T b, float t) { return a + t * (b - a); }
__host__ __device__ float dot(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
__host__ __device__ float dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__host__ __device__ float dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
MP_OP2(float2, make_float2, +) MP_OP2(float2, make_float2, -)
MP_OP2(float2, make_float2, *) MP_OP2(float2, make_float2, /)
MP_OP3(float3, make_float3, +) MP_OP3(float3, make_float3, -)
MP_OP3(float3, make_float3, *) MP_OP3(float3, make_float3, /)
MP_OP4(float4, make_float4, +) MP_OP4(float4, make_float4, -)
MP_OP4(float4, make_float4, *) MP_OP4(float4, make_float4, /)
MP_FUN(float2) MP_FUN(float3) MP_FUN(float4)
__host__ __device__ float2 operator-(float2 a) { return make_float2(-a.x, -a.y); }
__host__ __device__ float3 operator-(float3 a) { return make_float3(-a.x, -a.y, -a.z); }
__host__ __device__ float4 operator-(float4 a) { return make_float4(-a.x, -a.y, -a.z, -a.w); }
__host__ __device__ float3 cross(float3 a, float3 b) {
  return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
__host__ __device__ float lerp(float a, float b, float t) { return a + t * (b - a); }
__host__ __device__ float clamp(float f, float a, float b) { return fmaxf(a, fminf(f, b)); }
__host__ __device__ float2 clamp(float2 v, float a, float b) { return make_float2(clamp(v.x, a, b), clamp(v.y, a, b)); }
__host__ __device__ float3 clamp(float3 v, float a, float b) {
  return make_float3(clamp(v.x, a, b), clamp(v.y, a, b), clamp(v.z, a, b));
}
__host__ __device__ float4 clamp(float4 v, float a, float b) {
  return make_float4(clamp(v.x, a, b), clamp(v.y, a, b), clamp(v.z, a, b), clamp(v.w, a, b));
}
#undef MP_FUN
#undef MP_OP2
#undef MP_OP3
#undef MP_OP4
