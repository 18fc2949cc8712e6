//! The names CUDA's and C's headers give a kernel: the built-in vector types, the integer
//! typedefs and the constants of `limits.h`, `float.h`, `math.h` and `math_constants.h`.
//!
//! memplay ignores `#include` lines (`preprocess`), so what the headers would declare is here,
//! whether or not the kernel includes them. The vector types are those of `vector_types.h`
//! (CUDA C++ Programming Guide, "Built-in Vector Types"): `char1` to `double4` and `dim3`, with
//! nvcc's sizes and alignments. The alignments were read with `alignof` from nvcc 13.0 for
//! sm_90, and follow one rule by the number of components: one or two components align to their
//! whole size, three to one component (a `float3` is 12 bytes aligned to 4), four to their size
//! up to 16 (a `double4` is 32 bytes aligned to 16; CUDA 13 deprecates it for `double4_16a`).
//!
//! nvcc loads and stores a vector in instructions of its alignment, never wider than the type
//! guarantees (`tests/reference/vector_loads/`: a `float3` is three 4-byte `LDG.E`, a `float4`
//! one `LDG.E.128`, a `double4` two `LDG.E.128`, a `char4` one 4-byte `LDG.E`), which
//! `ir::Elem::access_bytes` takes from `Scalar::vector_align`.

use crate::ast::{Scalar, Type};

/// The component types of the vector types, by the name the vector types start with (`float`
/// for `float1` to `float4`). `long` is 64-bit, as on nvcc's Linux hosts. The first name of a
/// component type is the one types are shown with.
const VECTOR_COMPONENTS: [(&str, Scalar); 12] = [
    ("char", Scalar::I8),
    ("uchar", Scalar::U8),
    ("short", Scalar::I16),
    ("ushort", Scalar::U16),
    ("int", Scalar::I32),
    ("uint", Scalar::U32),
    ("longlong", Scalar::I64),
    ("ulonglong", Scalar::U64),
    ("long", Scalar::I64),
    ("ulong", Scalar::U64),
    ("float", Scalar::F32),
    ("double", Scalar::F64),
];

/// Integer types that the C and CUDA headers name: `stddef.h`, `stdint.h` and `sys/types.h`
/// (which `cuda_runtime.h` brings in and which defines `uint`, `ushort` and `ulong`). `uchar`
/// is in no header nvcc includes, but course code uses it as `unsigned char` all the same.
const INTEGER_TYPEDEFS: [(&str, Scalar); 16] = [
    ("size_t", Scalar::U64),
    ("ptrdiff_t", Scalar::I64),
    ("intptr_t", Scalar::I64),
    ("uintptr_t", Scalar::U64),
    ("uint", Scalar::U32),
    ("ushort", Scalar::U16),
    ("ulong", Scalar::U64),
    ("uchar", Scalar::U8),
    ("int8_t", Scalar::I8),
    ("uint8_t", Scalar::U8),
    ("int16_t", Scalar::I16),
    ("uint16_t", Scalar::U16),
    ("int32_t", Scalar::I32),
    ("uint32_t", Scalar::U32),
    ("int64_t", Scalar::I64),
    ("uint64_t", Scalar::U64),
];

/// The 16-bit floating types of `cuda_fp16.h` and `cuda_bf16.h`, and their pairs (4 bytes,
/// aligned to 4, `.x` and `.y`).
/// The short names (`half`) are the headers' typedefs, defined where a kernel includes them
/// (`preprocess`).
const HALF_TYPES: [(&str, &Type); 4] = [
    ("__half", &Type::Scalar(Scalar::F16)),
    ("__half2", &Type::Vector(Scalar::F16, 2)),
    ("__nv_bfloat16", &Type::Scalar(Scalar::BF16)),
    ("__nv_bfloat162", &Type::Vector(Scalar::BF16, 2)),
];

/// The object-like macros of `limits.h`, `float.h`, `math.h` (`M_PI` and its kin, which glibc
/// defines for nvcc's default dialect) and CUDA's `math_constants.h`, with their bodies as the
/// headers write them. `inf` and `nan` stand for the single-precision infinity and NaN that
/// `INFINITY`, `NAN` and `CUDART_INF_F` give (the headers write them with builtins).
pub const HEADER_MACROS: [(&str, &str); 30] = [
    ("CHAR_BIT", "8"),
    ("SHRT_MAX", "32767"),
    ("USHRT_MAX", "65535"),
    ("INT_MAX", "2147483647"),
    ("INT_MIN", "(-2147483647 - 1)"),
    ("UINT_MAX", "4294967295U"),
    ("LLONG_MAX", "9223372036854775807LL"),
    ("LLONG_MIN", "(-9223372036854775807LL - 1LL)"),
    ("ULLONG_MAX", "18446744073709551615ULL"),
    ("FLT_MAX", "3.40282347e+38f"),
    ("FLT_MIN", "1.17549435e-38f"),
    ("FLT_EPSILON", "1.19209290e-7f"),
    ("DBL_MAX", "1.7976931348623157e+308"),
    ("DBL_MIN", "2.2250738585072014e-308"),
    ("DBL_EPSILON", "2.2204460492503131e-16"),
    ("M_E", "2.7182818284590452354"),
    ("M_LN2", "0.69314718055994530942"),
    ("M_PI", "3.14159265358979323846"),
    ("M_PI_2", "1.57079632679489661923"),
    ("M_PI_4", "0.78539816339744830962"),
    ("M_1_PI", "0.31830988618379067154"),
    ("M_SQRT2", "1.41421356237309504880"),
    ("M_SQRT1_2", "0.70710678118654752440"),
    ("INFINITY", "inf"),
    ("HUGE_VALF", "inf"),
    ("NAN", "nan"),
    ("CUDART_INF_F", "inf"),
    ("CUDART_NAN_F", "nan"),
    ("CUDART_PI_F", "3.141592654f"),
    ("CUDART_PI", "3.1415926535897931e+0"),
];

/// The component type and count of the vector type `word` (`dim3` is laid out as `uint3`).
pub fn vector_type(word: &str) -> Option<(Scalar, u8)> {
    if word == "dim3" {
        return Some((Scalar::U32, 3));
    }
    let (base, digit) = word.split_at(word.len().checked_sub(1)?);
    let n = match digit {
        "1" => 1,
        "2" => 2,
        "3" => 3,
        "4" => 4,
        _ => return None,
    };
    VECTOR_COMPONENTS
        .iter()
        .find(|(name, _)| *name == base)
        .map(|&(_, scalar)| (scalar, n))
}

/// The type a header's name stands for: a vector type or an integer typedef.
pub fn named_type(word: &str) -> Option<Type> {
    if let Some((scalar, n)) = vector_type(word) {
        return Some(Type::Vector(scalar, n));
    }
    if let Some(&(_, ty)) = HALF_TYPES.iter().find(|(name, _)| *name == word) {
        return Some(ty.clone());
    }
    INTEGER_TYPEDEFS
        .iter()
        .find(|(name, _)| *name == word)
        .map(|&(_, scalar)| Type::Scalar(scalar))
}

#[cfg(test)]
mod tests {
    use super::{named_type, vector_type};
    use crate::ast::{Scalar, Type};

    /// `sizeof` and `alignof` of every vector type, as nvcc 13.0 prints them for sm_90.
    #[test]
    fn every_vector_type_has_nvccs_size_and_alignment() {
        let measured: [(&str, u64, u64); 49] = [
            ("char1", 1, 1),
            ("char2", 2, 2),
            ("char3", 3, 1),
            ("char4", 4, 4),
            ("uchar1", 1, 1),
            ("uchar2", 2, 2),
            ("uchar3", 3, 1),
            ("uchar4", 4, 4),
            ("short1", 2, 2),
            ("short2", 4, 4),
            ("short3", 6, 2),
            ("short4", 8, 8),
            ("ushort1", 2, 2),
            ("ushort2", 4, 4),
            ("ushort3", 6, 2),
            ("ushort4", 8, 8),
            ("int1", 4, 4),
            ("int2", 8, 8),
            ("int3", 12, 4),
            ("int4", 16, 16),
            ("uint1", 4, 4),
            ("uint2", 8, 8),
            ("uint3", 12, 4),
            ("uint4", 16, 16),
            ("long1", 8, 8),
            ("long2", 16, 16),
            ("long3", 24, 8),
            ("long4", 32, 16),
            ("ulong1", 8, 8),
            ("ulong2", 16, 16),
            ("ulong3", 24, 8),
            ("ulong4", 32, 16),
            ("longlong1", 8, 8),
            ("longlong2", 16, 16),
            ("longlong3", 24, 8),
            ("longlong4", 32, 16),
            ("ulonglong1", 8, 8),
            ("ulonglong2", 16, 16),
            ("ulonglong3", 24, 8),
            ("ulonglong4", 32, 16),
            ("float1", 4, 4),
            ("float2", 8, 8),
            ("float3", 12, 4),
            ("float4", 16, 16),
            ("double1", 8, 8),
            ("double2", 16, 16),
            ("double3", 24, 8),
            ("double4", 32, 16),
            ("dim3", 12, 4),
        ];
        for (name, size, align) in measured {
            let ty = named_type(name).expect(name);
            assert_eq!((ty.size(), ty.align()), (size, align), "{name}");
        }
    }

    #[test]
    fn vector_types_show_with_their_first_name() {
        assert_eq!(Type::Vector(Scalar::F32, 3).to_string(), "float3");
        assert_eq!(Type::Vector(Scalar::I64, 2).to_string(), "longlong2");
        assert_eq!(Type::Vector(Scalar::U8, 4).to_string(), "uchar4");
        assert_eq!(Type::Vector(Scalar::U16, 2).to_string(), "ushort2");
    }

    #[test]
    fn words_that_are_no_vector_type_are_not_taken_for_one() {
        for word in [
            "float", "float5", "float0", "floats4", "4", "", "dim2", "half2",
        ] {
            assert_eq!(vector_type(word), None, "{word}");
        }
        assert_eq!(named_type("uint8_t"), Some(Type::Scalar(Scalar::U8)));
        assert_eq!(named_type("size_t"), Some(Type::Scalar(Scalar::U64)));
        assert_eq!(named_type("float"), None);
    }

    #[test]
    fn a_double4_loads_in_two_halves_and_a_char3_byte_by_byte() {
        assert_eq!(Scalar::F64.vector_align(4), 16);
        assert_eq!(Scalar::I8.vector_align(3), 1);
        assert_eq!(Scalar::F32.vector_align(1), 4);
    }
}
