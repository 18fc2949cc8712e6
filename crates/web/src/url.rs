//! The page's link: every control is mirrored in the URL query, so a course page can link to a
//! prepared view (README, "Links into the playground").
//!
//! Parsing never fails: a value that cannot be used falls back to its default and leaves a note
//! the page shows, so a student who follows a mistyped link sees why the view differs from the
//! one promised. An edited kernel travels in the fragment instead (`source_link` reads and writes
//! it); `State::from_link` reads both. Pure string handling only, so the tests run on the host.

use crate::format::quote;
use crate::lessons::{Control, Lesson};
use crate::my_kernel;
use crate::settings::CompareWith;
use crate::settings::Tab;
use crate::source_link::{read_fragment, Fragment, SourceLink};
use crate::state::{
    default_pattern, Action, NumberSetting, State, BLOCK, DEFAULT_DEVICE, DEFAULT_PATTERN, PAD,
    REGS, STRIDE, TILE,
};
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::patterns::{Element, PatternId};
use memplay_sim::transfer::HostMemory;
use memplay_sim::DeviceId;

/// The patterns in the order the page lists them.
pub const PATTERNS: [PatternId; 6] = [
    PatternId::Stride,
    PatternId::TileRow,
    PatternId::TileColumn,
    PatternId::RowPerThread,
    PatternId::Broadcast,
    PatternId::Multicast,
];

/// The URL id of a pattern.
pub fn pattern_key(pattern: PatternId) -> &'static str {
    match pattern {
        PatternId::Stride => "stride",
        PatternId::TileRow => "tile-row",
        PatternId::TileColumn => "tile-column",
        PatternId::RowPerThread => "row-per-thread",
        PatternId::Broadcast => "broadcast",
        PatternId::Multicast => "multicast",
    }
}

/// The keys of the query, in the order `to_query` writes them. `embed` comes last and is written
/// only when it is on, so a link copied from the full page never turns into an embed.
const KEYS: [&str; 21] = [
    "device",
    "pattern",
    "tile",
    "block",
    "pad",
    "stride",
    "regs",
    "lesson",
    "variant",
    "compile",
    "compare",
    "element",
    "host",
    "launch",
    "program-launch",
    "tab",
    "more",
    "sanitize",
    "lesson-url",
    "menus",
    "embed",
];

/// The keys that belong to the frame rather than to the lesson: its layout, and the course page
/// it talks to (`embed_api`). A course page's `set` message cannot change them.
const FRAME_KEYS: [&str; 2] = ["embed", crate::embed_api::PARENT_ORIGIN_KEY];

/// The URL values of the page's two layouts: `1` is the compact embed of one lesson (README,
/// "Embedding in a course page"), `0` the full page.
pub fn embed_key(embed: bool) -> &'static str {
    if embed {
        "1"
    } else {
        "0"
    }
}

/// The sandbox tokens of the embed code, the least the page needs inside an iframe (README,
/// "Embedding in a course page", says why each is there).
pub const EMBED_SANDBOX: &str = "allow-scripts allow-same-origin allow-popups allow-downloads";

/// The embed code's frame size in CSS pixels: the size at which a lesson's first screen (its
/// words, question, controls and view) shows without scrolling; a course page's stylesheet may
/// size the frame to its column instead, and down to 640 x 480 the first screen still fits.
pub const EMBED_WIDTH: u32 = 800;
pub const EMBED_HEIGHT: u32 = 600;

/// The URL values of the two ways of counting a kernel's instructions.
pub fn compile_key(compile: CompileEffects) -> &'static str {
    if compile.fuse_shared_loads {
        "as-compiled"
    } else {
        "as-written"
    }
}

impl State {
    /// Reads the page's whole link: the query (`from_query`) and the fragment, which carries an
    /// edited kernel (`source_link`). A kernel in the fragment still has to be unpacked, which
    /// the browser does asynchronously; until then the state holds it as `SourceLink::Opening`.
    pub fn from_link(query: &str, hash: &str) -> State {
        let mut state = State::from_query(query);
        let fragment = crate::lesson_link::split(hash);
        state.lesson_fragment = fragment.lesson;
        // A lesson the link carries or names by address is read once the page runs; until then
        // its name is no lesson of the menu, and that is no mistake of the link.
        if state.lesson_fragment.is_some() || state.lesson_url.is_some() {
            state.notes.retain(|note| !note.starts_with("lesson="));
        }
        match read_fragment(&fragment.rest) {
            Fragment::Absent => {}
            Fragment::Kernel {
                fragment,
                compressed,
            } => {
                state.source_link = SourceLink::Opening {
                    fragment,
                    compressed,
                }
            }
            Fragment::Unusable { note } => state.notes.push(note),
        }
        state
    }

    /// Reads a query string such as `?pattern=row-per-thread&pad=1` (the `?` is optional).
    pub fn from_query(query: &str) -> State {
        let mut state = State::default();
        // The variant is a name within the lesson, so it is read once the lesson is known,
        // wherever the two stand in the query.
        let mut variant_name = None;
        let mut pattern_named = false;
        let query = query.strip_prefix('?').unwrap_or(query);
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
            let key = percent_decode(raw_key);
            let value = percent_decode(raw_value);
            match key.as_str() {
                "device" => {
                    state.device = read_choice(
                        &key,
                        &value,
                        &DeviceId::ALL,
                        DeviceId::as_str,
                        DEFAULT_DEVICE,
                        &mut state.notes,
                    )
                }
                "pattern" => {
                    pattern_named = true;
                    state.pattern = read_choice(
                        &key,
                        &value,
                        &PATTERNS,
                        pattern_key,
                        DEFAULT_PATTERN,
                        &mut state.notes,
                    )
                }
                "element" => {
                    state.element = read_choice(
                        &key,
                        &value,
                        &Element::ALL,
                        Element::as_str,
                        Element::Float,
                        &mut state.notes,
                    )
                }
                "host" => {
                    state.host_memory = read_choice(
                        &key,
                        &value,
                        &HostMemory::ALL,
                        HostMemory::as_str,
                        HostMemory::Pinned,
                        &mut state.notes,
                    )
                }
                "launch" => match my_kernel::decode(&value) {
                    Ok(launch) => state.my_launch = launch,
                    Err(problem) => state.notes.push(format!(
                        "launch={} is not a launch ({problem}); using the starter's.",
                        quote(&value)
                    )),
                },
                "program-launch" => match value.parse::<u32>() {
                    Ok(number) if number >= 1 => state.program_launch = Some(number),
                    _ => state.notes.push(format!(
                        "program-launch={} is not a launch's number (1 is the host code's \
                         first); using the form as written.",
                        quote(&value)
                    )),
                },
                "tile" => state.tile = read_number(TILE, &value, &mut state.notes),
                "block" => state.block = read_number(BLOCK, &value, &mut state.notes),
                "pad" => state.pad = read_number(PAD, &value, &mut state.notes),
                "stride" => state.stride = read_number(STRIDE, &value, &mut state.notes),
                "regs" => state.regs = read_number(REGS, &value, &mut state.notes),
                "lesson" => match Lesson::parse(&value) {
                    Some((_, variant)) => state.variant = variant,
                    None => {
                        let ids: Vec<&str> = crate::lessons::menu()
                            .into_iter()
                            .map(|(key, _)| key)
                            .collect();
                        state.notes.push(format!(
                            "lesson={} is not one of {}; using {}.",
                            quote(&value),
                            ids.join(", "),
                            Lesson::home().key()
                        ));
                        state.variant = Lesson::home().first();
                    }
                },
                "variant" => variant_name = Some(value),
                "tab" => match Tab::parse(&value) {
                    Some(tab) => state.tab = tab,
                    None => state.notes.push(format!(
                        "tab={} is not a tab of the page; opening the kernel's.",
                        quote(&value)
                    )),
                },
                "more" => state.more = read_flag(&key, &value, &mut state.notes),
                "sanitize" => state.sanitize = read_flag(&key, &value, &mut state.notes),
                "menus" => state.menus = read_flag(&key, &value, &mut state.notes),
                "lesson-url" => match lesson_address(&value) {
                    Ok(address) => state.lesson_url = Some(address),
                    Err(problem) => state.notes.push(format!(
                        "lesson-url={} cannot be loaded: {problem}.",
                        quote(&value)
                    )),
                },
                "compile" => {
                    let choices = [CompileEffects::AS_COMPILED, CompileEffects::AS_WRITTEN];
                    state.compile = read_choice(
                        &key,
                        &value,
                        &choices,
                        compile_key,
                        CompileEffects::AS_COMPILED,
                        &mut state.notes,
                    );
                }
                "compare" => {
                    state.compare = read_choice(
                        &key,
                        &value,
                        &CompareWith::ALL,
                        CompareWith::key,
                        CompareWith::Nothing,
                        &mut state.notes,
                    );
                }
                "embed" => {
                    state.embed = read_choice(
                        &key,
                        &value,
                        &[false, true],
                        embed_key,
                        false,
                        &mut state.notes,
                    );
                }
                // The course page's origin is the embed API's (`embed_api::ParentOrigin`); the
                // page reads it from the link itself, and only a value that is no origin is
                // worth a note here.
                "parent-origin" => {
                    if crate::embed_api::read_origin(&value).is_err() {
                        state.notes.push(format!(
                            "parent-origin={} is not an origin such as https://course.example; \
                             this page sends its course page nothing.",
                            quote(&value)
                        ));
                    }
                }
                _ => state.notes.push(format!(
                    "{} is not a memplay setting (they are {}); ignored.",
                    quote(&key),
                    KEYS.join(", ")
                )),
            }
        }
        if let Some(name) = variant_name {
            let lesson = state.variant.lesson();
            match lesson.variant_named(&name) {
                Some(variant) => state.variant = variant,
                None => {
                    let names: Vec<&str> = lesson
                        .variants()
                        .iter()
                        .map(|variant| variant.name())
                        .collect();
                    state.notes.push(format!(
                        "variant={} is not one of {} (the variants of {}); using {}.",
                        quote(&name),
                        names.join(", "),
                        lesson.key(),
                        state.variant.name()
                    ));
                }
            }
        }
        if !pattern_named {
            state.pattern = default_pattern(state.variant.lesson());
        }
        // A lesson may narrow a setting's range: a link's value outside it is brought inside.
        state.fit_to_lesson();
        state
    }

    /// The query that restores this state, every setting spelled out so a copied link keeps its
    /// meaning even if a default changes later; `embed=1` is appended when the page is embedded,
    /// so the embed keeps its layout when it rewrites its own address.
    pub fn to_query(&self) -> String {
        let mut query = format!(
            "device={}&pattern={}&tile={}&block={}&pad={}&stride={}&regs={}&lesson={}&variant={}&compile={}",
            self.device.as_str(),
            pattern_key(self.pattern),
            self.tile,
            self.block,
            self.pad,
            self.stride,
            self.regs,
            self.variant.lesson().key(),
            self.variant.name(),
            compile_key(self.compile),
        );
        // The keys written only when they say something, so the first links stay as short: a
        // comparison, an element other than float, pageable host memory, the my-kernel lesson's
        // launch (percent-encoded), and the embed, last.
        let optional = [
            (
                "compare",
                (self.compare != CompareWith::Nothing).then(|| self.compare.key().to_string()),
            ),
            (
                "element",
                (self.element != Element::Float).then(|| self.element.as_str().to_string()),
            ),
            (
                "host",
                (self.host_memory != HostMemory::Pinned)
                    .then(|| self.host_memory.as_str().to_string()),
            ),
            (
                "launch",
                self.variant
                    .takes_launch_form()
                    .then(|| percent_encode(&my_kernel::encode(&self.my_launch))),
            ),
            (
                "program-launch",
                self.program_launch
                    .filter(|_| self.variant.takes_launch_form())
                    .map(|number| number.to_string()),
            ),
            (
                "tab",
                (self.tab != Tab::Kernel).then(|| self.tab.key().to_string()),
            ),
            ("more", self.more.then(|| "1".to_string())),
            ("sanitize", self.sanitize.then(|| "1".to_string())),
            ("lesson-url", self.lesson_url.as_deref().map(percent_encode)),
            ("menus", self.menus.then(|| "1".to_string())),
            ("embed", self.embed.then(|| embed_key(true).to_string())),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                query.push_str(&format!("&{key}={value}"));
            }
        }
        query
    }

    /// The query of the same view on the full page, for the embed's "Open in memplay" link.
    pub fn full_page_query(&self) -> String {
        State {
            embed: false,
            ..self.clone()
        }
        .to_query()
    }

    /// The query of an embed: only what the lesson uses. The device, the lesson and its
    /// variant; the settings of the controls the page shows (`State::controls`); and any other
    /// setting only where it differs from what a link without it reads (a tile the student set
    /// in another lesson, the kernel as written, a comparison), so that the embed opens the
    /// same page as the full one. `embed=1` comes last.
    pub fn embed_query(&self) -> String {
        let lesson = self.variant.lesson();
        let controls = self.controls();
        let default = State::from_query(&format!(
            "device={}&lesson={}&variant={}",
            self.device.as_str(),
            lesson.key(),
            self.variant.name()
        ));
        let mut pairs = vec![
            ("device", self.device.as_str().to_string()),
            ("lesson", lesson.key().to_string()),
            ("variant", self.variant.name().to_string()),
        ];
        let settings: [(Option<Control>, &str, String, bool); 11] = [
            (
                Some(Control::Pattern),
                "pattern",
                pattern_key(self.pattern).to_string(),
                self.pattern != default.pattern,
            ),
            (
                Some(Control::Tile),
                "tile",
                self.tile.to_string(),
                self.tile != default.tile,
            ),
            (
                Some(Control::Block),
                "block",
                self.block.to_string(),
                self.block != default.block,
            ),
            (
                Some(Control::Pad),
                "pad",
                self.pad.to_string(),
                self.pad != default.pad,
            ),
            (
                Some(Control::Stride),
                "stride",
                self.stride.to_string(),
                self.stride != default.stride,
            ),
            (
                Some(Control::Regs),
                "regs",
                self.regs.to_string(),
                self.regs != default.regs,
            ),
            (
                Some(Control::HostMemory),
                "host",
                self.host_memory.as_str().to_string(),
                self.host_memory != default.host_memory,
            ),
            (
                None,
                "element",
                self.element.as_str().to_string(),
                self.element != default.element,
            ),
            (
                None,
                "compile",
                compile_key(self.compile).to_string(),
                self.compile != default.compile,
            ),
            (
                None,
                "compare",
                self.compare.key().to_string(),
                self.compare != default.compare,
            ),
            (
                None,
                "launch",
                percent_encode(&my_kernel::encode(&self.my_launch)),
                self.variant.takes_launch_form(),
            ),
        ];
        for (control, key, value, differs) in settings {
            // A control's setting is written where the page shows the control, and left out
            // where it does not (a block size the transpose ignores); a setting without a
            // control only where it differs from what the link would read without it.
            let written = match control {
                Some(control) => controls.contains(&control),
                None => differs,
            };
            if written {
                pairs.push((key, value));
            }
        }
        pairs.push(("embed", embed_key(true).to_string()));
        pairs
            .into_iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The `<iframe>` that embeds this view in a course page. `page` is the address of memplay's
    /// `index.html` without a query: the page's own address for the "Copy embed code" button, or
    /// a relative `index.html` in a course page next to the built site. Every attribute value is
    /// escaped, so nothing in an address can break out of its quotes.
    pub fn embed_code(&self, page: &str) -> String {
        let query = self.embed_query();
        format!(
            "<iframe src=\"{}\" title=\"{}\" width=\"{EMBED_WIDTH}\" height=\"{EMBED_HEIGHT}\" \
             loading=\"lazy\" sandbox=\"{EMBED_SANDBOX}\"></iframe>",
            escape_attribute(&format!("{page}?{query}")),
            escape_attribute(&format!("memplay: {}", self.variant.title())),
        )
    }
}

impl State {
    /// The actions that make this state what a link saying `pairs` (URL keys and values, as a
    /// course page's `set` message gives them) would make it, every other setting kept. A pair
    /// the link would refuse with a note (an unknown key, a value out of range) is left out, as
    /// are the frame's own keys (`FRAME_KEYS`). A new lesson opens at its first variant and its
    /// own pattern unless the pairs name them too.
    pub fn link_actions(&self, pairs: &[(String, String)]) -> Vec<Action> {
        let current = self.to_query();
        // The lesson first, so that a variant or pattern of the new lesson is read within it.
        let mut given: Vec<&(String, String)> = pairs
            .iter()
            .filter(|(key, _)| !FRAME_KEYS.contains(&key.as_str()))
            .collect();
        memplay_sim::sorting::sort_by_key(&mut given, |(key, _)| key != "lesson");
        let query_with = |accepted: &[&(String, String)]| {
            let named = |key: &str| accepted.iter().any(|(given, _)| given == key);
            let new_lesson = named("lesson");
            let kept = current.split('&').filter(|pair| {
                let key = pair.split_once('=').map_or(*pair, |(key, _)| key);
                !named(key) && !(new_lesson && (key == "variant" || key == "pattern"))
            });
            let set = accepted
                .iter()
                .map(|(key, value)| format!("{}={}", percent_encode(key), percent_encode(value)));
            kept.map(str::to_string)
                .chain(set)
                .collect::<Vec<_>>()
                .join("&")
        };
        let mut accepted: Vec<&(String, String)> = Vec::new();
        for pair in given {
            let mut trial = accepted.clone();
            trial.push(pair);
            if State::from_query(&query_with(&trial)).notes.is_empty() {
                accepted = trial;
            }
        }
        let target = State::from_query(&query_with(&accepted));
        // Each setting that differs, in an order where no later action undoes an earlier one:
        // another variant resets the pattern, so it comes first.
        type Step = fn(&State, &State) -> Option<Action>;
        let steps: [Step; 14] = [
            |now, to| {
                (now.variant != to.variant).then_some(Action::SetVariant {
                    variant: to.variant,
                })
            },
            |now, to| (now.device != to.device).then_some(Action::SetDevice { device: to.device }),
            |now, to| {
                (now.pattern != to.pattern).then_some(Action::SetPattern {
                    pattern: to.pattern,
                })
            },
            |now, to| {
                (now.element != to.element).then_some(Action::SetElement {
                    element: to.element,
                })
            },
            |now, to| {
                (now.host_memory != to.host_memory).then_some(Action::SetHostMemory {
                    host_memory: to.host_memory,
                })
            },
            |now, to| {
                (now.my_launch != to.my_launch || now.program_launch != to.program_launch).then(
                    || match to.program_launch {
                        Some(number) => Action::ChooseProgramLaunch { number },
                        None => Action::SetMyLaunch {
                            launch: Box::new(to.my_launch.clone()),
                        },
                    },
                )
            },
            |now, to| (now.tile != to.tile).then_some(Action::SetTile { tile: to.tile }),
            |now, to| (now.block != to.block).then_some(Action::SetBlock { block: to.block }),
            |now, to| (now.pad != to.pad).then_some(Action::SetPad { pad: to.pad }),
            |now, to| (now.stride != to.stride).then_some(Action::SetStride { stride: to.stride }),
            |now, to| (now.regs != to.regs).then_some(Action::SetRegs { regs: to.regs }),
            |now, to| {
                (now.compile != to.compile).then_some(Action::SetCompile {
                    compile: to.compile,
                })
            },
            |now, to| {
                (now.sanitize != to.sanitize).then_some(Action::SetSanitize {
                    sanitize: to.sanitize,
                })
            },
            |now, to| {
                (now.compare != to.compare).then_some(Action::SetCompare {
                    compare: to.compare,
                })
            },
        ];
        let mut now = self.clone();
        let mut actions = Vec::new();
        for step in steps {
            if let Some(action) = step(&now, &target) {
                now = now.apply(action.clone());
                actions.push(action);
            }
        }
        actions
    }
}

/// The last value of `key` in a query string (`?` optional), decoded: how the page reads the
/// keys that are not settings of the state, such as `parent-origin`.
pub fn query_value(query: &str, key: &str) -> Option<String> {
    let query = query.strip_prefix('?').unwrap_or(query);
    query.split('&').rev().find_map(|pair| {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(raw_key) == key).then(|| percent_decode(raw_value))
    })
}

/// `query` with `key=value` appended, the value percent-encoded: the link the page writes keeps
/// the keys the state does not hold.
pub fn with_pair(query: String, key: &str, value: Option<&str>) -> String {
    match value {
        Some(value) => format!("{query}&{key}={}", percent_encode(value)),
        None => query,
    }
}

/// Text made safe for a double-quoted HTML attribute.
fn escape_attribute(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// A number in the setting's range, or the default and a note saying why.
fn read_number(setting: NumberSetting, value: &str, notes: &mut Vec<String>) -> u32 {
    match value.trim().parse::<u32>() {
        Ok(number) if setting.accepts(number) => number,
        _ => {
            notes.push(format!(
                "{}={} is not a number from {} to {}; using {}.",
                setting.key,
                quote(value),
                setting.min,
                setting.max,
                setting.default
            ));
            setting.default
        }
    }
}

/// `1` or `0`; anything else is off, with a note.
fn read_flag(key: &str, value: &str, notes: &mut Vec<String>) -> bool {
    match value {
        "1" => true,
        "0" => false,
        _ => {
            notes.push(format!("{key}={} is not 1 or 0; using 0.", quote(value)));
            false
        }
    }
}

/// A lesson file's address as a link may name it: a path on the page's own origin, relative
/// (`lessons/cache.txt`, `../course/cache.txt`) or absolute (`/course/cache.txt`), ending in
/// `.txt`. Another origin is refused here, before the page's policy (`connect-src 'self'`)
/// would refuse the fetch.
pub fn lesson_address(value: &str) -> Result<String, &'static str> {
    let value = value.trim();
    if value.contains("//") || value.contains(':') || value.contains('\\') {
        return Err("only a path on this site is loaded, not another site's address");
    }
    if !value.ends_with(".txt") {
        return Err("a lesson file's name ends in .txt");
    }
    Ok(value.to_string())
}

/// The one of `choices` whose URL id is `value`, or the default and a note saying why.
fn read_choice<T: Copy>(
    key: &str,
    value: &str,
    choices: &[T],
    id: fn(T) -> &'static str,
    default: T,
    notes: &mut Vec<String>,
) -> T {
    if let Some(choice) = choices.iter().copied().find(|&choice| id(choice) == value) {
        return choice;
    }
    let ids: Vec<&str> = choices.iter().map(|&choice| id(choice)).collect();
    notes.push(format!(
        "{key}={} is not one of {}; using {}.",
        quote(value),
        ids.join(", "),
        id(default)
    ));
    default
}

/// Escapes every byte but the unreserved ones of RFC 3986 (letters, digits, `-._~`) as `%XX`,
/// so an expression's `+`, `&`, `=`, `/` and spaces survive the query.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes and `+` (a space in form encoding). Malformed escapes stay as typed and
/// bytes that are not UTF-8 become U+FFFD, so any link yields some readable text.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                decoded.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|pair| {
                    std::str::from_utf8(pair)
                        .ok()
                        .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                });
                match hex {
                    Some(byte) => {
                        decoded.push(byte);
                        i += 3;
                    }
                    None => {
                        decoded.push(b'%');
                        i += 1;
                    }
                }
            }
            byte => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Action, PageState};

    fn check(query: &str, expected: State) {
        let state = State::from_query(query);
        assert_eq!(state, expected, "parsing {query:?}");
        // Whatever was read, writing it back and reading again gives the same settings.
        let again = State::from_query(&state.to_query());
        assert_eq!(
            again,
            State {
                notes: Vec::new(),
                ..state.clone()
            },
            "round trip of {query:?}"
        );
        let written = state.to_query();
        let written_keys = KEYS.iter().filter(|&&key| {
            (key != "embed" || state.embed)
                && (key != "compare" || state.compare != CompareWith::Nothing)
                && (key != "element" || state.element != Element::Float)
                && (key != "host" || state.host_memory != HostMemory::Pinned)
                && (key != "launch" || state.variant.takes_launch_form())
                && (key != "program-launch"
                    || (state.variant.takes_launch_form() && state.program_launch.is_some()))
                && (key != "tab" || state.tab != Tab::Kernel)
                && (key != "more" || state.more)
                && (key != "sanitize" || state.sanitize)
                && (key != "menus" || state.menus)
                && (key != "lesson-url" || state.lesson_url.is_some())
        });
        for key in written_keys {
            assert!(
                written.contains(&format!("{key}=")),
                "{written} names {key}"
            );
        }
    }

    #[test]
    fn a_program_s_launch_number_has_a_key_of_its_own_and_survives_the_round_trip() {
        let state = State::from_query("lesson=my-kernel&program-launch=2");
        assert_eq!(state.program_launch, Some(2));
        assert!(state.to_query().contains("&program-launch=2"));
        assert_eq!(State::from_query(&state.to_query()), state);
        let bad = State::from_query("lesson=my-kernel&program-launch=0");
        assert_eq!(bad.program_launch, None);
        assert_eq!(
            bad.notes,
            [
                "program-launch=0 is not a launch's number (1 is the host code's first); \
              using the form as written."
            ]
        );
        // Another lesson has no launch form, and its link no launch number.
        let elsewhere = State::from_query("lesson=tiled-matmul&program-launch=2");
        assert!(!elsewhere.to_query().contains("program-launch"));
    }

    fn pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect()
    }

    /// `start` after the actions of `set`.
    fn after(start: &State, set: &[(&str, &str)]) -> State {
        start
            .link_actions(&pairs(set))
            .into_iter()
            .fold(start.clone(), State::apply)
    }

    #[test]
    fn a_course_pages_tile_of_32_is_one_tile_action() {
        let start = State::from_query("?lesson=tiled-matmul&tile=16");
        assert_eq!(
            start.link_actions(&pairs(&[("tile", "32")])),
            vec![Action::SetTile { tile: 32 }]
        );
    }

    #[test]
    fn settings_set_by_a_course_page_read_as_the_same_link_would() {
        let start = State::from_query("?lesson=tiled-matmul&tile=16&device=h100");
        let set = after(
            &start,
            &[("tile", "8"), ("device", "g80"), ("compile", "as-written")],
        );
        assert_eq!(
            set.to_query(),
            State::from_query("?lesson=tiled-matmul&tile=8&device=g80&compile=as-written")
                .to_query()
        );
    }

    #[test]
    fn another_lesson_opens_at_its_own_variant_and_pattern() {
        let start = State::from_query("?lesson=tiled-matmul&tile=8");
        let set = after(&start, &[("lesson", "bank-conflicts")]);
        let fresh = State::from_query("?lesson=bank-conflicts&tile=8");
        assert_eq!(set.variant, fresh.variant);
        assert_eq!(set.pattern, fresh.pattern);
        assert_eq!(set.tile, 8, "the settings the lesson shares are kept");
    }

    #[test]
    fn a_variant_named_before_its_lesson_is_read_within_that_lesson() {
        let start = State::from_query("?lesson=tiled-matmul");
        let set = after(
            &start,
            &[("variant", "row-per-thread"), ("lesson", "bank-conflicts")],
        );
        assert_eq!(
            set.variant,
            State::from_query("?lesson=bank-conflicts&variant=row-per-thread").variant
        );
    }

    #[test]
    fn values_a_link_would_refuse_and_the_frames_own_keys_change_nothing() {
        let start = State::from_query("?lesson=tiled-matmul&tile=16&embed=1");
        let refused = [
            ("tile", "abc"),
            ("tile", "16.5"),
            ("pad", "99"),
            ("lesson", "fft"),
            ("colour", "red"),
            ("embed", "0"),
            ("parent-origin", "https://course.example"),
        ];
        for pair in refused {
            assert_eq!(start.link_actions(&pairs(&[pair])), Vec::new(), "{pair:?}");
        }
        // A refused pair leaves the good ones beside it working.
        assert_eq!(
            start.link_actions(&pairs(&[("tile", "abc"), ("tile", "32")])),
            vec![Action::SetTile { tile: 32 }]
        );
    }

    #[test]
    fn an_edited_kernel_survives_a_setting_from_the_course_page() {
        let start = State::from_query("?lesson=tiled-matmul").apply(Action::EditSource {
            source: "__global__ void k() {}".to_string(),
        });
        let set = after(&start, &[("tile", "32"), ("lesson", "tiled-matmul")]);
        assert_eq!(set.tile, 32);
        assert_eq!(set.edited_source, start.edited_source);
    }

    #[test]
    fn parent_origin_is_known_to_the_link_and_a_bad_one_is_named_in_a_note() {
        let pinned = State::from_query("?tile=8&parent-origin=https%3A%2F%2Fcourse.example");
        assert_eq!(pinned.notes, Vec::<String>::new());
        assert_eq!(pinned.tile, 8);
        let bad = State::from_query("?parent-origin=course.example");
        assert_eq!(
            bad.notes,
            vec![
                "parent-origin=course.example is not an origin such as https://course.example; \
                 this page sends its course page nothing."
                    .to_string()
            ]
        );
    }

    #[test]
    fn the_written_link_keeps_the_parent_origin_it_was_opened_with() {
        let opened = "?lesson=tiled-matmul&parent-origin=https://course.example:8443";
        let origin = query_value(opened, "parent-origin");
        assert_eq!(origin.as_deref(), Some("https://course.example:8443"));
        let written = with_pair(
            State::from_query(opened).to_query(),
            "parent-origin",
            origin.as_deref(),
        );
        assert!(
            written.ends_with("&parent-origin=https%3A%2F%2Fcourse.example%3A8443"),
            "{written}"
        );
        assert_eq!(query_value(&written, "parent-origin"), origin);
        assert_eq!(
            with_pair("tile=8".to_string(), "parent-origin", None),
            "tile=8"
        );
    }

    #[test]
    fn a_kernel_in_the_fragment_is_opened_with_the_querys_settings() {
        assert_eq!(
            State::from_link("?lesson=adj-diff-naive&pad=1", "#src=1.AwA"),
            State {
                variant: crate::lessons::variant("adjacent-difference", "naive"),
                pad: 1,
                source_link: SourceLink::Opening {
                    fragment: "src=1.AwA".to_string(),
                    compressed: vec![3, 0],
                },
                ..State::default()
            }
        );
    }

    #[test]
    fn a_broken_fragment_keeps_the_querys_settings_and_adds_a_note() {
        let state = State::from_link("?tile=abc", "#src=1.%%%");
        assert_eq!(state.source_link, SourceLink::Lesson);
        assert_eq!(
            state.notes,
            vec![
                "tile=abc is not a number from 1 to 64; using 16.".to_string(),
                "src=1.%%% is not a kernel memplay can read: the link may be cut short or \
                 altered; using the lesson's own kernel."
                    .to_string(),
            ]
        );
    }

    #[test]
    fn a_link_without_a_fragment_is_read_as_its_query() {
        assert_eq!(State::from_link("?pad=1", ""), State::from_query("?pad=1"));
    }

    #[test]
    fn an_unknown_lesson_falls_back_to_the_tiled_matmul_with_a_note() {
        let state = State::from_query("?lesson=fft&compile=fast");
        assert_eq!(state.variant, Lesson::home().first());
        assert_eq!(state.compile, CompileEffects::AS_COMPILED);
        assert_eq!(state.notes.len(), 2, "{:?}", state.notes);
        assert!(state.notes[0].starts_with("lesson=fft is not one of"));
        assert!(state.notes[1].starts_with("compile=fast is not one of"));
    }

    #[test]
    fn an_empty_query_gives_the_defaults() {
        check("", State::default());
        check("?", State::default());
    }

    #[test]
    fn seed_001_row_per_thread_link_is_read() {
        check(
            "?pattern=row-per-thread&pad=0",
            State {
                pattern: PatternId::RowPerThread,
                pad: 0,
                ..State::default()
            },
        );
    }

    #[test]
    fn every_key_is_read() {
        check(
            "device=g80&pattern=tile-column&tile=8&block=64&pad=1&stride=2&regs=10\
             &lesson=transpose-shared&compile=as-written&element=float4&host=pageable&tab=lines\
             &more=1&sanitize=1&menus=1&embed=1",
            State {
                device: DeviceId::G80,
                pattern: PatternId::TileColumn,
                element: Element::Float4,
                host_memory: HostMemory::Pageable,
                my_launch: crate::my_kernel::MyLaunch::default(),
                program_launch: None,
                tile: 8,
                block: 64,
                pad: 1,
                stride: 2,
                regs: 10,
                variant: crate::lessons::variant("bank-conflicts", "transpose"),
                compile: CompileEffects::AS_WRITTEN,
                sanitize: true,
                embed: true,
                edited_source: None,
                source_link: SourceLink::Lesson,
                compare: CompareWith::Nothing,
                notes: Vec::new(),
                tab: Tab::View(crate::lessons::View::Lines),
                more: true,
                menus: true,
                lesson_url: None,
                lesson_fragment: None,
                // What the student did on the page, and where they look, is not in the link.
                page: PageState::default(),
            },
        );
    }

    #[test]
    fn a_tile_that_is_not_a_number_falls_back_to_16_with_a_note() {
        check(
            "?device=g80&pattern=row-per-thread&pad=0&tile=abc",
            State {
                device: DeviceId::G80,
                pattern: PatternId::RowPerThread,
                notes: vec!["tile=abc is not a number from 1 to 64; using 16.".to_string()],
                ..State::default()
            },
        );
    }

    #[test]
    fn out_of_range_numbers_fall_back_to_their_defaults() {
        check(
            "tile=0&block=2048&pad=9&stride=65&regs=256",
            State {
                notes: vec![
                    "tile=0 is not a number from 1 to 64; using 16.".to_string(),
                    "block=2048 is not a number from 1 to 1024; using 256.".to_string(),
                    "pad=9 is not a number from 0 to 8; using 0.".to_string(),
                    "stride=65 is not a number from 0 to 64; using 1.".to_string(),
                    "regs=256 is not a number from 1 to 255; using 32.".to_string(),
                ],
                ..State::default()
            },
        );
    }

    #[test]
    fn a_negative_or_empty_number_falls_back_with_a_note() {
        check(
            "pad=-1&stride=",
            State {
                notes: vec![
                    "pad=-1 is not a number from 0 to 8; using 0.".to_string(),
                    "stride= is not a number from 0 to 64; using 1.".to_string(),
                ],
                ..State::default()
            },
        );
    }

    #[test]
    fn an_unknown_device_and_pattern_fall_back_with_notes() {
        check(
            "device=rtx4090&pattern=diagonal",
            State {
                notes: vec![
                    "device=rtx4090 is not one of g80, gt200, fermi, v100, a100, h100; using h100."
                        .to_string(),
                    "pattern=diagonal is not one of stride, tile-row, tile-column, row-per-thread, \
                     broadcast, multicast; using stride."
                        .to_string(),
                ],
                ..State::default()
            },
        );
    }

    #[test]
    fn a_lesson_url_is_a_path_on_the_pages_own_site() {
        assert_eq!(
            lesson_address("lessons/cache.txt"),
            Ok("lessons/cache.txt".to_string())
        );
        assert!(lesson_address("https://elsewhere.example/cache.txt").is_err());
        assert!(lesson_address("//elsewhere.example/cache.txt").is_err());
        assert!(lesson_address("javascript:alert(1)").is_err());
        assert!(lesson_address("cache.html").is_err());
        let state = State::from_query("lesson-url=course%2Fcache.txt&tab=nowhere");
        assert_eq!(state.lesson_url.as_deref(), Some("course/cache.txt"));
        assert_eq!(state.tab, Tab::Kernel);
        assert_eq!(
            state.notes,
            vec!["tab=nowhere is not a tab of the page; opening the kernel's.".to_string()]
        );
    }

    #[test]
    fn an_unknown_key_is_named_and_ignored() {
        check(
            "colour=red&pad=2",
            State {
                pad: 2,
                notes: vec![
                    "colour is not a memplay setting (they are device, pattern, tile, block, \
                     pad, stride, regs, lesson, variant, compile, compare, element, host, \
                     launch, program-launch, tab, more, sanitize, lesson-url, menus, embed); ignored."
                        .to_string(),
                ],
                ..State::default()
            },
        );
    }

    #[test]
    fn escapes_are_decoded_and_long_junk_is_shortened() {
        check(
            "tile=%3Cb%3Ebold%3C%2Fb%3E&pattern=multicast&regs=%2B40&stride=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            State {
                pattern: PatternId::Multicast,
                regs: 40,
                notes: vec![
                    "tile=<b>bold</b> is not a number from 1 to 64; using 16.".to_string(),
                    "stride=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa… is not a number from 0 to 64; using 1."
                        .to_string(),
                ],
                ..State::default()
            },
        );
    }

    #[test]
    fn a_broken_escape_is_kept_as_typed() {
        check(
            "pad=%zz&tile=%",
            State {
                notes: vec![
                    "pad=%zz is not a number from 0 to 8; using 0.".to_string(),
                    "tile=% is not a number from 1 to 64; using 16.".to_string(),
                ],
                ..State::default()
            },
        );
    }

    #[test]
    fn the_written_query_is_read_back_unchanged() {
        check(
            "device=h100&pattern=row-per-thread&tile=16&block=256&pad=1&stride=1&regs=32\
             &lesson=matmul-tiled&compile=as-compiled",
            State {
                pad: 1,
                pattern: PatternId::RowPerThread,
                ..State::default()
            },
        );
    }

    #[test]
    fn embed_1_is_read_and_written_last() {
        check(
            "?lesson=row-per-thread&embed=1",
            State {
                variant: crate::lessons::variant("bank-conflicts", "row-per-thread"),
                // A link without a pattern opens the bank lesson's own, the row-per-thread array.
                pattern: PatternId::RowPerThread,
                embed: true,
                ..State::default()
            },
        );
        assert!(State::from_query("embed=1")
            .to_query()
            .ends_with("&embed=1"));
    }

    #[test]
    fn the_full_page_writes_no_embed_key() {
        check(
            "embed=0",
            State {
                embed: false,
                ..State::default()
            },
        );
        assert!(!State::default().to_query().contains("embed"));
    }

    #[test]
    fn a_bad_embed_value_falls_back_to_the_full_page_with_a_note() {
        check(
            "embed=yes",
            State {
                notes: vec!["embed=yes is not one of 0, 1; using 0.".to_string()],
                ..State::default()
            },
        );
    }

    #[test]
    fn open_in_memplay_links_the_same_view_without_embed() {
        let embedded = State::from_query("lesson=matmul-naive&tile=8&embed=1");
        let full = embedded.full_page_query();
        assert_eq!(
            full,
            State::from_query("lesson=matmul-naive&tile=8").to_query()
        );
        assert!(!full.contains("embed"), "{full}");
    }

    #[test]
    fn the_embed_code_of_the_tiled_matmul_names_its_lesson_and_sandbox() {
        let state = State::from_query("lesson=matmul-tiled&tile=8");
        assert_eq!(
            state.embed_code("https://course.example/memplay/index.html"),
            "<iframe src=\"https://course.example/memplay/index.html?device=h100&amp;\
             lesson=tiled-matmul&amp;variant=tiled&amp;tile=8&amp;pad=0&amp;regs=32&amp;\
             embed=1\" \
             title=\"memplay: Matrix multiply, tiled in shared memory\" \
             width=\"800\" height=\"600\" loading=\"lazy\" \
             sandbox=\"allow-scripts allow-same-origin allow-popups allow-downloads\"></iframe>"
        );
    }

    /// The keys of a query, in order.
    fn keys(query: &str) -> Vec<&str> {
        query
            .split('&')
            .map(|pair| pair.split_once('=').map_or(pair, |(key, _)| key))
            .collect()
    }

    #[test]
    fn a_bank_lessons_embed_carries_its_pattern_and_a_tiled_matmuls_does_not() {
        let banks = State::from_query("lesson=bank-conflicts&pattern=tile-column&pad=1");
        assert_eq!(
            keys(&banks.embed_query()),
            ["device", "lesson", "variant", "pattern", "pad", "embed"]
        );
        assert!(banks.embed_query().contains("pattern=tile-column"));
        let matmul = State::from_query("lesson=tiled-matmul&tile=8");
        assert_eq!(
            keys(&matmul.embed_query()),
            ["device", "lesson", "variant", "tile", "pad", "regs", "embed"]
        );
        // A student who comes from the bank lesson carries no pattern into the matmul's embed.
        let moved = banks.apply(Action::SetLesson {
            lesson: crate::lessons::lesson("tiled-matmul"),
        });
        assert!(
            !moved.embed_query().contains("pattern"),
            "{}",
            moved.embed_query()
        );
    }

    #[test]
    fn an_embed_link_opens_the_same_page_as_the_full_one() {
        let links = [
            "lesson=tiled-matmul&tile=8&compile=as-written",
            "lesson=bank-conflicts&variant=swizzle&pattern=multicast&element=double&stride=3",
            "lesson=coalescing&stride=32&block=128&device=g80",
            "lesson=host-transfers&host=pageable&compare=padding",
            "lesson=occupancy&regs=40&pad=1&tile=32",
            "lesson=my-kernel&regs=64",
            // A setting the lesson has no control for, set in another lesson, stays behind:
            // nothing the divergence lesson shows depends on the tile.
            "lesson=warp-divergence&tile=32&pad=2",
        ];
        for link in links {
            let full = State::from_query(link);
            let embedded = State::from_query(&full.embed_query());
            let context = format!("{link} embeds as {}", full.embed_query());
            assert_eq!(embedded.notes, Vec::<String>::new(), "{context}");
            assert_eq!(embedded.launch(), full.launch(), "{context}");
            assert_eq!(embedded.controls(), full.controls(), "{context}");
            let shown = |state: &State| {
                (
                    state.variant,
                    state.device,
                    state.pattern,
                    state.element,
                    state.host_memory,
                    state.compile,
                    state.compare,
                    memplay_sim::patterns::build(
                        state.pattern,
                        crate::state::pattern_params(state),
                    )
                    .access,
                )
            };
            assert_eq!(shown(&embedded), shown(&full), "{context}");
            assert!(
                !full.embed_query().contains(if link.contains("divergence") {
                    "tile="
                } else {
                    "&&"
                })
            );
        }
    }

    #[test]
    fn a_bank_lesson_link_without_a_pattern_opens_on_one_that_conflicts_and_a_named_one_stays() {
        assert_eq!(
            State::from_query("lesson=bank-conflicts").pattern,
            PatternId::RowPerThread
        );
        assert_eq!(
            State::from_query("lesson=bank-conflicts&pattern=stride").pattern,
            PatternId::Stride
        );
        assert_eq!(
            State::from_query("lesson=tiled-matmul").pattern,
            PatternId::Stride
        );
        // At the lesson's first settings the explorer's warp is 32-way, and one word of padding
        // frees it.
        let degree = |query: &str| {
            let state = State::from_query(query);
            let pattern =
                memplay_sim::patterns::build(state.pattern, crate::state::pattern_params(&state));
            let report = memplay_sim::banks::analyze(&pattern.access, &state.device.device());
            crate::line_model::bank_words(&report).degree
        };
        assert_eq!(degree("lesson=bank-conflicts"), "32-way");
        assert_eq!(degree("lesson=bank-conflicts&pad=1"), "no conflict");
    }

    #[test]
    fn an_embed_link_carries_only_the_settings_its_lesson_uses_and_opens_the_same_page() {
        // "Copy embed code" wrote every setting, pattern=stride included, into every lesson.
        let banks = State::from_query("lesson=bank-conflicts&pad=1&device=g80");
        let tiled = State::from_query("lesson=tiled-matmul&tile=32&block=512");
        assert!(banks.embed_query().contains("pad=1"));
        assert!(!banks.embed_query().contains("block="));
        assert!(!tiled.embed_query().contains("pattern="));
        assert!(!tiled.embed_query().contains("block="));
        assert!(!tiled.embed_query().contains("stride="));
        for state in [banks, tiled] {
            let opened = State::from_query(&state.embed_query());
            assert_eq!(opened.notes, Vec::<String>::new());
            assert_eq!(opened.launch(), state.launch());
            assert_eq!(opened.controls(), state.controls());
            for control in state.controls() {
                let setting = |s: &State| match control {
                    Control::Pattern => s.pattern as u32,
                    Control::Tile => s.tile,
                    Control::Pad => s.pad,
                    Control::Stride => s.stride,
                    Control::Block => s.block,
                    Control::Regs => s.regs,
                    Control::HostMemory => s.host_memory as u32,
                };
                assert_eq!(setting(&opened), setting(&state), "{control:?}");
            }
        }
    }

    #[test]
    fn the_embed_code_of_an_embedded_view_is_the_same_as_of_the_full_page() {
        let full = State::from_query("lesson=row-per-thread&pad=1");
        let embedded = State::from_query("lesson=row-per-thread&pad=1&embed=1");
        assert_eq!(
            full.embed_code("index.html"),
            embedded.embed_code("index.html")
        );
    }

    #[test]
    fn quotes_and_brackets_in_the_page_address_cannot_leave_the_src_attribute() {
        let code = State::default().embed_code("https://x/\"><script>alert(1)</script>");
        assert!(
            code.starts_with(
                "<iframe src=\"https://x/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;?"
            ),
            "{code}"
        );
        assert_eq!(
            code.matches('<').count(),
            2,
            "only the iframe's own tags: {code}"
        );
    }

    #[test]
    fn the_course_example_embeds_what_the_button_gives_for_two_lessons() {
        let example = include_str!("../../../www/course-example.html");
        for query in [
            "lesson=tiled-matmul",
            "lesson=bank-conflicts&variant=row-per-thread&pattern=row-per-thread",
        ] {
            let code = State::from_query(query).embed_code("index.html");
            println!("{code}");
            assert!(
                example.contains(&code),
                "www/course-example.html embeds {code}"
            );
        }
    }

    #[test]
    fn a_first_links_kernel_key_opens_its_lesson_at_that_variant() {
        let state = State::from_query("lesson=matmul-naive");
        assert_eq!(
            state.variant,
            crate::lessons::variant("tiled-matmul", "naive")
        );
        assert!(state.notes.is_empty());
        assert!(state
            .to_query()
            .contains("lesson=tiled-matmul&variant=naive&"));
        assert_eq!(State::from_query(&state.to_query()), state);
    }

    #[test]
    fn a_variant_is_read_within_its_lesson_wherever_it_stands() {
        let state = State::from_query("variant=shared&lesson=adjacent-difference");
        assert_eq!(
            state.variant,
            crate::lessons::variant("adjacent-difference", "shared")
        );
        assert!(state.notes.is_empty());
        let other = State::from_query("lesson=bank-conflicts&variant=shared");
        assert_eq!(
            other.variant,
            crate::lessons::variant("bank-conflicts", "transpose")
        );
        assert_eq!(
            other.notes,
            vec![
                "variant=shared is not one of transpose, row-per-thread, stride, swizzle (the \
                  variants of bank-conflicts); using transpose."
                    .to_string()
            ]
        );
    }

    #[test]
    fn the_bank_maps_element_is_in_the_link_only_when_it_is_not_a_float() {
        let doubles = State::from_query("lesson=bank-conflicts&element=double");
        assert_eq!(doubles.element, Element::Double);
        assert!(doubles.to_query().ends_with("&element=double"));
        assert_eq!(State::from_query(&doubles.to_query()), doubles);
        assert!(!State::default().to_query().contains("element="));
        let bad = State::from_query("element=quad");
        assert_eq!(bad.element, Element::Float);
        assert_eq!(
            bad.notes,
            vec![
                "element=quad is not one of half, float, double, float4; using float.".to_string()
            ]
        );
    }

    #[test]
    fn a_written_launch_opens_from_the_link_alone() {
        let mut state = State::from_query("lesson=my-kernel");
        state.my_launch.grid[0] = "(N + 127) / 128".to_string();
        state.my_launch.block[0] = "128".to_string();
        let query = state.to_query();
        assert!(
            query.contains("&launch=k%3Dsaxpy~g%3D%28N%20%2B%20127%29%20%2F%20128"),
            "{query}"
        );
        let again = State::from_query(&query);
        assert_eq!(again.my_launch, state.my_launch);
        assert!(again.notes.is_empty(), "{:?}", again.notes);
        let broken = State::from_query("lesson=my-kernel&launch=g%3D1");
        assert_eq!(broken.my_launch, crate::my_kernel::MyLaunch::default());
        assert_eq!(
            broken.notes,
            vec![
                "launch=g=1 is not a launch (the launch names no kernel); using the starter's."
                    .to_string()
            ]
        );
    }

    #[test]
    fn a_pointer_into_its_buffer_survives_the_link_and_an_older_link_opens_at_the_start() {
        let mut state = State::from_query("lesson=my-kernel");
        state.my_launch.set_points_to("x", "x + 3".to_string());
        let query = state.to_query();
        assert!(query.contains("x%3AN%3Arandom%3Ax%20%2B%203"), "{query}");
        let again = State::from_query(&query);
        assert_eq!(again.my_launch.points_to("x"), "x + 3");
        assert_eq!(again.my_launch, state.my_launch);
        assert!(again.notes.is_empty(), "{:?}", again.notes);
        // A link written before offsets: three parts to a buffer, every pointer at its start.
        let older = State::from_query(
            "lesson=my-kernel&launch=k%3Dsaxpy~g%3D4096~b%3D256~a%3Da%3A2%2Cn%3AN\
             ~m%3Dy%3AN%3Arandom%2Cx%3AN%3Arandom~s%3D0",
        );
        assert!(older.notes.is_empty(), "{:?}", older.notes);
        assert_eq!(older.my_launch.points_to("x"), "x");
        assert!(older.my_launch.pointers.is_empty());
    }
}
