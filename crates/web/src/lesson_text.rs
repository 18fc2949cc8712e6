//! The lessons' words: an introduction, a question to answer before the result is shown, why the
//! answer is what it is, what changes on another device, and the next lesson.
//!
//! The text is data, one plain-text file per lesson in `www/lessons/`, written in our own words
//! from the lectures each file names. A file has a few `key: value` lines, then
//! sections opened by `== name`; paragraphs are separated by blank lines and `` `code` `` marks
//! code. Nothing of it is ever HTML: the page builds elements from `Inline` pieces.
//!
//! The question names a `Metric`, a number the simulator computes from the lesson's launch, and
//! marks the right choice with `choice*`; each choice may say in one line why it is or is not
//! the answer (`choice: 2,048 | the naive kernel's count: ...`). The tests run every lesson's
//! launch and check that the simulator's number is the marked choice, so a question can never
//! contradict what the page shows; the page reveals the same number from the run it shows.
//!
//! A number in the words is never typed: `{sectors-per-load-request}` names a number the
//! simulator computes of the shown launch, `{banks}` one of the device, `{tile}` one of the
//! launch, and `{latency-covered-percent regs=64}` the number at another value of the lesson's
//! swept setting (`facts`). A lecture's own figure is quoted, `{quote: 200 / 16 = 12.5, so 13
//! warps}`, and shown as a quotation of the lecture the file names in `lectures:`. The tests
//! check that no other digit is left in a lesson's words, outside code.

use crate::facts::FactRef;
use crate::statements::printed_number;

/// A lesson's words, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct LessonText {
    pub title: String,
    /// The lectures it comes from, by title.
    pub lectures: String,
    pub intro: Vec<Paragraph>,
    pub question: Question,
    pub why: Vec<Paragraph>,
    pub devices: Vec<Paragraph>,
    /// The key of the lesson to go to next.
    pub next: String,
}

impl LessonText {
    /// Every paragraph a student reads: the introduction, why, the devices, the question's prompt
    /// and each choice's reason. The host tests read them all.
    #[cfg(test)]
    pub fn paragraphs(&self) -> Vec<&Paragraph> {
        let mut all: Vec<&Paragraph> = self
            .intro
            .iter()
            .chain(&self.why)
            .chain(&self.devices)
            .collect();
        all.push(&self.question.prompt);
        all.extend(self.question.choices.iter().map(|choice| &choice.reason));
        all
    }
}

/// One paragraph: text and code, in order.
pub type Paragraph = Vec<Inline>;

/// A piece of a paragraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Code(String),
    /// A number the page fills in from the simulator, the launch or the device.
    Fact(FactRef),
    /// A lecture's own words or figure, shown as a quotation.
    Quote(String),
    /// A link that opens the lesson at named settings (`{try: the lecture's example | device=g80
    /// tile=16 regs=10}`): a setting the student would otherwise have to guess.
    Try {
        label: String,
        /// The settings as the link's query names them, in order.
        settings: Vec<(String, String)>,
    },
}

/// The predict-first question.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub prompt: Paragraph,
    pub metric: Metric,
    pub choices: Vec<Choice>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub text: String,
    pub correct: bool,
    /// Why this choice is or is not the answer, in one line (empty where the file gives none).
    pub reason: Paragraph,
}

pub use crate::facts::Metric;

impl Choice {
    /// The choice's number, if it is one.
    pub fn number(&self) -> Option<f64> {
        printed_number(&self.text)
    }
}

impl Question {
    /// The choice nearest to the simulator's `value`, by ratio (the choices are orders of
    /// magnitude apart): what the simulator answers.
    pub fn nearest_choice(&self, value: f64) -> Option<usize> {
        let distance = |choice: &Choice| {
            printed_number(&choice.text)
                .map(|number| (number.max(1e-9) / value.max(1e-9)).ln().abs())
        };
        (0..self.choices.len())
            .filter_map(|index| Some((index, distance(&self.choices[index])?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(index, _)| index)
    }

    /// The index of the choice the file marks as right.
    pub fn correct(&self) -> Option<usize> {
        self.choices.iter().position(|choice| choice.correct)
    }
}

/// A lesson file cut into its `key: value` fields and its `== name` sections, each line with its
/// number. `lessons` reads the fields and the variant and kernel sections; `words` the rest.
/// Lines of a file, each with its number.
pub type Lines<'a> = Vec<(usize, &'a str)>;

#[derive(Debug)]
pub struct Sections<'a> {
    fields: Vec<(usize, &'a str, &'a str)>,
    sections: Vec<(usize, &'a str, Lines<'a>)>,
}

impl<'a> Sections<'a> {
    /// The field's line and value, if the file has it.
    pub fn field(&self, key: &str) -> Option<(usize, &'a str)> {
        self.fields
            .iter()
            .find(|(_, name, _)| *name == key)
            .map(|(line, _, value)| (*line, *value))
    }

    /// Every field whose key starts with `prefix` (`label stride:`): its line, the rest of its
    /// key and its value.
    pub fn fields_starting(&self, prefix: &str) -> Vec<(usize, &'a str, &'a str)> {
        self.fields
            .iter()
            .filter_map(|(line, key, value)| Some((*line, key.strip_prefix(prefix)?, *value)))
            .collect()
    }

    pub fn required(&self, key: &str) -> Result<(usize, &'a str), String> {
        self.field(key)
            .ok_or(format!("the field `{key}:` is missing"))
    }

    /// The lines of the section `== name`.
    pub fn section(&self, name: &str) -> Result<&[(usize, &'a str)], String> {
        self.sections
            .iter()
            .find(|(_, section, _)| *section == name)
            .map(|(_, _, lines)| lines.as_slice())
            .ok_or(format!("the section `== {name}` is missing"))
    }

    /// Every section `== kind NAME`: its heading's line, its name and its lines.
    pub fn named(&self, kind: &str) -> Vec<(usize, &'a str, &Lines<'a>)> {
        self.sections
            .iter()
            .filter_map(|(line, heading, lines)| {
                let name = heading.strip_prefix(kind)?.strip_prefix(' ')?;
                Some((*line, name.trim(), lines))
            })
            .collect()
    }
}

/// Cuts a lesson file into fields and sections.
pub fn split(text: &str) -> Result<Sections<'_>, String> {
    let mut fields = Vec::new();
    let mut sections: Vec<(usize, &str, Lines)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if let Some(name) = line.strip_prefix("== ") {
            sections.push((number, name.trim(), Vec::new()));
        } else if let Some((_, _, lines)) = sections.last_mut() {
            lines.push((number, line));
        } else if !line.trim().is_empty() && !line.starts_with('#') {
            let (key, value) = line.split_once(':').ok_or(format!(
                "line {number}: expected `key: value` before the sections"
            ))?;
            fields.push((number, key.trim(), value.trim()));
        }
    }
    Ok(Sections { fields, sections })
}

/// The words of a lesson file: title, lectures, the word sections and the next lesson.
pub fn words(file: &Sections) -> Result<LessonText, String> {
    let next = file
        .section("next")?
        .iter()
        .map(|(_, line)| line.trim())
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .to_string();
    Ok(LessonText {
        title: file.required("title")?.1.to_string(),
        lectures: file.required("lectures")?.1.to_string(),
        intro: paragraphs(file.section("intro")?)?,
        question: question(file.section("question")?)?,
        why: paragraphs(file.section("why")?)?,
        devices: paragraphs(file.section("devices")?)?,
        next,
    })
}

/// Parses the words of a lesson file; the error names the line and what is wrong.
#[cfg(test)]
pub fn parse(text: &str) -> Result<LessonText, String> {
    words(&split(text)?)
}

fn question(lines: &[(usize, &str)]) -> Result<Question, String> {
    let mut prompt = Vec::new();
    let mut metric = None;
    let mut choices = Vec::new();
    let mut prompt_line = 0;
    for (number, line) in lines {
        let line = line.trim();
        let choice = |text: &str, correct: bool| -> Result<Choice, String> {
            let (text, reason) = text.split_once('|').unwrap_or((text, ""));
            Ok(Choice {
                text: text.trim().to_string(),
                correct,
                reason: inline(reason.trim(), *number)?,
            })
        };
        if let Some(key) = line.strip_prefix("metric:") {
            let key = key.trim();
            metric = Some(
                Metric::ALL
                    .into_iter()
                    .find(|metric| metric.key() == key)
                    .ok_or(format!("line {number}: {key} is not a metric"))?,
            );
        } else if let Some(text) = line.strip_prefix("choice*:") {
            choices.push(choice(text, true)?);
        } else if let Some(text) = line.strip_prefix("choice:") {
            choices.push(choice(text, false)?);
        } else if !line.is_empty() {
            if prompt.is_empty() {
                prompt_line = *number;
            }
            prompt.push(line);
        }
    }
    let question = Question {
        prompt: inline(&prompt.join(" "), prompt_line)?,
        metric: metric.ok_or("the question names no `metric:`")?,
        choices,
    };
    if question
        .choices
        .iter()
        .filter(|choice| choice.correct)
        .count()
        != 1
    {
        return Err("the question must mark exactly one `choice*:`".to_string());
    }
    Ok(question)
}

/// Paragraphs: runs of non-blank lines, joined with spaces.
fn paragraphs(lines: &[(usize, &str)]) -> Result<Vec<Paragraph>, String> {
    let mut paragraphs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut first_line = 0;
    for (number, line) in lines.iter().chain([&(0, "")]) {
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(inline(&current.join(" "), first_line)?);
                current.clear();
            }
        } else {
            if current.is_empty() {
                first_line = *number;
            }
            current.push(line.trim());
        }
    }
    Ok(paragraphs)
}

/// Text with `` `code` `` spans, `{fact}` placeholders and `{quote: ...}` quotations; an unclosed
/// backquote is kept as text. `line` is the paragraph's first line, for errors.
fn inline(text: &str, line: usize) -> Result<Paragraph, String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let Some(length) = rest[start + 1..].find('`') else {
            break;
        };
        if start > 0 {
            placeholders(&rest[..start], line, &mut pieces)?;
        }
        pieces.push(Inline::Code(
            rest[start + 1..start + 1 + length].to_string(),
        ));
        rest = &rest[start + 2 + length..];
    }
    if !rest.is_empty() {
        placeholders(rest, line, &mut pieces)?;
    }
    Ok(pieces)
}

/// Splits text outside code at its `{...}` placeholders and quotations.
fn placeholders(text: &str, line: usize, pieces: &mut Vec<Inline>) -> Result<(), String> {
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let length = rest[start..]
            .find('}')
            .ok_or(format!("line {line}: a `{{` is never closed by `}}`"))?;
        if start > 0 {
            pieces.push(Inline::Text(rest[..start].to_string()));
        }
        let inside = &rest[start + 1..start + length];
        if let Some(quote) = inside.strip_prefix("quote:") {
            pieces.push(Inline::Quote(quote.trim().to_string()));
        } else if let Some(link) = inside.strip_prefix("try:") {
            let (label, settings) = link.split_once('|').ok_or(format!(
                "line {line}: `{{try: ...}}` needs `label | setting=value ...`"
            ))?;
            let settings = settings
                .split_whitespace()
                .map(|setting| {
                    setting
                        .split_once('=')
                        .map(|(key, value)| (key.to_string(), value.to_string()))
                        .ok_or(format!("line {line}: `{setting}` is not `setting=value`"))
                })
                .collect::<Result<Vec<_>, String>>()?;
            pieces.push(Inline::Try {
                label: label.trim().to_string(),
                settings,
            });
        } else {
            pieces.push(Inline::Fact(
                FactRef::parse(inside.trim()).map_err(|error| format!("line {line}: {error}"))?,
            ));
        }
        rest = &rest[start + length + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Inline::Text(rest.to_string()));
    }
    Ok(())
}

/// Digits in the words a student reads that neither a placeholder, a quotation nor code
/// accounts for: each a number typed by hand. A choice's own text is the question's answer,
/// not words, and is not looked at.
#[cfg(test)]
pub fn typed_numbers(text: &LessonText) -> Vec<String> {
    text.paragraphs()
        .into_iter()
        .flatten()
        .filter_map(|piece| match piece {
            Inline::Text(words)
                if without_names(words, &text.lectures)
                    .chars()
                    .any(|c| c.is_ascii_digit()) =>
            {
                Some(words.clone())
            }
            _ => None,
        })
        .collect()
}

/// The words with the names that hold digits taken out: the lectures' titles ("Performance
/// Considerations 2"), the device presets' names ("H100"), the levels of the memory hierarchy
/// ("L2"), the FP32 pipe and the compute capability class "1.x", which name a thing rather than
/// count.
#[cfg(test)]
fn without_names(words: &str, lectures: &str) -> String {
    let mut text = words.to_string();
    for lecture in lectures.split(';') {
        text = text.replace(lecture.trim(), "");
    }
    for device in memplay_sim::DeviceId::ALL {
        text = text.replace(device.label(), "");
    }
    ["1.x", "L1", "L2", "FP32"]
        .into_iter()
        .fold(text, |text, name| text.replace(name, ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;
    use memplay_sim::simulate::simulate;

    fn check(text: &str, expected: Result<&str, &str>) {
        match (parse(text), expected) {
            (Ok(lesson), Ok(title)) => assert_eq!(lesson.title, title),
            (Err(error), Err(message)) => assert!(error.contains(message), "{error}"),
            (found, expected) => panic!("parsed {found:?}, expected {expected:?}"),
        }
    }

    const SMALL: &str = "title: Small\nlectures: CUDA Memories\nquestion-variant: strided-copy\n\n== intro\n\
                         One `int i` here.\n\n== question\nHow many?\nmetric: sectors-per-load-request\n\
                         choice: 1\nchoice*: 4\n\n== why\nBecause.\n\n== devices\nSame.\n\n== next\natomics\n";

    #[test]
    fn a_lesson_file_gives_its_title_paragraphs_and_question() {
        check(SMALL, Ok("Small"));
        let lesson = parse(SMALL).expect("parses");
        assert_eq!(
            lesson.intro,
            vec![vec![
                Inline::Text("One ".into()),
                Inline::Code("int i".into()),
                Inline::Text(" here.".into()),
            ]]
        );
        assert_eq!(lesson.question.correct(), Some(1));
        assert_eq!(lesson.next, "atomics");
    }

    #[test]
    fn a_question_without_one_marked_choice_is_refused() {
        check(
            &SMALL.replace("choice*: 4", "choice: 4"),
            Err("exactly one"),
        );
        check(
            &SMALL.replace("metric: sectors", "metric: speed"),
            Err("is not a metric"),
        );
        check(
            &SMALL.replace("== why\n", "== what\n"),
            Err("`== why` is missing"),
        );
    }

    #[test]
    fn placeholders_quotes_and_reasons_are_read_apart_from_the_words() {
        let text = SMALL
            .replace(
                "One `int i` here.",
                "{banks} banks; {quote: 13 warps} at {latency-covered-percent regs=64}%.",
            )
            .replace("choice: 1\n", "choice: 1 | one per {warp-size} lanes\n");
        let lesson = parse(&text).expect("parses");
        assert_eq!(
            lesson.intro[0],
            vec![
                Inline::Fact(FactRef::parse("banks").expect("a fact")),
                Inline::Text(" banks; ".into()),
                Inline::Quote("13 warps".into()),
                Inline::Text(" at ".into()),
                Inline::Fact(FactRef::parse("latency-covered-percent regs=64").expect("a fact")),
                Inline::Text("%.".into()),
            ]
        );
        assert_eq!(lesson.question.choices[0].text, "1");
        assert_eq!(
            lesson.question.choices[0].reason,
            vec![
                Inline::Text("one per ".into()),
                Inline::Fact(FactRef::parse("warp-size").expect("a fact")),
                Inline::Text(" lanes".into()),
            ]
        );
        assert!(typed_numbers(&lesson).is_empty());
    }

    #[test]
    fn a_typed_number_or_an_unknown_placeholder_is_found() {
        let typed = parse(&SMALL.replace("Because.", "Because 32 banks.")).expect("parses");
        assert_eq!(typed_numbers(&typed), vec!["Because 32 banks.".to_string()]);
        check(
            &SMALL.replace("Because.", "Because {speed}."),
            Err("line 15: `{speed}` names no metric"),
        );
        check(
            &SMALL.replace("Because.", "Because {banks."),
            Err("never closed"),
        );
    }

    #[test]
    fn the_nearest_choice_is_found_by_ratio() {
        let lesson = parse(SMALL).expect("parses");
        assert_eq!(lesson.question.nearest_choice(3.9), Some(1));
        assert_eq!(lesson.question.nearest_choice(1.5), Some(0));
    }

    #[test]
    fn every_lessons_question_is_answered_by_the_simulator_as_its_file_says() {
        for each in crate::lessons::all() {
            let lesson = each.words();
            let question = &lesson.question;
            let state = State {
                variant: each.question_variant(),
                ..State::default()
            };
            let input = state.launch();
            let report = simulate(&input).expect("the question's launch runs");
            let prediction = memplay_sim::timing::predict(&report);
            let value = question
                .metric
                .value(&input, &report, &prediction)
                .expect("the launch has the accesses the question asks about");
            assert_eq!(
                question.nearest_choice(value),
                question.correct(),
                "{}: the simulator says {value} {}",
                lesson.title,
                question.metric.words()
            );
            let correct = &question.choices[question.correct().unwrap_or_default()];
            // The marked choice reads as the page prints the simulator's number, so the reveal
            // never says "0.2 (the answer 0.25)".
            assert_eq!(
                correct.text,
                question.metric.format(value),
                "{}: the marked choice is the simulator's number as printed",
                lesson.title
            );
        }
    }

    #[test]
    fn the_latency_lessons_answer_falls_when_registers_cut_the_resident_warps() {
        // Seed 003's count on the H100: 64 warps cover DRAM's wait for the adjacent difference
        // (it needs about 50); at 128 registers per thread the SM holds 2 blocks, 16 warps,
        // which cover about a third of it, and the page's revealed answer moves to 25%.
        let each = crate::lessons::lesson("latency-hiding");
        let question = &each.words().question;
        let answer = |regs: u32| {
            let state = State {
                variant: each.question_variant(),
                regs,
                ..State::default()
            };
            let input = state.launch();
            let report = simulate(&input).expect("the launch runs");
            let prediction = memplay_sim::timing::predict(&report);
            let value = question
                .metric
                .value(&input, &report, &prediction)
                .expect("a share");
            (value, question.nearest_choice(value))
        };
        let (at_32, choice_at_32) = answer(32);
        let (at_128, choice_at_128) = answer(128);
        assert_eq!(at_32, 100.0);
        assert_eq!(choice_at_32, question.correct());
        assert!((25.0..40.0).contains(&at_128), "{at_128}");
        assert_eq!(
            question.choices[choice_at_128.expect("a choice")].text,
            "25"
        );
    }
}
