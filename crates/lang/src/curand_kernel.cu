// memplay's curand_kernel.h (toolkit_headers.rs says what it models).
struct curandStateXORWOW {
  unsigned int d, v0, v1, v2, v3, v4;
  int boxmuller_flag;
  int boxmuller_flag_double;
  float boxmuller_extra;
  double boxmuller_extra_double;
  __device__ unsigned int __curand_next() {
    unsigned int t = v0 ^ (v0 >> 2);
    unsigned int last = v4;
    v0 = v1;
    v1 = v2;
    v2 = v3;
    v3 = last;
    last = (last ^ (last << 4)) ^ (t ^ (t << 1));
    v4 = last;
    unsigned int weyl = d + 362437u;
    d = weyl;
    return last + weyl;
  }
  __device__ void __curand_jump(unsigned long long n, unsigned int p) {
    while (n != 0) {
      for (unsigned int k = (unsigned int)n & 3u; k != 0; k--) {
        unsigned int w0 = __memplay_xorwow_power(p, 0, v0, v1, v2, v3, v4);
        unsigned int w1 = __memplay_xorwow_power(p, 1, v0, v1, v2, v3, v4);
        unsigned int w2 = __memplay_xorwow_power(p, 2, v0, v1, v2, v3, v4);
        unsigned int w3 = __memplay_xorwow_power(p, 3, v0, v1, v2, v3, v4);
        unsigned int w4 = __memplay_xorwow_power(p, 4, v0, v1, v2, v3, v4);
        v0 = w0;
        v1 = w1;
        v2 = w2;
        v3 = w3;
        v4 = w4;
      }
      n >>= 2;
      p += 2;
    }
  }
  __device__ void __curand_skipahead(unsigned long long n) {
    __curand_jump(n, 0);
    d += 362437u * (unsigned int)n;
  }
  __device__ void __curand_skipahead_sequence(unsigned long long n) { __curand_jump(n, 67); }
  __device__ void __curand_setup(unsigned long long seed, unsigned long long subsequence,
                                 unsigned long long offset) {
    unsigned int t0 = 1099087573u * ((unsigned int)seed ^ 0xaad26b49u);
    unsigned int t1 = 2591861531u * ((unsigned int)(seed >> 32) ^ 0xf7dcefddu);
    d = 6615241u + t1 + t0;
    v0 = 123456789u + t0;
    v1 = 362436069u ^ t0;
    v2 = 521288629u + t1;
    v3 = 88675123u ^ t1;
    v4 = 5783321u + t0;
    __curand_skipahead_sequence(subsequence);
    __curand_skipahead(offset);
    boxmuller_flag = 0;
    boxmuller_flag_double = 0;
    boxmuller_extra = 0.0f;
    boxmuller_extra_double = 0.0;
  }
};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef curandStateXORWOW_t curandState_t;
typedef curandState_t curandState;
__device__ uint4 __curand_philox_round(uint4 c, uint2 k) {
  unsigned int hi0 = __umulhi(0xD2511F53u, c.x);
  unsigned int hi1 = __umulhi(0xCD9E8D57u, c.z);
  return make_uint4(hi1 ^ c.y ^ k.x, 0xCD9E8D57u * c.z, hi0 ^ c.w ^ k.y, 0xD2511F53u * c.x);
}
__device__ uint4 __curand_philox_block(uint4 c, uint2 k) {
  for (int round = 0; round < 9; round++) {
    c = __curand_philox_round(c, k);
    k.x += 0x9E3779B9u;
    k.y += 0xBB67AE85u;
  }
  return __curand_philox_round(c, k);
}
struct curandStatePhilox4_32_10 {
  uint4 ctr;
  uint4 output;
  uint2 key;
  unsigned int STATE;
  int boxmuller_flag;
  int boxmuller_flag_double;
  float boxmuller_extra;
  double boxmuller_extra_double;
  __device__ void __curand_add(unsigned long long n) {
    unsigned int low = (unsigned int)n;
    unsigned int high = (unsigned int)(n >> 32);
    ctr.x += low;
    if (ctr.x < low) high++;
    ctr.y += high;
    if (high > ctr.y) {
      ctr.z++;
      if (ctr.z == 0u) ctr.w++;
    }
  }
  __device__ void __curand_add_high(unsigned long long n) {
    unsigned int low = (unsigned int)n;
    unsigned int high = (unsigned int)(n >> 32);
    ctr.z += low;
    if (ctr.z < low) high++;
    ctr.w += high;
  }
  __device__ unsigned int __curand_next() {
    unsigned int word = STATE == 1u ? output.y : STATE == 2u ? output.z : STATE == 3u ? output.w : output.x;
    STATE++;
    if (STATE == 4u) {
      ctr.x++;
      if (ctr.x == 0u) {
        ctr.y++;
        if (ctr.y == 0u) {
          ctr.z++;
          if (ctr.z == 0u) ctr.w++;
        }
      }
      output = __curand_philox_block(ctr, key);
      STATE = 0;
    }
    return word;
  }
  __device__ void __curand_skipahead(unsigned long long n) {
    STATE += (unsigned int)(n & 3);
    n /= 4;
    if (STATE > 3u) {
      n += 1;
      STATE -= 4;
    }
    __curand_add(n);
    output = __curand_philox_block(ctr, key);
  }
  __device__ void __curand_skipahead_sequence(unsigned long long n) {
    __curand_add_high(n);
    output = __curand_philox_block(ctr, key);
  }
  __device__ void __curand_setup(unsigned long long seed, unsigned long long subsequence,
                                 unsigned long long offset) {
    ctr = make_uint4(0, 0, 0, 0);
    key = make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
    STATE = 0;
    boxmuller_flag = 0;
    boxmuller_flag_double = 0;
    boxmuller_extra = 0.0f;
    boxmuller_extra_double = 0.0;
    __curand_skipahead_sequence(subsequence);
    __curand_skipahead(offset);
  }
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
template <typename S> __device__ void __curand_init(S& state, unsigned long long seed,
                                                    unsigned long long subsequence,
                                                    unsigned long long offset) {
  S s;
  s.__curand_setup(seed, subsequence, offset);
  state = s;
}
template <typename S> __device__ float __curand_uniform(S& s) {
  return (float)s.__curand_next() * 2.3283064e-10f + 1.1641532e-10f;
}
template <typename S> __device__ double __curand_uniform_double(S& s) {
  unsigned int x = s.__curand_next();
  unsigned int y = s.__curand_next();
  unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << 21);
  return (double)z * 1.1102230246251565e-16 + 5.5511151231257827e-17;
}
template <typename S> __device__ float2 __curand_normal2(S& s) {
  unsigned int x = s.__curand_next();
  unsigned int y = s.__curand_next();
  float u = (float)x * 2.3283064e-10f + 1.1641532e-10f;
  float angle = fmaf((float)y, 1.462918119976564e-09f, 7.31459059988282e-10f);
  float radius = sqrtf(-2.0f * logf(u));
  return make_float2(radius * __sinf(angle), radius * __cosf(angle));
}
template <typename S> __device__ double2 __curand_normal2_double(S& s) {
  unsigned int x0 = s.__curand_next();
  unsigned int x1 = s.__curand_next();
  unsigned int y0 = s.__curand_next();
  unsigned int y1 = s.__curand_next();
  unsigned long long zx = (unsigned long long)x0 ^ ((unsigned long long)x1 << 21);
  unsigned long long zy = (unsigned long long)y0 ^ ((unsigned long long)y1 << 21);
  double u = (double)zx * 1.1102230246251565e-16 + 5.5511151231257827e-17;
  double angle = ((double)zy * 2.2204460492503131e-16 + 1.1102230246251565e-16) * 3.141592653589793;
  double radius = sqrt(-2.0 * log(u));
  return make_double2(radius * sin(angle), radius * cos(angle));
}
template <typename S> __device__ float __curand_normal(S& s) {
  float value;
  if (s.boxmuller_flag != 1) {
    float2 pair = __curand_normal2(s);
    s.boxmuller_extra = pair.y;
    s.boxmuller_flag = 1;
    value = pair.x;
  } else {
    s.boxmuller_flag = 0;
    value = s.boxmuller_extra;
  }
  return value;
}
template <typename S> __device__ double __curand_normal_double(S& s) {
  double value;
  if (s.boxmuller_flag_double != 1) {
    double2 pair = __curand_normal2_double(s);
    s.boxmuller_extra_double = pair.y;
    s.boxmuller_flag_double = 1;
    value = pair.x;
  } else {
    s.boxmuller_flag_double = 0;
    value = s.boxmuller_extra_double;
  }
  return value;
}
template <typename S> __device__ float __curand_log_normal(S& s, float mean, float stddev) {
  float value;
  if (s.boxmuller_flag != 2) {
    float2 pair = __curand_normal2(s);
    s.boxmuller_extra = expf(fmaf(stddev, pair.y, mean));
    s.boxmuller_flag = 2;
    value = expf(fmaf(stddev, pair.x, mean));
  } else {
    s.boxmuller_flag = 0;
    value = s.boxmuller_extra;
  }
  return value;
}
template <typename S> __device__ double __curand_log_normal_double(S& s, double mean, double stddev) {
  double value;
  if (s.boxmuller_flag_double != 2) {
    double2 pair = __curand_normal2_double(s);
    s.boxmuller_extra_double = exp(fma(stddev, pair.y, mean));
    s.boxmuller_flag_double = 2;
    value = exp(fma(stddev, pair.x, mean));
  } else {
    s.boxmuller_flag_double = 0;
    value = s.boxmuller_extra_double;
  }
  return value;
}
template <typename S> __device__ uint4 __curand4(S& s) {
  unsigned int x = s.__curand_next();
  unsigned int y = s.__curand_next();
  unsigned int z = s.__curand_next();
  unsigned int w = s.__curand_next();
  return make_uint4(x, y, z, w);
}
template <typename S> __device__ float4 __curand_uniform4(S& s) {
  float x = __curand_uniform(s);
  float y = __curand_uniform(s);
  float z = __curand_uniform(s);
  float w = __curand_uniform(s);
  return make_float4(x, y, z, w);
}
template <typename S> __device__ float4 __curand_normal4(S& s) {
  float2 a = __curand_normal2(s);
  float2 b = __curand_normal2(s);
  return make_float4(a.x, a.y, b.x, b.y);
}
__device__ void __curand_instances(curandStateXORWOW& x, curandStatePhilox4_32_10& p) {
  __curand_init<curandStateXORWOW>(x, 0, 0, 0);
  __curand_uniform<curandStateXORWOW>(x);
  __curand_uniform_double<curandStateXORWOW>(x);
  __curand_normal2<curandStateXORWOW>(x);
  __curand_normal2_double<curandStateXORWOW>(x);
  __curand_normal<curandStateXORWOW>(x);
  __curand_normal_double<curandStateXORWOW>(x);
  __curand_log_normal<curandStateXORWOW>(x, 0.0f, 1.0f);
  __curand_log_normal_double<curandStateXORWOW>(x, 0.0, 1.0);
  __curand4<curandStateXORWOW>(x);
  __curand_uniform4<curandStateXORWOW>(x);
  __curand_normal4<curandStateXORWOW>(x);
  __curand_init<curandStatePhilox4_32_10>(p, 0, 0, 0);
  __curand_uniform<curandStatePhilox4_32_10>(p);
  __curand_uniform_double<curandStatePhilox4_32_10>(p);
  __curand_normal2<curandStatePhilox4_32_10>(p);
  __curand_normal2_double<curandStatePhilox4_32_10>(p);
  __curand_normal<curandStatePhilox4_32_10>(p);
  __curand_normal_double<curandStatePhilox4_32_10>(p);
  __curand_log_normal<curandStatePhilox4_32_10>(p, 0.0f, 1.0f);
  __curand_log_normal_double<curandStatePhilox4_32_10>(p, 0.0, 1.0);
  __curand4<curandStatePhilox4_32_10>(p);
  __curand_uniform4<curandStatePhilox4_32_10>(p);
  __curand_normal4<curandStatePhilox4_32_10>(p);
}
#define curand_init(seed, subsequence, offset, state) __curand_init(*(state), seed, subsequence, offset)
#define curand(state) (*(state)).__curand_next()
#define skipahead(n, state) (*(state)).__curand_skipahead(n)
#define skipahead_sequence(n, state) (*(state)).__curand_skipahead_sequence(n)
#define curand_uniform(state) __curand_uniform(*(state))
#define curand_uniform_double(state) __curand_uniform_double(*(state))
#define curand_normal(state) __curand_normal(*(state))
#define curand_normal_double(state) __curand_normal_double(*(state))
#define curand_normal2(state) __curand_normal2(*(state))
#define curand_normal2_double(state) __curand_normal2_double(*(state))
#define curand_log_normal(state, mean, stddev) __curand_log_normal(*(state), mean, stddev)
#define curand_log_normal_double(state, mean, stddev) __curand_log_normal_double(*(state), mean, stddev)
#define curand4(state) __curand4(*(state))
#define curand_uniform4(state) __curand_uniform4(*(state))
#define curand_normal4(state) __curand_normal4(*(state))
