//! The lesson's words around the simulator: the introduction, a question to answer before the
//! result is shown, and once answered the simulator's own number and why; then what changes on
//! another device and the next lesson. The text comes from `lesson_text` (data files in
//! `www/lessons/`); nothing of it is inserted as HTML.

use crate::components::kernel_view::{Shared, SimulationRun};
use crate::lesson_text::{Inline, LessonText, Paragraph};
use crate::model::format_number;
use crate::state::{Action, Prediction};
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct LessonGuideProps {
    pub text: Rc<LessonText>,
    /// The run the page shows, to answer the question from; `None` before the first.
    pub run: Option<Shared<SimulationRun>>,
    /// The link of the next lesson.
    pub next_href: String,
    pub next_title: String,
    /// The student's answer so far.
    pub prediction: Prediction,
    /// The embed's compact layout: the question stays, the introduction and the rest fold away
    /// behind a summary, since the course page around the frame tells the story.
    #[prop_or_default]
    pub compact: bool,
    pub on_action: Callback<Action>,
}

fn paragraph(pieces: &Paragraph) -> Html {
    html! {
        <p>
            { for pieces.iter().map(|piece| match piece {
                Inline::Text(text) => html! { { text.clone() } },
                Inline::Code(code) => html! { <code>{ code.clone() }</code> },
            }) }
        </p>
    }
}

/// The simulator's answer to the question from the shown run, in words.
fn simulator_answer(text: &LessonText, run: Option<&SimulationRun>) -> String {
    let question = &text.question;
    let Some(run) = run else {
        return "The simulator has not answered yet; its number appears here when it has."
            .to_string();
    };
    if run.input.kernel != question.variant.kernel() {
        return format!(
            "The question is about {}: choose it in the Lesson menu to see the simulator's number.",
            question.variant.title()
        );
    }
    let value = run
        .result
        .as_ref()
        .ok()
        .and_then(|report| question.metric.value(&run.input, report));
    match value {
        Some(value) => {
            let nearest = question
                .nearest_choice(value)
                .and_then(|index| question.choices.get(index))
                .map(|choice| format!(" (the answer \"{}\")", choice.text))
                .unwrap_or_default();
            format!(
                "The simulator, at the settings on the page: {} {}{nearest}.",
                format_number(value),
                question.metric.words()
            )
        }
        None => "The kernel on the page has no such access, or did not run.".to_string(),
    }
}

#[function_component(LessonGuide)]
pub fn lesson_guide(props: &LessonGuideProps) -> Html {
    let Prediction { chosen, revealed } = props.prediction;
    let text = &props.text;
    let question = &text.question;

    let choices = question.choices.iter().enumerate().map(|(index, choice)| {
        let on_choose = props
            .on_action
            .reform(move |_: Event| Action::Predict { index });
        let mark = if revealed && choice.correct {
            " (right)"
        } else {
            ""
        };
        html! {
            <label class={classes!("choice", (revealed && choice.correct).then_some("right"))}>
                <input type="radio" name="predict" value={index.to_string()}
                       data-testid="predict-choice" disabled={revealed}
                       checked={chosen == Some(index)} onchange={on_choose} />
                { format!("{}{mark}", choice.text) }
            </label>
        }
    });
    let on_reveal = props.on_action.reform(|_: MouseEvent| Action::RevealAnswer);
    let verdict = chosen.map(|index| {
        if question.correct() == Some(index) {
            "Your prediction was right."
        } else {
            "Your prediction was not the simulator's; read why below."
        }
    });

    let intro = html! {
        <div class="lesson-intro" data-testid="lesson-intro">
            { for text.intro.iter().map(paragraph) }
            <p class="seeds">{ format!("From the lecture notes {}.", text.seeds) }</p>
        </div>
    };
    let rest = html! {
        <>
            <div class="lesson-devices" data-testid="lesson-devices">
                <h3>{ "On another device" }</h3>
                { for text.devices.iter().map(paragraph) }
            </div>
            <p class="lesson-next">
                { "Next: " }
                <a href={props.next_href.clone()} data-testid="lesson-next">{ &props.next_title }</a>
            </p>
        </>
    };
    let predict = html! {
        <fieldset class="predict" data-testid="predict">
            <legend>{ "Predict first" }</legend>
            { paragraph(&question.prompt) }
            <div class="choices">{ for choices }</div>
            if revealed {
                <div class="answer" data-testid="predict-answer" role="status">
                    if let Some(verdict) = verdict {
                        <p class="verdict">{ verdict }</p>
                    }
                    <p class="simulator-answer">
                        { simulator_answer(text, props.run.as_deref()) }
                    </p>
                    { for text.why.iter().map(paragraph) }
                </div>
            } else {
                <button type="button" data-testid="predict-reveal" onclick={on_reveal}
                        disabled={chosen.is_none()}>
                    { "Show the answer" }
                </button>
            }
        </fieldset>
    };
    html! {
        <section class="card lesson-guide" aria-labelledby="lesson-title">
            <h2 id="lesson-title">{ &text.title }</h2>
            if props.compact {
                { predict }
                <details class="lesson-more">
                    <summary>{ "About this lesson" }</summary>
                    { intro }
                    { rest }
                </details>
            } else {
                { intro }
                { predict }
                { rest }
            }
        </section>
    }
}
