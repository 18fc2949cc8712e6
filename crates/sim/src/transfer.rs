//! Copies between host and device: `cudaMemcpy` and `cudaMemcpy2D` over the bus of each preset,
//! from pinned or pageable host memory (seed 000, the `cudaMemcpy`s around every kernel; seed 001,
//! `cudaMallocPitch` and `cudaMemcpy2D`).
//!
//! The model, with its sources:
//!
//! - **The link** (`HostLink`, a field of every `Device`): a PCI Express x16 link, whose raw rate
//!   per direction is its transfer rate times 16 lanes times its line code's efficiency (PCI-SIG
//!   base specifications: 1.x 2.5 GT/s and 2.0 5 GT/s with 8b/10b coding, 3.0 8 GT/s, 4.0
//!   16 GT/s and 5.0 32 GT/s with 128b/130b).
//! - **Packets**: data crosses the link in transaction-layer packets of at most 256 bytes of
//!   payload (the maximum payload size chipsets configure), each with about 24 bytes of framing,
//!   sequence number, header and LCRC (PCI Express base specification, "Transaction Layer
//!   Protocol"). A contiguous copy is a stream of full packets; `cudaMemcpy2D` between pitches
//!   that differ from the row's width sends each row as packets of its own, so narrow rows pay
//!   the 24 bytes more often.
//! - **Pinned and pageable memory** (CUDA C++ Best Practices Guide, "Pinned Memory": pageable
//!   transfers go through a driver-owned pinned buffer): a copy from pinned (page-locked) memory
//!   is one DMA transfer at the link's rate; from pageable memory the driver first copies the
//!   data into its pinned staging buffer with the CPU, then sends it, so the host's memory copy
//!   adds its time (taken not to overlap the DMA: the conservative reading of the guide).
//! - **Per call**: each `cudaMemcpy` pays a fixed setup of a few microseconds (driver call, DMA
//!   descriptors, completion), `HostLink::call_us`.
//!
//! The host's memory copy bandwidth belongs to the machines each device was sold in; the presets
//! name the memory of their era (see each preset's comment). These are first-order numbers for a
//! lesson: the figures `bandwidthTest` reports on a given machine differ by its chipset and
//! memory.

// The link is a field of every device preset, so it is defined with the presets; this module
// models the copies over it and keeps its path.
pub use crate::device::HostLink;

use crate::device::Device;
use crate::simulate::SimulationReport;
use crate::timing::Prediction;
use serde::{Deserialize, Serialize};

/// Where the host's side of a copy lives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostMemory {
    /// Page-locked (`cudaMallocHost`): the device's DMA engine reads it directly.
    #[default]
    Pinned,
    /// Ordinary `malloc` memory: staged through a pinned buffer by the driver.
    Pageable,
}

impl HostMemory {
    pub const ALL: [HostMemory; 2] = [HostMemory::Pinned, HostMemory::Pageable];

    /// The id in URLs.
    pub fn as_str(self) -> &'static str {
        match self {
            HostMemory::Pinned => "pinned",
            HostMemory::Pageable => "pageable",
        }
    }
}

/// One copy: `rows` rows of `width_bytes`, the rows `pitch_bytes` apart on the side that is not
/// contiguous (a `cudaMemcpy` is one row).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Copy {
    pub width_bytes: u64,
    pub rows: u64,
    /// The larger of the two pitches; equal to `width_bytes` when both sides are contiguous.
    pub pitch_bytes: u64,
}

impl Copy {
    /// A `cudaMemcpy` of `bytes`.
    pub fn linear(bytes: u64) -> Copy {
        Copy {
            width_bytes: bytes,
            rows: 1,
            pitch_bytes: bytes,
        }
    }

    /// A `cudaMemcpy2D` of `rows` rows of `width_bytes` into or out of rows `pitch_bytes` apart.
    pub fn rows(width_bytes: u64, rows: u64, pitch_bytes: u64) -> Copy {
        Copy {
            width_bytes,
            rows,
            pitch_bytes: pitch_bytes.max(width_bytes),
        }
    }

    pub fn bytes(&self) -> u64 {
        self.width_bytes.saturating_mul(self.rows)
    }
}

/// Most payload bytes in one transaction-layer packet.
pub const PACKET_PAYLOAD_BYTES: u64 = 256;
/// Framing, sequence number, header and LCRC of one packet.
pub const PACKET_OVERHEAD_BYTES: u64 = 24;

/// What one copy takes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransferTime {
    pub bytes: u64,
    /// Bytes on the wire, payload and packet overhead.
    pub wire_bytes: u64,
    pub seconds: f64,
}

impl TransferTime {
    /// Payload bytes per second, in GB/s.
    pub fn gbps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds / 1e9
        } else {
            0.0
        }
    }
}

/// The time of `copy` over `device`'s link from (or to) `memory`.
pub fn copy_time(device: &Device, memory: HostMemory, copy: Copy) -> TransferTime {
    let link = &device.host_link;
    // A contiguous copy streams full packets; rows between different pitches are sent one by one.
    let packets = |bytes: u64| bytes.div_ceil(PACKET_PAYLOAD_BYTES);
    let packet_count = if copy.pitch_bytes == copy.width_bytes {
        packets(copy.bytes())
    } else {
        packets(copy.width_bytes).saturating_mul(copy.rows)
    };
    let wire_bytes = copy
        .bytes()
        .saturating_add(packet_count.saturating_mul(PACKET_OVERHEAD_BYTES));
    let bus = wire_bytes as f64 / (link.raw_gbps.max(1e-9) * 1e9);
    let staging = match memory {
        HostMemory::Pinned => 0.0,
        HostMemory::Pageable => copy.bytes() as f64 / (link.host_copy_gbps.max(1e-9) * 1e9),
    };
    TransferTime {
        bytes: copy.bytes(),
        wire_bytes,
        seconds: link.call_us * 1e-6 + bus + staging,
    }
}

/// Which way a copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// `cudaMemcpyHostToDevice`, before the kernel.
    ToDevice,
    /// `cudaMemcpyDeviceToHost`, after it.
    ToHost,
}

/// How a launch's buffers are laid out on the device: in one block each (`cudaMalloc`), or in
/// rows of `row_bytes` padded to the device's pitch (`cudaMallocPitch`), copied with
/// `cudaMemcpy2D` from packed rows on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    Linear,
    Pitched { row_bytes: u64 },
}

/// One buffer's copy around a launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferCopy {
    pub buffer: String,
    pub direction: Direction,
    pub copy: Copy,
    pub time: TransferTime,
}

/// A launch with its copies: what a program that runs it once spends on each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchTransfers {
    pub copies: Vec<BufferCopy>,
    pub kernel_seconds: f64,
}

impl LaunchTransfers {
    /// Seconds spent copying, both ways.
    pub fn copy_seconds(&self) -> f64 {
        self.copies.iter().map(|c| c.time.seconds).sum()
    }

    /// The copies' time over the kernel's: above 1 the bus, not the GPU, sets the pace.
    pub fn ratio(&self) -> f64 {
        if self.kernel_seconds > 0.0 {
            self.copy_seconds() / self.kernel_seconds
        } else {
            f64::INFINITY
        }
    }
}

/// The copies a launch needs: every buffer the kernel reads goes to the device before it, every
/// buffer it writes comes back after it (a buffer both read and written does both), whole, in
/// `layout`, from or to `memory`; with the kernel's predicted time.
pub fn launch_transfers(
    report: &SimulationReport,
    prediction: &Prediction,
    memory: HostMemory,
    layout: Layout,
) -> LaunchTransfers {
    let device = &report.device;
    let copy_of = |size: u64| match layout {
        Layout::Linear => Copy::linear(size),
        Layout::Pitched { row_bytes } => {
            let row_bytes = row_bytes.clamp(1, size.max(1));
            let width = u32::try_from(row_bytes).unwrap_or(u32::MAX);
            Copy::rows(
                row_bytes,
                size / row_bytes,
                crate::pitch::pitch_bytes(device, width),
            )
        }
    };
    let mut copies = Vec::new();
    for direction in [Direction::ToDevice, Direction::ToHost] {
        for buffer in &report.memory.buffers {
            let used = match direction {
                Direction::ToDevice => buffer.read.sectors > 0.0,
                Direction::ToHost => buffer.written.sectors > 0.0,
            };
            if used {
                let copy = copy_of(buffer.size_bytes);
                copies.push(BufferCopy {
                    buffer: buffer.name.clone(),
                    direction,
                    copy,
                    time: copy_time(device, memory, copy),
                });
            }
        }
    }
    LaunchTransfers {
        copies,
        kernel_seconds: prediction.time_ms / 1e3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeviceId;

    /// The time of `copy` on `device` from `memory`, in milliseconds, within 0.5%.
    fn check(device: DeviceId, memory: HostMemory, copy: Copy, expected_ms: f64) {
        let found = copy_time(&device.device(), memory, copy).seconds * 1e3;
        assert!(
            (found - expected_ms).abs() <= 0.005 * expected_ms,
            "{device} {memory:?} {copy:?}: {found} ms, expected {expected_ms}"
        );
    }

    #[test]
    fn sixty_four_megabytes_cross_an_h100s_pcie_5_link_in_about_a_millisecond() {
        // 64 MiB in 262,144 packets of 256 bytes: 73.4 MB on the wire at 63 GB/s, plus the call.
        check(
            DeviceId::H100,
            HostMemory::Pinned,
            Copy::linear(64 << 20),
            1.170,
        );
    }

    #[test]
    fn pageable_copies_are_slower_than_pinned_on_every_device() {
        for device in DeviceId::ALL {
            let copy = Copy::linear(16 << 20);
            let pinned = copy_time(&device.device(), HostMemory::Pinned, copy);
            let pageable = copy_time(&device.device(), HostMemory::Pageable, copy);
            assert!(pageable.seconds > 1.2 * pinned.seconds, "{device}");
        }
    }

    #[test]
    fn a_g80_moves_a_gigabyte_no_faster_than_its_pcie_1_link_allows() {
        // PCIe 1.x x16: 4 GB/s per direction; 1 GiB plus packet overhead takes some 0.3 s.
        let time = copy_time(
            &DeviceId::G80.device(),
            HostMemory::Pinned,
            Copy::linear(1 << 30),
        );
        assert!((3.5..4.0).contains(&time.gbps()), "{}", time.gbps());
    }

    #[test]
    fn a_2d_copy_with_a_wider_pitch_sends_each_row_separately() {
        // 1,000 rows of 400 bytes (100 floats) into rows of 512: each row is two packets, 48
        // bytes of overhead for 400 of payload, where one contiguous block of 400,000 bytes
        // needs 1,563 packets.
        let device = DeviceId::H100.device();
        let pitched = copy_time(&device, HostMemory::Pinned, Copy::rows(400, 1000, 512));
        let packed = copy_time(&device, HostMemory::Pinned, Copy::rows(400, 1000, 400));
        assert_eq!(pitched.wire_bytes, 400_000 + 2_000 * 24);
        assert_eq!(packed.wire_bytes, 400_000 + 1_563 * 24);
        assert!(pitched.seconds > packed.seconds);
    }

    #[test]
    fn the_adjacent_difference_copies_its_input_in_and_its_result_out() {
        use crate::kernel::{Dim3, Value};
        use crate::simulate::{simulate, SimulationInput};
        let mut input = SimulationInput::new(
            crate::lesson_kernels::ADJ_DIFF,
            "adj_diff_naive",
            DeviceId::H100.device(),
        );
        input.grid = Dim3::new(16384, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.args = vec![("n".to_string(), Value::Int(1 << 22))];
        input.buffers = vec![
            ("result".to_string(), 4 << 22),
            ("input".to_string(), 4 << 22),
        ];
        let report = simulate(&input).expect("runs");
        let prediction = crate::timing::predict(&report);
        let transfers = launch_transfers(&report, &prediction, HostMemory::Pinned, Layout::Linear);
        let copies: Vec<(&str, Direction)> = transfers
            .copies
            .iter()
            .map(|c| (c.buffer.as_str(), c.direction))
            .collect();
        assert_eq!(
            copies,
            [
                ("input", Direction::ToDevice),
                ("result", Direction::ToHost)
            ]
        );
        // 32 MiB over PCIe 5 take some 0.6 ms, the kernel some 16 us: the copies cost about
        // 38 times the kernel (seed 000's point that the copies can cost more than the kernel).
        assert!(
            (30.0..45.0).contains(&transfers.ratio()),
            "{}",
            transfers.ratio()
        );
    }
}
