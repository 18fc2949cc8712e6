//! Simulated device memory: buffers filled on first touch, and the tagged pointers into them.
//!
//! A pointer is one 64-bit word: the top 16 bits name the memory object it points into (a buffer,
//! a `__shared__` array, a per-thread array, ...), the low 48 bits are the byte address in that
//! object's memory space, a two's-complement number from -2^47 to 2^47 - 1 (so that `s - 1` of a
//! shared array at address 0 is representable). Pointer arithmetic is checked: a move that would
//! leave that range is refused (`pointer_add` gives `None`), and the interpreter reports it as the
//! out-of-bounds index it is, never as a wrapped-around address. Keeping the object with the pointer lets the interpreter report an
//! out-of-bounds index against the array the program meant ("index 1048576 is outside buffer
//! 'in'"), even when the address happens to fall into a neighbouring buffer, and lets one pointer
//! variable point into different spaces in different lanes, as seed 000's "About Pointers" slide
//! shows. Global buffers are split into pages that are filled the first time they are touched, with
//! seeded pseudo-random values or what the launch's `fill::Fill` asks for, so a launch over 64 MB
//! matrices only materialises what the sampled blocks read.

use super::ast::Scalar;
use crate::fill::Fill as LaunchFill;

/// Bits of a pointer that hold the address.
pub const ADDRESS_BITS: u32 = 48;
pub const ADDRESS_MASK: u64 = (1 << ADDRESS_BITS) - 1;

/// The lowest and one past the highest address a pointer can hold.
pub const ADDRESS_MIN: i64 = -(1 << (ADDRESS_BITS - 1));
pub const ADDRESS_END: i64 = 1 << (ADDRESS_BITS - 1);

/// The pointer to byte `address` of object `object` (`address` as the low 48 bits of an `i64`).
pub fn pointer(object: usize, address: u64) -> u64 {
    ((object as u64 + 1) << ADDRESS_BITS) | (address & ADDRESS_MASK)
}

/// The address a pointer holds, sign-extended from its 48 bits.
pub fn pointer_address(p: u64) -> i64 {
    ((p << (64 - ADDRESS_BITS)) as i64) >> (64 - ADDRESS_BITS)
}

/// `address + bytes`, if both the sum and the address it gives are representable.
#[inline]
pub fn address_add(address: i64, bytes: i64) -> Option<i64> {
    let sum = address.checked_add(bytes)?;
    (ADDRESS_MIN..ADDRESS_END).contains(&sum).then_some(sum)
}

/// The object a pointer points into, `None` for the null pointer.
pub fn pointer_object(p: u64) -> Option<usize> {
    match p >> ADDRESS_BITS {
        0 => None,
        tag => Some(tag as usize - 1),
    }
}

/// Moves a pointer by `bytes`, keeping its object; `None` when the address would leave the
/// representable range (the move is out of bounds of any object).
#[inline]
pub fn pointer_add(p: u64, bytes: i64) -> Option<u64> {
    let moved = address_add(pointer_address(p), bytes)?;
    Some((p & !ADDRESS_MASK) | (moved as u64 & ADDRESS_MASK))
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// a tiny, good-enough mixer for seeded test data.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How a buffer's bytes start out: the page-level form of a launch's `fill::Fill`, with the
/// element type it needs, and the initializers of `__device__` variables.
#[derive(Clone, Debug, PartialEq)]
pub enum Fill {
    Zero,
    /// Random values of this element type: floats in [0, 1), integers from 0 to 15
    /// (`fill::Fill::Small`).
    Random(Scalar),
    /// Random values over the whole element type: every bit pattern of an integer, floats in
    /// [-1, 1) (`fill::Fill::Random`).
    Uniform(Scalar),
    /// Element i holds i, converted to the element type as C converts it (`fill::Fill::Iota`).
    Iota(Scalar),
    Bytes(Vec<u8>),
}

impl Fill {
    /// The contents a launch's `fill` gives a buffer that holds `self` by default: `Random` of
    /// its element type, or `Zero` for a buffer of pointers, which stays null whatever the fill,
    /// as no fill can name an object for its pointers to point into.
    pub fn with_launch_fill(self, fill: LaunchFill) -> Fill {
        match (fill, self) {
            (LaunchFill::Small, contents) => contents,
            (LaunchFill::Zeros, _) => Fill::Zero,
            (LaunchFill::Random, Fill::Random(scalar)) => Fill::Uniform(scalar),
            (LaunchFill::Iota, Fill::Random(scalar)) => Fill::Iota(scalar),
            (_, contents) => contents,
        }
    }
}

/// The pseudo-random words of page `index` of a buffer whose seed is `stream`: one SplitMix64
/// seed per page, then xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
/// generators, scrambled", 2016) per element, so the contents depend only on the seed and the
/// page, not on the order in which pages are touched.
fn page_words(stream: u64, index: usize) -> impl FnMut() -> u64 {
    let mut state = splitmix64(stream ^ splitmix64(index as u64)) | 1;
    move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

const PAGE_BITS: u32 = 14;
const PAGE_BYTES: usize = 1 << PAGE_BITS;

/// A byte-addressed buffer whose pages are created when first touched.
#[derive(Clone, Debug)]
pub struct PagedBuffer {
    size: u64,
    pages: Vec<Option<Box<[u8]>>>,
    fill: Fill,
    /// Mixed into the random values, so buffers of one launch differ.
    stream: u64,
}

impl PagedBuffer {
    pub fn new(size: u64, fill: Fill, stream: u64) -> PagedBuffer {
        let n_pages = size.div_ceil(PAGE_BYTES as u64) as usize;
        PagedBuffer {
            size,
            pages: vec![None; n_pages],
            fill,
            stream,
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    #[inline]
    fn page(&mut self, index: usize) -> &mut [u8] {
        if self.pages[index].is_none() {
            self.materialize(index);
        }
        match &mut self.pages[index] {
            Some(page) => page,
            None => &mut [],
        }
    }

    /// Creates page `index` with its initial contents.
    #[cold]
    fn materialize(&mut self, index: usize) {
        let mut page = vec![0u8; PAGE_BYTES].into_boxed_slice();
        let start = index * PAGE_BYTES;
        match &self.fill {
            Fill::Zero => {}
            Fill::Bytes(bytes) => {
                let end = bytes.len().min(start + PAGE_BYTES);
                if start < end {
                    page[..end - start].copy_from_slice(&bytes[start..end]);
                }
            }
            Fill::Random(scalar) => {
                let mut next = page_words(self.stream, index);
                match scalar {
                    Scalar::F32 => {
                        for chunk in page.chunks_exact_mut(4) {
                            let v = (next() >> 40) as f32 / (1u64 << 24) as f32;
                            chunk.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    Scalar::F64 => {
                        for chunk in page.chunks_exact_mut(8) {
                            let v = (next() >> 11) as f64 / (1u64 << 53) as f64;
                            chunk.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    other => {
                        let size = other.size() as usize;
                        let modulus = if *other == Scalar::Bool { 2 } else { 16 };
                        for chunk in page.chunks_exact_mut(size) {
                            chunk[0] = (next() % modulus) as u8;
                        }
                    }
                }
            }
            Fill::Uniform(scalar) => {
                // The same words as `Random`, mapped onto the whole type: the top bits of an
                // xorshift64* word are its best.
                let mut next = page_words(self.stream, index);
                match scalar {
                    Scalar::F32 => {
                        // k / 2^23 for k from -2^23 to 2^23 - 1: exact in an f32.
                        for chunk in page.chunks_exact_mut(4) {
                            let k = (next() >> 40) as i64 - (1 << 23);
                            let v = k as f32 / (1u64 << 23) as f32;
                            chunk.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    Scalar::F64 => {
                        for chunk in page.chunks_exact_mut(8) {
                            let k = (next() >> 11) as i64 - (1 << 52);
                            let v = k as f64 / (1u64 << 52) as f64;
                            chunk.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    Scalar::Bool => {
                        for byte in page.iter_mut() {
                            *byte = (next() >> 63) as u8;
                        }
                    }
                    other => {
                        let size = other.size() as usize;
                        for chunk in page.chunks_exact_mut(size) {
                            let word = next() >> (64 - 8 * size);
                            chunk.copy_from_slice(&word.to_le_bytes()[..size]);
                        }
                    }
                }
            }
            Fill::Iota(scalar) => {
                let size = scalar.size() as usize;
                let first = (start / size) as u64;
                for (i, chunk) in (first..).zip(page.chunks_exact_mut(size)) {
                    let bits = match scalar {
                        Scalar::F32 => u64::from((i as f32).to_bits()),
                        Scalar::F64 => (i as f64).to_bits(),
                        Scalar::Bool => u64::from(i != 0),
                        // C's conversion to a narrower integer keeps the low bytes.
                        _ => i,
                    };
                    chunk.copy_from_slice(&bits.to_le_bytes()[..size]);
                }
            }
        }
        self.pages[index] = Some(page);
    }

    /// Reads `out.len()` bytes at `offset` (the caller has checked the bounds).
    pub fn read(&mut self, offset: u64, out: &mut [u8]) {
        let mut done = 0;
        while done < out.len() {
            let at = offset as usize + done;
            let (index, within) = (at >> PAGE_BITS, at & (PAGE_BYTES - 1));
            let n = (PAGE_BYTES - within).min(out.len() - done);
            if index >= self.pages.len() {
                return;
            }
            let page = self.page(index);
            out[done..done + n].copy_from_slice(&page[within..within + n]);
            done += n;
        }
    }

    /// Reads a little-endian value of `size` bytes (1 to 8) that does not cross a page, as an
    /// aligned access never does.
    #[inline]
    pub fn read_le(&mut self, offset: u64, size: usize) -> u64 {
        let at = offset as usize;
        let (index, within) = (at >> PAGE_BITS, at & (PAGE_BYTES - 1));
        if index >= self.pages.len() || within + size > PAGE_BYTES || size > 8 {
            let mut out = [0u8; 8];
            self.read(offset, &mut out[..size.min(8)]);
            return u64::from_le_bytes(out);
        }
        let page = self.page(index);
        let b = &page[within..within + size];
        match size {
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            8 => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            _ => u64::from(b[0]),
        }
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) {
        let mut done = 0;
        while done < data.len() {
            let at = offset as usize + done;
            let (index, within) = (at >> PAGE_BITS, at & (PAGE_BYTES - 1));
            let n = (PAGE_BYTES - within).min(data.len() - done);
            if index >= self.pages.len() {
                return;
            }
            let page = self.page(index);
            page[within..within + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
    }

    /// The whole contents (materialising every page).
    pub fn to_vec(&mut self) -> Vec<u8> {
        let mut out = vec![0u8; self.size as usize];
        self.read(0, &mut out);
        out
    }
}

/// Decodes a little-endian scalar into the interpreter's canonical register bits.
pub fn decode(bytes: &[u8], scalar: Scalar) -> u64 {
    let mut b = [0u8; 8];
    let n = (scalar.size() as usize).min(bytes.len());
    b[..n].copy_from_slice(&bytes[..n]);
    let raw = u64::from_le_bytes(b);
    match scalar {
        Scalar::Bool => u64::from(raw & 0xFF != 0),
        Scalar::I8 => raw as u8 as i8 as i64 as u64,
        Scalar::I16 => raw as u16 as i16 as i64 as u64,
        Scalar::I32 => raw as u32 as i32 as i64 as u64,
        _ => raw,
    }
}

/// Encodes canonical register bits as the scalar's little-endian bytes.
pub fn encode(bits: u64, scalar: Scalar, out: &mut [u8]) {
    let n = (scalar.size() as usize).min(out.len());
    out[..n].copy_from_slice(&bits.to_le_bytes()[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(fill: Fill, size: u64, expected_first_bytes: &[u8]) {
        let mut buffer = PagedBuffer::new(size, fill, 7);
        let all = buffer.to_vec();
        assert_eq!(all.len() as u64, size);
        assert_eq!(&all[..expected_first_bytes.len()], expected_first_bytes);
    }

    #[test]
    fn zero_and_byte_fills_read_back() {
        check(Fill::Zero, 100_000, &[0, 0, 0, 0]);
        check(
            Fill::Bytes(vec![13, 0, 0, 0]),
            8,
            &[13, 0, 0, 0, 0, 0, 0, 0],
        );
    }

    #[test]
    fn random_floats_lie_in_zero_one_and_repeat_for_a_seed() {
        let mut a = PagedBuffer::new(40_000, Fill::Random(Scalar::F32), 1);
        let mut b = PagedBuffer::new(40_000, Fill::Random(Scalar::F32), 1);
        let (a, b) = (a.to_vec(), b.to_vec());
        assert_eq!(a, b);
        for chunk in a.chunks_exact(4) {
            let v = f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            assert!((0.0..1.0).contains(&v), "{v}");
        }
    }

    #[test]
    fn iota_counts_elements_across_pages_and_wraps_as_c_converts() {
        let mut doubles = PagedBuffer::new(40_000, Fill::Iota(Scalar::F64), 1);
        let doubles: Vec<f64> = doubles
            .to_vec()
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("eight bytes")))
            .collect();
        assert_eq!(doubles, (0..5000).map(f64::from).collect::<Vec<_>>());
        let mut bytes = PagedBuffer::new(300, Fill::Iota(Scalar::U8), 1);
        let bytes = bytes.to_vec();
        assert_eq!((bytes[255], bytes[256], bytes[299]), (255, 0, 43));
        let mut bools = PagedBuffer::new(3, Fill::Iota(Scalar::Bool), 1);
        assert_eq!(bools.to_vec(), [0, 1, 1]);
    }

    #[test]
    fn uniform_values_use_the_whole_width_of_the_type() {
        let mut longs = PagedBuffer::new(8_000, Fill::Uniform(Scalar::I64), 1);
        let longs: Vec<u64> = longs
            .to_vec()
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("eight bytes")))
            .collect();
        // Of 1,000 uniform 64-bit words, about half have their top bit set.
        assert!(longs.iter().filter(|v| **v >= 1 << 63).count() > 400);
        let mut bytes = PagedBuffer::new(1_000, Fill::Uniform(Scalar::U8), 1);
        assert!(bytes.to_vec().iter().filter(|b| **b >= 128).count() > 400);
        let mut bools = PagedBuffer::new(1_000, Fill::Uniform(Scalar::Bool), 1);
        assert!(bools.to_vec().iter().all(|b| *b <= 1));
    }

    #[test]
    fn a_launch_fill_leaves_a_buffer_of_pointers_null() {
        for fill in LaunchFill::ALL {
            assert_eq!(Fill::Zero.with_launch_fill(fill), Fill::Zero);
        }
        let small = Fill::Random(Scalar::I32);
        assert_eq!(small.clone().with_launch_fill(LaunchFill::Small), small);
        assert_eq!(
            small.clone().with_launch_fill(LaunchFill::Random),
            Fill::Uniform(Scalar::I32)
        );
        assert_eq!(
            small.clone().with_launch_fill(LaunchFill::Iota),
            Fill::Iota(Scalar::I32)
        );
        assert_eq!(small.with_launch_fill(LaunchFill::Zeros), Fill::Zero);
    }

    #[test]
    fn a_write_across_a_page_boundary_reads_back() {
        let mut buffer = PagedBuffer::new(1 << 16, Fill::Zero, 0);
        let at = (1 << 14) - 2;
        buffer.write(at, &[1, 2, 3, 4]);
        let mut out = [0u8; 4];
        buffer.read(at, &mut out);
        assert_eq!(out, [1, 2, 3, 4]);
    }

    #[test]
    fn pointers_keep_their_object_when_moved() {
        let p = pointer(3, 0x1000_0000);
        assert_eq!(pointer_object(p), Some(3));
        let q = pointer_add(p, -4).expect("a small move");
        assert_eq!(pointer_object(q), Some(3));
        assert_eq!(q & ADDRESS_MASK, 0x0FFF_FFFC);
        assert_eq!(pointer_object(0), None);
    }

    #[test]
    fn a_pointer_below_address_zero_is_negative_and_moves_back() {
        let s = pointer(2, 0);
        let before = pointer_add(s, -4).expect("s - 1 is representable");
        assert_eq!(pointer_address(before), -4);
        assert_eq!(pointer_object(before), Some(2));
        assert_eq!(pointer_add(before, 4), Some(s));
    }

    #[test]
    fn a_move_out_of_the_address_range_is_refused_not_wrapped() {
        let p = pointer(0, 0x1000_0000);
        assert_eq!(pointer_add(p, i64::MIN), None);
        assert_eq!(pointer_add(p, 1 << 62), None);
        assert_eq!(pointer_add(p, ADDRESS_END - 0x1000_0000), None);
        let last = pointer_add(p, ADDRESS_END - 0x1000_0000 - 1).expect("the highest address");
        assert_eq!(pointer_address(last), ADDRESS_END - 1);
        assert_eq!(pointer_object(last), Some(0));
    }
}
