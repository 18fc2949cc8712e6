//! The lessons: each one file of `www/lessons/`, which holds everything a lesson is.
//!
//! A `Lesson` is one topic of the lectures (`?lesson=tiled-matmul`, the file's name); its
//! `Variant`s are the kernels it compares (`&variant=naive`), each with its launch written as
//! expressions of the page's settings (`lesson_launch`). Besides its words (`lesson_text`), a
//! file names the lesson's controls, its primary view and the others, the bank map's first
//! pattern, the variant its question is about and where it stands in the menu. A variant's
//! kernel is one of `www/kernels/` or a `== kernel NAME` section of the file itself, so a lesson
//! an instructor writes is one file. The page's code names no lesson: `build.rs` lists the
//! shipped files as the menu (`ShippedLesson`: id, title, home flag, `explains:`, old keys), the
//! page fetches a file and its kernels when the lesson opens (`lesson_fetch`) and reads it here
//! (`hold_shipped`), and a lesson loaded at run time (`?lesson-url=`, `#lesson=`) joins them
//! through `load`. The host's tests read every shipped file from the disk.
//!
//! The format, with a worked example, is in README ("Writing a lesson"). A malformed file is
//! refused with its line and what is wrong.
//!
//! `Lesson` and `Variant` are small copyable handles on lessons read once and kept for the
//! page's life, so the state, the views and the tests pass them around as freely as the enums
//! they replace.

use crate::lesson_launch::{Expression, LaunchSpec};
use crate::lesson_text::{self, LessonText, Sections};
use crate::my_kernel::{self, MyLaunch};
pub use crate::settings::{CompareWith, Control, Settings, SweepLaunches, SweepSetting, Tab, View};
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::patterns::PatternId;
use memplay_sim::simulate::SimulationInput;
use memplay_sim::transfer::Layout;
use memplay_sim::DeviceId;
use std::cell::RefCell;

include!(concat!(env!("OUT_DIR"), "/shipped_files.rs"));

/// A lesson as its file gives it.
#[derive(Debug, PartialEq)]
pub struct LessonDef {
    /// The id in the link (`lesson=tiled-matmul`): the file's name.
    pub key: String,
    /// Where the lesson stands in the menu (`order:`).
    pub order: u32,
    /// Whether the page opens on this lesson when its link names none (`home: yes`).
    pub home: bool,
    /// Whether its launches run the sanitizer (`sanitize: yes`), for a lesson about a race.
    pub sanitize: bool,
    /// What page errors the lesson explains (`explains: ragged-tiles`), so an error elsewhere
    /// can link to it.
    pub explains: Vec<String>,
    pub text: LessonText,
    /// The settings the lesson's kernels depend on, in the order the page shows them.
    pub controls: Vec<Control>,
    /// The view that shows the lesson's point, on its first screen.
    pub view: View,
    /// The other views that matter, one click away.
    pub views: Vec<View>,
    /// The bank map's pattern where the link names none.
    pub pattern: PatternId,
    /// Names the lesson gives its controls (`label stride: Offset (floats)`), where the page's
    /// own would not say what the control means in this lesson's kernel.
    pub labels: Vec<(Control, String)>,
    /// The values the lesson lets a control take (`range stride: 0..32`), within the page's own.
    pub ranges: Vec<(Control, u32, u32)>,
    /// What the lesson's launch may be compared with (`compare:`), besides nothing.
    pub compare: Vec<CompareWith>,
    /// The variant the question is about.
    pub question_variant: usize,
    pub variants: Vec<VariantDef>,
    /// The file as it was read, for the lesson editor.
    pub file: String,
}

/// One kernel of a lesson and its launch.
#[derive(Debug, PartialEq)]
pub struct VariantDef {
    /// The name in the link (`variant=naive`).
    pub name: String,
    pub title: String,
    /// The kernel's key in the page's first links (`lesson=matmul-naive`), which still open it.
    pub old_key: Option<String>,
    /// The kernel's file (`matmul.cu`) and its text.
    pub file: String,
    pub source: &'static str,
    /// The `__global__` function the lesson launches.
    pub kernel: String,
    /// Which settings change the launch, in words, so the page can say what to try.
    pub settings: String,
    pub controls: Vec<Control>,
    pub sweep: SweepSetting,
    pub launch: LaunchRule,
    /// The access the per-line view opens on (`access:`, its code), where the lesson is about
    /// one; the costliest access otherwise.
    pub access: Option<String>,
}

/// How a variant is launched.
#[derive(Debug, PartialEq)]
pub enum LaunchRule {
    /// As the file writes it.
    Written(Box<LaunchSpec>),
    /// As the student writes it in the launch form (`launch: form`).
    Form,
}

/// A lesson: a handle on a lesson read once for the page's life.
#[derive(Clone, Copy)]
pub struct Lesson(&'static LessonDef);

impl PartialEq for Lesson {
    fn eq(&self, other: &Lesson) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Lesson {}

impl std::hash::Hash for Lesson {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.key.hash(state);
    }
}

impl std::fmt::Debug for Lesson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.key)
    }
}

/// A kernel of a lesson.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Variant {
    lesson: Lesson,
    index: usize,
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.lesson.key(), self.name())
    }
}

/// A lesson of `www/lessons/` as the page knows it before its file arrives: what its menu,
/// its links from other lessons and the page's opening need (written by `build.rs` from the
/// fields before the file's first section; `SHIPPED_LESSONS` lists them in menu order, that of
/// their `order:`).
#[derive(Debug)]
pub struct ShippedLesson {
    /// The id in the link and the name of its file (`lessons/KEY.txt`).
    pub key: &'static str,
    pub title: &'static str,
    /// Whether the page opens on it when its link names none (`home: yes`).
    pub home: bool,
    /// What page errors it explains (`explains:`).
    pub explains: &'static [&'static str],
    /// Its kernels' keys in the page's first links (`old-key:`), which still open it.
    pub old_keys: &'static [&'static str],
}

impl ShippedLesson {
    /// The shipped lesson whose id, or whose kernel's old key, this is.
    pub fn named(key: &str) -> Option<&'static ShippedLesson> {
        SHIPPED_LESSONS
            .iter()
            .find(|lesson| lesson.key == key)
            .or_else(|| {
                SHIPPED_LESSONS
                    .iter()
                    .find(|lesson| lesson.old_keys.contains(&key))
            })
    }

    /// The lesson the page opens on when its link names none.
    pub fn home() -> &'static ShippedLesson {
        SHIPPED_LESSONS
            .iter()
            .find(|lesson| lesson.home)
            .unwrap_or(&SHIPPED_LESSONS[0])
    }
}

thread_local! {
    /// The shipped lessons whose files have arrived (`hold_shipped`), each read once and kept
    /// for the page's life.
    static FETCHED: RefCell<Vec<Lesson>> = const { RefCell::new(Vec::new()) };
    /// The kernels of `www/kernels/` that have arrived, by file name.
    static KERNELS: RefCell<Vec<(&'static str, &'static str)>> = const { RefCell::new(Vec::new()) };
    /// Lessons loaded at run time (`?lesson-url=`, `#lesson=`, the lesson editor's preview).
    static LOADED: RefCell<Vec<Lesson>> = const { RefCell::new(Vec::new()) };
}

/// The shipped lessons the page holds. The host's tests read every file from the disk once; the
/// page holds those it fetched. A shipped file that does not parse is left out (a test reads
/// every one).
fn builtin() -> Vec<Lesson> {
    #[cfg(test)]
    {
        static BUILTIN: std::sync::OnceLock<Vec<Lesson>> = std::sync::OnceLock::new();
        let mut lessons = BUILTIN
            .get_or_init(|| {
                LESSON_FILES
                    .iter()
                    .filter_map(|(key, text)| parse(key, text).ok())
                    .map(|def| Lesson(Box::leak(Box::new(def))))
                    .collect()
            })
            .clone();
        FETCHED.with(|fetched| lessons.extend(fetched.borrow().iter().copied()));
        lessons
    }
    #[cfg(not(test))]
    FETCHED.with(|fetched| fetched.borrow().clone())
}

/// FNV-1a over a text's bytes, 64 bits: `build.rs` writes each kernel file's into
/// `SHIPPED_KERNELS`, by which the page knows a lesson's kernel from an edit of it.
pub fn text_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The text of a kernel of `www/kernels/` the page holds.
fn kernel_text(file: &str) -> Option<&'static str> {
    #[cfg(test)]
    if let Some((_, text)) = KERNEL_FILES.iter().find(|(name, _)| *name == file) {
        return Some(text);
    }
    KERNELS.with(|kernels| {
        kernels
            .borrow()
            .iter()
            .find(|(name, _)| *name == file)
            .map(|(_, text)| *text)
    })
}

/// The kernels of `www/kernels/` that a lesson's text names (`kernel: NAME in FILE.cu`), each
/// once; a kernel of the file's own `== kernel` sections is none of them.
fn shipped_kernels_named(text: &str) -> Vec<&'static str> {
    let mut named: Vec<&'static str> = Vec::new();
    for line in text.lines() {
        let file = line
            .trim()
            .strip_prefix("kernel:")
            .and_then(|kernel| kernel.split_once(" in "))
            .map(|(_, file)| file.trim());
        if let Some(&(name, _)) = SHIPPED_KERNELS.iter().find(|(name, _)| Some(*name) == file) {
            if !named.contains(&name) {
                named.push(name);
            }
        }
    }
    named
}

/// The kernels of `www/kernels/` that a lesson's text names and the page does not hold yet:
/// those it fetches before it reads the lesson.
pub fn missing_kernels(text: &str) -> Vec<&'static str> {
    let mut missing = shipped_kernels_named(text);
    missing.retain(|file| kernel_text(file).is_none());
    missing
}

/// Keeps a kernel of `www/kernels/` that arrived, for the page's life.
pub fn hold_kernel(file: &'static str, text: String) {
    if kernel_text(file).is_none() {
        let text: &'static str = Box::leak(text.into_boxed_str());
        KERNELS.with(|kernels| kernels.borrow_mut().push((file, text)));
    }
}

/// Reads a shipped lesson's file that arrived (its kernels held first) into the page's menu;
/// the lesson read before is kept where it arrives twice.
pub fn hold_shipped(shipped: &'static ShippedLesson, text: &str) -> Result<Lesson, String> {
    if let Some(held) = builtin()
        .into_iter()
        .find(|lesson| lesson.key() == shipped.key)
    {
        return Ok(held);
    }
    let lesson = Lesson(Box::leak(Box::new(parse(shipped.key, text)?)));
    FETCHED.with(|fetched| fetched.borrow_mut().push(lesson));
    Ok(lesson)
}

/// Whether the page holds the shipped lesson's file.
pub fn holds(shipped: &ShippedLesson) -> bool {
    builtin().iter().any(|lesson| lesson.key() == shipped.key)
}

/// Every lesson the page holds: the shipped ones in menu order, then those loaded at run time.
pub fn all() -> Vec<Lesson> {
    let mut lessons = builtin();
    memplay_sim::sorting::sort_by_key(&mut lessons, |lesson| lesson.0.order);
    LOADED.with(|loaded| lessons.extend(loaded.borrow().iter().copied()));
    lessons
}

/// The lesson menu, by id and title: every shipped lesson, whether its file has arrived or not,
/// then those loaded at run time.
pub fn menu() -> Vec<(&'static str, &'static str)> {
    let mut menu: Vec<(&'static str, &'static str)> = SHIPPED_LESSONS
        .iter()
        .map(|lesson| (lesson.key, lesson.title))
        .collect();
    LOADED.with(|loaded| {
        menu.extend(
            loaded
                .borrow()
                .iter()
                .map(|lesson| (lesson.key(), lesson.title())),
        )
    });
    menu
}

/// Every variant of every lesson.
#[cfg(test)]
pub fn all_variants() -> Vec<Variant> {
    all().into_iter().flat_map(Lesson::variants).collect()
}

/// Reads a lesson at run time and adds it to the menu; a lesson of the same key loaded before is
/// replaced, and the same text again gives the same lesson. Each text read is kept for the
/// page's life, which the few lessons a student opens afford.
pub fn load(key: &str, text: &str) -> Result<Lesson, String> {
    if let Some(same) = LOADED.with(|loaded| {
        loaded
            .borrow()
            .iter()
            .copied()
            .find(|lesson| lesson.0.key == key && lesson.0.file == text)
    }) {
        return Ok(same);
    }
    let lesson = Lesson(Box::leak(Box::new(parse(key, text)?)));
    LOADED.with(|loaded| {
        let mut loaded = loaded.borrow_mut();
        loaded.retain(|other| other.0.key != key);
        loaded.push(lesson);
    });
    Ok(lesson)
}

/// A name a file may give a lesson it carries: lowercase words joined by `-`.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

impl Lesson {
    /// The lesson whose id, or whose kernel's old key, this is, with the variant the key names
    /// (the lesson's first for a lesson id). A lesson loaded at run time comes first.
    pub fn parse(key: &str) -> Option<(Lesson, Variant)> {
        let lessons = all();
        if let Some(lesson) = lessons.iter().rev().find(|lesson| lesson.key() == key) {
            return Some((*lesson, lesson.first()));
        }
        lessons
            .into_iter()
            .flat_map(Lesson::variants)
            .find(|variant| variant.def().old_key.as_deref() == Some(key))
            .map(|variant| (variant.lesson(), variant))
    }

    /// The lesson the page opens on when its link names none: the page fetches its file
    /// before it starts (`lesson_fetch::open_link`), and holds every file it fetched.
    pub fn home() -> Lesson {
        let lessons = builtin();
        lessons
            .iter()
            .copied()
            .find(|lesson| lesson.key() == ShippedLesson::home().key)
            .or_else(|| lessons.first().copied())
            .expect("the page holds its home lesson before it starts")
    }

    /// The id and title of the lesson that explains an error of this kind (`explains:`), if
    /// one does: a shipped lesson, whether its file has arrived or not, or one loaded at run time.
    pub fn explaining(what: &str) -> Option<(&'static str, &'static str)> {
        SHIPPED_LESSONS
            .iter()
            .find(|lesson| lesson.explains.contains(&what))
            .map(|lesson| (lesson.key, lesson.title))
            .or_else(|| {
                LOADED.with(|loaded| {
                    loaded
                        .borrow()
                        .iter()
                        .find(|lesson| lesson.0.explains.iter().any(|e| e == what))
                        .map(|lesson| (lesson.key(), lesson.title()))
                })
            })
    }

    /// The id in the URL (`lesson=tiled-matmul`), also the name of its file.
    pub fn key(self) -> &'static str {
        &self.0.key
    }

    pub fn title(self) -> &'static str {
        &self.0.text.title
    }

    /// Whether its launches run the sanitizer (`sanitize: yes`).
    pub fn sanitizes(self) -> bool {
        self.0.sanitize
    }

    /// The lesson's file as it was read.
    pub fn file(self) -> &'static str {
        &self.0.file
    }

    /// The lesson's words.
    pub fn words(self) -> &'static LessonText {
        &self.0.text
    }

    /// The kernels the lesson compares; the first is where it opens.
    pub fn variants(self) -> Vec<Variant> {
        (0..self.0.variants.len())
            .map(|index| Variant {
                lesson: self,
                index,
            })
            .collect()
    }

    pub fn first(self) -> Variant {
        Variant {
            lesson: self,
            index: 0,
        }
    }

    /// The variant the lesson's question is about.
    pub fn question_variant(self) -> Variant {
        Variant {
            lesson: self,
            index: self.0.question_variant,
        }
    }

    /// The settings the lesson's kernels depend on, in the order the page shows them.
    pub fn controls(self) -> &'static [Control] {
        &self.0.controls
    }

    /// The lesson's primary view.
    pub fn view(self) -> View {
        self.0.view
    }

    /// Every view that matters for the lesson, its primary view first.
    pub fn views(self) -> Vec<View> {
        let mut views = vec![self.0.view];
        views.extend(self.0.views.iter().copied());
        views
    }

    /// The tabs below the lesson's first screen: the kernel, line by line, the lesson's other
    /// views, the comparison and the lesson's file.
    pub fn tabs(self) -> Vec<Tab> {
        let mut tabs = vec![Tab::Kernel];
        if self.view() != View::Lines {
            tabs.push(Tab::View(View::Lines));
        }
        tabs.extend(
            self.views()
                .into_iter()
                .skip(1)
                .filter(|&view| view != View::Lines && view != View::Access)
                .map(Tab::View),
        );
        tabs.extend([Tab::Compare, Tab::LessonFile]);
        tabs
    }

    /// The name the lesson gives a control, where it gives one.
    pub fn label(self, control: Control) -> Option<&'static str> {
        self.0
            .labels
            .iter()
            .find(|(each, _)| *each == control)
            .map(|(_, label)| label.as_str())
    }

    /// The values the lesson lets a control take, where it narrows the page's own range.
    pub fn range(self, control: Control) -> Option<(u32, u32)> {
        self.0
            .ranges
            .iter()
            .find(|(each, ..)| *each == control)
            .map(|&(_, low, high)| (low, high))
    }

    /// What the lesson's launch may be compared with, nothing first.
    pub fn compare_choices(self) -> &'static [CompareWith] {
        &self.0.compare
    }

    /// The bank map's pattern where the link names none.
    pub fn pattern(self) -> PatternId {
        self.0.pattern
    }

    /// The lesson's variant of this name (`naive`), if it has one.
    pub fn variant_named(self, name: &str) -> Option<Variant> {
        self.variants()
            .into_iter()
            .find(|variant| variant.name() == name)
    }

    /// The id and title of the lesson to go to next, if it is in the menu.
    pub fn next(self) -> Option<(&'static str, &'static str)> {
        let next = &self.0.text.next;
        menu().into_iter().find(|(key, _)| key == next)
    }
}

impl Variant {
    fn def(self) -> &'static VariantDef {
        &self.lesson.0.variants[self.index]
    }

    /// The lesson this kernel belongs to.
    pub fn lesson(self) -> Lesson {
        self.lesson
    }

    /// The variant's name within its lesson (`variant=naive`).
    pub fn name(self) -> &'static str {
        &self.def().name
    }

    pub fn title(self) -> &'static str {
        &self.def().title
    }

    /// The kernel's key in the page's first links, if it had one.
    #[cfg(test)]
    pub fn old_key(self) -> Option<&'static str> {
        self.def().old_key.as_deref()
    }

    /// The kernel's source as the lesson ships it.
    pub fn source(self) -> &'static str {
        self.def().source
    }

    /// The `__global__` function the lesson launches.
    pub fn kernel(self) -> &'static str {
        &self.def().kernel
    }

    /// Which settings change the launch, in words.
    pub fn settings(self) -> &'static str {
        &self.def().settings
    }

    /// The lesson's controls that change this kernel's launch or a view beside it.
    pub fn controls(self) -> Vec<Control> {
        self.def().controls.clone()
    }

    /// The setting the sweep chart varies.
    pub fn sweep(self) -> SweepSetting {
        self.def().sweep
    }

    /// The code of the access the per-line view opens on, if the lesson names one.
    pub fn opens_on(self) -> Option<&'static str> {
        self.def().access.as_deref()
    }

    /// Whether the student writes the launch in the launch form.
    pub fn takes_launch_form(self) -> bool {
        self.def().launch == LaunchRule::Form
    }

    /// How the launch's buffers are copied to and from the host at `settings`.
    pub fn transfer_layout(self, settings: Settings) -> Layout {
        match &self.def().launch {
            LaunchRule::Written(spec) => spec
                .launch(self.kernel(), "", settings)
                .map_or(Layout::Linear, |(_, layout)| layout),
            LaunchRule::Form => Layout::Linear,
        }
    }

    /// The launch of this kernel for the page's settings, running `source` (the lesson's
    /// file, or the student's edit of it). The launch form's variant launches the form's
    /// first launch; the page passes the student's (`State::launch`).
    pub fn launch(self, settings: Settings, source: &str) -> SimulationInput {
        match &self.def().launch {
            // The file's expressions were checked when it was read; one that fails at other
            // settings (a division by a zero setting) leaves the bare launch, which the
            // simulation refuses with its reason.
            LaunchRule::Written(spec) => spec
                .launch(self.kernel(), source, settings)
                .map(|(input, _)| input)
                .unwrap_or_else(|_| {
                    SimulationInput::new(source, self.kernel(), settings.device.device())
                }),
            LaunchRule::Form => my_kernel::build(&MyLaunch::default(), source, settings).0,
        }
    }

    /// The launches of the sweep chart: this kernel at each value of its swept setting, the
    /// other settings as they are.
    pub fn sweep_launches(self, settings: Settings, source: &str) -> SweepLaunches {
        self.sweep()
            .launches(settings, |settings| self.launch(settings, source))
    }
}

/// The settings a file's launches are checked at when it is read: the page's first ones.
fn first_settings() -> Settings {
    Settings {
        device: DeviceId::H100,
        tile: 16,
        block: 256,
        pad: 0,
        stride: 1,
        regs: 32,
        compile: CompileEffects::AS_COMPILED,
    }
}

/// Reads one lesson file; the error names the line and what is wrong.
pub fn parse(key: &str, text: &str) -> Result<LessonDef, String> {
    if !valid_key(key) {
        return Err(format!(
            "`{key}` is not a lesson's name: lowercase letters, digits and `-`"
        ));
    }
    let sections = lesson_text::split(text)?;
    let words = lesson_text::words(&sections)?;
    let lesson_controls = field_words(
        sections.field("controls"),
        "not one of the controls",
        Control::parse,
    )?;
    let (view_line, view) = sections.required("view")?;
    let view = View::parse(view).ok_or(format!("line {view_line}: `{view}` is not a view"))?;
    let views = field_words(sections.field("views"), "not one of the views", View::parse)?;
    let pattern = match sections.field("pattern") {
        None => PatternId::Stride,
        Some((line, value)) => PatternId::ALL
            .into_iter()
            .find(|pattern| pattern.as_str() == value)
            .ok_or(format!("line {line}: `{value}` is not a bank-map pattern"))?,
    };
    let labels = sections
        .fields_starting("label ")
        .into_iter()
        .map(|(line, name, label)| {
            let control = Control::parse(name)
                .ok_or(format!("line {line}: `label {name}:` names no control"))?;
            Ok((control, label.to_string()))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let ranges = sections
        .fields_starting("range ")
        .into_iter()
        .map(|(line, name, range)| {
            let control = Control::parse(name)
                .ok_or(format!("line {line}: `range {name}:` names no control"))?;
            let page = crate::settings::number_setting(control).ok_or(format!(
                "line {line}: `{name}` is not a number the page sets"
            ))?;
            let bound = |text: &str| text.trim().parse::<u32>().ok();
            match range
                .split_once("..")
                .map(|(low, high)| (bound(low), bound(high)))
            {
                Some((Some(low), Some(high)))
                    if low <= high && page.accepts(low) && page.accepts(high) =>
                {
                    Ok((control, low, high))
                }
                _ => Err(format!(
                    "line {line}: `range {name}:` is `LOW..HIGH` within {}..{}",
                    page.min, page.max
                )),
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    let compare = match sections.field("compare") {
        None => CompareWith::ALL.to_vec(),
        Some(field) => {
            let mut choices = vec![CompareWith::Nothing];
            choices.extend(field_words(Some(field), "not a comparison", |word| {
                CompareWith::ALL
                    .into_iter()
                    .find(|choice| choice.key() == word)
            })?);
            choices
        }
    };
    let order = match sections.field("order") {
        None => u32::MAX,
        Some((line, value)) => value
            .parse()
            .map_err(|_| format!("line {line}: `order:` is a whole number"))?,
    };
    let mut variants = Vec::new();
    for (line, name, lines) in sections.named("variant") {
        if variants.iter().any(|v: &VariantDef| v.name == name) {
            return Err(format!("line {line}: a second variant `{name}`"));
        }
        variants.push(read_variant(name, lines, &lesson_controls, &sections)?);
    }
    if variants.is_empty() {
        return Err("the lesson has no `== variant NAME` section".to_string());
    }
    let (question_line, question_name) = sections.required("question-variant")?;
    let question_variant = variants
        .iter()
        .position(|v| v.name == question_name)
        .ok_or(format!(
            "line {question_line}: `{question_name}` is not a variant of this lesson"
        ))?;
    Ok(LessonDef {
        key: key.to_string(),
        order,
        home: sections
            .field("home")
            .is_some_and(|(_, value)| value == "yes"),
        sanitize: sections
            .field("sanitize")
            .is_some_and(|(_, value)| value == "yes"),
        explains: field_words(sections.field("explains"), "", |word| {
            Some(word.to_string())
        })?,
        text: words,
        controls: lesson_controls,
        view,
        views,
        pattern,
        labels,
        ranges,
        compare,
        question_variant,
        variants,
        file: text.to_string(),
    })
}

/// The words of a field (`controls: tile pad regs`), each read by `parse`; the first that does
/// not read is refused with the field's line: "`speed` is not one of the controls".
fn field_words<T>(
    field: Option<(usize, &str)>,
    not: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, String> {
    let Some((line, value)) = field else {
        return Ok(Vec::new());
    };
    value
        .split_whitespace()
        .map(|word| parse(word).ok_or(format!("line {line}: `{word}` is {not}")))
        .collect()
}

/// One `== variant NAME` section: `key: value` lines, then the launch's `NAME = EXPR` lines.
fn read_variant(
    name: &str,
    lines: &[(usize, &str)],
    lesson_controls: &[Control],
    sections: &Sections,
) -> Result<VariantDef, String> {
    let mut fields: Vec<(usize, &str, &str)> = Vec::new();
    let first_line = lines.first().map_or(0, |(line, _)| *line);
    let mut spec = LaunchSpec::new(first_line);
    let mut buffers: Vec<(usize, String, Expression)> = Vec::new();
    for &(line, text) in lines {
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if let Some((left, expression)) =
            text.split_once('=').filter(|(left, _)| !left.contains(':'))
        {
            let expression = Expression::new(expression, line);
            let words: Vec<&str> = left.split_whitespace().collect();
            let three = |expression: &Expression| -> Result<[Expression; 3], String> {
                let parts: Vec<&str> = expression.text.split(',').collect();
                if parts.len() > 3 {
                    return Err(format!("line {line}: at most three extents, x, y and z"));
                }
                let part = |i: usize| Expression::new(parts.get(i).copied().unwrap_or("1"), line);
                Ok([part(0), part(1), part(2)])
            };
            match words[..] {
                ["let", name] => spec.lets.push((name.to_string(), expression)),
                ["define", name] => spec.defines.push((name.to_string(), expression)),
                ["arg", name] => spec.args.push((name.to_string(), expression)),
                ["buffer", name] => buffers.push((line, name.to_string(), expression)),
                ["grid"] => spec.grid = three(&expression)?,
                ["block"] => spec.block = three(&expression)?,
                ["dynamic-shared"] => spec.dynamic_shared = expression,
                ["pitched-rows"] => spec.pitched_rows = Some(expression),
                _ => {
                    return Err(format!(
                        "line {line}: `{}` is not a launch value: write `let`, `define`, `arg` \
                         or `buffer` and a name, or `grid`, `block`, `dynamic-shared` or \
                         `pitched-rows`",
                        left.trim()
                    ))
                }
            }
        } else if let Some((key, value)) = text.split_once(':') {
            fields.push((line, key.trim(), value.trim()));
        } else {
            return Err(format!(
                "line {line}: expected `key: value` or `NAME = EXPRESSION`"
            ));
        }
    }
    let field = |key: &str| {
        fields
            .iter()
            .find(|(_, k, _)| *k == key)
            .map(|(l, _, v)| (*l, *v))
    };
    let required = |key: &str| {
        field(key).ok_or(format!(
            "line {first_line}: the variant `{name}` has no `{key}:`"
        ))
    };
    let (kernel_line, kernel_at) = required("kernel")?;
    let (kernel, file) = kernel_at.split_once(" in ").ok_or(format!(
        "line {kernel_line}: write the kernel as `NAME in FILE.cu`"
    ))?;
    let (kernel, file) = (kernel.trim(), file.trim());
    let source = sections
        .named("kernel")
        .into_iter()
        .find(|(_, section, _)| *section == file)
        .map(|(_, _, lines)| -> &'static str {
            let text: Vec<&str> = lines.iter().map(|(_, line)| *line).collect();
            Box::leak(text.join("\n").into_boxed_str())
        })
        .or_else(|| kernel_text(file))
        .ok_or(format!(
            "line {kernel_line}: `{file}` is neither a kernel of the page nor a `== kernel {file}` \
             section of this file"
        ))?;
    let controls = match field("controls") {
        None => lesson_controls.to_vec(),
        Some(words) => field_words(Some(words), "not a control", Control::parse)?,
    };
    let (sweep_line, sweep) = required("sweep")?;
    let sweep = SweepSetting::parse(sweep).ok_or(format!(
        "line {sweep_line}: `{sweep}` is not a setting the sweep can vary"
    ))?;
    let launch = match field("launch") {
        Some((_, "form")) => LaunchRule::Form,
        Some((line, other)) => {
            return Err(format!(
                "line {line}: `launch: {other}`: the only launch named so is `form`"
            ))
        }
        None => {
            let params = my_kernel::kernels(source)
                .map_err(|error| format!("line {kernel_line}: `{file}` does not compile: {error}"))?
                .into_iter()
                .find(|(name, _)| name == kernel)
                .map(|(_, params)| params)
                .ok_or(format!(
                    "line {kernel_line}: `{file}` has no kernel `{kernel}`"
                ))?;
            for (line, name, expression) in buffers {
                let bytes = params
                    .iter()
                    .find(|param| param.name == name)
                    .and_then(|param| param.element_bytes)
                    .ok_or(format!(
                        "line {line}: `{kernel}` has no pointer parameter `{name}`"
                    ))?;
                spec.buffers.push((name, expression, bytes));
            }
            spec.check(first_settings())
                .map_err(|error| error.to_string())?;
            LaunchRule::Written(Box::new(spec))
        }
    };
    Ok(VariantDef {
        name: name.to_string(),
        title: required("title")?.1.to_string(),
        old_key: field("old-key").map(|(_, key)| key.to_string()),
        file: file.to_string(),
        source,
        kernel: kernel.to_string(),
        settings: field("settings").map_or(String::new(), |(_, text)| text.to_string()),
        controls,
        sweep,
        launch,
        access: field("access").map(|(_, code)| code.to_string()),
    })
}

/// A lesson and a variant by their keys, for the tests.
#[cfg(test)]
pub fn variant(lesson: &str, name: &str) -> Variant {
    Lesson::parse(lesson)
        .and_then(|(lesson, _)| lesson.variant_named(name))
        .unwrap_or_else(|| panic!("no variant {lesson}/{name}"))
}

/// A lesson by its key, for the tests.
#[cfg(test)]
pub fn lesson(key: &str) -> Lesson {
    Lesson::parse(key)
        .map(|(lesson, _)| lesson)
        .unwrap_or_else(|| panic!("no lesson {key}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lesson of one variant whose kernel is in the file itself.
    const FIXTURE: &str = "title: A fixture lesson\nlectures: CUDA Memories\norder: 99\n\
controls: block\nview: lines\nquestion-variant: copy\n\n== intro\nOne copy.\n\n\
== question\nHow many load requests does a warp make?\nmetric: global-load-requests-per-warp\n\
choice*: 1 | one coalesced load.\nchoice: 2 | two loads.\n\n== why\nOne load.\n\n\
== devices\nThe same.\n\n== next\ncoalescing\n\n== variant copy\ntitle: A copy\n\
kernel: copy in copy.cu\nsweep: block\nlet n = 1 << 16\ngrid = (n + block - 1) / block\n\
block = block\narg n = n\nbuffer out = n\nbuffer in = n\n\n== kernel copy.cu\n\
__global__ void copy(float *out, const float *in, int n) {\n\
    int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
    if (i < n) out[i] = in[i];\n\
}\n";

    #[test]
    fn the_course_examples_own_lesson_reads_and_the_simulator_gives_its_marked_answer() {
        let text = include_str!("../../../www/course/misaligned-loads.txt");
        let lesson = load("misaligned-loads", text).expect("the course lesson reads");
        assert_eq!(
            lesson.label(Control::Stride),
            Some("Offset of the first element (floats)")
        );
        let question = &lesson.words().question;
        let answer = |offset: u32| {
            let state = crate::state::State {
                variant: lesson.question_variant(),
                stride: offset,
                ..crate::state::State::default()
            };
            let input = state.launch();
            let report = simulate(&input).expect("the copy runs");
            let prediction = memplay_sim::timing::predict(&report);
            question
                .metric
                .value(&input, &report, &prediction)
                .expect("a load")
        };
        assert_eq!(answer(1), 5.0);
        assert_eq!(question.nearest_choice(answer(1)), question.correct());
        assert_eq!(
            answer(8),
            4.0,
            "an offset of a whole sector is aligned again"
        );
    }

    #[test]
    fn the_menu_gives_each_lesson_file_s_title_order_home_flag_explains_and_old_keys() {
        let read: Vec<Lesson> = all()
            .into_iter()
            .filter(|lesson| LESSON_FILES.iter().any(|(key, _)| *key == lesson.key()))
            .collect();
        assert_eq!(SHIPPED_LESSONS.len(), LESSON_FILES.len());
        assert_eq!(read.len(), SHIPPED_LESSONS.len());
        for (shipped, lesson) in SHIPPED_LESSONS.iter().zip(read) {
            assert_eq!(
                shipped.key,
                lesson.key(),
                "the menu's order is the files' `order:`"
            );
            assert_eq!(shipped.title, lesson.title());
            assert_eq!(shipped.home, lesson.0.home, "{}", shipped.key);
            assert_eq!(shipped.explains, lesson.0.explains, "{}", shipped.key);
            let old_keys: Vec<&str> = lesson
                .0
                .variants
                .iter()
                .filter_map(|variant| variant.old_key.as_deref())
                .collect();
            assert_eq!(shipped.old_keys, old_keys, "{}", shipped.key);
        }
        assert_eq!(ShippedLesson::home().key, "tiled-matmul");
        assert_eq!(Lesson::home().key(), "tiled-matmul");
        assert_eq!(
            Lesson::explaining("ragged-tiles"),
            Some(("boundary-checks", "Boundary checks"))
        );
    }

    #[test]
    fn a_lesson_is_found_in_the_menu_by_its_id_or_an_old_key_of_its_kernel() {
        let named = |key: &str| ShippedLesson::named(key).map(|lesson| lesson.key);
        assert_eq!(named("coalescing"), Some("coalescing"));
        assert_eq!(named("transpose-swizzle"), Some("bank-conflicts"));
        assert_eq!(named("boundary-guarded"), Some("boundary-checks"));
        assert_eq!(named("fft"), None);
    }

    #[test]
    fn a_lesson_fetches_the_page_s_kernels_it_names_once_and_none_of_its_own_sections() {
        let text = "== variant a\nkernel: mm_tiled in matmul.cu\n== variant b\n\
                    kernel:  mm_naive in matmul.cu \n== variant c\nkernel: sum in atomics.cu\n\
                    == variant d\nkernel: copy in copy.cu\n== kernel copy.cu\n";
        assert_eq!(shipped_kernels_named(text), ["matmul.cu", "atomics.cu"]);
        assert_eq!(shipped_kernels_named(FIXTURE), Vec::<&str>::new());
        // The tests hold every kernel file, as the page does once they arrived.
        assert_eq!(missing_kernels(text), Vec::<&str>::new());
    }

    #[test]
    fn each_kernel_file_is_known_by_the_fnv_1a_hash_of_its_text() {
        // FNV-1a's offset basis, and its published hash of "a".
        assert_eq!(text_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(text_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(SHIPPED_KERNELS.len(), KERNEL_FILES.len());
        for ((name, hash), (file, text)) in SHIPPED_KERNELS.iter().zip(KERNEL_FILES) {
            assert_eq!(name, file);
            assert_eq!(*hash, text_hash(text), "{name}");
        }
    }

    #[test]
    fn a_lesson_file_that_arrives_again_is_the_lesson_read_before() {
        let shipped = ShippedLesson::named("coalescing").expect("a shipped lesson");
        let (_, text) = LESSON_FILES
            .iter()
            .find(|(key, _)| *key == "coalescing")
            .expect("its file");
        let held = lesson("coalescing");
        assert!(holds(shipped));
        assert_eq!(hold_shipped(shipped, text), Ok(held));
    }

    #[test]
    fn every_lesson_file_the_page_ships_is_read() {
        for (key, text) in LESSON_FILES {
            if let Err(error) = parse(key, text) {
                panic!("{key}: {error}");
            }
        }
        assert_eq!(all().len(), LESSON_FILES.len());
    }

    #[test]
    fn a_lesson_added_as_one_file_is_in_the_menu_and_runs_its_own_kernel() {
        let lesson = load("fixture", FIXTURE).expect("the fixture reads");
        assert!(all().contains(&lesson));
        assert_eq!(Lesson::parse("fixture"), Some((lesson, lesson.first())));
        assert_eq!(
            load("fixture", FIXTURE),
            Ok(lesson),
            "the same text is the same lesson"
        );
        let settings = crate::state::State::default().settings();
        let input = lesson.first().launch(settings, lesson.first().source());
        assert_eq!((input.grid.x, input.block.x), (256, 256));
        assert_eq!(
            input.buffers,
            vec![("out".to_string(), 1 << 18), ("in".to_string(), 1 << 18)]
        );
        let report = simulate(&input).expect("the fixture's kernel runs");
        assert_eq!(
            report
                .counters
                .get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            Some(2048.0)
        );
    }

    fn refused(text: &str, expected: &str) {
        match parse("fixture", text) {
            Ok(_) => panic!("read a file that should be refused for {expected:?}"),
            Err(error) => assert_eq!(error, expected),
        }
    }

    #[test]
    fn a_malformed_lesson_file_is_refused_with_its_line_and_what_is_wrong() {
        refused(
            &FIXTURE.replace("view: lines", "view: sideways"),
            "line 5: `sideways` is not a view",
        );
        refused(
            &FIXTURE.replace("controls: block", "controls: block speed"),
            "line 4: `speed` is not one of the controls",
        );
        refused(
            &FIXTURE.replace("question-variant: copy", "question-variant: paste"),
            "line 6: `paste` is not a variant of this lesson",
        );
        refused(
            &FIXTURE.replace("grid = (n + block - 1) / block", "grid = (m + block - 1) / block"),
            "line 31: `(m + block - 1) / block`: the value is not a constant integer expression (a name \
             that is no #define, a division by zero, or a call)",
        );
        refused(
            &FIXTURE.replace("kernel: copy in copy.cu", "kernel: copy in paste.cu"),
            "line 28: `paste.cu` is neither a kernel of the page nor a `== kernel paste.cu` \
             section of this file",
        );
        refused(
            &FIXTURE.replace("buffer in = n", "buffer input = n"),
            "line 35: `copy` has no pointer parameter `input`",
        );
        refused(
            &FIXTURE.replace("arg n = n", "argument n = n"),
            "line 33: `argument n` is not a launch value: write `let`, `define`, `arg` or \
             `buffer` and a name, or `grid`, `block`, `dynamic-shared` or `pitched-rows`",
        );
        refused(
            &FIXTURE.replace("view: lines", "view: lines\ncompare: variant sideways"),
            "line 6: `sideways` is not a comparison",
        );
        refused(
            &FIXTURE.replace("controls: block", "controls: block\nrange block: 0..4096"),
            "line 5: `range block:` is `LOW..HIGH` within 1..1024",
        );
        refused(
            &FIXTURE.replace("sweep: block", "sweep: colour"),
            "line 29: `colour` is not a setting the sweep can vary",
        );
        refused(
            &FIXTURE.replace("choice*: 1", "choice: 1"),
            "the question must mark exactly one `choice*:`",
        );
    }
    use crate::state::State;
    use memplay_sim::simulate::simulate;

    /// Simulates the lesson at the given settings and returns the named Nsight counter.
    fn check(variant: Variant, state: State, counter: &str, expected: f64) {
        let input = variant.launch(state.settings(), variant.source());
        let report = simulate(&input).unwrap_or_else(|e| panic!("{variant:?}: {e}"));
        let found = report.counters.get(counter).expect("a known counter");
        assert_eq!(found, expected, "{variant:?} {counter}");
    }

    #[test]
    fn every_kernel_belongs_to_the_lesson_that_lists_it_under_its_name() {
        for variant in all_variants() {
            let lesson = variant.lesson();
            assert_eq!(lesson.variant_named(variant.name()), Some(variant));
            assert_eq!(
                Lesson::parse(lesson.key()),
                Some((lesson, lesson.variants()[0]))
            );
        }
        assert_eq!(Lesson::parse("fft"), None);
    }

    #[test]
    fn the_pattern_menu_shows_exactly_where_the_bank_map_it_drives_does() {
        for lesson in all() {
            assert_eq!(
                lesson.controls().contains(&Control::Pattern),
                lesson.views().contains(&View::BankMap),
                "{lesson:?}"
            );
        }
    }

    #[test]
    fn every_lesson_simulates_at_the_default_settings() {
        for lesson in all_variants() {
            let input = lesson.launch(State::default().settings(), lesson.source());
            // The unguarded kernel of the boundary-checks lesson fails by design (the next test).
            if lesson != variant("boundary-checks", "unguarded") {
                assert!(simulate(&input).is_ok(), "{lesson:?}");
            }
            assert_eq!(
                lesson.old_key().and_then(Lesson::parse),
                Some((lesson.lesson(), lesson))
            );
        }
    }

    #[test]
    fn without_boundary_checks_a_ragged_n_reads_outside_the_matrix_and_with_them_it_runs() {
        // Seed 004: n = 1000 needs 63 tiles of 16 per side; the last ones hang over the edge.
        let unguarded = variant("boundary-checks", "unguarded");
        let input = unguarded.launch(State::default().settings(), unguarded.source());
        assert_eq!((input.grid.x, input.grid.y), (63, 63));
        let error = simulate(&input).expect_err("the unguarded kernel leaves the matrix");
        assert!(error.to_string().contains("outside"), "{error}");
        let guarded = variant("boundary-checks", "guarded");
        let report = simulate(&guarded.launch(State::default().settings(), guarded.source()))
            .expect("the guarded kernel runs");
        // Every element of C is written once: n * n stores of 4 bytes, in warp requests.
        assert!(
            report
                .counters
                .get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
                > Some(0.0)
        );
    }

    #[test]
    fn row_per_thread_without_padding_takes_32_wavefronts_per_read() {
        // 132 blocks x 32 reads s[t][j] of one warp, each a 32-way conflict, counted as written
        // (nvcc would fuse the unrolled reads of a 16-byte aligned row into 128-bit loads).
        let state = State {
            pad: 0,
            compile: memplay_sim::compile_effects::CompileEffects::AS_WRITTEN,
            ..State::default()
        };
        check(
            variant("bank-conflicts", "row-per-thread"),
            state.clone(),
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            132.0 * 32.0 * 32.0,
        );
        check(
            variant("bank-conflicts", "row-per-thread"),
            State { pad: 1, ..state },
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            132.0 * 32.0,
        );
    }

    #[test]
    fn sixteen_wide_tiles_load_each_matrix_element_once_per_tile() {
        // Seed 003: 16x16 tiles cut global loads 16-fold, to 2 n^3 / 16 element loads, made by
        // warp-level requests of 32 lanes each.
        let n = 1024.0;
        check(
            variant("tiled-matmul", "tiled"),
            State::default(),
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            2.0 * n * n * n / 16.0 / 32.0,
        );
    }

    #[test]
    fn the_divergent_variant_issues_both_paths_with_half_its_lanes() {
        // Seed 001: a warp whose lanes disagree runs both loops, 16 lanes each. The uniform
        // variant does the same thread work in half the warp instructions.
        let run = |variant: Variant| {
            let input = variant.launch(State::default().settings(), variant.source());
            simulate(&input)
                .expect("the divergence lesson runs")
                .counters
        };
        let divergent = run(variant("warp-divergence", "divergent"));
        let uniform = run(variant("warp-divergence", "uniform"));
        let paths = divergent.inst_executed / uniform.inst_executed;
        assert!((1.9..2.0).contains(&paths), "{paths}");
        let lanes = |c: &memplay_sim::counters::Counters| c.thread_inst_executed / c.inst_executed;
        assert!(
            (lanes(&divergent) - 16.0).abs() < 0.5,
            "{}",
            lanes(&divergent)
        );
        assert_eq!(lanes(&uniform), 32.0);
        let threads = divergent.thread_inst_executed / uniform.thread_inst_executed;
        assert!((threads - 1.0).abs() < 0.01, "{threads}");
    }

    #[test]
    fn an_xor_swizzle_removes_the_transposes_32_way_conflict_without_a_wasted_column() {
        // tr_shared's column read tile[threadIdx.x][threadIdx.y + j] is a 32-way conflict at
        // PAD = 0 and none at PAD = 1, for one more column (128 bytes) per tile; the swizzled
        // tile reads and writes in one wavefront each at 4,096 bytes.
        let run = |variant: Variant, pad: u32| {
            let state = State {
                pad,
                ..State::default()
            };
            simulate(&variant.launch(state.settings(), variant.source())).expect("runs")
        };
        let per_load = |report: &memplay_sim::simulate::SimulationReport, op: &str| {
            let counter = |name: String| report.counters.get(&name).unwrap_or(0.0);
            counter(format!(
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
            )) / counter(format!("smsp__inst_executed_op_shared_{op}.sum"))
        };
        let unpadded = run(variant("bank-conflicts", "transpose"), 0);
        let padded = run(variant("bank-conflicts", "transpose"), 1);
        let swizzled = run(variant("bank-conflicts", "swizzle"), 0);
        assert_eq!(per_load(&unpadded, "ld"), 32.0);
        assert_eq!(per_load(&padded, "ld"), 1.0);
        assert_eq!(per_load(&swizzled, "ld"), 1.0);
        assert_eq!(per_load(&swizzled, "st"), 1.0);
        assert_eq!(swizzled.shared_bytes_per_block, 32 * 32 * 4);
        assert_eq!(padded.shared_bytes_per_block, 32 * 33 * 4);
    }

    #[test]
    fn the_new_lessons_run_on_every_device_at_their_first_settings() {
        // The timing lessons invite a change of device: none of their launches may fail on one.
        for variant in [
            variant("latency-hiding", "adjacent-difference"),
            variant("warp-divergence", "divergent"),
            variant("warp-divergence", "uniform"),
            variant("bank-conflicts", "swizzle"),
            variant("host-transfers", "adjacent-difference"),
            variant("host-transfers", "matmul"),
            variant("my-kernel", "my-kernel"),
        ] {
            for device in memplay_sim::DeviceId::ALL {
                let state = State {
                    device,
                    ..State::default()
                };
                let input = variant.launch(state.settings(), variant.source());
                if let Err(error) = simulate(&input) {
                    panic!("{variant:?} on {device}: {error}");
                }
            }
        }
    }
}
