//! The lessons' words: an introduction, a question to answer before the result is shown, why the
//! answer is what it is, what changes on another device, and the next lesson.
//!
//! The text is data, one plain-text file per lesson in `www/lessons/`, written in our own words
//! from the lecture notes (the seeds each file names). A file has a few `key: value` lines, then
//! sections opened by `== name`; paragraphs are separated by blank lines and `` `code` `` marks
//! code. Nothing of it is ever HTML: the page builds elements from `Inline` pieces.
//!
//! The question names a `Metric`, a number the simulator computes from the lesson's launch, and
//! marks the right choice with `choice*`. The tests run every lesson's launch and check that the
//! simulator's number is the marked choice, so a question can never contradict what the page
//! shows; the page reveals the same number from the run it shows.

use crate::lessons::{Lesson, Variant};
use memplay_sim::simulate::{SimulationInput, SimulationReport};

/// A lesson's words, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct LessonText {
    pub title: String,
    /// The lecture notes it comes from ("000, 003").
    pub seeds: String,
    pub intro: Vec<Paragraph>,
    pub question: Question,
    pub why: Vec<Paragraph>,
    pub devices: Vec<Paragraph>,
    /// The lesson to go to next.
    pub next: Lesson,
}

/// One paragraph: text and code, in order.
pub type Paragraph = Vec<Inline>;

/// A piece of a paragraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Code(String),
}

/// The predict-first question.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub prompt: Paragraph,
    /// The launch the question is about, at the page's first settings.
    pub variant: Variant,
    pub metric: Metric,
    pub choices: Vec<Choice>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub text: String,
    pub correct: bool,
}

/// A number of a launch that a question asks for, computed from its counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Floats one thread loads from global memory: load requests x 32 lanes / threads.
    GlobalLoadsPerThread,
    /// Global load requests per warp.
    GlobalLoadRequestsPerWarp,
    /// Shared-memory wavefronts per shared load instruction: the conflict degree.
    WavefrontsPerSharedLoad,
    /// 32-byte sectors per global load request.
    SectorsPerLoadRequest,
    /// Global atomic requests per block.
    GlobalAtomicRequestsPerBlock,
    /// Threads of the grid beyond an n x n matrix (the launch's argument `n`): the threads a
    /// boundary check must keep from writing.
    ThreadsWithoutAnElement,
    /// Blocks resident on one SM at once (the occupancy calculator's answer).
    BlocksPerSm,
    /// FP32 operations per byte the kernel asks of global memory: the lecture's arithmetic
    /// intensity, counted at the load and store instructions.
    FlopsPerGlobalByte,
    /// Bytes of shared memory one block of the launch uses.
    SharedBytesPerBlock,
    /// The row pitch cudaMallocPitch gives rows of 100 floats (400 bytes) on the launch's device.
    PitchOf100Floats,
    /// The share of a block's memory wait that the SM's resident warps cover, in percent
    /// (`timing::LatencyHiding::covered`): 100 when a unit, not the latency, sets the pace.
    LatencyCoveredPercent,
    /// Lanes active in the average warp instruction (`smsp__thread_inst_executed` over
    /// `smsp__inst_executed`).
    ActiveLanesPerInstruction,
    /// The time of the launch's copies to and from pinned host memory over the kernel's time
    /// (`transfer::launch_transfers`).
    CopiesOverKernel,
}

impl Metric {
    const ALL: [Metric; 13] = [
        Metric::GlobalLoadsPerThread,
        Metric::GlobalLoadRequestsPerWarp,
        Metric::WavefrontsPerSharedLoad,
        Metric::SectorsPerLoadRequest,
        Metric::GlobalAtomicRequestsPerBlock,
        Metric::ThreadsWithoutAnElement,
        Metric::BlocksPerSm,
        Metric::FlopsPerGlobalByte,
        Metric::SharedBytesPerBlock,
        Metric::PitchOf100Floats,
        Metric::LatencyCoveredPercent,
        Metric::ActiveLanesPerInstruction,
        Metric::CopiesOverKernel,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Metric::GlobalLoadsPerThread => "global-loads-per-thread",
            Metric::GlobalLoadRequestsPerWarp => "global-load-requests-per-warp",
            Metric::WavefrontsPerSharedLoad => "wavefronts-per-shared-load",
            Metric::SectorsPerLoadRequest => "sectors-per-load-request",
            Metric::GlobalAtomicRequestsPerBlock => "global-atomic-requests-per-block",
            Metric::ThreadsWithoutAnElement => "threads-without-an-element",
            Metric::BlocksPerSm => "blocks-per-sm",
            Metric::FlopsPerGlobalByte => "flops-per-global-byte",
            Metric::SharedBytesPerBlock => "shared-bytes-per-block",
            Metric::PitchOf100Floats => "pitch-of-100-floats",
            Metric::LatencyCoveredPercent => "latency-covered-percent",
            Metric::ActiveLanesPerInstruction => "active-lanes-per-instruction",
            Metric::CopiesOverKernel => "copies-over-kernel",
        }
    }

    /// What the number is, in words, after the number.
    pub fn words(self) -> &'static str {
        match self {
            Metric::GlobalLoadsPerThread => "floats loaded from global memory per thread",
            Metric::GlobalLoadRequestsPerWarp => "global load requests per warp",
            Metric::WavefrontsPerSharedLoad => "wavefronts per shared-memory load",
            Metric::SectorsPerLoadRequest => "sectors per global load request",
            Metric::GlobalAtomicRequestsPerBlock => "global atomic requests per block",
            Metric::ThreadsWithoutAnElement => "threads with no element of C to write",
            Metric::BlocksPerSm => "blocks resident per SM",
            Metric::FlopsPerGlobalByte => "FLOP per byte asked of global memory",
            Metric::SharedBytesPerBlock => "bytes of shared memory per block",
            Metric::PitchOf100Floats => "bytes of pitch for rows of 100 floats",
            Metric::LatencyCoveredPercent => "% of the memory wait covered by resident warps",
            Metric::ActiveLanesPerInstruction => "lanes active per warp instruction",
            Metric::CopiesOverKernel => "times the kernel's time spent on its copies (pinned)",
        }
    }

    /// The number for a launch and its report; `None` where the launch has no such access.
    pub fn value(self, input: &SimulationInput, report: &SimulationReport) -> Option<f64> {
        let counter = |name: &str| report.counters.get(name).unwrap_or(0.0);
        let blocks = input.grid.count() as f64;
        let threads = blocks * input.block.count() as f64;
        let ratio = |numerator: f64, denominator: f64| {
            (denominator > 0.0 && numerator > 0.0).then(|| numerator / denominator)
        };
        let load_requests = counter("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
        match self {
            Metric::GlobalLoadsPerThread => ratio(load_requests * 32.0, threads),
            Metric::GlobalLoadRequestsPerWarp => ratio(load_requests, threads / 32.0),
            Metric::WavefrontsPerSharedLoad => ratio(
                counter("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                counter("smsp__inst_executed_op_shared_ld.sum"),
            ),
            Metric::SectorsPerLoadRequest => ratio(
                counter("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                load_requests,
            ),
            Metric::GlobalAtomicRequestsPerBlock => ratio(
                counter("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"),
                blocks,
            ),
            Metric::ThreadsWithoutAnElement => {
                let n = crate::model::int_argument(input, "n")? as f64;
                // Only a launch that ran (the guarded kernel) answers: the simulator has checked
                // that no thread left the matrix.
                Some(threads - n * n).filter(|_| report.grid_blocks > 0)
            }
            Metric::BlocksPerSm => Some(f64::from(report.occupancy.active_blocks_per_sm)),
            Metric::FlopsPerGlobalByte => {
                ratio(counter("fp32_flops"), counter("global_bytes_requested"))
            }
            Metric::SharedBytesPerBlock => ratio(report.shared_bytes_per_block as f64, 1.0),
            Metric::PitchOf100Floats => {
                Some(memplay_sim::pitch::pitch_bytes(&input.device, 400) as f64)
            }
            Metric::LatencyCoveredPercent => Some(
                100.0
                    * memplay_sim::timing::predict(report)
                        .latency_hiding
                        .covered(),
            ),
            Metric::CopiesOverKernel => Some(
                memplay_sim::transfer::launch_transfers(
                    report,
                    &memplay_sim::timing::predict(report),
                    memplay_sim::transfer::HostMemory::Pinned,
                    memplay_sim::transfer::Layout::Linear,
                )
                .ratio(),
            ),
            Metric::ActiveLanesPerInstruction => ratio(
                counter("smsp__thread_inst_executed.sum"),
                counter("smsp__inst_executed.sum"),
            ),
        }
    }
}

impl Question {
    /// The choice nearest to the simulator's `value`, by ratio (the choices are orders of
    /// magnitude apart): what the simulator answers.
    pub fn nearest_choice(&self, value: f64) -> Option<usize> {
        let distance = |choice: &Choice| {
            parse_number(&choice.text).map(|number| (number.max(1e-9) / value.max(1e-9)).ln().abs())
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

/// A choice's number: digits with thousands commas and an optional fraction.
fn parse_number(text: &str) -> Option<f64> {
    text.replace(',', "").trim().parse().ok()
}

/// Parses a lesson file; the error names the line and what is wrong.
pub fn parse(text: &str) -> Result<LessonText, String> {
    let mut fields: Vec<(&str, &str)> = Vec::new();
    let mut sections: Vec<(&str, Vec<(usize, &str)>)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if let Some(name) = line.strip_prefix("== ") {
            sections.push((name.trim(), Vec::new()));
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push((number, line));
        } else if !line.trim().is_empty() {
            let (key, value) = line.split_once(':').ok_or(format!(
                "line {number}: expected `key: value` before the sections"
            ))?;
            fields.push((key.trim(), value.trim()));
        }
    }
    let field = |key: &str| {
        fields
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value.to_string())
            .ok_or(format!("the field `{key}:` is missing"))
    };
    let section = |name: &str| {
        sections
            .iter()
            .find(|(section, _)| *section == name)
            .map(|(_, lines)| lines.as_slice())
            .ok_or(format!("the section `== {name}` is missing"))
    };
    let variant_key = field("question-variant")?;
    let variant = Variant::parse_old_key(&variant_key).ok_or(format!(
        "question-variant: {variant_key} is not a lesson kernel"
    ))?;
    let next_name = section("next")?
        .iter()
        .map(|(_, line)| line.trim())
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .to_string();
    Ok(LessonText {
        title: field("title")?,
        seeds: field("seeds")?,
        intro: paragraphs(section("intro")?),
        question: question(section("question")?, variant)?,
        why: paragraphs(section("why")?),
        devices: paragraphs(section("devices")?),
        next: Lesson::ALL
            .into_iter()
            .find(|lesson| lesson.key() == next_name)
            .ok_or(format!("next: {next_name} is not a lesson"))?,
    })
}

fn question(lines: &[(usize, &str)], variant: Variant) -> Result<Question, String> {
    let mut prompt = Vec::new();
    let mut metric = None;
    let mut choices = Vec::new();
    for (number, line) in lines {
        let line = line.trim();
        if let Some(key) = line.strip_prefix("metric:") {
            let key = key.trim();
            metric = Some(
                Metric::ALL
                    .into_iter()
                    .find(|metric| metric.key() == key)
                    .ok_or(format!("line {number}: {key} is not a metric"))?,
            );
        } else if let Some(text) = line.strip_prefix("choice*:") {
            choices.push(Choice {
                text: text.trim().to_string(),
                correct: true,
            });
        } else if let Some(text) = line.strip_prefix("choice:") {
            choices.push(Choice {
                text: text.trim().to_string(),
                correct: false,
            });
        } else if !line.is_empty() {
            prompt.push(line);
        }
    }
    let question = Question {
        prompt: inline(&prompt.join(" ")),
        variant,
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
fn paragraphs(lines: &[(usize, &str)]) -> Vec<Paragraph> {
    let mut paragraphs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for (_, line) in lines.iter().chain([&(0, "")]) {
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(inline(&current.join(" ")));
                current.clear();
            }
        } else {
            current.push(line.trim());
        }
    }
    paragraphs
}

/// Text with `` `code` `` spans; an unclosed backquote is kept as text.
fn inline(text: &str) -> Paragraph {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let Some(length) = rest[start + 1..].find('`') else {
            break;
        };
        if start > 0 {
            pieces.push(Inline::Text(rest[..start].to_string()));
        }
        pieces.push(Inline::Code(
            rest[start + 1..start + 1 + length].to_string(),
        ));
        rest = &rest[start + 2 + length..];
    }
    if !rest.is_empty() {
        pieces.push(Inline::Text(rest.to_string()));
    }
    pieces
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

    const SMALL: &str = "title: Small\nseeds: 000\nquestion-variant: strided-copy\n\n== intro\n\
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
        assert_eq!(lesson.next, Lesson::Atomics);
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
    fn the_nearest_choice_is_found_by_ratio() {
        let lesson = parse(SMALL).expect("parses");
        assert_eq!(lesson.question.nearest_choice(3.9), Some(1));
        assert_eq!(lesson.question.nearest_choice(1.5), Some(0));
    }

    #[test]
    fn every_lessons_question_is_answered_by_the_simulator_as_its_file_says() {
        for each in Lesson::ALL {
            let lesson = parse(each.text())
                .unwrap_or_else(|error| panic!("{each:?}'s lesson file: {error}"));
            let question = &lesson.question;
            assert_eq!(
                question.variant.lesson(),
                each,
                "a question about its own lesson"
            );
            let state = State {
                variant: question.variant,
                ..State::default()
            };
            let input = state.launch();
            let report = simulate(&input).expect("the question's launch runs");
            let value = question
                .metric
                .value(&input, &report)
                .expect("the launch has the accesses the question asks about");
            assert_eq!(
                question.nearest_choice(value),
                question.correct(),
                "{}: the simulator says {value} {}",
                lesson.title,
                question.metric.words()
            );
            let correct = &question.choices[question.correct().unwrap_or_default()];
            let marked = parse_number(&correct.text).expect("a numeric choice");
            assert!(
                (value - marked).abs() <= 0.05 * marked,
                "{}: the simulator's {value} is within 5% of the marked {marked}",
                lesson.title
            );
        }
    }

    #[test]
    fn the_latency_lessons_answer_falls_when_registers_cut_the_resident_warps() {
        // Seed 003's count on the H100: 64 warps cover DRAM's wait for the adjacent difference
        // (it needs about 50); at 128 registers per thread the SM holds 2 blocks, 16 warps,
        // which cover about a third of it, and the page's revealed answer moves to 25%.
        let lesson = parse(Lesson::LatencyHiding.text()).expect("parses");
        let question = &lesson.question;
        let answer = |regs: u32| {
            let state = State {
                variant: question.variant,
                regs,
                ..State::default()
            };
            let input = state.launch();
            let report = simulate(&input).expect("the launch runs");
            let value = question.metric.value(&input, &report).expect("a share");
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
