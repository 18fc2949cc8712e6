//! The playground's state: the knobs a student turns, and the notes about a link's bad values.
//!
//! One `State` value and a closed `Action` enum, reduced by a pure function (Yew's `Reducible`),
//! as in Yew's `function_todomvc` example. Everything shown on the page is derived from this state
//! by pure calls into `memplay-sim` (see `model`); the URL query mirrors it (see `url`).

use crate::lessons::LessonId;
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::patterns::PatternId;
use memplay_sim::DeviceId;
use std::rc::Rc;
use yew::Reducible;

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

pub const DEFAULT_DEVICE: DeviceId = DeviceId::H100;
pub const DEFAULT_PATTERN: PatternId = PatternId::Stride;
pub const DEFAULT_LESSON: LessonId = LessonId::MatmulTiled;

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

/// Everything the page shows is a function of this.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub device: DeviceId,
    pub tile: u32,
    pub block: u32,
    pub pad: u32,
    pub stride: u32,
    pub regs: u32,
    pub pattern: PatternId,
    /// The lesson kernel the simulation runs.
    pub lesson: LessonId,
    /// The kernel as written, or as nvcc compiles it (shared-load fusion).
    pub compile: CompileEffects,
    /// The compact layout of one lesson for a course page's iframe (`embed=1`).
    pub embed: bool,
    /// The student's edit of the lesson's source, if any. It is not part of the link: a link
    /// restores a lesson and its settings, and a long kernel would not fit an address bar.
    pub edited_source: Option<String>,
    /// The embed code's status. Not part of the link: it is what the student did on this page.
    pub embed_code: EmbedCode,
    /// One sentence for every value of the page's link that could not be used.
    pub notes: Vec<String>,
}

impl State {
    /// The kernel source the simulation runs: the student's edit, or the lesson's file.
    pub fn source(&self) -> &str {
        self.edited_source
            .as_deref()
            .unwrap_or_else(|| self.lesson.source())
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
            lesson: DEFAULT_LESSON,
            compile: CompileEffects::AS_COMPILED,
            embed: false,
            edited_source: None,
            embed_code: EmbedCode::Hidden,
            notes: Vec::new(),
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
    /// Choosing a lesson starts from its file again.
    SetLesson {
        lesson: LessonId,
    },
    SetCompile {
        compile: CompileEffects,
    },
    /// The student's text replaces the kernel source.
    EditSource {
        source: String,
    },
    ResetSource,
    /// The student pressed "Copy embed code": the code appears and the page tries the clipboard.
    ShowEmbedCode,
    /// The clipboard's answer about the code of the view whose query is `query`: `copied` is
    /// false when the browser refused or has no clipboard.
    EmbedCodeCopied {
        query: String,
        copied: bool,
    },
}

impl State {
    /// The pure transition: numbers are clamped to their ranges, and a note about the link's bad
    /// value for a setting disappears once the student sets that value themselves.
    pub fn apply(mut self, action: Action) -> State {
        let key = match action {
            Action::ShowEmbedCode => {
                self.embed_code = EmbedCode::Shown;
                return self;
            }
            Action::EmbedCodeCopied { query, copied } => {
                // An answer that arrives after the student changed the view is about old code.
                if self.embed_code != EmbedCode::Hidden && query == self.to_query() {
                    self.embed_code = if copied {
                        EmbedCode::Copied
                    } else {
                        EmbedCode::SelectToCopy
                    };
                }
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
            Action::SetLesson { lesson } => {
                self.lesson = lesson;
                self.edited_source = None;
                "lesson"
            }
            Action::SetCompile { compile } => {
                self.compile = compile;
                "compile"
            }
            Action::EditSource { source } => {
                // Text identical to the lesson's file is no edit at all.
                self.edited_source = (source != self.lesson.source()).then_some(source);
                "source"
            }
            Action::ResetSource => {
                self.edited_source = None;
                "source"
            }
        };
        let prefix = format!("{key}=");
        self.notes.retain(|note| !note.starts_with(&prefix));
        // The code on the page follows the view; what was copied before no longer matches it.
        if self.embed_code != EmbedCode::Hidden {
            self.embed_code = EmbedCode::Shown;
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
    fn a_new_lesson_drops_the_edit_of_the_old_one() {
        let edited = State::default().apply(Action::EditSource {
            source: "__global__ void k() {}".to_string(),
        });
        assert_eq!(edited.source(), "__global__ void k() {}");
        check(
            edited,
            Action::SetLesson {
                lesson: LessonId::AdjDiffShared,
            },
            State {
                lesson: LessonId::AdjDiffShared,
                ..State::default()
            },
        );
    }

    #[test]
    fn an_edit_back_to_the_file_is_no_edit() {
        let source = State::default().lesson.source().to_string();
        check(
            State::default(),
            Action::EditSource { source },
            State::default(),
        );
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
        assert_eq!(shown.embed_code, EmbedCode::Shown);
        check(
            shown,
            copied(&State::default(), true),
            State {
                embed_code: EmbedCode::Copied,
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
                embed_code: EmbedCode::SelectToCopy,
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
                embed_code: EmbedCode::Shown,
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
}
