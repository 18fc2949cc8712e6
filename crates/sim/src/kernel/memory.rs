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
//! shows. Global buffers are split into pages that are filled with seeded pseudo-random values the
//! first time they are touched, so a launch over 64 MB matrices only materialises what the sampled
//! blocks read.

use super::ast::Scalar;

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

/// How a buffer's bytes start out.
#[derive(Clone, Debug, PartialEq)]
pub enum Fill {
    Zero,
    /// Random values of this element type: floats in [0, 1), integers from 0 to 15.
    Random(Scalar),
    Bytes(Vec<u8>),
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
                // One SplitMix64 seed per page, then xorshift64* (Vigna, "An experimental
                // exploration of Marsaglia's xorshift generators, scrambled", 2016) per element:
                // the contents depend only on the seed and the page, not on the order of touching.
                let mut state = splitmix64(self.stream ^ splitmix64(index as u64)) | 1;
                let mut next = move || {
                    state ^= state >> 12;
                    state ^= state << 25;
                    state ^= state >> 27;
                    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
                };
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
