//! The notes about a link's values that could not be used (see `url`).

use yew::prelude::*;

#[derive(Debug)]
pub struct NotesProps {
    pub notes: Vec<String>,
}

pub fn notes(props: &NotesProps) -> Html {
    if props.notes.is_empty() {
        return Html::default();
    }
    html! {
        <div class="notes" role="status" data-testid="url-notes">
            <p class="notes-title">{ "Some values in this link could not be used:" }</p>
            <ul>
                { for props.notes.iter().map(|note| html! { <li>{ note.clone() }</li> }) }
            </ul>
        </div>
    }
}
