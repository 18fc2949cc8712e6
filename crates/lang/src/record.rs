//! The layout of a `struct` or `class`: its members' offsets, its size and alignment, and the
//! scalar leaves a value of it is held in.
//!
//! nvcc lays a struct out as the host's C ABI does (CUDA C++ Programming Guide, "C++ Language
//! Support"; C11 6.7.2.1): each member at the next offset that is a multiple of its alignment,
//! the struct aligned as its most aligned member (or as `__align__(n)`, `alignas(n)`,
//! `__attribute__((aligned(n)))` ask, if more), and its size rounded up to its alignment, so that
//! the elements of an array of it stay aligned (tail padding). An empty struct takes one byte,
//! as in C++ ([intro.object]).
//!
//! A struct value in registers is its scalar leaves in member order, one register each, as a
//! vector's components are (`float3` is three registers). How a whole struct moves between
//! memory and registers is `copy_plan`: in the widest accesses its alignment allows, as nvcc
//! copies it (`tests/reference/vector_loads`: a 12-byte struct of three floats is three 4-byte
//! loads, the same aligned to 16 one 16-byte load).

use crate::ast::{Field, Leaf, Record, Scalar, Type};

/// The most scalar leaves a struct may have to be held in registers or copied whole; a bigger
/// one (a struct with a large array member) can still live in memory and have its members read.
pub const MAX_LEAVES: usize = 64;

fn round_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align.max(1)) * align.max(1)
}

/// Appends the scalar leaves of a value of `ty` at `offset`; false when they pass `MAX_LEAVES`
/// (or the type has no value, `void`). Nested structs add their own leaves; only array
/// dimensions recurse, at most `limits::MAX_TYPE_DEPTH` deep.
fn push_leaves(ty: &Type, offset: u64, out: &mut Vec<Leaf>) -> bool {
    match ty {
        Type::Scalar(scalar) => out.push(Leaf {
            offset,
            scalar: *scalar,
        }),
        Type::Pointer { .. } => out.push(Leaf {
            offset,
            scalar: Scalar::U64,
        }),
        Type::Vector(scalar, n) => {
            for k in 0..u64::from(*n) {
                out.push(Leaf {
                    offset: offset + k * u64::from(scalar.size()),
                    scalar: *scalar,
                });
            }
        }
        Type::Array(elem, Some(n)) => {
            if *n as usize > MAX_LEAVES {
                return false;
            }
            for k in 0..u64::from(*n) {
                if !push_leaves(elem, offset + k * elem.size(), out) {
                    return false;
                }
            }
        }
        Type::Struct(record) => match &record.leaves {
            Some(leaves) => out.extend(leaves.iter().map(|leaf| Leaf {
                offset: offset + leaf.offset,
                scalar: leaf.scalar,
            })),
            None => return false,
        },
        Type::Void | Type::Array(_, None) => return false,
    }
    out.len() <= MAX_LEAVES
}

/// The leaves a value of `ty` takes in registers (a scalar or pointer one, a vector its
/// components, a struct its leaves), when it can be held there.
pub fn leaf_count(ty: &Type) -> Option<usize> {
    let mut leaves = Vec::new();
    push_leaves(ty, 0, &mut leaves).then_some(leaves.len())
}

impl Record {
    /// Lays out the members `members` (name, type, in declaration order) of the struct `name`;
    /// `align` is what an alignment attribute on it asks. The error says which member cannot be
    /// a member.
    pub fn lay_out(
        id: u32,
        name: &str,
        members: Vec<(String, Type)>,
        align: Option<u64>,
    ) -> Result<Record, String> {
        let mut fields = Vec::with_capacity(members.len());
        let mut offset = 0u64;
        let mut max_align = 1u64;
        let mut leaves = Some(Vec::new());
        let mut has_array = false;
        for (field, ty) in members {
            if matches!(ty, Type::Void | Type::Array(_, None)) {
                return Err(format!("the member '{field}' cannot have type '{ty}'"));
            }
            if fields.iter().any(|f: &Field| f.name == field) {
                return Err(format!("two members are named '{field}'"));
            }
            has_array |=
                matches!(ty, Type::Array(..)) || matches!(&ty, Type::Struct(r) if r.has_array);
            let member_align = ty.align();
            offset = round_up(offset, member_align);
            max_align = max_align.max(member_align);
            let first_leaf = leaves.as_ref().map_or(0, Vec::len) as u32;
            if let Some(list) = &mut leaves {
                if !push_leaves(&ty, offset, list) {
                    leaves = None;
                }
            }
            let size = ty.size();
            fields.push(Field {
                name: field,
                ty,
                offset,
                first_leaf,
            });
            offset = offset.saturating_add(size);
            if offset > 1 << 30 {
                return Err(format!("the struct '{name}' is too large"));
            }
        }
        if let Some(n) = align {
            if !n.is_power_of_two() || n > 1 << 16 {
                return Err(format!(
                    "the alignment of '{name}' must be a power of two up to 65536, not {n}"
                ));
            }
            max_align = max_align.max(n);
        }
        Ok(Record {
            id,
            name: name.to_string(),
            fields,
            size: round_up(offset.max(1), max_align),
            align: max_align,
            leaves,
            has_array,
        })
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The number of registers a value takes, when it can be held in registers.
    pub fn width(&self) -> Option<u8> {
        self.leaves.as_ref().map(|l| l.len() as u8)
    }

    /// How a whole value is copied between memory and registers: in the widest accesses the
    /// struct's alignment allows, as nvcc copies it (`tests/reference/vector_loads`). Each access
    /// is `n` components of one scalar at a byte offset, `n` in 1, 2 or 4 and as wide as
    /// `Scalar::vector_align` makes one instruction; a component is a leaf (its index) or tail or
    /// inner padding (`None`), which the access moves too, as nvcc's 16-byte load of a 12-byte
    /// struct aligned to 16 does. Accesses that would mix scalar types are split, a conservative
    /// reading of what nvcc does (it moves bytes, not types).
    pub fn copy_plan(&self) -> Vec<Access> {
        let Some(leaves) = &self.leaves else {
            return Vec::new();
        };
        let mut plan = Vec::new();
        let mut at = 0u64;
        while at < self.size {
            let mut step = 1;
            for width in [16u64, 8, 4, 2, 1] {
                if width > self.align || !at.is_multiple_of(width) || at + width > self.size {
                    continue;
                }
                if let Some(access) = access_at(leaves, at, width) {
                    step = width;
                    if let Some(access) = access {
                        plan.push(access);
                    }
                    break;
                }
            }
            at += step;
        }
        plan
    }
}

/// One load or store instruction of a whole-struct copy (`Record::copy_plan`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub offset: u64,
    pub scalar: Scalar,
    /// Per component, the leaf it holds or `None` for padding.
    pub parts: Vec<Option<u32>>,
}

/// The access of `width` bytes at `at`, if one instruction can make it: `Some(None)` for bytes
/// of padding alone (nothing to move), `None` when the leaves there do not fit one access.
fn access_at(leaves: &[Leaf], at: u64, width: u64) -> Option<Option<Access>> {
    let inside: Vec<(usize, &Leaf)> = leaves
        .iter()
        .enumerate()
        .filter(|(_, leaf)| {
            leaf.offset < at + width && leaf.offset + u64::from(leaf.scalar.size()) > at
        })
        .collect();
    let Some((_, first)) = inside.first() else {
        return Some(None);
    };
    let scalar = first.scalar;
    let size = u64::from(scalar.size());
    let n = width / size;
    if !width.is_multiple_of(size)
        || !matches!(n, 1 | 2 | 4)
        || u64::from(scalar.vector_align(n as u8)) != width
    {
        return None;
    }
    let mut parts = vec![None; n as usize];
    for (index, leaf) in inside {
        let relative = leaf.offset.checked_sub(at)?;
        if leaf.scalar != scalar || relative % size != 0 {
            return None;
        }
        parts[(relative / size) as usize] = Some(index as u32);
    }
    Some(Some(Access {
        offset: at,
        scalar,
        parts,
    }))
}

#[cfg(test)]
mod tests {
    use super::Record;
    use crate::ast::{Scalar, Type};
    use std::sync::Arc;

    fn layout(members: &[(&str, Type)], align: Option<u64>) -> Record {
        let members = members
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect();
        Record::lay_out(0, "S", members, align).expect("lays out")
    }

    fn offsets(record: &Record) -> Vec<u64> {
        record.fields.iter().map(|f| f.offset).collect()
    }

    const F: Type = Type::Scalar(Scalar::F32);

    #[test]
    fn a_char_before_a_double_is_padded_to_eight_and_the_tail_to_the_alignment() {
        // char at 0, 7 bytes of padding, double at 8, char at 16, tail padding to 24.
        let s = layout(
            &[
                ("c", Type::Scalar(Scalar::I8)),
                ("d", Type::Scalar(Scalar::F64)),
                ("e", Type::Scalar(Scalar::I8)),
            ],
            None,
        );
        assert_eq!(offsets(&s), [0, 8, 16]);
        assert_eq!((s.size, s.align), (24, 8));
    }

    #[test]
    fn three_floats_are_twelve_bytes_aligned_to_four_or_sixteen_when_asked() {
        let members = [("a", F), ("b", F), ("c", F)];
        let plain = layout(&members, None);
        assert_eq!((plain.size, plain.align), (12, 4));
        let aligned = layout(&members, Some(16));
        assert_eq!((aligned.size, aligned.align), (16, 16));
        assert_eq!(offsets(&aligned), [0, 4, 8]);
    }

    #[test]
    fn a_short_int_and_pointer_pack_as_the_host_abi_does() {
        // short at 0, int at 4, pointer at 8: 16 bytes aligned to 8.
        let s = layout(
            &[
                ("s", Type::Scalar(Scalar::I16)),
                ("i", Type::Scalar(Scalar::I32)),
                ("p", Type::pointer_to(F, false)),
            ],
            None,
        );
        assert_eq!(offsets(&s), [0, 4, 8]);
        assert_eq!((s.size, s.align), (16, 8));
    }

    #[test]
    fn a_nested_struct_and_a_float3_keep_their_alignment() {
        // Inner {char; double} is 16 bytes aligned to 8; after a char it starts at 8; a float3
        // (aligned to 4) follows at 24, and the whole is 40 bytes aligned to 8.
        let inner = layout(
            &[
                ("c", Type::Scalar(Scalar::I8)),
                ("d", Type::Scalar(Scalar::F64)),
            ],
            None,
        );
        let s = layout(
            &[
                ("k", Type::Scalar(Scalar::I8)),
                ("in", Type::Struct(Arc::new(inner))),
                ("v", Type::Vector(Scalar::F32, 3)),
            ],
            None,
        );
        assert_eq!(offsets(&s), [0, 8, 24]);
        assert_eq!((s.size, s.align), (40, 8));
        assert_eq!(s.fields[2].first_leaf, 3);
        assert_eq!(s.leaves.as_ref().map(Vec::len), Some(6));
    }

    #[test]
    fn an_empty_struct_takes_one_byte() {
        let s = layout(&[], None);
        assert_eq!((s.size, s.align), (1, 1));
    }

    #[test]
    fn a_twelve_byte_struct_copies_in_three_words_and_aligned_to_sixteen_in_one_access() {
        let members = [("a", F), ("b", F), ("c", F)];
        let plain = layout(&members, None).copy_plan();
        assert_eq!(plain.len(), 3);
        assert!(plain.iter().all(|a| a.parts.len() == 1));
        let aligned = layout(&members, Some(16)).copy_plan();
        assert_eq!(aligned.len(), 1);
        assert_eq!(aligned[0].parts, [Some(0), Some(1), Some(2), None]);
    }

    #[test]
    fn a_struct_of_mixed_scalars_copies_each_in_its_own_access() {
        // {int; float} aligned to 8 would be one 8-byte access to nvcc; memplay makes two.
        let s = layout(&[("i", Type::Scalar(Scalar::I32)), ("f", F)], Some(8));
        let plan = s.copy_plan();
        assert_eq!(plan.iter().map(|a| a.offset).collect::<Vec<_>>(), [0, 4]);
    }

    #[test]
    fn a_large_array_member_leaves_no_register_form() {
        // A hundred floats are more leaves than registers hold (`MAX_LEAVES`).
        let s = layout(&[("v", Type::Array(Box::new(F), Some(100)))], None);
        assert_eq!(s.size, 400);
        assert!(s.leaves.is_none() && s.has_array);
        assert!(s.copy_plan().is_empty());
    }
}
