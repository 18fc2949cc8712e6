//! The lesson's bar above its first screen: the Lesson and Kernel menus, and Reset.
//!
//! The full page always shows the menus; an embed shows them only where its link asks
//! (`menus=1`), so a student inside a course page stays in the instructor's lesson. Reset is
//! always there: it returns the lesson to the settings it was opened with (`State::reset_target`).
//! Display only: the choices are reported through `on_action` and `on_reset`.

use crate::lessons::{self, Lesson, Variant};
use crate::state::Action;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Debug)]
pub struct LessonBarProps {
    pub variant: Variant,
    /// Whether the Lesson and Kernel menus are shown.
    pub menus: bool,
    pub on_action: Callback<Action>,
    pub on_reset: Callback<()>,
}

pub fn lesson_bar(props: &LessonBarProps) -> Html {
    let lesson = props.variant.lesson();
    // A lesson whose file the page does not hold yet is fetched first; the lesson on the page
    // stays meanwhile. Where it cannot arrive, the note says why and the menu shows the lesson
    // still on the page, so that picking it again tries again.
    let on_lesson = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let select: HtmlSelectElement = event.target_unchecked_into();
            let on_action = on_action.clone();
            let key = select.value();
            let keys = vec![key.clone()];
            crate::lesson_fetch::fetch_then(
                keys,
                Box::new(move |arrived| match arrived {
                    Ok(()) => {
                        if let Some((lesson, _)) = Lesson::parse(&key) {
                            on_action.emit(Action::SetLesson { lesson });
                        }
                    }
                    Err(note) => {
                        select.set_value(lesson.key());
                        on_action.emit(Action::LessonNotLoaded { note });
                    }
                }),
            );
        })
    };
    let on_variant = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let select: HtmlSelectElement = event.target_unchecked_into();
            if let Some(variant) = lesson.variant_named(&select.value()) {
                on_action.emit(Action::SetVariant { variant });
            }
        })
    };
    let on_reset = props.on_reset.reform(|_: MouseEvent| ());
    let variants = lesson.variants();
    html! {
        <nav class="lesson-bar" aria-label="Lesson">
            if props.menus {
                <div class="field">
                    <label class="label" for="lesson">{ "Lesson" }</label>
                    <select id="lesson" data-testid="control-lesson" onchange={on_lesson}>
                        { for lessons::menu().into_iter().map(|(key, title)| html! {
                            <option value={key} selected={key == lesson.key()}>
                                { title }
                            </option>
                        }) }
                    </select>
                </div>
                if variants.len() > 1 {
                    <div class="field">
                        <label class="label" for="variant">{ "Kernel" }</label>
                        <select id="variant" data-testid="control-variant" onchange={on_variant}
                                aria-describedby="variant-hint">
                            { for variants.iter().map(|&variant| html! {
                                <option value={variant.name()} selected={variant == props.variant}>
                                    { variant.title() }
                                </option>
                            }) }
                        </select>
                        <span class="sr-only" id="variant-hint">
                            { format!("Settings that change it: {}.", props.variant.settings()) }
                        </span>
                    </div>
                }
            }
            <button type="button" class="reset" data-testid="reset" onclick={on_reset}
                    title="The lesson's first settings and its own kernel">
                { "Reset" }
            </button>
        </nav>
    }
}
