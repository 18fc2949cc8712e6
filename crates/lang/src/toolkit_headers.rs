//! Headers of the CUDA toolkit that memplay supplies itself: `cuComplex.h` (the complex numbers
//! of the CUDA Math API, "Complex" in cuComplex.h's documented formulas), `curand_kernel.h`
//! (the device API of cuRAND, cuRAND documentation, "Device API Overview"), and the CUDA
//! samples' `helper_math.h`, which kernels from the samples include for vector arithmetic.
//!
//! Each is written in the language memplay simulates (`cu_complex.cu`, `curand_kernel.cu`) and
//! read where the file includes it: the preprocessor puts the header's tokens in place of the
//! `#include` line, as the C preprocessor puts a header's text there (C11 6.10.2), so its macros
//! and declarations are the file's from that line on, and every token of it carries the span of
//! that line, so that what the header's functions do is shown there. A header is read once, as
//! its include guard makes it. The headers carry no comments of their own, since their text is
//! part of the page's module; what they do is said here.
//!
//! `cu_complex.cu`: `cuFloatComplex` is a `float2` and `cuDoubleComplex` a `double2`. `cuCdivf`
//! scales both operands by `1 / (|re y| + |im y|)` before it takes the quotient, so that the
//! divisor's squared magnitude neither overflows nor underflows where the quotient is
//! representable; `cuCabsf` is the larger part times `sqrt(1 + (smaller / larger)^2)`, and the
//! sum of the parts where the larger is zero or either is infinite; `cuCfmaf(x, y, d)` is
//! `x * y + d`.
//!
//! `helper_math.cu`: the float vectors' `+ - * /` (of two vectors, a vector and a `float`, a
//! `float` and a vector, component by component), unary `-`, `dot`, `length` (`sqrtf` of the
//! dot product), `normalize` (the vector times `rsqrtf` of it), `lerp(a, b, t) = a + t (b - a)`,
//! `clamp` of each component, and `cross` of `float3`; written from the vector algebra, each an
//! overload by its parameters' types (`parser`'s `name_overloads`).
//!
//! `curand_kernel.cu`: the states have cuRAND's layout and size (XORWOW 48 bytes, its `v[5]`
//! named `v0` to `v4`; Philox 64). A draw of XORWOW is Marsaglia's xorshift of the five words
//! plus the Weyl sequence `d += 362437` (Marsaglia, "Xorshift RNGs", J. Stat. Softw. 8(14),
//! 2003); `curand_init` salts and multiplies the seed's two halves into the published initial
//! words, then jumps `subsequence` times 2^67 draws and `offset` draws, two bits of each at a
//! time, each a product with a power of the generator's matrix (`__memplay_xorwow_power`, as
//! cuRAND's loop applies its precomputed matrices). Philox4x32-10 (Salmon et al., "Parallel
//! random numbers: as easy as 1, 2, 3", SC 2011) is ten rounds over a 128-bit counter and a
//! 64-bit key, four words a block; a subsequence adds to the counter's upper half. Each
//! function takes the state's place by reference (the macros with cuRAND's names pass
//! `*(state)`, and `*&v` is `v`), so a state in registers stays there and one in memory is read
//! and written member by member; `curand_init` sets the state up in registers and stores it
//! whole, as cuRAND writes every member and reads none. A uniform float is the draw times 2^-32
//! plus 2^-33, in (0, 1]; a uniform double takes 53 bits of two draws; the normals are
//! Box-Muller pairs whose second value the state keeps (`boxmuller_flag` 1 for a normal, 2 for a
//! log-normal), the angle's multiply-add fused as nvcc contracts it. Every distribution is named
//! for both states in `__curand_instances`, so the file's first reading instantiates them all.

/// The headers memplay supplies: the name `#include` gives (without `.h`) and the text.
const HEADERS: [(&str, &str); 3] = [
    ("cuComplex", include_str!("cu_complex.cu")),
    ("curand_kernel", include_str!("curand_kernel.cu")),
    ("helper_math", include_str!("helper_math.cu")),
];

/// The text of the header an `#include` line names (its words written out, `curand_kernelh` for
/// `<curand_kernel.h>`, or the quoted name), unless `read` holds it already: then `None`, as an
/// include guard makes a second inclusion empty. The header's index is added to `read`.
pub(crate) fn header_text(written: &str, read: &mut Vec<usize>) -> Option<&'static str> {
    let written = written.replace('.', "");
    let index = HEADERS
        .iter()
        .position(|(name, _)| written.strip_suffix('h') == Some(name))?;
    if read.contains(&index) {
        return None;
    }
    read.push(index);
    Some(HEADERS[index].1)
}

#[cfg(test)]
mod tests {
    use crate::compile;

    const KERNEL: &str = "__global__ void k(float* out) {
  cuFloatComplex z = cuCaddf(make_cuFloatComplex(1.0f, 2.0f), make_cuFloatComplex(3.0f, 4.0f));
  out[0] = cuCrealf(z);
}
";

    #[test]
    fn a_header_is_read_where_it_is_included_and_once_however_often() {
        let twice = format!("#include <cuComplex.h>\n#include \"cuComplex.h\"\n{KERNEL}");
        assert!(compile(&twice, &[]).is_ok());
        let error = compile(KERNEL, &[])
            .err()
            .map(|d| d.message)
            .unwrap_or_default();
        assert!(error.contains("#include <cuComplex.h>"), "{error}");
    }

    #[test]
    fn a_header_is_not_read_in_a_branch_the_preprocessor_skips() {
        let skipped = format!("#if 0\n#include <cuComplex.h>\n#endif\n{KERNEL}");
        assert!(compile(&skipped, &[]).is_err());
    }

    #[test]
    fn the_address_of_a_register_variable_dereferenced_is_the_variable() {
        let source = "__device__ void twice(int& x) { x *= 2; }
__global__ void k(int* a) {
  int v = a[0];
  twice(*&v);
  a[0] = v;
}
";
        assert!(compile(source, &[]).is_ok());
    }

    #[test]
    fn both_curand_states_and_every_distribution_compile_in_one_kernel() {
        let source = "#include <curand_kernel.h>
__global__ void k(curandStatePhilox4_32_10_t* p, float* out) {
  curandState x;
  curand_init(7, threadIdx.x, 0, &x);
  skipahead(3, &x);
  skipahead_sequence(1, &p[threadIdx.x]);
  float4 f = curand_normal4(&p[threadIdx.x]);
  uint4 u = curand4(&p[threadIdx.x]);
  double2 d = curand_normal2_double(&x);
  out[threadIdx.x] = f.x + curand_uniform4(&p[0]).y + u.z + d.x + curand_log_normal(&x, 0.0f, 1.0f);
}
";
        let result = compile(source, &[]);
        assert!(result.is_ok(), "{:?}", result.err());
    }
}
