//! The embed API: the messages a framed page exchanges with the course page around it through
//! `postMessage` (README, "The embed API").
//!
//! A course page learns what its student does in the frame (the page started, the settings the
//! link now holds, the question answered, the counters of a new run) and may set the lesson's
//! controls as a link would. Every message is a plain object `{ "memplay": 1, "type": ..., ... }`.
//! The protocol is pure and tested on the host: `Field` is a JavaScript value as far as the page
//! reads one, `parse_incoming` turns a message into an `Incoming` or ignores it, `Outgoing`
//! describes itself as `Field`s, and `accepts` is the origin rule. The browser's side, `post`
//! and `listen`, is a thin layer at the end: it converts between `Field` and `JsValue` with
//! `js_sys::Reflect` and never evaluates or renders what a message carries.

use crate::state::State;
use memplay_sim::SimulationReport;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// The protocol's version, the value of every message's `memplay` field.
pub const VERSION: f64 = 1.0;

/// The link's key that pins the course page's origin.
pub const PARENT_ORIGIN_KEY: &str = "parent-origin";

/// A `set` message with more settings than this is ignored: the page has a dozen settings, and a
/// message the size of a page's memory should not be walked.
const MAX_SETTINGS: usize = 32;

/// A setting's value longer than this is ignored, for the same reason (a `launch=` runs to a few
/// hundred characters).
const MAX_VALUE_CHARS: usize = 2048;

/// A JavaScript value, as far as the protocol reads or writes one.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Text(String),
    Number(f64),
    Bool(bool),
    /// A plain object's own fields, in their order.
    Object(Vec<(String, Field)>),
    /// Anything else: `null`, `undefined`, an array, a function, an object nested too deep.
    Other,
}

/// What a course page may ask of the frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// Set the lesson's controls by their URL keys, as a link saying them would
    /// (`State::link_actions`). Numbers arrive as their decimal text.
    Set(Vec<(String, String)>),
}

/// What the frame tells its course page.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    /// The page runs and listens.
    Ready,
    /// The settings the page's link now holds: the lesson's controls by URL key, the lesson, and
    /// the link's query (`?device=...`), without the fragment that carries an edited kernel.
    Settings {
        lesson: String,
        settings: Vec<(String, String)>,
        link: String,
    },
    /// The student revealed the answer to the lesson's question: the chosen choice's text, and
    /// whether it is the one the lesson marks as right.
    Answered {
        lesson: String,
        choice: String,
        correct: bool,
    },
    /// A new run is shown: its predicted time and the kernel card's counters by their Nsight
    /// Compute names, a flat list of named numbers.
    Results {
        lesson: String,
        numbers: Vec<(String, f64)>,
    },
}

impl Outgoing {
    /// The message's `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outgoing::Ready => "ready",
            Outgoing::Settings { .. } => "settings",
            Outgoing::Answered { .. } => "answered",
            Outgoing::Results { .. } => "results",
        }
    }

    /// The message as the object the course page receives.
    pub fn to_field(&self) -> Field {
        let mut fields = vec![
            ("memplay".to_string(), Field::Number(VERSION)),
            ("type".to_string(), Field::Text(self.kind().to_string())),
        ];
        let text = |value: &str| Field::Text(value.to_string());
        match self {
            Outgoing::Ready => {}
            Outgoing::Settings {
                lesson,
                settings,
                link,
            } => {
                fields.push(("lesson".to_string(), text(lesson)));
                let settings = settings
                    .iter()
                    .map(|(key, value)| (key.clone(), text(value)))
                    .collect();
                fields.push(("settings".to_string(), Field::Object(settings)));
                fields.push(("link".to_string(), text(link)));
            }
            Outgoing::Answered {
                lesson,
                choice,
                correct,
            } => {
                fields.push(("lesson".to_string(), text(lesson)));
                fields.push(("choice".to_string(), text(choice)));
                fields.push(("correct".to_string(), Field::Bool(*correct)));
            }
            Outgoing::Results { lesson, numbers } => {
                fields.push(("lesson".to_string(), text(lesson)));
                let numbers = numbers
                    .iter()
                    .map(|(name, value)| (name.clone(), Field::Number(*value)))
                    .collect();
                fields.push(("results".to_string(), Field::Object(numbers)));
            }
        }
        Field::Object(fields)
    }

    /// The `settings` message of `state`, whose link is `link`: the device and the controls the
    /// lesson shows (`State::controls`), each by its URL key with the value the link writes.
    pub fn settings(state: &State, link: String) -> Outgoing {
        let query = state.to_query();
        let written: Vec<(&str, &str)> = query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .collect();
        let mut keys = vec!["device", "variant"];
        keys.extend(
            state
                .controls()
                .into_iter()
                .map(crate::lessons::Control::key),
        );
        let settings = keys
            .into_iter()
            .filter_map(|key| {
                let (_, value) = written.iter().find(|(written, _)| *written == key)?;
                Some((key.to_string(), value.to_string()))
            })
            .collect();
        Outgoing::Settings {
            lesson: state.variant.lesson().key().to_string(),
            settings,
            link,
        }
    }

    /// The `results` message of a run of `lesson`: its predicted time (`time_ms`, where the run
    /// has one) and the counters the kernel card shows, by their Nsight Compute names.
    pub fn results(lesson: &str, report: &SimulationReport, time_ms: Option<f64>) -> Outgoing {
        let mut numbers = Vec::new();
        if let Some(time_ms) = time_ms {
            numbers.push(("time_ms".to_string(), time_ms));
        }
        for name in crate::measured::METRICS {
            if let Some(value) = report.counters.get(name) {
                numbers.push((name.to_string(), value));
            }
        }
        numbers.push(("fp32_flops".to_string(), report.counters.fp32_flops));
        Outgoing::Results {
            lesson: lesson.to_string(),
            numbers,
        }
    }
}

/// The message a course page posted, or `None` for anything not of the protocol's shape: a
/// `memplay` other than 1, an unknown `type`, a setting whose value is not a string or a finite
/// number. Such messages are ignored without a word (the frame may share its window with other
/// scripts' messages).
pub fn parse_incoming(message: &Field) -> Option<Incoming> {
    let Field::Object(fields) = message else {
        return None;
    };
    let get = |name: &str| {
        fields
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    };
    if get("memplay") != Some(&Field::Number(VERSION)) {
        return None;
    }
    match get("type")? {
        Field::Text(kind) if kind == "set" => {}
        _ => return None,
    }
    let Some(Field::Object(settings)) = get("settings") else {
        return None;
    };
    if settings.len() > MAX_SETTINGS {
        return None;
    }
    let pairs = settings
        .iter()
        .map(|(key, value)| {
            let value = match value {
                Field::Text(text) => text.clone(),
                Field::Number(number) if number.is_finite() => format_number(*number),
                _ => return None,
            };
            (value.chars().count() <= MAX_VALUE_CHARS).then(|| (key.clone(), value))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Incoming::Set(pairs))
}

/// A number as a link writes it: `32`, not `32.0`.
fn format_number(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{number:.0}")
    } else {
        number.to_string()
    }
}

/// The origin rule: the frame takes a message only from its parent window, and, when the link
/// pins the course page's origin (`parent-origin=`), only from that origin.
pub fn accepts(origin: &str, source_is_parent: bool, pinned: &ParentOrigin) -> bool {
    source_is_parent
        && match pinned {
            ParentOrigin::Any => true,
            ParentOrigin::Pinned(pinned) => origin == pinned,
            ParentOrigin::Unusable(_) => false,
        }
}

/// Whom the frame talks to, from the link's `parent-origin=`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParentOrigin {
    /// No `parent-origin`: posts go to any origin (`"*"`; they carry nothing private), and
    /// messages are taken from the parent window whatever its origin.
    Any,
    /// Posts go only to this origin, and messages only from it.
    Pinned(String),
    /// A `parent-origin` that is no origin (the raw value, kept in the link as it was): the frame
    /// neither posts nor listens, rather than talk to a page its author did not mean.
    Unusable(String),
}

impl ParentOrigin {
    /// The value of the link's `parent-origin`, if it has one.
    pub fn from_value(value: Option<&str>) -> ParentOrigin {
        match value {
            None => ParentOrigin::Any,
            Some(value) => match read_origin(value) {
                Ok(origin) => ParentOrigin::Pinned(origin),
                Err(_) => ParentOrigin::Unusable(value.to_string()),
            },
        }
    }

    /// The `targetOrigin` of the frame's posts, or `None` when it posts nothing.
    pub fn target(&self) -> Option<&str> {
        match self {
            ParentOrigin::Any => Some("*"),
            ParentOrigin::Pinned(origin) => Some(origin),
            ParentOrigin::Unusable(_) => None,
        }
    }

    /// The link's value for this, if it has one, so the link the page writes keeps it.
    pub fn value(&self) -> Option<&str> {
        match self {
            ParentOrigin::Any => None,
            ParentOrigin::Pinned(value) | ParentOrigin::Unusable(value) => Some(value),
        }
    }
}

/// Why a `parent-origin` value is no origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginError {
    /// Not `http://` or `https://`.
    NotHttp,
    /// A path, query or fragment after the host: an origin is scheme, host and port only.
    HasPath,
    /// No host, or a character no host name has.
    BadHost,
    /// A port that is not a number from 1 to 65535.
    BadPort,
}

/// An origin as browsers write a message event's `origin`: `https://course.example` or
/// `http://localhost:8000`, scheme and host in lower case. A single trailing `/` is forgiven.
pub fn read_origin(value: &str) -> Result<String, OriginError> {
    let lower = value.trim().to_ascii_lowercase();
    let (scheme, rest) = lower.split_once("://").ok_or(OriginError::NotHttp)?;
    if scheme != "http" && scheme != "https" {
        return Err(OriginError::NotHttp);
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains(['/', '?', '#']) {
        return Err(OriginError::HasPath);
    }
    // A bracketed IPv6 address has colons of its own; the port follows the bracket.
    let (host, port) = match rest.strip_prefix('[') {
        Some(inside) => {
            let (address, after) = inside.split_once(']').ok_or(OriginError::BadHost)?;
            if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
                return Err(OriginError::BadHost);
            }
            match after {
                "" => (&rest[..address.len() + 2], None),
                _ => (
                    &rest[..address.len() + 2],
                    Some(after.strip_prefix(':').ok_or(OriginError::BadPort)?),
                ),
            }
        }
        None => match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        },
    };
    let host_ok = !host.is_empty()
        && (host.starts_with('[')
            || host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'));
    if !host_ok {
        return Err(OriginError::BadHost);
    }
    if let Some(port) = port {
        let number = port
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0 && port.chars().all(|c| c.is_ascii_digit()))
            .ok_or(OriginError::BadPort)?;
        // Browsers leave the scheme's default port out of an origin.
        let default = if scheme == "https" { 443 } else { 80 };
        if number != default {
            return Ok(format!("{scheme}://{host}:{number}"));
        }
    }
    Ok(format!("{scheme}://{host}"))
}

// The browser's side. These compile on the host too (web-sys and js-sys do), so the host build
// checks them; only a browser calls them.

/// Posts `message` to the parent window, if the page is in a frame and may post.
pub fn post(message: &Outgoing, parent_origin: &ParentOrigin) {
    let Some(target) = parent_origin.target() else {
        return;
    };
    let Some((window, parent)) = window_and_parent() else {
        return;
    };
    if js_sys::Object::is(&window, &parent) {
        return;
    }
    // A refusal (say, a course page that went away) costs only this message.
    let _ = parent.post_message(&to_js(&message.to_field()), target);
}

/// The page's window and its parent (itself when the page is not in a frame).
fn window_and_parent() -> Option<(web_sys::Window, web_sys::Window)> {
    let window = web_sys::window()?;
    let parent = window.parent().ok().flatten()?;
    Some((window, parent))
}

/// A JavaScript value of a `Field`.
fn to_js(field: &Field) -> JsValue {
    match field {
        Field::Text(text) => JsValue::from_str(text),
        Field::Number(number) => JsValue::from_f64(*number),
        Field::Bool(value) => JsValue::from_bool(*value),
        Field::Object(fields) => {
            let object = js_sys::Object::new();
            for (key, value) in fields {
                let _ = js_sys::Reflect::set(&object, &JsValue::from_str(key), &to_js(value));
            }
            object.into()
        }
        Field::Other => JsValue::NULL,
    }
}

/// The `Field` of a JavaScript value, read two objects deep (a message and its `settings`).
/// Only own enumerable fields are read, with `Object.entries`: no getter of a prototype runs.
fn from_js(value: &JsValue, depth: usize) -> Field {
    if let Some(text) = value.as_string() {
        return Field::Text(text);
    }
    if let Some(number) = value.as_f64() {
        return Field::Number(number);
    }
    if let Some(flag) = value.as_bool() {
        return Field::Bool(flag);
    }
    if depth == 0 || !value.is_object() || js_sys::Array::is_array(value) {
        return Field::Other;
    }
    let entries = js_sys::Object::entries(value.unchecked_ref());
    if entries.length() as usize > MAX_SETTINGS {
        return Field::Other;
    }
    let fields = entries
        .iter()
        .filter_map(|entry| {
            let entry: js_sys::Array = entry.dyn_into().ok()?;
            let key = entry.get(0).as_string()?;
            Some((key, from_js(&entry.get(1), depth - 1)))
        })
        .collect();
    Field::Object(fields)
}

/// The page's listener for its course page's messages; dropping it stops listening.
pub struct Listener {
    window: web_sys::Window,
    closure: Closure<dyn Fn(web_sys::MessageEvent)>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self
            .window
            .remove_event_listener_with_callback("message", self.closure.as_ref().unchecked_ref());
    }
}

/// Calls `on_message` with every message the parent window posts that the origin rule accepts
/// and that has the protocol's shape. `None` where the page is not in a frame, or the link's
/// `parent-origin` is unusable: nothing is listened to then.
pub fn listen(
    parent_origin: &ParentOrigin,
    on_message: impl Fn(Incoming) + 'static,
) -> Option<Listener> {
    parent_origin.target()?;
    let (window, parent) = window_and_parent()?;
    if js_sys::Object::is(&window, &parent) {
        return None;
    }
    let pinned = parent_origin.clone();
    let closure =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let source_is_parent = event
                .source()
                .is_some_and(|source| js_sys::Object::is(&source, &parent));
            if !accepts(&event.origin(), source_is_parent, &pinned) {
                return;
            }
            if let Some(message) = parse_incoming(&from_js(&event.data(), 2)) {
                on_message(message);
            }
        });
    window
        .add_event_listener_with_callback("message", closure.as_ref().unchecked_ref())
        .ok()?;
    Some(Listener { window, closure })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> Field {
        Field::Text(value.to_string())
    }

    fn object(fields: &[(&str, Field)]) -> Field {
        Field::Object(
            fields
                .iter()
                .map(|(key, value)| (key.to_string(), value.clone()))
                .collect(),
        )
    }

    fn set_message(settings: Field) -> Field {
        object(&[
            ("memplay", Field::Number(1.0)),
            ("type", text("set")),
            ("settings", settings),
        ])
    }

    fn pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn a_set_message_gives_its_settings_as_text_and_numbers_without_decimals() {
        let message = set_message(object(&[
            ("tile", Field::Number(32.0)),
            ("pad", text("1")),
            ("device", text("g80")),
        ]));
        assert_eq!(
            parse_incoming(&message),
            Some(Incoming::Set(pairs(&[
                ("tile", "32"),
                ("pad", "1"),
                ("device", "g80")
            ])))
        );
    }

    #[test]
    fn a_fractional_number_keeps_its_decimals_for_the_link_parser_to_refuse() {
        let message = set_message(object(&[("tile", Field::Number(16.5))]));
        assert_eq!(
            parse_incoming(&message),
            Some(Incoming::Set(pairs(&[("tile", "16.5")])))
        );
    }

    #[test]
    fn messages_not_of_the_protocols_shape_are_ignored() {
        let settings = object(&[("tile", text("32"))]);
        let ignored = [
            // Not an object at all.
            text("set tile 32"),
            // Another version, or none.
            object(&[
                ("memplay", Field::Number(2.0)),
                ("type", text("set")),
                ("settings", settings.clone()),
            ]),
            object(&[("type", text("set")), ("settings", settings.clone())]),
            object(&[
                ("memplay", text("1")),
                ("type", text("set")),
                ("settings", settings.clone()),
            ]),
            // An unknown type, or one the frame only sends.
            object(&[
                ("memplay", Field::Number(1.0)),
                ("type", text("reset")),
                ("settings", settings.clone()),
            ]),
            object(&[("memplay", Field::Number(1.0)), ("type", text("ready"))]),
            // Settings that are not an object, or hold something other than text and numbers.
            set_message(text("tile=32")),
            set_message(Field::Other),
            set_message(object(&[("tile", Field::Bool(true))])),
            set_message(object(&[("tile", Field::Other)])),
            set_message(object(&[("tile", object(&[("value", text("32"))]))])),
            set_message(object(&[("tile", Field::Number(f64::NAN))])),
            set_message(object(&[("tile", Field::Number(f64::INFINITY))])),
            // A value far longer than any setting's.
            set_message(object(&[("launch", text(&"x".repeat(5000)))])),
        ];
        for message in ignored {
            assert_eq!(parse_incoming(&message), None, "{message:?}");
        }
    }

    #[test]
    fn a_message_with_more_settings_than_the_page_has_is_ignored() {
        let many: Vec<(String, Field)> = (0..40)
            .map(|index| (format!("key{index}"), text("1")))
            .collect();
        assert_eq!(parse_incoming(&set_message(Field::Object(many))), None);
    }

    #[test]
    fn the_frame_takes_messages_only_from_its_parent_window() {
        assert!(accepts("https://course.example", true, &ParentOrigin::Any));
        assert!(!accepts(
            "https://course.example",
            false,
            &ParentOrigin::Any
        ));
    }

    #[test]
    fn a_pinned_origin_admits_that_origin_alone() {
        let pinned = ParentOrigin::Pinned("https://course.example".to_string());
        assert!(accepts("https://course.example", true, &pinned));
        assert!(!accepts("https://evil.example", true, &pinned));
        assert!(!accepts("http://course.example", true, &pinned));
        assert!(!accepts("https://course.example", false, &pinned));
    }

    #[test]
    fn an_unusable_parent_origin_admits_nothing_and_posts_nothing() {
        let unusable = ParentOrigin::from_value(Some("course.example"));
        assert_eq!(
            unusable,
            ParentOrigin::Unusable("course.example".to_string())
        );
        assert!(!accepts("https://course.example", true, &unusable));
        assert_eq!(unusable.target(), None);
        assert_eq!(unusable.value(), Some("course.example"));
    }

    #[test]
    fn posts_go_to_any_origin_without_a_pin_and_to_the_pinned_one_with_it() {
        assert_eq!(ParentOrigin::from_value(None).target(), Some("*"));
        assert_eq!(
            ParentOrigin::from_value(Some("https://Course.Example/")).target(),
            Some("https://course.example")
        );
    }

    #[test]
    fn origins_are_read_as_browsers_write_them() {
        let read = |value| read_origin(value);
        assert_eq!(
            read("https://course.example"),
            Ok("https://course.example".into())
        );
        assert_eq!(
            read("HTTPS://Course.Example/"),
            Ok("https://course.example".into())
        );
        assert_eq!(
            read("http://localhost:8000"),
            Ok("http://localhost:8000".into())
        );
        assert_eq!(
            read("https://course.example:443"),
            Ok("https://course.example".into())
        );
        assert_eq!(read("http://[::1]:8080"), Ok("http://[::1]:8080".into()));
        assert_eq!(read("http://[::1]"), Ok("http://[::1]".into()));
    }

    #[test]
    fn values_that_are_no_origin_are_refused_by_kind() {
        let cases = [
            ("course.example", OriginError::NotHttp),
            ("ftp://course.example", OriginError::NotHttp),
            ("javascript://alert(1)", OriginError::NotHttp),
            ("https://course.example/gpu/", OriginError::HasPath),
            ("https://course.example?x=1", OriginError::HasPath),
            ("https://", OriginError::BadHost),
            ("https://course example", OriginError::BadHost),
            ("https://user@course.example", OriginError::BadHost),
            ("https://course.example:0", OriginError::BadPort),
            ("https://course.example:99999", OriginError::BadPort),
            ("https://course.example:+80", OriginError::BadPort),
            ("http://[::1]x", OriginError::BadPort),
        ];
        for (value, error) in cases {
            assert_eq!(read_origin(value), Err(error), "{value}");
        }
    }

    #[test]
    fn an_answer_is_posted_with_the_lesson_the_choice_and_whether_it_is_right() {
        let message = Outgoing::Answered {
            lesson: "bank-conflicts".to_string(),
            choice: "32".to_string(),
            correct: true,
        };
        assert_eq!(
            message.to_field(),
            object(&[
                ("memplay", Field::Number(1.0)),
                ("type", text("answered")),
                ("lesson", text("bank-conflicts")),
                ("choice", text("32")),
                ("correct", Field::Bool(true)),
            ])
        );
    }

    #[test]
    fn ready_carries_only_the_protocol_and_its_type() {
        assert_eq!(
            Outgoing::Ready.to_field(),
            object(&[("memplay", Field::Number(1.0)), ("type", text("ready"))])
        );
    }

    #[test]
    fn the_settings_of_the_tiled_matmul_are_its_device_variant_and_controls() {
        let state = State::from_query("?lesson=tiled-matmul&tile=32");
        let link = format!("?{}", state.to_query());
        let message = Outgoing::settings(&state, link.clone());
        let Outgoing::Settings {
            lesson, settings, ..
        } = &message
        else {
            panic!("a settings message");
        };
        assert_eq!(lesson, "tiled-matmul");
        let keys: Vec<&str> = settings.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(keys[..2], ["device", "variant"]);
        assert!(
            settings.contains(&("tile".to_string(), "32".to_string())),
            "{settings:?}"
        );
        // Only what the lesson shows: the bank map's pattern is not the matmul's.
        assert!(!keys.contains(&"pattern"), "{keys:?}");
        let Field::Object(fields) = message.to_field() else {
            panic!("an object");
        };
        assert!(fields.contains(&("link".to_string(), Field::Text(link))));
    }

    #[test]
    fn the_results_of_a_run_name_its_time_and_the_kernel_cards_counters() {
        let global_loads = |tile: &str| {
            let state = State::from_query(&format!("?lesson=tiled-matmul&tile={tile}"));
            let report = memplay_sim::simulate::simulate(&state.launch()).expect("it runs");
            let Outgoing::Results { lesson, numbers } =
                Outgoing::results("tiled-matmul", &report, Some(0.5))
            else {
                panic!("a results message");
            };
            assert_eq!(lesson, "tiled-matmul");
            let names: Vec<&str> = numbers.iter().map(|(name, _)| name.as_str()).collect();
            assert_eq!(names[0], "time_ms");
            assert_eq!(numbers[0].1, 0.5);
            assert!(
                names.contains(&"smsp__inst_executed_op_shared_ld.sum"),
                "{names:?}"
            );
            assert!(names.contains(&"fp32_flops"), "{names:?}");
            let (_, loads) = numbers
                .iter()
                .find(|(name, _)| name == "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
                .expect("the global loads are among the results");
            *loads
        };
        // A tile twice as wide loads each element from global memory half as often.
        assert_eq!(global_loads("16"), 2.0 * global_loads("32"));
    }

    #[test]
    fn results_are_a_flat_object_of_named_numbers() {
        let message = Outgoing::Results {
            lesson: "tiled-matmul".to_string(),
            numbers: vec![("time_ms".to_string(), 0.25)],
        };
        assert_eq!(
            message.to_field(),
            object(&[
                ("memplay", Field::Number(1.0)),
                ("type", text("results")),
                ("lesson", text("tiled-matmul")),
                ("results", object(&[("time_ms", Field::Number(0.25))])),
            ])
        );
    }
}
