//! The tabs below a lesson's first screen: everything besides the lesson's point, one click away.
//!
//! A row of buttons in the ARIA tabs pattern; the open tab is part of the page's state and link
//! (`tab=`), so a shared link opens the same tab. Display only: a choice is reported through
//! `on_action`.

use crate::settings::Tab;
use crate::state::Action;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct TabsProps {
    pub tabs: Vec<Tab>,
    pub current: Tab,
    pub on_action: Callback<Action>,
}

/// The element id of a tab's panel, which its button controls.
pub const PANEL_ID: &str = "tab-panel";

#[function_component(Tabs)]
pub fn tabs(props: &TabsProps) -> Html {
    html! {
        <div class="tabs" role="tablist" aria-label="More of this lesson">
            { for props.tabs.iter().map(|&tab| {
                let selected = tab == props.current;
                let on_click = props.on_action.reform(move |_: MouseEvent| Action::SetTab { tab });
                html! {
                    <button type="button" role="tab" id={format!("tab-{}", tab.key())}
                            data-testid={format!("tab-{}", tab.key())}
                            aria-selected={selected.to_string()} aria-controls={PANEL_ID}
                            // Each tab is a stop of the Tab key, since no arrow key moves between them.
                            tabindex="0"
                            class={classes!(selected.then_some("selected"))}
                            onclick={on_click}>
                        { tab.label() }
                    </button>
                }
            }) }
        </div>
    }
}
