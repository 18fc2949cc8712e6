//! The playground's state: the knobs a student turns, and the notes about a link's bad values.
//!
//! One `State` value and a closed `Action` enum, reduced by a pure function (Yew's `Reducible`),
//! as in Yew's `function_todomvc` example. Everything shown on the page is derived from this state
//! by pure calls into `memplay-sim` (see `model`); the URL query mirrors it (see `url`), and an
//! edited kernel goes into the URL's fragment (see `source_link`).

use crate::lessons::{Control, Lesson, Settings, SweepLaunches, SweepSetting, Variant, View};
use crate::my_kernel::{self, FieldError, MyLaunch};
use crate::settings::CompareWith;
use crate::settings::Tab;
use crate::source_link::{opened_source, Compressed, Inflated, SourceLink};
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::patterns::{Element, PatternId};
use memplay_sim::sanitizer::SanitizerConfig;
use memplay_sim::simulate::SimulationInput;
use memplay_sim::trace::AccessSite;
use memplay_sim::transfer::HostMemory;
use memplay_sim::DeviceId;
use std::rc::Rc;
use yew::Reducible;

pub use crate::settings::{number_setting, NumberSetting, BLOCK, PAD, REGS, STRIDE, TILE};

pub const DEFAULT_DEVICE: DeviceId = DeviceId::H100;
pub const DEFAULT_PATTERN: PatternId = PatternId::Stride;

/// The bank map's pattern a lesson opens on when its link names none. The bank-conflicts lesson
/// opens on the row-per-thread array, whose 32 lanes all read bank 0 at PAD 0 and 32 banks at
/// PAD 1, so the lesson's padding moves its bank map from its first settings; a stride of 1
/// would show no conflict at either.
pub fn default_pattern(lesson: Lesson) -> PatternId {
    lesson.pattern()
}

/// The student's answer to the lesson's predict-first question. Not part of the link: a shared
/// link asks its reader to predict afresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Prediction {
    /// The index of the chosen answer, if one is chosen.
    pub chosen: Option<usize>,
    /// Whether the simulator's answer is shown; the choice is then fixed.
    pub revealed: bool,
}

/// Where the full page's "Copy embed code" stands (the embed itself never shows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbedCode {
    /// Not asked for yet: the page shows only the button.
    Hidden,
    /// On the page, for the current view, and not (or no longer) on the clipboard.
    Shown,
    /// On the page and copied to the clipboard.
    Copied,
    /// On the page and selected, but the browser refused the clipboard: the student copies it.
    SelectToCopy,
}

/// What the student did on this page that its link does not carry: what they answered, where
/// they look in the per-line view, and the embed code's status. Like a scroll position, a shared
/// link starts without it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageState {
    /// The answer to the lesson's question, which a new lesson clears.
    pub prediction: Prediction,
    /// The access picked in the per-line view (`None`: the one the lesson opens on), and which
    /// of the traced warp's executions of it is shown.
    pub line_site: Option<AccessSite>,
    pub line_step: usize,
    /// The warp whose accesses the per-line view draws: block (x, y) of the grid and warp of the
    /// block, brought inside the launch when the launch is made (`line_model::trace_request`).
    pub trace_block: [u32; 2],
    pub trace_warp: u32,
    /// The embed code's status.
    pub embed_code: EmbedCode,
}

impl Default for PageState {
    fn default() -> PageState {
        PageState {
            prediction: Prediction::default(),
            line_site: None,
            line_step: 0,
            trace_block: [0, 0],
            trace_warp: 0,
            embed_code: EmbedCode::Hidden,
        }
    }
}

/// Everything the page shows is a function of this: the settings its link carries (the lesson,
/// the controls, the tab, an edited kernel in the fragment, and the notes on what the link said
/// that could not be used) and what the student did on this page (`page`). What the worker is
/// doing lives with the worker (`bridge`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub device: DeviceId,
    pub tile: u32,
    pub block: u32,
    pub pad: u32,
    pub stride: u32,
    pub regs: u32,
    pub pattern: PatternId,
    /// The element type of the bank map's array (`element=`).
    pub element: Element,
    /// Where the host side of the copies lives (`host=`).
    pub host_memory: HostMemory,
    /// The launch the student wrote in the my-kernel lesson (`launch=`).
    pub my_launch: MyLaunch,
    /// The launch of the program's host code the form follows, counted from 1
    /// (`program-launch=`): set by the "Launch from the host code" menu and by a pasted
    /// program's first launch, and cleared when the student edits the form.
    pub program_launch: Option<u32>,
    /// The kernel the simulation runs, a variant of its lesson (`Variant::lesson`).
    pub variant: Variant,
    /// The kernel as written, or as nvcc compiles it (shared-load fusion).
    pub compile: CompileEffects,
    /// Whether the launch runs the sanitizer; a lesson with `sanitize: yes` runs it always.
    pub sanitize: bool,
    /// The compact layout of one lesson for a course page's iframe (`embed=1`).
    pub embed: bool,
    /// The student's edit of the lesson's source, if any. It is not part of the query but of
    /// the fragment (`#src=`), compressed, where it fits (`source_link`).
    pub edited_source: Option<String>,
    /// Where the kernel stands in the page's link: the lesson's own, being unpacked from the
    /// opening link, being compressed, in the fragment, or too large for it.
    pub source_link: SourceLink,
    /// What the launch is compared with (`compare=`).
    pub compare: CompareWith,
    /// One sentence for every value of the page's link that could not be used.
    pub notes: Vec<String>,
    /// The tab open below the lesson's first screen (`tab=`).
    pub tab: Tab,
    /// Whether the lesson's further words are unfolded (`more=1`).
    pub more: bool,
    /// Whether an embed shows the Lesson and Kernel menus (`menus=1`); the full page always does.
    pub menus: bool,
    /// Where the lesson was loaded from, for a lesson the page does not ship (`lesson-url=`).
    pub lesson_url: Option<String>,
    /// What the student did on this page that the link does not carry.
    pub page: PageState,
    /// A whole lesson carried in the link's fragment (`#lesson=1.…`, `lesson_link`), as the link
    /// spells it, kept so the page's own link keeps carrying it.
    pub lesson_fragment: Option<String>,
}

/// The controls the page shows for `state`: its variant's (`Variant::controls`), less a number
/// that moves nothing on the page at its settings, that is, one that changes neither the
/// kernel's launch nor, where the lesson shows the pattern explorer, the explorer's warp. The
/// transposes take no stride while the explorer draws the row-per-thread array, and the stride
/// kernel no padding while it draws a stride; choosing the stride pattern brings the stride back.
pub fn shown_controls(state: &State) -> Vec<Control> {
    let explorer = state.variant.lesson().views().contains(&View::BankMap);
    let seen = |state: &State| {
        let pattern = explorer
            .then(|| memplay_sim::patterns::build(state.pattern, pattern_params(state)).access);
        (state.launch(), pattern)
    };
    let here = seen(state);
    state
        .variant
        .controls()
        .into_iter()
        .filter(|&control| {
            let (Some(setting), Some(current)) = (state.setting(control), state.number(control))
            else {
                // The pattern and the host memory are choices, always shown where the lesson
                // turns them.
                return true;
            };
            // Another value of the setting, inside its range: one more, or one less at the top.
            let other = if current < setting.max {
                current + 1
            } else {
                current.saturating_sub(1)
            };
            let mut moved = state.clone();
            if let Some(value) = moved.number_mut(control) {
                *value = other;
            }
            seen(&moved) != here
        })
        .collect()
}

/// The pattern explorer's parameters at this state.
pub fn pattern_params(state: &State) -> memplay_sim::patterns::PatternParams {
    memplay_sim::patterns::PatternParams {
        tile: state.tile,
        pad: state.pad,
        stride: state.stride,
        element: state.element,
    }
}

impl State {
    /// The kernel source the simulation runs: the student's edit, or the lesson's file.
    pub fn source(&self) -> &str {
        self.edited_source
            .as_deref()
            .unwrap_or_else(|| self.variant.source())
    }

    /// A whole program pasted into the my-kernel lesson launches its kernels from its host code:
    /// when the form's kernel is not the program's, the form takes the program's first launch.
    fn fill_from_program(&mut self) {
        if !self.variant.takes_launch_form() {
            return;
        }
        let launches = my_kernel::program_launches(self.source());
        if let Some(first) = launches.first() {
            if !launches.iter().any(|l| l.kernel == self.my_launch.kernel) {
                self.my_launch = my_kernel::from_program(self.source(), first);
                self.program_launch = Some(1);
            }
        }
    }

    /// The form takes launch `number` (from 1) of the program's host code. A number the program
    /// does not have leaves the form as it is and says so in a note.
    fn follow_program_launch(&mut self, number: u32) {
        let launches = my_kernel::program_launches(self.source());
        match usize::try_from(number)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|k| launches.get(k))
        {
            Some(launch) => {
                self.my_launch = my_kernel::from_program(self.source(), launch);
                self.program_launch = Some(number);
            }
            None => {
                self.program_launch = None;
                self.notes.push(format!(
                    "program-launch={number}: the program's host code has {} launch{}; using \
                     the form as written.",
                    launches.len(),
                    if launches.len() == 1 { "" } else { "es" }
                ));
            }
        }
    }

    /// The values of the page's controls that a launch depends on.
    pub fn settings(&self) -> Settings {
        Settings {
            device: self.device,
            tile: self.tile,
            block: self.block,
            pad: self.pad,
            stride: self.stride,
            regs: self.regs,
            compile: self.compile,
        }
    }

    /// The page's launch: its kernel at its settings, running the edit if there is one. The
    /// my-kernel lesson's is the student's; while one of its values is wrong, the launch runs
    /// with the nearest value in range in its place and the form says what is wrong.
    pub fn launch(&self) -> SimulationInput {
        self.launch_and_errors().0
    }

    /// The page's launch with what is wrong in the my-kernel lesson's values (none elsewhere),
    /// built once for a render: the launch form shows the errors, the worker runs the launch.
    pub fn launch_and_errors(&self) -> (SimulationInput, Vec<FieldError>) {
        let (mut launch, errors) = if self.variant.takes_launch_form() {
            my_kernel::build(&self.my_launch, self.source(), self.settings())
        } else {
            (
                self.variant.launch(self.settings(), self.source()),
                Vec::new(),
            )
        };
        if self.sanitizes() {
            launch.sanitizer = SanitizerConfig::ALL;
        }
        (launch, errors)
    }

    /// Whether the launch runs the sanitizer: the toggle, or a lesson that asks for it.
    pub fn sanitizes(&self) -> bool {
        self.sanitize || self.variant.lesson().sanitizes()
    }

    /// The launches of the sweep chart around `launch`, the page's launch; the my-kernel lesson
    /// sweeps its registers, which change no value of the launch, so it is not built again.
    pub fn sweep_launches(&self, launch: &SimulationInput) -> SweepLaunches {
        if self.variant.takes_launch_form() {
            SweepSetting::Regs.launches(self.settings(), |settings| SimulationInput {
                regs: settings.regs,
                ..launch.clone()
            })
        } else {
            self.variant.sweep_launches(self.settings(), self.source())
        }
    }

    /// The fragment of the page's link (without `#`): the lesson it carries, and the edit.
    pub fn link_fragment(&self) -> Option<String> {
        crate::lesson_link::join(self.lesson_fragment.as_deref(), self.source_link.fragment())
    }

    /// The edit the browser is to compress for the link, while that is due.
    pub fn source_to_compress(&self) -> Option<&str> {
        match self.source_link {
            SourceLink::Compressing => self.edited_source.as_deref(),
            _ => None,
        }
    }
}

impl Default for State {
    fn default() -> State {
        State {
            device: DEFAULT_DEVICE,
            tile: TILE.default,
            block: BLOCK.default,
            pad: PAD.default,
            stride: STRIDE.default,
            regs: REGS.default,
            pattern: DEFAULT_PATTERN,
            element: Element::Float,
            host_memory: HostMemory::Pinned,
            my_launch: MyLaunch::default(),
            program_launch: None,
            variant: Lesson::home().first(),
            compile: CompileEffects::AS_COMPILED,
            sanitize: false,
            embed: false,
            edited_source: None,
            source_link: SourceLink::Lesson,
            compare: CompareWith::Nothing,
            notes: Vec::new(),
            page: PageState::default(),
            tab: Tab::Kernel,
            more: false,
            menus: false,
            lesson_url: None,
            lesson_fragment: None,
        }
    }
}

/// What a student can do to the state.
// Every action sets one setting, and `SetPad { pad }` reads better in the components than
// `Pad { pad }` would, so the common prefix stays.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    SetDevice {
        device: DeviceId,
    },
    SetTile {
        tile: u32,
    },
    SetBlock {
        block: u32,
    },
    SetPad {
        pad: u32,
    },
    SetStride {
        stride: u32,
    },
    SetRegs {
        regs: u32,
    },
    SetPattern {
        pattern: PatternId,
    },
    SetElement {
        element: Element,
    },
    SetHostMemory {
        host_memory: HostMemory,
    },
    /// The my-kernel lesson's launch form changed (boxed: a launch is far larger than any other
    /// action).
    SetMyLaunch {
        launch: Box<MyLaunch>,
    },
    /// The form takes launch `number` (from 1) of the pasted program's host code.
    ChooseProgramLaunch {
        number: u32,
    },
    /// Choosing a lesson opens its first variant, from its file.
    SetLesson {
        lesson: Lesson,
    },
    /// Choosing another variant of the lesson starts from its file again.
    SetVariant {
        variant: Variant,
    },
    SetCompile {
        compile: CompileEffects,
    },
    SetSanitize {
        sanitize: bool,
    },
    SetCompare {
        compare: CompareWith,
    },
    /// The student's text replaces the kernel source.
    EditSource {
        source: String,
    },
    ResetSource,
    /// The student picked answer `index` of the lesson's question (before the answer is shown).
    Predict {
        index: usize,
    },
    /// The student asked for the simulator's answer.
    RevealAnswer,
    /// The student uncovered the lesson's view without predicting: the answer shows, with no
    /// choice to judge.
    SkipPrediction,
    /// The student pressed "Copy embed code": the code appears and the page tries the clipboard.
    ShowEmbedCode,
    /// The clipboard's answer about the code of the view whose query is `query`: `copied` is
    /// false when the browser refused or has no clipboard.
    EmbedCodeCopied {
        query: String,
        copied: bool,
    },
    /// The browser's answer to compressing the edit `source` for the link.
    SourceCompressed {
        source: String,
        compressed: Compressed,
    },
    /// The browser's answer to unpacking the kernel of the link the page was opened with.
    SharedSourceOpened {
        inflated: Inflated,
    },
    /// The student picked a row of the per-line view: its first execution shows.
    PickLineSite {
        site: AccessSite,
    },
    /// The per-line view's stepper moved to the picked access's execution `step` (from 0).
    SetLineStep {
        step: usize,
    },
    /// The student chose the warp the per-line view traces.
    SetTraceWarp {
        block: [u32; 2],
        warp: u32,
    },
    /// The student opened a tab below the lesson's first screen.
    SetTab {
        tab: Tab,
    },
    /// The student unfolded or folded the lesson's further words.
    SetMore {
        more: bool,
    },
    /// Reset: the lesson at its first settings (`State::reset_target`), its kernel the lesson's
    /// own, its question asked afresh.
    Reset {
        to: Box<State>,
    },
    /// A lesson the link names could not be loaded: the note says which and why.
    LessonNotLoaded {
        note: String,
    },
    /// The page's link changed under it (Back, Forward, a lesson loaded for the link): the
    /// page shows what the link says, keeping the student's answer where the lesson is the same.
    OpenLink {
        state: Box<State>,
    },
}

impl State {
    /// Another kernel, from its file. Another lesson's question is asked afresh; a variant of the
    /// same lesson keeps the answer, since the question is the same.
    fn set_variant(&mut self, variant: Variant) {
        if variant.lesson() != self.variant.lesson() {
            self.page.prediction = Prediction::default();
            self.pattern = crate::state::default_pattern(variant.lesson());
        }
        self.variant = variant;
        self.edited_source = None;
        self.source_link = SourceLink::Lesson;
        // Another kernel has other lines and another grid.
        self.page.line_site = None;
        self.page.line_step = 0;
        self.page.trace_block = [0, 0];
        self.page.trace_warp = 0;
    }

    /// Where Reset takes the page: the link it was opened with (`opening`) where that is this
    /// lesson, so an instructor's embed returns to the instructor's settings; another lesson's
    /// first settings otherwise. The layout of the page (an embed, its menus, a loaded lesson's
    /// address) stays.
    pub fn reset_target(&self, opening: &State) -> State {
        let lesson = self.variant.lesson();
        let mut target = if opening.variant.lesson() == lesson {
            opening.clone()
        } else {
            State {
                variant: lesson.first(),
                pattern: lesson.pattern(),
                ..State::default()
            }
        };
        target.embed = self.embed;
        target.menus = self.menus;
        target.lesson_url = self.lesson_url.clone();
        target.lesson_fragment = self.lesson_fragment.clone();
        target.notes = Vec::new();
        target.page.prediction = Prediction::default();
        target.page.embed_code = EmbedCode::Hidden;
        target
    }

    /// A numeric control's range in this state's lesson: the page's, narrowed where the lesson's
    /// file says (`range stride: 0..32`), with its default brought inside.
    pub fn setting(&self, control: Control) -> Option<NumberSetting> {
        let page = number_setting(control)?;
        Some(match self.variant.lesson().range(control) {
            Some((min, max)) => NumberSetting {
                min,
                max,
                default: page.default.clamp(min, max),
                ..page
            },
            None => page,
        })
    }

    /// Brings every numeric setting inside its lesson's range.
    pub fn fit_to_lesson(&mut self) {
        for control in Control::ALL {
            let Some(setting) = self.setting(control) else {
                continue;
            };
            if let Some(value) = self.number_mut(control) {
                *value = setting.clamp(*value);
            }
        }
    }

    /// The value of a numeric control; `None` for the pattern and the host memory.
    pub fn number(&self, control: Control) -> Option<u32> {
        match control {
            Control::Tile => Some(self.tile),
            Control::Block => Some(self.block),
            Control::Pad => Some(self.pad),
            Control::Stride => Some(self.stride),
            Control::Regs => Some(self.regs),
            Control::Pattern | Control::HostMemory => None,
        }
    }

    /// The field a numeric control sets; `None` for the pattern and the host memory.
    pub fn number_mut(&mut self, control: Control) -> Option<&mut u32> {
        match control {
            Control::Tile => Some(&mut self.tile),
            Control::Block => Some(&mut self.block),
            Control::Pad => Some(&mut self.pad),
            Control::Stride => Some(&mut self.stride),
            Control::Regs => Some(&mut self.regs),
            Control::Pattern | Control::HostMemory => None,
        }
    }

    /// The settings the page shows for this state (`controls::shown_controls`).
    pub fn controls(&self) -> Vec<Control> {
        shown_controls(self)
    }

    /// Whether the lesson's view is covered: it holds the answer to the lesson's question, so
    /// it stays blurred until the student has predicted and shown the answer (or skipped the
    /// question). A kernel the student edited is theirs to look at, and a view the student writes
    /// in (the launch form) holds no answer: neither is ever covered.
    pub fn view_covered(&self) -> bool {
        !self.page.prediction.revealed
            && self.edited_source.is_none()
            && self.variant.lesson().view().holds_answer()
    }

    /// The pure transition: numbers are clamped to their ranges, and a note about the link's bad
    /// value for a setting disappears once the student sets that value themselves.
    pub fn apply(mut self, action: Action) -> State {
        let key = match action {
            Action::Predict { index } => {
                if !self.page.prediction.revealed {
                    self.page.prediction.chosen = Some(index);
                }
                return self;
            }
            Action::RevealAnswer => {
                self.page.prediction.revealed = self.page.prediction.chosen.is_some();
                return self;
            }
            Action::SkipPrediction => {
                self.page.prediction.revealed = true;
                return self;
            }
            Action::ShowEmbedCode => {
                self.page.embed_code = EmbedCode::Shown;
                return self;
            }
            Action::EmbedCodeCopied { query, copied } => {
                // An answer that arrives after the student changed the view is about old code.
                if self.page.embed_code != EmbedCode::Hidden && query == self.to_query() {
                    self.page.embed_code = if copied {
                        EmbedCode::Copied
                    } else {
                        EmbedCode::SelectToCopy
                    };
                }
                return self;
            }
            Action::SourceCompressed { source, compressed } => {
                // An answer about an older edit, or one after the student reset the kernel,
                // would put the wrong kernel into the link.
                if self.source_link == SourceLink::Compressing
                    && self.edited_source.as_deref() == Some(source.as_str())
                {
                    self.source_link = SourceLink::after_compression_within(
                        compressed,
                        crate::lesson_link::kernel_budget(self.lesson_fragment.as_deref()),
                    );
                }
                return self;
            }
            Action::SharedSourceOpened { inflated } => {
                // Once the student edits, resets or changes the lesson, their choice stands.
                let SourceLink::Opening { fragment, .. } = &self.source_link else {
                    return self;
                };
                let fragment = fragment.clone();
                match opened_source(&fragment, inflated) {
                    Ok(source) => {
                        // A link whose kernel is the lesson's own text carries no edit.
                        self.edited_source = (source != self.variant.source()).then_some(source);
                        self.source_link = if self.edited_source.is_some() {
                            SourceLink::Shared { fragment }
                        } else {
                            SourceLink::Lesson
                        };
                        // A link that names a launch of the program's host code fills the form
                        // from it now that the program is known.
                        if let Some(number) = self.program_launch {
                            if self.variant.takes_launch_form() {
                                self.follow_program_launch(number);
                            }
                        }
                    }
                    Err(note) => {
                        self.notes.push(note);
                        self.source_link = SourceLink::Lesson;
                    }
                }
                return self;
            }
            // Where the per-line view looks is not in the link, so it leaves notes and the
            // embed code as they are.
            Action::PickLineSite { site } => {
                self.page.line_site = Some(site);
                self.page.line_step = 0;
                return self;
            }
            Action::SetLineStep { step } => {
                self.page.line_step = step;
                return self;
            }
            Action::SetTab { tab } => {
                self.tab = tab;
                "tab"
            }
            Action::SetMore { more } => {
                self.more = more;
                "more"
            }
            Action::LessonNotLoaded { note } => {
                self.notes.push(note);
                return self;
            }
            Action::Reset { to } => {
                return *to;
            }
            Action::OpenLink { state } => {
                let mut opened = *state;
                if opened.variant.lesson() == self.variant.lesson() {
                    opened.page.prediction = self.page.prediction;
                }
                // What the student did on this page, not what the link says, stays.
                opened.page.embed_code = self.page.embed_code;
                return opened;
            }
            Action::SetTraceWarp { block, warp } => {
                self.page.trace_block = block;
                self.page.trace_warp = warp;
                self.page.line_step = 0;
                return self;
            }
            Action::SetDevice { device } => {
                self.device = device;
                "device"
            }
            Action::SetTile { tile } => {
                self.tile = TILE.clamp(tile);
                TILE.key
            }
            Action::SetBlock { block } => {
                self.block = BLOCK.clamp(block);
                BLOCK.key
            }
            Action::SetPad { pad } => {
                self.pad = PAD.clamp(pad);
                PAD.key
            }
            Action::SetStride { stride } => {
                self.stride = STRIDE.clamp(stride);
                STRIDE.key
            }
            Action::SetRegs { regs } => {
                self.regs = REGS.clamp(regs);
                REGS.key
            }
            Action::SetPattern { pattern } => {
                self.pattern = pattern;
                "pattern"
            }
            Action::SetElement { element } => {
                self.element = element;
                "element"
            }
            Action::SetHostMemory { host_memory } => {
                self.host_memory = host_memory;
                "host"
            }
            Action::SetMyLaunch { launch } => {
                self.my_launch = *launch;
                self.program_launch = None;
                "launch"
            }
            Action::ChooseProgramLaunch { number } => {
                self.follow_program_launch(number);
                "program-launch"
            }
            Action::SetLesson { lesson } => {
                self.set_variant(lesson.first());
                "lesson"
            }
            Action::SetVariant { variant } => {
                self.set_variant(variant);
                "variant"
            }
            Action::SetCompare { compare } => {
                self.compare = compare;
                "compare"
            }
            Action::SetCompile { compile } => {
                self.compile = compile;
                "compile"
            }
            Action::SetSanitize { sanitize } => {
                self.sanitize = sanitize;
                "sanitize"
            }
            Action::EditSource { source } => {
                // Text identical to the lesson's file is no edit at all.
                let edited = (source != self.variant.source()).then_some(source);
                // "Run" and leaving the text area send the text again; only a new text needs a
                // new link.
                if edited != self.edited_source {
                    self.source_link = SourceLink::for_edit(edited.as_deref());
                    self.edited_source = edited;
                    self.fill_from_program();
                }
                // The kernel's key in the link, so a note about the link's kernel goes once the
                // student writes their own.
                "src"
            }
            Action::ResetSource => {
                self.edited_source = None;
                self.source_link = SourceLink::Lesson;
                "src"
            }
        };
        self.fit_to_lesson();
        let prefix = format!("{key}=");
        self.notes.retain(|note| !note.starts_with(&prefix));
        // The code on the page follows the view; what was copied before no longer matches it.
        if self.page.embed_code != EmbedCode::Hidden {
            self.page.embed_code = EmbedCode::Shown;
        }
        self
    }
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let next = (*self).clone().apply(action);
        // Handing back the same Rc when nothing changed spares the page a re-render.
        if next == *self {
            self
        } else {
            Rc::new(next)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(start: State, action: Action, expected: State) {
        assert_eq!(start.apply(action), expected);
    }

    #[test]
    fn one_word_of_padding_is_set_as_typed() {
        check(
            State::default(),
            Action::SetPad { pad: 1 },
            State {
                pad: 1,
                ..State::default()
            },
        );
    }

    #[test]
    fn the_sanitize_box_turns_the_sanitizer_on_for_the_launch() {
        assert_eq!(
            State::default().launch().sanitizer,
            SanitizerConfig::default()
        );
        let checked = State::default().apply(Action::SetSanitize { sanitize: true });
        assert!(checked.sanitize);
        assert_eq!(checked.launch().sanitizer, SanitizerConfig::ALL);
    }

    #[test]
    fn the_missing_barrier_lesson_runs_the_sanitizer_with_the_box_unchecked() {
        let state = State::from_query("?lesson=missing-barrier");
        assert_eq!(state.variant.lesson().key(), "missing-barrier");
        assert!(!state.sanitize);
        assert_eq!(state.launch().sanitizer, SanitizerConfig::ALL);
    }

    #[test]
    fn a_tile_wider_than_64_is_clamped_to_64() {
        check(
            State::default(),
            Action::SetTile { tile: 1000 },
            State {
                tile: 64,
                ..State::default()
            },
        );
    }

    #[test]
    fn a_block_of_zero_threads_becomes_one_thread() {
        check(
            State::default(),
            Action::SetBlock { block: 0 },
            State {
                block: 1,
                ..State::default()
            },
        );
    }

    #[test]
    fn registers_above_255_are_clamped() {
        check(
            State::default(),
            Action::SetRegs { regs: 300 },
            State {
                regs: 255,
                ..State::default()
            },
        );
    }

    #[test]
    fn setting_a_value_removes_only_the_note_about_it() {
        let start = State {
            notes: vec![
                "tile=abc is not a number from 1 to 64; using 16.".to_string(),
                "pad=x is not a number from 0 to 8; using 0.".to_string(),
            ],
            ..State::default()
        };
        check(
            start,
            Action::SetTile { tile: 8 },
            State {
                tile: 8,
                notes: vec!["pad=x is not a number from 0 to 8; using 0.".to_string()],
                ..State::default()
            },
        );
    }

    #[test]
    fn a_pasted_program_fills_the_launch_form_from_its_first_launch() {
        // 1024 floats in blocks of 128: 8 blocks; the buffer is 4096 bytes, 1024 floats.
        let program = "__global__ void twice(float* v, int n) {\n\
                       \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                       \x20 if (i < n) v[i] *= 2.0f;\n}\n\
                       int main() {\n  const int n = 1024;\n  float* d;\n\
                       \x20 cudaMalloc(&d, n * sizeof(float));\n\
                       \x20 twice<<<n / 128, 128>>>(d, n);\n}\n";
        let state = State::from_query("lesson=my-kernel").apply(Action::EditSource {
            source: program.to_string(),
        });
        assert_eq!(state.my_launch.kernel, "twice");
        assert_eq!(state.my_launch.grid[0], "8");
        assert_eq!(state.my_launch.block[0], "128");
        assert_eq!(
            state.my_launch.args,
            [("n".to_string(), "1024".to_string())]
        );
        assert_eq!(state.my_launch.buffers[0].1, "1024");
        // Another lesson's edit leaves the form alone.
        let other = State::default().apply(Action::EditSource {
            source: program.to_string(),
        });
        assert_eq!(other.my_launch, MyLaunch::default());
    }

    #[test]
    fn a_new_lesson_drops_the_edit_of_the_old_one() {
        let edited = State::default().apply(Action::EditSource {
            source: "__global__ void k() {}".to_string(),
        });
        assert_eq!(edited.source(), "__global__ void k() {}");
        check(
            edited,
            Action::SetVariant {
                variant: crate::lessons::variant("adjacent-difference", "shared"),
            },
            State {
                variant: crate::lessons::variant("adjacent-difference", "shared"),
                ..State::default()
            },
        );
    }

    /// An access site on `line`, as the per-line view's rows carry them.
    fn site(line: u32) -> AccessSite {
        AccessSite {
            span: memplay_sim::kernel::Span {
                line,
                col: 5,
                start: 100,
                end: 120,
            },
            space: memplay_sim::Space::Shared,
            kind: memplay_sim::AccessKind::Load,
        }
    }

    #[test]
    fn picking_a_line_shows_its_first_execution() {
        let stepped = State {
            page: PageState {
                line_site: Some(site(19)),
                line_step: 3,
                ..PageState::default()
            },
            ..State::default()
        };
        check(
            stepped,
            Action::PickLineSite { site: site(23) },
            State {
                page: PageState {
                    line_site: Some(site(23)),
                    ..PageState::default()
                },
                ..State::default()
            },
        );
    }

    #[test]
    fn another_warp_starts_at_its_first_execution_and_another_lesson_forgets_the_line() {
        let looking = State {
            page: PageState {
                line_site: Some(site(23)),
                line_step: 2,
                ..PageState::default()
            },
            ..State::default()
        };
        check(
            looking.clone(),
            Action::SetTraceWarp {
                block: [1, 2],
                warp: 3,
            },
            State {
                page: PageState {
                    line_site: Some(site(23)),
                    trace_block: [1, 2],
                    trace_warp: 3,
                    ..PageState::default()
                },
                ..State::default()
            },
        );
        check(
            looking.apply(Action::SetTraceWarp {
                block: [1, 2],
                warp: 3,
            }),
            Action::SetLesson {
                lesson: crate::lessons::lesson("coalescing"),
            },
            State {
                variant: crate::lessons::variant("coalescing", "strided-copy"),
                ..State::default()
            },
        );
    }

    #[test]
    fn an_edit_back_to_the_file_is_no_edit() {
        let source = State::default().variant.source().to_string();
        check(
            State::default(),
            Action::EditSource { source },
            State::default(),
        );
    }

    /// The default state after the student's edit `source`, compressed to `compressed`.
    fn edited_and_compressed(source: &str, compressed: Compressed) -> State {
        State::default()
            .apply(Action::EditSource {
                source: source.to_string(),
            })
            .apply(Action::SourceCompressed {
                source: source.to_string(),
                compressed,
            })
    }

    #[test]
    fn an_edit_is_compressed_and_then_shared_in_the_fragment() {
        let edited = State::default().apply(Action::EditSource {
            source: "__global__ void k() {}".to_string(),
        });
        assert_eq!(edited.source_link, SourceLink::Compressing);
        assert_eq!(edited.source_to_compress(), Some("__global__ void k() {}"));
        check(
            edited,
            Action::SourceCompressed {
                source: "__global__ void k() {}".to_string(),
                compressed: Compressed::Bytes(vec![3, 0]),
            },
            State {
                edited_source: Some("__global__ void k() {}".to_string()),
                source_link: SourceLink::Shared {
                    fragment: "src=1.AwA".to_string(),
                },
                ..State::default()
            },
        );
    }

    #[test]
    fn running_the_same_edit_again_keeps_its_link() {
        let shared = edited_and_compressed("// a\n", Compressed::Bytes(vec![3, 0]));
        check(
            shared.clone(),
            Action::EditSource {
                source: "// a\n".to_string(),
            },
            shared,
        );
    }

    #[test]
    fn the_compression_of_an_older_edit_is_ignored() {
        let newer = State::default()
            .apply(Action::EditSource {
                source: "// older".to_string(),
            })
            .apply(Action::EditSource {
                source: "// newer".to_string(),
            });
        check(
            newer.clone(),
            Action::SourceCompressed {
                source: "// older".to_string(),
                compressed: Compressed::Bytes(vec![3, 0]),
            },
            newer,
        );
    }

    #[test]
    fn reverting_the_edit_takes_the_kernel_out_of_the_link() {
        let shared = edited_and_compressed("// a", Compressed::Bytes(vec![3, 0]));
        let source = shared.variant.source().to_string();
        check(
            shared.clone(),
            Action::EditSource { source },
            State::default(),
        );
        check(shared, Action::ResetSource, State::default());
        // A compression that arrives after the reset does not bring the edit back.
        let reset = State::default().apply(Action::EditSource {
            source: "// a".to_string(),
        });
        check(
            reset.apply(Action::ResetSource),
            Action::SourceCompressed {
                source: "// a".to_string(),
                compressed: Compressed::Bytes(vec![3, 0]),
            },
            State::default(),
        );
    }

    #[test]
    fn an_edit_too_large_for_a_link_leaves_the_link_without_it() {
        let state = edited_and_compressed("// long", Compressed::OverLimit);
        assert_eq!(state.source_link, SourceLink::TooLarge);
        assert_eq!(state.source_link.fragment(), None);
        assert_eq!(state.source(), "// long");
    }

    fn opening(fragment: &str) -> State {
        opening_with(State::default(), fragment)
    }

    fn opening_with(state: State, fragment: &str) -> State {
        State {
            source_link: SourceLink::Opening {
                fragment: fragment.to_string(),
                compressed: vec![3, 0],
            },
            ..state
        }
    }

    #[test]
    fn a_kernel_unpacked_from_the_link_becomes_the_edit_and_keeps_its_fragment() {
        check(
            opening("src=1.AwA"),
            Action::SharedSourceOpened {
                inflated: Inflated::Bytes(b"// shared".to_vec()),
            },
            State {
                edited_source: Some("// shared".to_string()),
                source_link: SourceLink::Shared {
                    fragment: "src=1.AwA".to_string(),
                },
                ..State::default()
            },
        );
    }

    #[test]
    fn a_link_whose_kernel_is_the_lessons_own_carries_no_edit() {
        let lesson = State::default().variant.source().as_bytes().to_vec();
        check(
            opening("src=1.AwA"),
            Action::SharedSourceOpened {
                inflated: Inflated::Bytes(lesson),
            },
            State::default(),
        );
    }

    #[test]
    fn a_corrupt_kernel_in_the_link_falls_back_to_the_lesson_with_a_note() {
        check(
            opening("src=1.____"),
            Action::SharedSourceOpened {
                inflated: Inflated::Corrupt,
            },
            State {
                notes: vec![
                    "src=1.____ is not a kernel memplay can read: the link may be cut \
                             short or altered; using the lesson's own kernel."
                        .to_string(),
                ],
                ..State::default()
            },
        );
    }

    #[test]
    fn an_edit_while_the_link_is_unpacked_wins_over_the_links_kernel() {
        let edited = opening("src=1.AwA").apply(Action::EditSource {
            source: "// mine".to_string(),
        });
        assert_eq!(edited.source_link, SourceLink::Compressing);
        check(
            edited.clone(),
            Action::SharedSourceOpened {
                inflated: Inflated::Bytes(b"// the link's".to_vec()),
            },
            edited,
        );
    }

    #[test]
    fn writing_a_kernel_removes_the_note_about_the_links_kernel() {
        let with_note = State {
            notes: vec!["src=1.____ is not a kernel memplay can read.".to_string()],
            ..State::default()
        };
        let edited = with_note.apply(Action::EditSource {
            source: "// mine".to_string(),
        });
        assert_eq!(edited.notes, Vec::<String>::new());
    }

    #[test]
    fn choosing_g80_and_the_column_pattern_changes_nothing_else() {
        let after_device = State::default().apply(Action::SetDevice {
            device: DeviceId::G80,
        });
        check(
            after_device,
            Action::SetPattern {
                pattern: PatternId::RowPerThread,
            },
            State {
                device: DeviceId::G80,
                pattern: PatternId::RowPerThread,
                ..State::default()
            },
        );
    }

    fn copied(state: &State, copied: bool) -> Action {
        Action::EmbedCodeCopied {
            query: state.to_query(),
            copied,
        }
    }

    #[test]
    fn copy_embed_code_shows_the_code_and_a_granted_clipboard_marks_it_copied() {
        let shown = State::default().apply(Action::ShowEmbedCode);
        assert_eq!(shown.page.embed_code, EmbedCode::Shown);
        check(
            shown,
            copied(&State::default(), true),
            State {
                page: PageState {
                    embed_code: EmbedCode::Copied,
                    ..PageState::default()
                },
                ..State::default()
            },
        );
    }

    #[test]
    fn a_refused_clipboard_asks_the_student_to_copy_the_selected_code() {
        check(
            State::default().apply(Action::ShowEmbedCode),
            copied(&State::default(), false),
            State {
                page: PageState {
                    embed_code: EmbedCode::SelectToCopy,
                    ..PageState::default()
                },
                ..State::default()
            },
        );
    }

    #[test]
    fn a_new_setting_after_copying_leaves_the_code_shown_but_no_longer_copied() {
        let copied_state = State::default()
            .apply(Action::ShowEmbedCode)
            .apply(copied(&State::default(), true));
        check(
            copied_state,
            Action::SetPad { pad: 1 },
            State {
                pad: 1,
                page: PageState {
                    embed_code: EmbedCode::Shown,
                    ..PageState::default()
                },
                ..State::default()
            },
        );
    }

    #[test]
    fn a_clipboard_answer_about_an_older_view_is_ignored() {
        let before = State::default().apply(Action::ShowEmbedCode);
        let answer = copied(&before, true);
        let changed = before.apply(Action::SetTile { tile: 8 });
        check(changed.clone(), answer, changed);
    }

    #[test]
    fn a_clipboard_answer_without_the_code_on_the_page_is_ignored() {
        check(
            State::default(),
            copied(&State::default(), true),
            State::default(),
        );
    }

    #[test]
    fn an_answer_is_shown_only_once_chosen_and_then_stays_fixed() {
        let asked = |chosen, revealed| State {
            page: PageState {
                prediction: Prediction { chosen, revealed },
                ..PageState::default()
            },
            ..State::default()
        };
        check(State::default(), Action::RevealAnswer, asked(None, false));
        check(
            State::default(),
            Action::Predict { index: 2 },
            asked(Some(2), false),
        );
        check(
            asked(Some(2), false),
            Action::RevealAnswer,
            asked(Some(2), true),
        );
        check(
            asked(Some(2), true),
            Action::Predict { index: 0 },
            asked(Some(2), true),
        );
    }

    /// A program whose host code launches `scale` twice: 8 blocks of 128 threads, then 4 of 256.
    const TWO_LAUNCHES: &str = "__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
int main() {
  float* x;
  cudaMalloc(&x, 1024 * sizeof(float));
  scale<<<8, 128>>>(x, 1024);
  scale<<<4, 256>>>(x, 1024);
  return 0;
}
";

    fn my_kernel() -> State {
        State {
            variant: crate::lessons::variant("my-kernel", "my-kernel"),
            ..State::default()
        }
    }

    #[test]
    fn a_pasted_program_fills_the_form_from_its_first_launch_and_the_menu_from_any_other() {
        let pasted = my_kernel().apply(Action::EditSource {
            source: TWO_LAUNCHES.to_string(),
        });
        assert_eq!(pasted.program_launch, Some(1));
        assert_eq!(pasted.my_launch.grid[0], "8");
        let second = pasted.apply(Action::ChooseProgramLaunch { number: 2 });
        assert_eq!(second.program_launch, Some(2));
        assert_eq!(second.my_launch.grid[0], "4");
        assert_eq!(second.my_launch.block[0], "256");
        // The student's own change to the form is no longer the host code's launch.
        let mut edited_form = second.my_launch.clone();
        edited_form.grid[0] = "16".to_string();
        let own = second.clone().apply(Action::SetMyLaunch {
            launch: Box::new(edited_form),
        });
        assert_eq!(own.program_launch, None);
    }

    #[test]
    fn a_link_s_program_launch_fills_the_form_once_its_program_is_unpacked() {
        let opening = State {
            program_launch: Some(2),
            ..opening_with(my_kernel(), "src=1.AwA")
        };
        let opened = opening.apply(Action::SharedSourceOpened {
            inflated: Inflated::Bytes(TWO_LAUNCHES.as_bytes().to_vec()),
        });
        assert_eq!(opened.program_launch, Some(2));
        assert_eq!(opened.my_launch.grid[0], "4");
        assert_eq!(opened.my_launch.block[0], "256");
    }

    #[test]
    fn a_link_s_launch_number_past_the_program_s_launches_leaves_the_form_and_says_why() {
        let opening = State {
            program_launch: Some(3),
            ..opening_with(my_kernel(), "src=1.AwA")
        };
        let form = opening.my_launch.clone();
        let opened = opening.apply(Action::SharedSourceOpened {
            inflated: Inflated::Bytes(TWO_LAUNCHES.as_bytes().to_vec()),
        });
        assert_eq!(opened.my_launch, form);
        assert_eq!(opened.program_launch, None);
        assert_eq!(
            opened.notes,
            ["program-launch=3: the program's host code has 2 launches; using the form as written."]
        );
    }

    #[test]
    fn the_view_is_covered_until_the_answer_is_shown_or_the_question_skipped() {
        assert!(State::default().view_covered());
        let chosen = State::default().apply(Action::Predict { index: 1 });
        assert!(
            chosen.view_covered(),
            "a choice alone does not show the answer"
        );
        assert!(!chosen.clone().apply(Action::RevealAnswer).view_covered());
        let skipped = State::default().apply(Action::SkipPrediction);
        assert_eq!(skipped.page.prediction.chosen, None);
        assert!(skipped.page.prediction.revealed);
        assert!(!skipped.view_covered());
        let edited = State::default().apply(Action::EditSource {
            source: "__global__ void k() {}".into(),
        });
        assert!(
            !edited.view_covered(),
            "the student's own kernel is never covered"
        );
    }

    #[test]
    fn another_lesson_asks_its_question_afresh_but_a_variant_of_the_same_keeps_the_answer() {
        let answered = State {
            variant: crate::lessons::variant("tiled-matmul", "tiled"),
            page: PageState {
                prediction: Prediction {
                    chosen: Some(2),
                    revealed: true,
                },
                ..PageState::default()
            },
            ..State::default()
        };
        let naive = answered.clone().apply(Action::SetVariant {
            variant: crate::lessons::variant("tiled-matmul", "naive"),
        });
        assert_eq!(naive.page.prediction, answered.page.prediction);
        let atomics = answered.apply(Action::SetVariant {
            variant: crate::lessons::variant("atomics", "global"),
        });
        assert_eq!(atomics.page.prediction, Prediction::default());
    }
}
