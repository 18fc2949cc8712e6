//! The comparison card: what the launch is compared with (a menu), and once both have run, their
//! predicted times and counters side by side with the ratio and one sentence on the biggest
//! difference (`compare::rows`, `compare::sentence`).

use crate::compare::{self, CompareWith};
use crate::run::{Shared, SimulationRun};
use crate::state::Action;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Debug)]
pub struct CompareViewProps {
    pub compare: CompareWith,
    /// What the lesson lets its launch be compared with.
    pub choices: Vec<CompareWith>,
    /// The names of the two launches in the table.
    pub own_label: String,
    pub other_label: Option<String>,
    /// The page's run and the compared run, once the worker has answered them.
    pub own: Option<Shared<SimulationRun>>,
    pub other: Option<Shared<SimulationRun>>,
    pub on_action: Callback<Action>,
}

pub fn compare_view(props: &CompareViewProps) -> Html {
    let on_change = props.on_action.reform(|event: Event| {
        let select: HtmlSelectElement = event.target_unchecked_into();
        let compare = CompareWith::ALL
            .into_iter()
            .find(|compare| compare.key() == select.value())
            .unwrap_or(CompareWith::Nothing);
        Action::SetCompare { compare }
    });
    let both = match (&props.own, &props.other, &props.other_label) {
        (Some(own), Some(other), Some(other_label)) => match (
            own.result.as_ref().ok().zip(own.prediction.as_ref()),
            other.result.as_ref().ok().zip(other.prediction.as_ref()),
        ) {
            (Some(own_run), Some(other_run)) => {
                Some((compare::rows(own_run, other_run), other_label))
            }
            _ => None,
        },
        _ => None,
    };
    let table = both.map(|(rows, other_label)| {
        let sentence = compare::sentence(&props.own_label, other_label, &rows);
        html! {
            <>
                <p class="compare-sentence" data-testid="compare-sentence">{ sentence }</p>
                <table class="compare-table">
                    <thead>
                        <tr>
                            <th scope="col">{ "" }</th>
                            <th scope="col">{ props.own_label.clone() }</th>
                            <th scope="col">{ other_label.clone() }</th>
                            <th scope="col">{ "ratio" }</th>
                        </tr>
                    </thead>
                    <tbody>
                        { for rows.iter().map(|row| {
                            let (own, other, ratio) = row.cells();
                            html! {
                                <tr>
                                    <th scope="row">{ row.name }</th>
                                    <td>{ own }</td>
                                    <td>{ other }</td>
                                    <td>{ ratio }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
            </>
        }
    });
    let waiting = (props.compare != CompareWith::Nothing && table.is_none()).then(|| {
        let text = if props.other_label.is_none() {
            "This lesson has no other kernel to compare with."
        } else {
            "The comparison appears once both launches have run without an error."
        };
        html! { <p class="hint">{ text }</p> }
    });
    html! {
        <section class="card compare-card" data-testid="compare" aria-labelledby="compare-title">
            <h2 id="compare-title">{ "Compare" }</h2>
            <div class="field">
                <label class="label" for="compare">{ "Compare this launch with" }</label>
                <select id="compare" data-testid="control-compare" onchange={on_change}>
                    { for props.choices.iter().copied().map(|compare| html! {
                        <option value={compare.key()} selected={compare == props.compare}>
                            { compare.label() }
                        </option>
                    }) }
                </select>
            </div>
            { for waiting }
            { for table }
        </section>
    }
}
