//! The my-kernel lesson's launch form: the kernel to launch (any `__global__` of the source),
//! its grid and block, a value for each scalar parameter, a size, a fill and where it points
//! (`in + RADIUS`: elements into its buffer, as host code's `d_in + RADIUS`) for each pointer,
//! and the dynamic shared memory, each as an expression of the source's `#define`s. Every field
//! is a labelled native input that reports on `change`; what is wrong with a value is listed
//! under the form with its field (`my_kernel::build`, run once per render by the page). A whole
//! program's launches from its host code are offered above the form; choosing one fills it
//! (`my_kernel::from_program`).

use crate::my_kernel::{
    from_program, kernel_params, kernels, program_launches, FieldError, MyLaunch,
};
use crate::state::Action;
use memplay_sim::fill::Fill;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct LaunchFormProps {
    pub source: String,
    pub launch: MyLaunch,
    /// What is wrong with the launch's values, from the build that made the page's launch.
    pub errors: Vec<FieldError>,
    pub on_action: Callback<Action>,
}

/// One labelled text field whose committed value changes the launch through `edit`.
fn field(
    id: String,
    label: String,
    value: &str,
    launch: &MyLaunch,
    on_action: &Callback<Action>,
    edit: impl Fn(&mut MyLaunch, String) + 'static,
) -> Html {
    let launch = launch.clone();
    let on_action = on_action.clone();
    let onchange = Callback::from(move |event: Event| {
        if let Some(input) = event.target_dyn_into::<HtmlInputElement>() {
            let mut next = launch.clone();
            edit(&mut next, input.value());
            on_action.emit(Action::SetMyLaunch {
                launch: Box::new(next),
            });
        }
    });
    html! {
        <div class="control">
            <label for={id.clone()}>{ label }</label>
            <input type="text" id={id.clone()} data-testid={id} class="expression"
                   spellcheck="false" autocomplete="off" value={value.to_string()} {onchange} />
        </div>
    }
}

#[function_component(LaunchForm)]
pub fn launch_form(props: &LaunchFormProps) -> Html {
    let found = use_memo(props.source.clone(), |source| kernels(source));
    let launch = &props.launch;
    let on_action = &props.on_action;
    // A kernel template is chosen by its name (`mm<typename T, int TILE>` lists as `mm`) and
    // launched as the instantiation the student types (`mm<float, 16>`).
    let base = |name: &str| name.split('<').next().unwrap_or(name).trim().to_string();
    let template_chosen = found.as_ref().as_ref().is_ok_and(|list| {
        list.iter()
            .any(|(name, _)| name.contains('<') && base(name) == base(&launch.kernel))
    });
    let kernel_menu = match found.as_ref() {
        Ok(list) if !list.is_empty() => {
            let list = list.clone();
            let current = launch.clone();
            let on_action = on_action.clone();
            let names: Vec<String> = list.iter().map(|(name, _)| name.clone()).collect();
            // The form's kernel may be one the source no longer has (the starter's `saxpy` after
            // a kernel of another name is pasted): it is listed, unchosen, above the source's,
            // so that picking the source's kernel is a change that refits the form.
            let missing = !names.iter().any(|name| {
                *name == launch.kernel || (name.contains('<') && base(name) == base(&launch.kernel))
            });
            let onchange = Callback::from(move |event: Event| {
                if let Some(select) = event.target_dyn_into::<HtmlSelectElement>() {
                    if let Some((name, params)) = list.iter().find(|(n, _)| *n == select.value()) {
                        let name = name.split('<').next().unwrap_or(name);
                        on_action.emit(Action::SetMyLaunch {
                            launch: Box::new(current.fitted(name, params)),
                        });
                    }
                }
            });
            html! {
                <div class="control">
                    <label for="launch-kernel">{ "Kernel to launch" }</label>
                    <select id="launch-kernel" data-testid="launch-kernel" {onchange}>
                        if missing {
                            <option value="" disabled=true selected=true>
                                { format!("{} (not in the source): choose", launch.kernel) }
                            </option>
                        }
                        { for names.iter().map(|name| html! {
                            <option value={name.clone()} selected={*name == launch.kernel
                                || (name.contains('<') && base(name) == base(&launch.kernel))}>{ name }</option>
                        }) }
                    </select>
                </div>
            }
        }
        Ok(_) => {
            html! { <p class="error">{ "The source has no __global__ kernel to launch." }</p> }
        }
        Err(error) => html! {
            <p class="error">{ format!("The source does not compile: {error}") }</p>
        },
    };
    // The program's launches, each as the form it fills, and the one the form shows now.
    let programs = use_memo(props.source.clone(), |source| {
        let launches = program_launches(source);
        launches
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let label = format!("{}: {} (line {})", k + 1, l.kernel, l.span.line);
                (label, from_program(source, l))
            })
            .collect::<Vec<_>>()
    });
    let program_menu = (!programs.is_empty()).then(|| {
        let chooser = programs.clone();
        let on_action = on_action.clone();
        let shown = programs.iter().position(|(_, form)| form == launch);
        let onchange = Callback::from(move |event: Event| {
            if let Some(select) = event.target_dyn_into::<HtmlSelectElement>() {
                let chosen = select.value().parse::<usize>().ok();
                if let Some(k) = chosen.filter(|&k| k < chooser.len()) {
                    // The menu's entries are the host code's launches in order, from 1.
                    let number = u32::try_from(k + 1).unwrap_or(u32::MAX);
                    on_action.emit(Action::ChooseProgramLaunch { number });
                }
            }
        });
        html! {
            <div class="control">
                <label for="launch-program">{ "Launch from the host code" }</label>
                <select id="launch-program" data-testid="launch-program" {onchange}>
                    <option value="" selected={shown.is_none()}>{ "(as written in the form)" }</option>
                    { for programs.iter().enumerate().map(|(k, (label, _))| html! {
                        <option value={k.to_string()} selected={shown == Some(k)}>{ label }</option>
                    }) }
                </select>
            </div>
        }
    });
    let axis = ["x", "y", "z"];
    let dims = |what: &'static str, values: &[String; 3], grid: bool| -> Html {
        html! {
            <fieldset class="launch-dims">
                <legend>{ if grid { "Grid (blocks)" } else { "Block (threads)" } }</legend>
                { for (0..3).map(|d| field(
                    format!("launch-{what}-{}", axis[d]),
                    format!("{what} {}", axis[d]),
                    &values[d],
                    launch,
                    on_action,
                    move |l, v| if grid { l.grid[d] = v } else { l.block[d] = v },
                )) }
            </fieldset>
        }
    };
    let args = launch.args.iter().enumerate().map(|(i, (name, value))| {
        field(
            format!("launch-arg-{name}"),
            format!("{name} ="),
            value,
            launch,
            on_action,
            move |l, v| {
                if let Some(slot) = l.args.get_mut(i) {
                    slot.1 = v;
                }
            },
        )
    });
    let buffers = launch.buffers.iter().enumerate().map(|(i, (name, elements, fill))| {
        let current = launch.clone();
        let on_fill = {
            let on_action = on_action.clone();
            Callback::from(move |event: Event| {
                if let Some(select) = event.target_dyn_into::<HtmlSelectElement>() {
                    if let Some(fill) = Fill::ALL.into_iter().find(|f| f.as_str() == select.value()) {
                        let mut next = current.clone();
                        if let Some(slot) = next.buffers.get_mut(i) {
                            slot.2 = fill;
                        }
                        on_action.emit(Action::SetMyLaunch { launch: Box::new(next) });
                    }
                }
            })
        };
        let fill_id = format!("launch-fill-{name}");
        let pointer = name.clone();
        html! {
            <div class="launch-buffer">
                { field(
                    format!("launch-buffer-{name}"),
                    format!("{name}: elements"),
                    elements,
                    launch,
                    on_action,
                    move |l, v| if let Some(slot) = l.buffers.get_mut(i) { slot.1 = v },
                ) }
                { field(
                    format!("launch-pointer-{name}"),
                    format!("{name} points to"),
                    &launch.points_to(name),
                    launch,
                    on_action,
                    move |l, v| l.set_points_to(&pointer, v),
                ) }
                <div class="control">
                    <label for={fill_id.clone()}>{ format!("{name}: contents") }</label>
                    <select id={fill_id.clone()} data-testid={fill_id} onchange={on_fill}>
                        { for Fill::ALL.into_iter().map(|f| html! {
                            <option value={f.as_str()} selected={f == *fill}>{ f.as_str() }</option>
                        }) }
                    </select>
                </div>
            </div>
        }
    });
    html! {
        <section class="card" data-testid="launch-form" aria-labelledby="launch-form-title">
            <h2 id="launch-form-title">{ "Your launch" }</h2>
            <p class="hint">
                { "Every number is a C expression of the source's #defines, such as (N + 255) / 256. \
                   A pointer may point into its buffer, as in + RADIUS. \
                   A change takes effect when you leave the field." }
            </p>
            { for program_menu }
            { kernel_menu }
            if template_chosen {
                { field(
                    "launch-instantiation".to_string(),
                    "Template arguments, as in mm<float, 16>".to_string(),
                    &launch.kernel,
                    launch,
                    on_action,
                    {
                        let source = props.source.clone();
                        move |l: &mut MyLaunch, v: String| {
                            let params = kernel_params(&source, &v).unwrap_or_default();
                            *l = l.fitted(v.trim(), &params);
                        }
                    },
                ) }
            }
            <div class="launch-grid">
                { dims("grid", &launch.grid, true) }
                { dims("block", &launch.block, false) }
            </div>
            if !launch.args.is_empty() {
                <fieldset class="launch-args">
                    <legend>{ "Scalar arguments" }</legend>
                    { for args }
                </fieldset>
            }
            if !launch.buffers.is_empty() {
                <fieldset class="launch-buffers">
                    <legend>{ "Buffers (one per pointer)" }</legend>
                    { for buffers }
                </fieldset>
            }
            { field(
                "launch-dyn-smem".to_string(),
                "Dynamic shared memory, bytes".to_string(),
                &launch.dyn_smem,
                launch,
                on_action,
                |l, v| l.dyn_smem = v,
            ) }
            if !props.errors.is_empty() {
                <ul class="error" role="alert" data-testid="launch-errors">
                    { for props.errors.iter().map(|e| html! { <li>{ e.to_string() }</li> }) }
                </ul>
            }
        </section>
    }
}
