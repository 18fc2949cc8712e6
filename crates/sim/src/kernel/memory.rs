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
pub(crate) fn pointer_address(p: u64) -> i64 {
    ((p << (64 - ADDRESS_BITS)) as i64) >> (64 - ADDRESS_BITS)
}

/// `address + bytes`, if both the sum and the address it gives are representable.
#[inline]
pub(crate) fn address_add(address: i64, bytes: i64) -> Option<i64> {
    let sum = address.checked_add(bytes)?;
    (ADDRESS_MIN..ADDRESS_END).contains(&sum).then_some(sum)
}

/// The object a pointer points into, `None` for the null pointer.
pub(crate) fn pointer_object(p: u64) -> Option<usize> {
    match p >> ADDRESS_BITS {
        0 => None,
        tag => Some(tag as usize - 1),
    }
}

/// Moves a pointer by `bytes`, keeping its object; `None` when the address would leave the
/// representable range (the move is out of bounds of any object).
#[inline]
pub(crate) fn pointer_add(p: u64, bytes: i64) -> Option<u64> {
    let moved = address_add(pointer_address(p), bytes)?;
    Some((p & !ADDRESS_MASK) | (moved as u64 & ADDRESS_MASK))
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// a tiny, good-enough mixer for seeded test data.
pub(crate) fn splitmix64(mut z: u64) -> u64 {
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
    pub(crate) fn with_launch_fill(self, fill: LaunchFill) -> Fill {
        match (fill, self) {
            (LaunchFill::Small, contents) => contents,
            (LaunchFill::Zeros, _) => Fill::Zero,
            (LaunchFill::Random, Fill::Random(scalar)) => Fill::Uniform(scalar),
            (LaunchFill::Iota, Fill::Random(scalar)) => Fill::Iota(scalar),
            (_, contents) => contents,
        }
    }
}

/// The xorshift64 state update (without the output multiplication) as a linear map over GF(2):
/// column `j` is where the step takes the state with only bit `j` set.
type BitMatrix = [u64; 64];

/// One xorshift64 step of the state (Marsaglia's shifts 12, 25, 27, as Vigna's xorshift64*).
#[inline]
fn xorshift_step(mut state: u64) -> u64 {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    state
}

/// `matrix` applied to `state`: the XOR of the columns of its set bits.
fn apply(matrix: &BitMatrix, state: u64) -> u64 {
    matrix
        .iter()
        .enumerate()
        .filter(|(bit, _)| state >> bit & 1 == 1)
        .fold(0, |out, (_, column)| out ^ column)
}

/// The matrices that take a state `2^i` steps on, for `i` below `PAGE_BITS`: a part of a page is
/// filled from its first element without generating the elements before it, and holds what
/// generating them would give. Computed once, on first use: as a constant table they were 7 KB
/// of the page's download that no compressor shrinks.
fn step_powers() -> &'static [BitMatrix; PAGE_BITS as usize] {
    static POWERS: std::sync::OnceLock<[BitMatrix; PAGE_BITS as usize]> =
        std::sync::OnceLock::new();
    POWERS.get_or_init(|| {
        let mut powers = [[0u64; 64]; PAGE_BITS as usize];
        for (bit, column) in powers[0].iter_mut().enumerate() {
            *column = xorshift_step(1 << bit);
        }
        for i in 1..PAGE_BITS as usize {
            let (done, rest) = powers.split_at_mut(i);
            let previous = &done[i - 1];
            for (column, from) in rest[0].iter_mut().zip(previous) {
                *column = apply(previous, *from);
            }
        }
        powers
    })
}

/// The pseudo-random words of page `index` of a buffer whose seed is `stream`, from its element
/// `first` on: one SplitMix64 seed per page, then xorshift64* (Vigna, "An experimental
/// exploration of Marsaglia's xorshift generators, scrambled", 2016) per element, so the
/// contents depend only on the seed and the page, not on the order in which pages, or parts of
/// them, are touched.
fn page_words(stream: u64, index: usize, first: usize) -> impl FnMut() -> u64 {
    let mut state = splitmix64(stream ^ splitmix64(index as u64)) | 1;
    for (i, power) in step_powers().iter().enumerate() {
        if first >> i & 1 == 1 {
            state = apply(power, state);
        }
    }
    move || {
        state = xorshift_step(state);
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Pages of 16 KB seed the fill: each page's values are one generator's run.
const PAGE_BITS: u32 = 14;
const PAGE_BYTES: usize = 1 << PAGE_BITS;
/// A page is filled in parts of 512 bytes, each when first touched: a matmul's column of `b`
/// touches 64 bytes of each 4 KB row, and filling whole pages for it cost the naive matmul a
/// quarter of its simulation.
const PART_BITS: u32 = 9;
const PART_BYTES: usize = 1 << PART_BITS;
const PARTS_PER_PAGE: usize = PAGE_BYTES / PART_BYTES;

/// A page: its parts, each allocated and filled when first touched, so that a page whose every
/// 4 KB holds one touched part costs its parts' bytes, not the page's.
type Page = [Option<Box<[u8; PART_BYTES]>>; PARTS_PER_PAGE];

/// A byte-addressed buffer whose pages are created, and filled part by part, when first touched.
#[derive(Clone, Debug)]
pub struct PagedBuffer {
    size: u64,
    pages: Vec<Option<Box<Page>>>,
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

    /// Bytes `within..within + n` of page `index`, filled; the range lies inside one part.
    #[inline]
    fn bytes(&mut self, index: usize, within: usize, n: usize) -> &mut [u8] {
        let (part, at) = (within >> PART_BITS, within & (PART_BYTES - 1));
        let filled = self.pages[index]
            .as_ref()
            .is_some_and(|page| page[part].is_some());
        if !filled {
            self.fill_part(index, part);
        }
        match &mut self.pages[index] {
            Some(page) => match &mut page[part] {
                Some(bytes) => &mut bytes[at..at + n],
                None => &mut [],
            },
            None => &mut [],
        }
    }

    /// Creates part `part` of page `index` with its initial contents.
    #[cold]
    fn fill_part(&mut self, index: usize, part: usize) {
        let page =
            self.pages[index].get_or_insert_with(|| Box::new([const { None }; PARTS_PER_PAGE]));
        let mut bytes = Box::new([0u8; PART_BYTES]);
        fill_part(
            &self.fill,
            self.stream,
            index,
            part * PART_BYTES,
            &mut bytes[..],
        );
        page[part] = Some(bytes);
    }

    /// Reads `out.len()` bytes at `offset` (the caller has checked the bounds).
    pub fn read(&mut self, offset: u64, out: &mut [u8]) {
        let mut done = 0;
        while done < out.len() {
            let at = offset as usize + done;
            let (index, within) = (at >> PAGE_BITS, at & (PAGE_BYTES - 1));
            let n = (PART_BYTES - (within & (PART_BYTES - 1))).min(out.len() - done);
            if index >= self.pages.len() {
                return;
            }
            out[done..done + n].copy_from_slice(self.bytes(index, within, n));
            done += n;
        }
    }

    /// Reads a little-endian value of `size` bytes (1 to 8) that does not cross a part, as an
    /// aligned access never does.
    #[inline]
    pub(crate) fn read_le(&mut self, offset: u64, size: usize) -> u64 {
        let at = offset as usize;
        let (index, within) = (at >> PAGE_BITS, at & (PAGE_BYTES - 1));
        if index >= self.pages.len() || (within & (PART_BYTES - 1)) + size > PART_BYTES || size > 8
        {
            let mut out = [0u8; 8];
            self.read(offset, &mut out[..size.min(8)]);
            return u64::from_le_bytes(out);
        }
        let b = self.bytes(index, within, size);
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
            let n = (PART_BYTES - (within & (PART_BYTES - 1))).min(data.len() - done);
            if index >= self.pages.len() {
                return;
            }
            self.bytes(index, within, n)
                .copy_from_slice(&data[done..done + n]);
            done += n;
        }
    }

    /// The whole contents (filling every page).
    pub fn to_vec(&mut self) -> Vec<u8> {
        let mut out = vec![0u8; self.size as usize];
        self.read(0, &mut out);
        out
    }
}

/// Gives `part`, the bytes of page `index` from `start` on, their initial contents from `fill`.
fn fill_part(fill: &Fill, stream: u64, index: usize, start: usize, part: &mut [u8]) {
    // The part's first byte in the buffer.
    let offset = index * PAGE_BYTES + start;
    match fill {
        Fill::Zero => {}
        Fill::Bytes(bytes) => {
            let end = bytes.len().min(offset + part.len());
            if offset < end {
                part[..end - offset].copy_from_slice(&bytes[offset..end]);
            }
        }
        Fill::Random(scalar) => {
            let size = scalar.size().max(1) as usize;
            let mut next = page_words(stream, index, start / size);
            match scalar {
                Scalar::F32 => put_elements(part, 4, || {
                    u64::from(((next() >> 40) as f32 / (1u64 << 24) as f32).to_bits())
                }),
                Scalar::F64 => put_elements(part, 8, || {
                    ((next() >> 11) as f64 / (1u64 << 53) as f64).to_bits()
                }),
                // k / 2^10 in [0, 1): exact in a half and in a bfloat16 up to its 8 bits.
                half if half.is_half() => {
                    put_elements(part, 2, || half.float_bits((next() >> 54) as f64 / 1024.0))
                }
                other => {
                    let modulus = if *other == Scalar::Bool { 2 } else { 16 };
                    put_elements(part, size, || next() % modulus);
                }
            }
        }
        Fill::Uniform(scalar) => {
            // The same words as `Random`, mapped onto the whole type: the top bits of an
            // xorshift64* word are its best.
            let size = scalar.size().max(1) as usize;
            let mut next = page_words(stream, index, start / size);
            match scalar {
                // k / 2^23 for k from -2^23 to 2^23 - 1: exact in an f32.
                Scalar::F32 => put_elements(part, 4, || {
                    let k = (next() >> 40) as i64 - (1 << 23);
                    u64::from((k as f32 / (1u64 << 23) as f32).to_bits())
                }),
                Scalar::F64 => put_elements(part, 8, || {
                    let k = (next() >> 11) as i64 - (1 << 52);
                    (k as f64 / (1u64 << 52) as f64).to_bits()
                }),
                half if half.is_half() => put_elements(part, 2, || {
                    let k = (next() >> 54) as i64 - (1 << 9);
                    half.float_bits(k as f64 / 512.0)
                }),
                Scalar::Bool => put_elements(part, 1, || next() >> 63),
                _ => put_elements(part, size, || next() >> (64 - 8 * size)),
            }
        }
        Fill::Iota(scalar) => {
            let size = scalar.size().max(1) as usize;
            let mut i = (offset / size) as u64;
            put_elements(part, size, || {
                let bits = match scalar {
                    Scalar::F32 => u64::from((i as f32).to_bits()),
                    Scalar::F64 => (i as f64).to_bits(),
                    half if half.is_half() => half.float_bits(i as f64),
                    Scalar::Bool => u64::from(i != 0),
                    // C's conversion to a narrower integer keeps the low bytes.
                    _ => i,
                };
                i += 1;
                bits
            });
        }
    }
}

/// Writes the low `size` bytes of `value()`, little-endian, into each element of `part`.
#[inline]
fn put_elements(part: &mut [u8], size: usize, mut value: impl FnMut() -> u64) {
    for chunk in part.chunks_exact_mut(size) {
        chunk.copy_from_slice(&value().to_le_bytes()[..size]);
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
    fn parts_touched_in_any_order_hold_what_one_run_of_the_generator_gives() {
        // The values of a page are one xorshift64* run from its seed, element after element;
        // a part filled on its own jumps the generator to its first element.
        let stream = 11;
        let size = 3 * PAGE_BYTES as u64 + 100;
        for scalar in [Scalar::F32, Scalar::U8, Scalar::F64, Scalar::I16] {
            let mut expected = Vec::new();
            for index in 0..size.div_ceil(PAGE_BYTES as u64) as usize {
                let mut state = splitmix64(stream ^ splitmix64(index as u64)) | 1;
                let element = scalar.size() as usize;
                for _ in 0..PAGE_BYTES / element {
                    state = xorshift_step(state);
                    let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
                    let bits = match scalar {
                        Scalar::F32 => {
                            u64::from(((word >> 40) as f32 / (1u64 << 24) as f32).to_bits())
                        }
                        Scalar::F64 => ((word >> 11) as f64 / (1u64 << 53) as f64).to_bits(),
                        _ => word % 16,
                    };
                    expected.extend_from_slice(&bits.to_le_bytes()[..element]);
                }
            }
            expected.truncate(size as usize);
            // Backwards, a part at a time, and reading a value across two parts at the end.
            let mut buffer = PagedBuffer::new(size, Fill::Random(scalar), stream);
            let mut read = vec![0u8; size as usize];
            for at in (0..size as usize).step_by(PART_BYTES).rev() {
                let n = PART_BYTES.min(size as usize - at);
                buffer.read(at as u64, &mut read[at..at + n]);
            }
            assert_eq!(read, expected, "{scalar:?} read part by part, backwards");
            let mut straddling = PagedBuffer::new(size, Fill::Random(scalar), stream);
            let mut pair = [0u8; 8];
            straddling.read(PART_BYTES as u64 * 5 - 4, &mut pair);
            assert_eq!(pair[..], expected[PART_BYTES * 5 - 4..PART_BYTES * 5 + 4]);
            assert_eq!(
                straddling.to_vec(),
                expected,
                "{scalar:?} after a straddling read"
            );
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
