//! The page's settings: the controls a lesson turns, the views it shows, and the values a launch
//! depends on. Plain values, shared by the lessons (which bind them to their kernels' launches),
//! the state (which holds them) and the views (which show them), so none of those needs another.

use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::simulate::SimulationInput;
use memplay_sim::DeviceId;

/// A setting of the page's controls that a lesson turns (the device is always shown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Pattern,
    Tile,
    Pad,
    Stride,
    Block,
    Regs,
    /// Pinned or pageable host memory for the copies (`host=`).
    HostMemory,
}

/// A view of the page beside the lesson's words and kernel card, shown where it matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The bank map of one warp's access pattern (`pattern=`).
    BankMap,
    Occupancy,
    Roofline,
    /// Where each of the kernel's variables lives (seed 000's tables).
    MemorySpaces,
    /// cudaMallocPitch's padded rows.
    Pitched,
    /// The kernel's memory accesses line by line, with one warp's bank or coalescing map.
    Lines,
    /// Warps resident on an SM against the warps its memory latency needs (seed 003).
    LatencyHiding,
    /// Active lanes per warp instruction, and the FP32 work the split warps waste (seed 001).
    Divergence,
    /// The copies to and from the host beside the kernel (seeds 000, 001).
    Transfers,
    /// The launch form of the my-kernel lesson.
    LaunchForm,
    /// One access of the kernel drawn for one warp: the bank map or the sector map of the access
    /// the lesson is about (`access:` of its variant), without the table of the others.
    Access,
}

impl View {
    /// Whether the view shows the launch's results, and with them the answer to the lesson's
    /// question; the launch form is what the student writes, not a result.
    pub fn holds_answer(self) -> bool {
        self != View::LaunchForm
    }
}

/// What a launch depends on besides its kernel and source: the values the page's controls set.
/// A plain value, so the lessons need nothing of the page's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub device: DeviceId,
    pub tile: u32,
    pub block: u32,
    pub pad: u32,
    pub stride: u32,
    pub regs: u32,
    pub compile: CompileEffects,
}

/// The sweep of a launch: the swept setting, its current value and the launch at each value.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepLaunches {
    /// The swept setting.
    pub setting: SweepSetting,
    pub current: u32,
    pub launches: Vec<(u32, SimulationInput)>,
}

/// The setting a lesson's sweep chart varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SweepSetting {
    Tile,
    Block,
    Pad,
    Stride,
    Regs,
}

impl SweepSetting {
    pub const ALL: [SweepSetting; 5] = [
        SweepSetting::Tile,
        SweepSetting::Block,
        SweepSetting::Pad,
        SweepSetting::Stride,
        SweepSetting::Regs,
    ];

    /// The setting's name in a link's query and in a lesson's placeholders (`regs=64`).
    pub fn key(self) -> &'static str {
        match self {
            SweepSetting::Tile => "tile",
            SweepSetting::Block => "block",
            SweepSetting::Pad => "pad",
            SweepSetting::Stride => "stride",
            SweepSetting::Regs => "regs",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SweepSetting::Tile => "tile width",
            SweepSetting::Block => "threads per block",
            SweepSetting::Pad => "padding",
            SweepSetting::Stride => "stride",
            SweepSetting::Regs => "registers per thread",
        }
    }

    /// The values the chart shows.
    pub fn values(self) -> &'static [u32] {
        match self {
            SweepSetting::Tile => &[4, 8, 16, 32],
            SweepSetting::Block => &[64, 128, 256, 512, 1024],
            SweepSetting::Pad => &[0, 1, 2, 4],
            SweepSetting::Stride => &[1, 2, 4, 8, 16, 32],
            // Where the H100's 65,536 registers hold 64, 48, 32, 24, 16 and 8 warps.
            SweepSetting::Regs => &[32, 40, 64, 80, 128, 255],
        }
    }

    /// The current value of this setting.
    pub fn current(self, settings: Settings) -> u32 {
        match self {
            SweepSetting::Tile => settings.tile,
            SweepSetting::Block => settings.block,
            SweepSetting::Pad => settings.pad,
            SweepSetting::Stride => settings.stride,
            SweepSetting::Regs => settings.regs,
        }
    }

    /// The sweep over this setting's values, the others as in `settings`, with the launch that
    /// `launch_at` makes of each.
    pub fn launches(
        self,
        settings: Settings,
        launch_at: impl Fn(Settings) -> SimulationInput,
    ) -> SweepLaunches {
        SweepLaunches {
            setting: self,
            current: self.current(settings),
            launches: self
                .values()
                .iter()
                .map(|&value| (value, launch_at(self.with(settings, value))))
                .collect(),
        }
    }

    /// The settings with this one at `value`.
    pub fn with(self, mut settings: Settings, value: u32) -> Settings {
        match self {
            SweepSetting::Tile => settings.tile = value,
            SweepSetting::Block => settings.block = value,
            SweepSetting::Pad => settings.pad = value,
            SweepSetting::Stride => settings.stride = value,
            SweepSetting::Regs => settings.regs = value,
        }
        settings
    }
}

impl Control {
    pub const ALL: [Control; 7] = [
        Control::Pattern,
        Control::Tile,
        Control::Pad,
        Control::Stride,
        Control::Block,
        Control::Regs,
        Control::HostMemory,
    ];

    /// The control's name in a lesson file (`controls: tile pad regs`), which is also its key
    /// in the link's query.
    pub fn key(self) -> &'static str {
        match self {
            Control::Pattern => "pattern",
            Control::Tile => "tile",
            Control::Pad => "pad",
            Control::Stride => "stride",
            Control::Block => "block",
            Control::Regs => "regs",
            Control::HostMemory => "host",
        }
    }

    pub fn parse(key: &str) -> Option<Control> {
        Control::ALL
            .into_iter()
            .find(|control| control.key() == key)
    }

    /// The control's name in a sentence.
    pub fn label(self) -> &'static str {
        match self {
            Control::Pattern => "access pattern",
            Control::Tile => "tile width",
            Control::Pad => "padding",
            Control::Stride => "stride",
            Control::Block => "threads per block",
            Control::Regs => "registers per thread",
            Control::HostMemory => "host memory",
        }
    }
}

impl View {
    pub const ALL: [View; 11] = [
        View::Access,
        View::BankMap,
        View::Occupancy,
        View::Roofline,
        View::MemorySpaces,
        View::Pitched,
        View::Lines,
        View::LatencyHiding,
        View::Divergence,
        View::Transfers,
        View::LaunchForm,
    ];

    /// The view's name in a lesson file (`view: bank-map`) and in the link (`tab=`).
    pub fn key(self) -> &'static str {
        match self {
            View::BankMap => "bank-map",
            View::Occupancy => "occupancy",
            View::Roofline => "roofline",
            View::MemorySpaces => "memory-spaces",
            View::Pitched => "pitched",
            View::Lines => "lines",
            View::LatencyHiding => "latency-hiding",
            View::Divergence => "divergence",
            View::Transfers => "transfers",
            View::LaunchForm => "launch-form",
            View::Access => "access",
        }
    }

    pub fn parse(key: &str) -> Option<View> {
        View::ALL.into_iter().find(|view| view.key() == key)
    }
}

impl SweepSetting {
    pub fn parse(key: &str) -> Option<SweepSetting> {
        SweepSetting::ALL
            .into_iter()
            .find(|setting| setting.key() == key)
    }
}

/// The page's tabs below the lesson's first screen: the kernel card, the lesson's other views,
/// line by line, the comparison and the lesson's file. Kept in the link (`tab=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tab {
    /// The source, the launch, the predicted time, the sweep and the counters.
    #[default]
    Kernel,
    /// One of the views (`View::Lines` is the per-line table).
    View(View),
    Compare,
    /// The lesson's file, with a live preview of an edit (the lesson editor).
    LessonFile,
}

impl Tab {
    /// The tab's name in the link.
    pub fn key(self) -> &'static str {
        match self {
            Tab::Kernel => "kernel",
            Tab::View(view) => view.key(),
            Tab::Compare => "compare",
            Tab::LessonFile => "lesson-file",
        }
    }

    pub fn parse(key: &str) -> Option<Tab> {
        match key {
            "kernel" => Some(Tab::Kernel),
            "compare" => Some(Tab::Compare),
            "lesson-file" => Some(Tab::LessonFile),
            _ => View::parse(key).map(Tab::View),
        }
    }

    /// The tab's label on the page.
    pub fn label(self) -> &'static str {
        match self {
            Tab::Kernel => "Kernel and time",
            Tab::View(view) => view.label(),
            Tab::Compare => "Compare",
            Tab::LessonFile => "Lesson file",
        }
    }
}

impl View {
    /// The view's name on its tab.
    pub fn label(self) -> &'static str {
        match self {
            View::BankMap => "Bank map",
            View::Occupancy => "Occupancy",
            View::Roofline => "Roofline",
            View::MemorySpaces => "Memory spaces",
            View::Pitched => "Pitched rows",
            View::Lines => "Line by line",
            View::LatencyHiding => "Latency hiding",
            View::Divergence => "Divergence",
            View::Transfers => "Host copies",
            View::LaunchForm => "Launch",
            View::Access => "Access map",
        }
    }
}

/// What the launch on the page is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareWith {
    Nothing,
    /// The lesson's next kernel (naive against tiled, global against hierarchical atomics).
    Variant,
    /// The other padding: PAD = 1 against PAD = 0.
    Padding,
    /// The other way of counting: as written against as nvcc compiles it.
    Compile,
    /// The lectures' other end: the GT200 against the H100 (the H100 against any other device).
    OtherEnd,
    /// The same launch on this device.
    Device(DeviceId),
}

impl CompareWith {
    pub const ALL: [CompareWith; 11] = [
        CompareWith::Nothing,
        CompareWith::Variant,
        CompareWith::Padding,
        CompareWith::Compile,
        CompareWith::OtherEnd,
        CompareWith::Device(DeviceId::G80),
        CompareWith::Device(DeviceId::Gt200),
        CompareWith::Device(DeviceId::Fermi),
        CompareWith::Device(DeviceId::V100),
        CompareWith::Device(DeviceId::A100),
        CompareWith::Device(DeviceId::H100),
    ];

    /// The value in the link (`compare=padding`).
    pub fn key(self) -> &'static str {
        match self {
            CompareWith::Nothing => "none",
            CompareWith::Variant => "variant",
            CompareWith::Padding => "padding",
            CompareWith::Compile => "compile",
            CompareWith::OtherEnd => "device",
            // The device's own key: `compare=g80`.
            CompareWith::Device(device) => device.as_str(),
        }
    }

    /// The menu's words.
    pub fn label(self) -> &'static str {
        match self {
            CompareWith::Nothing => "nothing",
            CompareWith::Variant => "the lesson's other kernel",
            CompareWith::Padding => "the other padding (PAD 0 / 1)",
            CompareWith::Compile => "the other way of counting (as written / as compiled)",
            CompareWith::OtherEnd => "the GT200 / the H100",
            CompareWith::Device(device) => match device {
                DeviceId::G80 => "the same launch on the G80",
                DeviceId::Gt200 => "the same launch on the GT200",
                DeviceId::Fermi => "the same launch on Fermi",
                DeviceId::V100 => "the same launch on the V100",
                DeviceId::A100 => "the same launch on the A100",
                DeviceId::H100 => "the same launch on the H100",
            },
        }
    }
}

/// A whole-number setting: its URL key, its allowed range and its default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumberSetting {
    pub key: &'static str,
    pub min: u32,
    pub max: u32,
    pub default: u32,
}

impl NumberSetting {
    /// Brings any value into the allowed range, so a slider or a typed number can never produce
    /// a state the views cannot draw.
    pub fn clamp(self, value: u32) -> u32 {
        value.clamp(self.min, self.max)
    }

    pub fn accepts(self, value: u32) -> bool {
        (self.min..=self.max).contains(&value)
    }
}

/// The tile width TILE of the tiled matrix multiplication (seed 003).
pub const TILE: NumberSetting = NumberSetting {
    key: "tile",
    min: 1,
    max: 64,
    default: 16,
};

/// Threads per block. Up to 1024, the largest block any preset launches; the occupancy view
/// explains when a device takes fewer (G80 and GT200 stop at 512).
pub const BLOCK: NumberSetting = NumberSetting {
    key: "block",
    min: 1,
    max: 1024,
    default: 256,
};

/// Words of padding added to every row of a shared tile (seed 001, "Memory padding").
pub const PAD: NumberSetting = NumberSetting {
    key: "pad",
    min: 0,
    max: 8,
    default: 0,
};

/// The stride s of `shared[base + s*tid]` (seed 001, "Bank Addressing Examples").
pub const STRIDE: NumberSetting = NumberSetting {
    key: "stride",
    min: 0,
    max: 64,
    default: 1,
};

/// Registers per thread, as `nvcc --resource-usage` would report them.
pub const REGS: NumberSetting = NumberSetting {
    key: "regs",
    min: 1,
    max: 255,
    default: 32,
};

/// The page's range of a numeric control; `None` for the pattern and the host memory.
pub fn number_setting(control: Control) -> Option<NumberSetting> {
    match control {
        Control::Tile => Some(TILE),
        Control::Block => Some(BLOCK),
        Control::Pad => Some(PAD),
        Control::Stride => Some(STRIDE),
        Control::Regs => Some(REGS),
        Control::Pattern | Control::HostMemory => None,
    }
}
