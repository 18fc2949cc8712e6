//! The lesson's file, and an editor that previews an edit of it live: an instructor writes a
//! lesson here, sees at once whether it reads and where it does not, and opens it as the page's
//! lesson (README, "Writing a lesson").
//!
//! The file is only ever a text area's value and the page's own elements built from its parsed
//! pieces, never HTML. The edit is read on the page (`lessons::parse`), which only reads text:
//! its kernels run, like every kernel, in the simulation worker once the lesson is opened.

use crate::deflate;
use crate::lesson_link;
use crate::lessons::{self, Lesson};
use crate::source_link::Compressed;
use crate::state::Action;
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct LessonFileProps {
    pub lesson: Lesson,
    /// The address of the page without a query, for the link to an edit.
    pub page: AttrValue,
    pub on_action: Callback<Action>,
}

/// The link that opens `text` as the lesson `key`, its file carried in the fragment, or why
/// there is none.
pub fn lesson_link_text(page: &str, key: &str, compressed: Compressed) -> Result<String, String> {
    match compressed {
        Compressed::Bytes(bytes) => lesson_link::write_part(&bytes)
            .map(|part| format!("{page}?lesson={key}#{part}"))
            .ok_or_else(too_long),
        Compressed::OverLimit => Err(too_long()),
        Compressed::Unavailable => Err("This browser cannot compress a lesson into a link; \
                                        host the file beside memplay and link it with \
                                        lesson-url= instead."
            .to_string()),
    }
}

fn too_long() -> String {
    "This lesson is too long for a link; host the file beside memplay and link it with \
     lesson-url= instead."
        .to_string()
}

/// What the editor says of a text: what the lesson holds, or the line that is wrong and why.
pub fn reading(key: &str, text: &str) -> Result<String, String> {
    let lesson = lessons::parse(key, text)?;
    let kernels = lesson.variants.len();
    Ok(format!(
        "Reads as the lesson \u{201c}{}\u{201d}: {kernels} kernel{}, a question with {} choices, \
         its view {}.",
        lesson.text.title,
        if kernels == 1 { "" } else { "s" },
        lesson.text.question.choices.len(),
        lesson.view.label().to_ascii_lowercase(),
    ))
}

/// The name an edit of a lesson opens under, beside the lesson it was made from.
pub fn preview_key(key: &str) -> String {
    if key.ends_with("-edit") {
        key.to_string()
    } else {
        format!("{key}-edit")
    }
}

#[function_component(LessonFileView)]
pub fn lesson_file_view(props: &LessonFileProps) -> Html {
    let text = use_state(|| props.lesson.file().to_string());
    // Another lesson shows its own file.
    {
        let text = text.clone();
        use_effect_with(props.lesson, move |lesson| {
            text.set(lesson.file().to_string())
        });
    }
    let key = preview_key(props.lesson.key());
    let read = reading(&key, &text);
    let on_input = {
        let text = text.clone();
        Callback::from(move |event: InputEvent| {
            let area: HtmlTextAreaElement = event.target_unchecked_into();
            text.set(area.value());
        })
    };
    let on_open = {
        let text = text.clone();
        let on_action = props.on_action.clone();
        let key = key.clone();
        Callback::from(move |_: MouseEvent| {
            if let Ok(lesson) = lessons::load(&key, &text) {
                on_action.emit(Action::SetLesson { lesson });
            }
        })
    };
    // The link to the edit, made on request: compressing is the browser's, and asynchronous.
    let link = use_state(|| None::<Result<String, String>>);
    {
        let link = link.clone();
        use_effect_with((props.lesson, (*text).clone()), move |_| link.set(None));
    }
    let on_link = {
        let text = text.clone();
        let link = link.clone();
        let key = key.clone();
        let page = props.page.to_string();
        Callback::from(move |_: MouseEvent| {
            let (text, link, key, page) = (text.clone(), link.clone(), key.clone(), page.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let compressed = deflate::compress(&text).await;
                link.set(Some(lesson_link_text(&page, &key, compressed)));
            });
        })
    };
    let link_html = match &*link {
        None => Html::default(),
        Some(Ok(address)) => html! {
            <p>
                <label class="label" for="lesson-file-link">{ "A link that opens this lesson" }</label>
                <input id="lesson-file-link" data-testid="lesson-file-link" readonly=true
                       value={address.clone()} />
            </p>
        },
        Some(Err(why)) => html! { <p class="hint" role="status">{ why.clone() }</p> },
    };
    let status = match &read {
        Ok(words) => html! {
            <p class="lesson-file-status" data-testid="lesson-file-status" role="status">
                { words.clone() }
            </p>
        },
        Err(error) => html! {
            <p class="lesson-file-status bad" data-testid="lesson-file-status" role="alert">
                { error.clone() }
            </p>
        },
    };
    html! {
        <section class="card lesson-file" data-testid="lesson-file" aria-labelledby="lesson-file-title">
            <h2 id="lesson-file-title">{ "The lesson's file" }</h2>
            <p class="grid-help">
                { "Everything this lesson is: its words, its question, its kernels and their \
                   launches. Edit it and open the edit as a lesson; README's \u{201c}Writing a \
                   lesson\u{201d} explains each line." }
            </p>
            <label class="label" for="lesson-file-text">{ "Lesson file" }</label>
            <textarea id="lesson-file-text" data-testid="lesson-file-text" spellcheck="false"
                      wrap="off" rows="20" value={(*text).clone()} oninput={on_input} />
            { status }
            <div class="kernel-buttons">
                <button type="button" data-testid="lesson-file-open" disabled={read.is_err()}
                        onclick={on_open}>
                    { "Open this edit as a lesson" }
                </button>
                <button type="button" data-testid="lesson-file-make-link" disabled={read.is_err()}
                        onclick={on_link}>
                    { "Make a link to it" }
                </button>
            </div>
            { link_html }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_says_what_a_lesson_holds_or_which_line_is_wrong() {
        let lesson = lessons::lesson("coalescing");
        let said = reading("coalescing-edit", lesson.file()).expect("the shipped file reads");
        assert_eq!(
            said,
            "Reads as the lesson \u{201c}Coalescing global memory\u{201d}: 2 kernels, a \
             question with 4 choices, its view access map."
        );
        let broken = lesson.file().replace("view: access", "view: upside-down");
        let error = reading("coalescing-edit", &broken).expect_err("an unknown view");
        assert!(error.ends_with("`upside-down` is not a view"), "{error}");
        assert!(error.starts_with("line "), "{error}");
        assert_eq!(preview_key("coalescing"), "coalescing-edit");
        assert_eq!(preview_key("coalescing-edit"), "coalescing-edit");
    }

    #[test]
    fn a_lesson_link_names_the_lesson_and_carries_its_file() {
        let link = lesson_link_text(
            "https://c.example/m/",
            "cache-edit",
            Compressed::Bytes(vec![1, 2]),
        )
        .expect("fits");
        assert_eq!(link, "https://c.example/m/?lesson=cache-edit#lesson=1.AQI");
        assert!(lesson_link_text("p", "k", Compressed::OverLimit).is_err());
    }
}
