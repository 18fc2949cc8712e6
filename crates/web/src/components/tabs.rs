//! The tabs below a lesson's first screen: everything besides the lesson's point, one click away.
//!
//! A row of buttons in the ARIA tabs pattern; the open tab is part of the page's state and link
//! (`tab=`), so a shared link opens the same tab. Display only: a choice is reported through
//! `on_action`.

use crate::settings::Tab;
use crate::state::Action;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Debug)]
pub struct TabsProps {
    pub tabs: Vec<Tab>,
    pub current: Tab,
    pub on_action: Callback<Action>,
}

/// The element id of a tab's panel, which its button controls.
pub const PANEL_ID: &str = "tab-panel";

/// The tab an arrow key, Home or End moves to from the tab at `index` of `count`, as the ARIA
/// tabs pattern has it: the arrows wrap round, Home and End go to the ends.
pub fn moved_to(key: &str, index: usize, count: usize) -> Option<usize> {
    if count == 0 {
        return None;
    }
    match key {
        "ArrowRight" => Some((index + 1) % count),
        "ArrowLeft" => Some((index + count - 1) % count),
        "Home" => Some(0),
        "End" => Some(count - 1),
        _ => None,
    }
}

/// Moves the keyboard's focus to the tab of this key, which is on the page already.
fn focus_tab(tab: Tab) {
    let element = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id(&format!("tab-{}", tab.key())))
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(element) = element {
        let _ = element.focus();
    }
}

pub fn tabs_view(props: &TabsProps) -> Html {
    let tabs = props.tabs.clone();
    html! {
        <div class="tabs" role="tablist" aria-label="More of this lesson">
            { for props.tabs.iter().enumerate().map(|(index, &tab)| {
                let selected = tab == props.current;
                let on_click = props.on_action.reform(move |_: MouseEvent| Action::SetTab { tab });
                let on_key = {
                    let on_action = props.on_action.clone();
                    let tabs = tabs.clone();
                    Callback::from(move |event: KeyboardEvent| {
                        if let Some(target) = moved_to(&event.key(), index, tabs.len()) {
                            event.prevent_default();
                            on_action.emit(Action::SetTab { tab: tabs[target] });
                            focus_tab(tabs[target]);
                        }
                    })
                };
                html! {
                    <button type="button" role="tab" id={format!("tab-{}", tab.key())}
                            data-testid={format!("tab-{}", tab.key())}
                            aria-selected={selected.to_string()} aria-controls={PANEL_ID}
                            // The open tab is the Tab key's one stop in the row; the arrow keys,
                            // Home and End move between the tabs.
                            tabindex={if selected { "0" } else { "-1" }}
                            class={classes!(selected.then_some("selected"))}
                            onclick={on_click} onkeydown={on_key}>
                        { tab.label() }
                    </button>
                }
            }) }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arrow_keys_wrap_round_the_tabs_and_home_and_end_go_to_their_ends() {
        assert_eq!(moved_to("ArrowRight", 0, 4), Some(1));
        assert_eq!(moved_to("ArrowRight", 3, 4), Some(0));
        assert_eq!(moved_to("ArrowLeft", 0, 4), Some(3));
        assert_eq!(moved_to("Home", 2, 4), Some(0));
        assert_eq!(moved_to("End", 1, 4), Some(3));
        assert_eq!(moved_to("Enter", 1, 4), None);
        assert_eq!(moved_to("ArrowRight", 0, 0), None);
    }
}
