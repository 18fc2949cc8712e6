//! Hashing for the simulator's integer keys: sectors, addresses, lines and source places.
//!
//! The standard library's SipHash guards a map against keys chosen to collide, which these keys,
//! computed by the simulator itself, never are; it cost a fifth of a simulation's time. The hasher
//! here takes one multiply and one rotate per integer, the step of the `FxHasher` that the Rust
//! compiler uses for its own maps. It has no random seed, so a map's order of iteration is the
//! same on every run.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher for integer keys.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntegerHasher(u64);

impl Hasher for IntegerHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

/// A map with integer keys hashed by `IntegerHasher`, for the simulator's per-record look-ups.
pub type IntegerHashMap<K, V> = HashMap<K, V, BuildHasherDefault<IntegerHasher>>;

/// A set of integer keys hashed by `IntegerHasher`.
pub type IntegerHashSet<K> = HashSet<K, BuildHasherDefault<IntegerHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of(key: impl Hash) -> u64 {
        BuildHasherDefault::<IntegerHasher>::default().hash_one(key)
    }

    #[test]
    fn an_integer_hashes_alike_whatever_its_width() {
        assert_eq!(hash_of(7u32), hash_of(7u64));
        assert_eq!(hash_of(7usize), hash_of(7u64));
    }

    #[test]
    fn neighbouring_sectors_and_swapped_pairs_hash_apart() {
        let hashes: HashSet<u64> = (0..4096u64).map(hash_of).collect();
        assert_eq!(hashes.len(), 4096);
        assert_ne!(hash_of((1u32, 2u64)), hash_of((2u32, 1u64)));
    }

    #[test]
    fn a_map_iterates_in_the_same_order_every_time_it_is_built() {
        let build = || {
            let mut map: IntegerHashMap<u64, u64> = IntegerHashMap::default();
            for key in (0..1000u64).map(|k| k * 32) {
                map.insert(key, key / 32);
            }
            map.into_iter().collect::<Vec<_>>()
        };
        assert_eq!(build(), build());
    }
}
