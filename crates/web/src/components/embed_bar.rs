//! Embedding in a course page (README, "Embedding in a course page"): the embed's own bar with
//! the "Open in memplay" link, and the full page's "Copy embed code" panel.
//!
//! Both display props only. The clipboard is a side effect of the page (`app`); the panel asks
//! for it through `on_copy` and shows the answer it gets back in `status`. The code is shown as a
//! text area's value, never as HTML, so nothing in it is ever parsed by the page.

use crate::state::EmbedCode;
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

#[derive(Debug)]
pub struct EmbedBarProps {
    /// The lesson's title, as its kernel card names it.
    pub title: AttrValue,
    /// The same view on the full page: a relative `?query` without `embed=1`.
    pub full_page_href: AttrValue,
    /// The lesson's bar (menus where the link asks for them, and Reset).
    pub children: Html,
}

/// The embed's one line of chrome: what it shows, and the way out to the full playground.
pub fn embed_bar(props: &EmbedBarProps) -> Html {
    html! {
        <div class="embed-bar" data-testid="embed-bar">
            // The embed's one heading of the first level, as the full page's header has, so that
            // a screen reader's outline of the frame starts with what it shows.
            <h1 class="embed-title">
                <span class="embed-brand">{ "memplay" }</span>
                { " · " }
                { props.title.clone() }
            </h1>
            // A new tab, so the course page stays where the student left it; noopener keeps the
            // new tab from reaching back into the course page. The arrow says so to the eye, the
            // hidden words to a screen reader.
            <a class="embed-open" data-testid="open-full" href={props.full_page_href.clone()}
               target="_blank" rel="noopener">
                { "Open in memplay " }
                <span aria-hidden="true">{ "↗" }</span>
                <span class="sr-only">{ "(opens in a new tab)" }</span>
            </a>
            { props.children.clone() }
        </div>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct EmbedCodePanelProps {
    /// The `<iframe>` snippet of the current view.
    pub code: AttrValue,
    pub status: EmbedCode,
    /// The student pressed "Copy embed code".
    pub on_copy: Callback<()>,
}

/// The sentence under the code saying whether it is on the clipboard.
pub fn status_text(status: EmbedCode) -> &'static str {
    match status {
        EmbedCode::Hidden => "",
        EmbedCode::Shown => {
            "This code embeds the view above; press Copy embed code to copy it."
        }
        EmbedCode::Copied => "Copied to the clipboard: paste it into your course page's HTML.",
        EmbedCode::SelectToCopy => {
            "This browser did not let the page copy: the code is selected, press Ctrl+C (⌘C on a Mac)."
        }
    }
}

/// The full page's "Copy embed code" button, and the code in a read-only text area once asked.
#[function_component(EmbedCodePanel)]
pub fn embed_code_panel(props: &EmbedCodePanelProps) -> Html {
    let area = use_node_ref();
    {
        // The code is selected whenever it is shown anew, so a refused clipboard leaves only
        // Ctrl+C to press.
        let area = area.clone();
        use_effect_with((props.code.clone(), props.status), move |_| {
            if let Some(area) = area.cast::<HtmlTextAreaElement>() {
                area.select();
            }
        });
    }
    let on_click = props.on_copy.reform(|_: MouseEvent| ());
    html! {
        <section class="card embed-code" aria-labelledby="embed-code-title">
            <h2 id="embed-code-title">{ "Embed this view in a course page" }</h2>
            <p class="hint">
                { "An <iframe> of this lesson with these settings, compact, with a link back to \
                   the full playground." }
            </p>
            <button type="button" data-testid="copy-embed" onclick={on_click}>
                { "Copy embed code" }
            </button>
            if props.status != EmbedCode::Hidden {
                <textarea class="embed-snippet" data-testid="embed-code" readonly=true rows="4"
                          spellcheck="false" aria-label="Embed code"
                          ref={area} value={props.code.clone()} />
                <p class="embed-status" data-testid="embed-status" role="status">
                    { status_text(props.status) }
                </p>
            }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_but_hidden_says_something() {
        for status in [EmbedCode::Shown, EmbedCode::Copied, EmbedCode::SelectToCopy] {
            assert!(status_text(status).ends_with('.'), "{status:?}");
        }
        assert_eq!(status_text(EmbedCode::Hidden), "");
    }

    #[test]
    fn a_refused_clipboard_tells_the_student_to_press_ctrl_c() {
        assert!(status_text(EmbedCode::SelectToCopy).contains("Ctrl+C"));
    }
}
