//! The lesson's words around the simulator: the introduction, a question to answer before the
//! result is shown, and once answered the simulator's own number and why; then what changes on
//! another device and the next lesson. The text comes from `lesson_text` (data files in
//! `www/lessons/`); nothing of it is inserted as HTML.

use crate::facts::SweepRuns;
use crate::facts::{FactContext, LaunchView};
use crate::lesson_text::{Inline, Paragraph};
use crate::lessons::{Control, Lesson};
use crate::run::{Shared, SimulationRun};
use crate::state::{Action, Prediction};
use std::rc::Rc;
use yew::prelude::*;

#[derive(Debug)]
pub struct LessonGuideProps {
    pub lesson: Lesson,
    /// The run the page shows, to answer the question from; `None` before the first.
    pub run: Option<Shared<SimulationRun>>,
    /// The launch the question is about at the page's settings: the prompt's numbers are this
    /// launch's and the device's, known before anything runs, whichever kernel is shown.
    pub question_launch: Rc<memplay_sim::simulate::SimulationInput>,
    /// The link of this lesson at its first settings, which a `try` link extends.
    pub lesson_href: String,
    /// The link of the next lesson.
    pub next_href: String,
    pub next_title: String,
    /// The launches of the lesson's sweep that ran, for placeholders about another value of the
    /// swept setting; `None` before the sweep starts.
    pub sweep: Option<Rc<SweepRuns>>,
    /// The student's answer so far.
    pub prediction: Prediction,
    /// Whether the further words are unfolded (`more=1`).
    pub more: bool,
    pub on_action: Callback<Action>,
}

/// A piece of a paragraph as the page shows it: a placeholder filled in, or `…` while the launch
/// it needs has not run.
#[derive(Clone, Debug, PartialEq)]
pub enum Shown {
    Text(String),
    Code(String),
    Number(String),
    Quote(String),
    /// A link to the lesson at named settings: its words, and its query after the lesson.
    Link {
        label: String,
        query: String,
    },
}

/// The paragraph with its placeholders filled in from `context`. A number of a launch that does
/// not run (a setting the device cannot launch) shows as "—", and the paragraph then says why.
pub fn fill(pieces: &Paragraph, context: Option<&FactContext>) -> Vec<Shown> {
    let mut shown = fill_pieces(pieces, context);
    if shown.contains(&Shown::Number(NOT_RUN.to_string())) {
        shown.push(Shown::Text(
            " (— marks a number of a launch that does not run on this device at that setting.)"
                .to_string(),
        ));
    }
    shown
}

/// What a number of a launch that did not run shows.
const NOT_RUN: &str = "—";

fn fill_pieces(pieces: &Paragraph, context: Option<&FactContext>) -> Vec<Shown> {
    pieces
        .iter()
        .map(|piece| match piece {
            Inline::Text(text) => Shown::Text(text.clone()),
            Inline::Code(code) => Shown::Code(code.clone()),
            Inline::Quote(quote) => Shown::Quote(quote.clone()),
            Inline::Try { label, settings } => Shown::Link {
                label: format!(
                    "{label} ({})",
                    settings
                        .iter()
                        .map(|(key, value)| format!("{key} {value}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                query: settings
                    .iter()
                    .map(|(key, value)| format!("&{key}={value}"))
                    .collect(),
            },
            Inline::Fact(fact) => Shown::Number(
                context
                    .and_then(|context| context.text(fact))
                    .unwrap_or_else(|| "…".to_string()),
            ),
        })
        .collect()
}

/// The words of a filled paragraph, as a screen reader or a test reads them.
#[cfg(test)]
pub fn plain(shown: &[Shown]) -> String {
    shown
        .iter()
        .map(|piece| match piece {
            Shown::Text(text) | Shown::Code(text) | Shown::Number(text) => text.clone(),
            Shown::Quote(quote) => format!("“{quote}”"),
            Shown::Link { label, .. } => label.clone(),
        })
        .collect()
}

fn paragraph(pieces: &Paragraph, context: Option<&FactContext>, lesson_link: &str) -> Html {
    html! { <p>{ inline_html(pieces, context, lesson_link) }</p> }
}

/// `lesson_link` is the query that opens this lesson (`?lesson=occupancy`, with `&embed=1` in the
/// embed), which a `try` link extends with its settings.
fn inline_html(pieces: &Paragraph, context: Option<&FactContext>, lesson_link: &str) -> Html {
    html! {
        { for fill(pieces, context).into_iter().map(|piece| match piece {
            Shown::Text(text) => html! { { text } },
            Shown::Code(code) => html! { <code>{ code }</code> },
            Shown::Number(number) => html! { <span class="fact">{ number }</span> },
            Shown::Quote(quote) => html! { <q class="lecture-quote">{ quote }</q> },
            Shown::Link { label, query } => html! {
                <a href={format!("{lesson_link}{query}")} data-testid="lesson-try">{ label }</a>
            },
        }) }
    }
}

/// The simulator's answer to the question at the shown run: its number, and the choice it is
/// (within 5%), if it is one of them.
#[derive(Clone, Debug, PartialEq)]
pub enum SimulatorAnswer {
    /// No run has come back yet.
    Waiting,
    /// The shown run is another kernel than the question's.
    OtherKernel,
    /// The shown launch did not run; the reason is the simulator's.
    DidNotRun(String),
    /// The shown launch has no such access.
    NoSuchAccess,
    Number {
        value: f64,
        /// The value as the page prints it.
        printed: String,
        /// The choice the value is, if one is within 5% of it.
        choice: Option<usize>,
    },
}

pub fn simulator_answer(lesson: Lesson, run: Option<&SimulationRun>) -> SimulatorAnswer {
    let question = &lesson.words().question;
    let Some(run) = run else {
        return SimulatorAnswer::Waiting;
    };
    if run.input.kernel != lesson.question_variant().kernel() {
        return SimulatorAnswer::OtherKernel;
    }
    let report = match &run.result {
        Ok(report) => report,
        Err(error) => return SimulatorAnswer::DidNotRun(error.to_string()),
    };
    let Some(prediction) = run.prediction.as_ref() else {
        return SimulatorAnswer::Waiting;
    };
    match question.metric.value(&run.input, report, prediction) {
        Some(value) => SimulatorAnswer::Number {
            value,
            printed: question.metric.format(value),
            choice: question.nearest_choice(value).filter(|&index| {
                question.choices[index]
                    .number()
                    .is_some_and(|number| (number - value).abs() <= 0.05 * value.abs())
            }),
        },
        None => SimulatorAnswer::NoSuchAccess,
    }
}

/// The simulator's answer in words.
pub fn answer_words(lesson: Lesson, answer: &SimulatorAnswer) -> String {
    let question = &lesson.words().question;
    match answer {
        SimulatorAnswer::Waiting => {
            "The simulator has not answered yet; its number appears here when it has.".to_string()
        }
        SimulatorAnswer::OtherKernel => format!(
            "The question is about {}: choose it in the Kernel menu to see the simulator's number.",
            lesson.question_variant().title()
        ),
        SimulatorAnswer::DidNotRun(reason) => {
            format!("At these settings the launch does not run: {reason}")
        }
        SimulatorAnswer::NoSuchAccess => {
            "The kernel on the page has no such access, or did not run.".to_string()
        }
        SimulatorAnswer::Number {
            printed, choice, ..
        } => match choice {
            Some(index) => format!(
                "The simulator, at the settings on the page: {printed}{} (the answer \"{}\").",
                spaced(question.metric.words()),
                question.choices[*index].text
            ),
            None => format!(
                "The simulator, at the settings on the page: {printed}{}, none of the choices \
                 (they are for the lesson's first settings).",
                spaced(question.metric.words())
            ),
        },
    }
}

/// A metric's words after its number: a space before words, none before a percent sign.
fn spaced(words: &str) -> String {
    if words.starts_with('%') {
        words.to_string()
    } else {
        format!(" {words}")
    }
}

/// The verdict on the student's pick against the simulator's answer.
pub fn verdict(
    chosen: Option<usize>,
    answer: &SimulatorAnswer,
    marked: Option<usize>,
) -> Option<&'static str> {
    let chosen = chosen?;
    let right = match answer {
        SimulatorAnswer::Number { choice, .. } => *choice,
        // Without the simulator's number at these settings the file's answer stands.
        _ => marked,
    };
    Some(if right == Some(chosen) {
        "Your prediction was right."
    } else if right.is_some() {
        "Your prediction was not the simulator's: the right answer is marked, and each choice says why."
    } else {
        "The simulator's number at these settings is none of the choices: each choice says what it counts."
    })
}

/// The one number that answers the lesson's question, at the top of its view: the simulator's,
/// once the answer is shown (`State::view_covered`); until then, what it will be.
pub fn key_number(lesson: Lesson, run: Option<&SimulationRun>, answer_shown: bool) -> String {
    let metric = lesson.words().question.metric;
    if !answer_shown {
        return format!(
            "Predict first: the {} shows here once you show the answer.",
            metric.words()
        );
    }
    match simulator_answer(lesson, run) {
        SimulatorAnswer::Number { printed, .. } => {
            format!("{}: {printed}", capitalized(metric.words()))
        }
        other => answer_words(lesson, &other),
    }
}

/// The words with their first letter a capital. The words are the lessons' own labels, so an ASCII
/// capital is enough, and the page's module needs no Unicode case tables (`str::to_uppercase`'s).
fn capitalized(words: &str) -> String {
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => std::iter::once(first.to_ascii_uppercase())
            .chain(chars)
            .collect(),
        None => String::new(),
    }
}

/// What to try once the answer is shown: the lesson's own controls, its view, the next lesson.
pub fn try_next(lesson: Lesson) -> String {
    let controls: Vec<&str> = lesson
        .controls()
        .iter()
        .filter(|control| **control != Control::Pattern)
        .map(|control| control.label())
        .collect();
    let view = lesson.view().label().to_ascii_lowercase();
    match controls.split_last() {
        None => format!("Now try another device, and watch the {view} change."),
        Some((last, [])) => format!("Now move the {last} and watch the {view} change."),
        Some((last, first)) => format!(
            "Now move the {} or the {last}, and watch the {view} change.",
            first.join(", the ")
        ),
    }
}

pub fn lesson_guide(props: &LessonGuideProps) -> Html {
    let Prediction { chosen, revealed } = props.prediction;
    let text = props.lesson.words();
    let question = &text.question;
    let run = props.run.as_deref();
    let shown = run.map(|run| LaunchView {
        input: &run.input,
        outcome: match (&run.result, &run.prediction) {
            (Ok(report), Some(prediction)) => Some((report, prediction)),
            _ => None,
        },
        failed: run.result.is_err(),
    });
    let sweep_views: Vec<(u32, LaunchView)> = props
        .sweep
        .as_deref()
        .map(|sweep| sweep.views())
        .unwrap_or_default();
    let context = shown.map(|shown| FactContext {
        shown,
        sweep: props
            .sweep
            .as_deref()
            .map(|sweep| (sweep.setting, sweep_views.as_slice())),
    });
    let context = context.as_ref();
    let prompt_context = FactContext {
        shown: LaunchView {
            input: &props.question_launch,
            outcome: None,
            failed: false,
        },
        sweep: None,
    };
    let answer = simulator_answer(props.lesson, run);
    let right = match &answer {
        SimulatorAnswer::Number { choice, .. } => *choice,
        _ => question.correct(),
    };

    let choices = question.choices.iter().enumerate().map(|(index, choice)| {
        let on_choose = props
            .on_action
            .reform(move |_: Event| Action::Predict { index });
        let is_right = revealed && right == Some(index);
        let is_wrong_pick = revealed && chosen == Some(index) && right != Some(index);
        let mark = if is_right {
            " (right)"
        } else if is_wrong_pick {
            " (your pick)"
        } else {
            ""
        };
        html! {
            <div class={classes!("choice", is_right.then_some("right"), is_wrong_pick.then_some("wrong"))}>
                <label>
                    <input type="radio" name="predict" value={index.to_string()}
                           data-testid="predict-choice" disabled={revealed}
                           checked={chosen == Some(index)} onchange={on_choose} />
                    { format!("{}{mark}", choice.text) }
                </label>
                if revealed && !choice.reason.is_empty() {
                    { " " }
                    <span class="choice-reason" data-testid="choice-reason">
                        { inline_html(&choice.reason, context, &props.lesson_href) }
                    </span>
                }
            </div>
        }
    });
    let on_reveal = props.on_action.reform(|_: MouseEvent| Action::RevealAnswer);
    let verdict = verdict(chosen, &answer, question.correct());

    // The short intro is the first paragraph; the rest folds away with the devices, so the
    // question and the lesson's view fit the first screen.
    let intro = html! {
        <div class="lesson-intro" data-testid="lesson-intro">
            { for text.intro.first().map(|p| paragraph(p, context, &props.lesson_href)) }
        </div>
    };
    let on_toggle = {
        let on_action = props.on_action.clone();
        let more = props.more;
        Callback::from(move |event: Event| {
            let details: web_sys::HtmlDetailsElement = event.target_unchecked_into();
            // The toggle event also fires when the page itself opens the fold from the link.
            if details.open() != more {
                on_action.emit(Action::SetMore {
                    more: details.open(),
                });
            }
        })
    };
    let rest = html! {
        <details class="lesson-more" data-testid="lesson-more" open={props.more} ontoggle={on_toggle}>
            <summary>{ "More about this lesson" }</summary>
            { for text.intro.iter().skip(1).map(|p| paragraph(p, context, &props.lesson_href)) }
            <p class="seeds">{ format!("From the lectures: {}.", text.lectures) }</p>
            <div class="lesson-devices" data-testid="lesson-devices">
                <h3>{ "On another device" }</h3>
                { for text.devices.iter().map(|p| paragraph(p, context, &props.lesson_href)) }
            </div>
        </details>
    };
    let next = html! {
        <p class="lesson-next">
            { "Next: " }
            <a href={props.next_href.clone()} data-testid="lesson-next">{ &props.next_title }</a>
        </p>
    };
    let predict = html! {
        <fieldset class="predict" data-testid="predict">
            <legend>{ "Predict first" }</legend>
            { paragraph(&question.prompt, Some(&prompt_context), &props.lesson_href) }
            <div class="choices">{ for choices }</div>
            if revealed {
                <div class="answer" data-testid="predict-answer" role="status">
                    if let Some(verdict) = verdict {
                        <p class="verdict">{ verdict }</p>
                    }
                    <p class="simulator-answer">
                        { answer_words(props.lesson, &answer) }
                    </p>
                    { for text.why.iter().map(|p| paragraph(p, context, &props.lesson_href)) }
                    <p class="try-next" data-testid="try-next">{ try_next(props.lesson) }</p>
                </div>
            } else {
                <button type="button" data-testid="predict-reveal" onclick={on_reveal}
                        disabled={chosen.is_none()}>
                    { "Show the answer" }
                </button>
            }
        </fieldset>
    };
    let more_now = props.more;
    // The intro's toggle: on a narrow or short screen the intro shows its first lines until the
    // student asks for the rest, with the further words below.
    let on_more = props
        .on_action
        .reform(move |_: MouseEvent| Action::SetMore { more: !more_now });
    html! {
        <>
            <section class={classes!("card", "lesson-guide", "lesson-text", props.more.then_some("more"))}
                     aria-labelledby="lesson-title">
                <h2 id="lesson-title" data-testid="lesson-title">{ &text.title }</h2>
                { intro }
                <button type="button" class="link-button intro-more" aria-expanded={props.more.to_string()}
                        onclick={on_more}>
                    { if props.more { "Fewer words" } else { "Read the whole introduction" } }
                </button>
                { predict }
            </section>
            <div class="lesson-after">
                { rest }
                { next }
            </div>
        </>
    }
}
