//! The host test of what every lesson says: each lesson, at each of its variants, on each device
//! preset, read as the page fills it in from the simulator. Every number in a lesson's words must
//! come from a placeholder the simulator, the launch or the preset fills in; none may be left
//! unfilled where the launch runs; no name of a file, note or probe group may reach the student;
//! every control of a lesson must move some number the lesson shows; and the launches refused on
//! a device are exactly the expected ones.

use crate::components::kernel_view::{counter_statements, unit_bar_statements};
use crate::components::latency_view::LatencyFacts;
use crate::components::lesson_guide::{answer_words, fill, plain, simulator_answer, Shown};
use crate::components::measured_view::measured_statements;
use crate::components::memory_spaces::{memory_spaces_statements, MemorySpacesProps};
use crate::components::occupancy_view::occupancy_statements;
use crate::components::pitched::{pitched_statements, PitchedInputs};
use crate::components::roofline_levels::roofline_levels_statements;
use crate::components::roofline_view::roofline_statements;
use crate::facts::{At, Fact, FactContext, LaunchView, SweepRun, SweepRuns};
use crate::lesson_text::{parse, typed_numbers, Inline, LessonText};
use crate::lessons::{Control, SweepSetting, Variant, View};
use crate::run::SimulationRun;
use crate::state::State;
use crate::statements::{Claim, Statement};
use memplay_sim::simulate::simulate;
use memplay_sim::timing::predict;
use memplay_sim::DeviceId;
use memplay_web::protocol::SweptLaunch;
use std::collections::BTreeSet;
use std::rc::Rc;

/// Words that name what a student never sees: the lecture notes' file names, probe groups, the
/// reference files.
const INTERNAL_NAMES: [&str; 7] = [
    "seed",
    "probe",
    ".txt",
    ".json",
    "tests/",
    "reference/",
    "group I",
];

fn internal_names(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    INTERNAL_NAMES
        .into_iter()
        .filter(|name| lower.contains(&name.to_lowercase()))
        .collect()
}

/// The values of the swept setting a lesson's placeholders read at.
fn swept_values(text: &LessonText) -> BTreeSet<(SweepSetting, u32)> {
    text.paragraphs()
        .into_iter()
        .flatten()
        .filter_map(|piece| match piece {
            Inline::Fact(fact) => match fact.at {
                Some(At::Setting(setting, value)) => Some((setting, value)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A lesson's launch at `state`, run as the page runs it, with the sweep's launches its words
/// need.
struct Page {
    state: State,
    run: SimulationRun,
    sweep: SweepRuns,
}

fn page_at(state: &State, text: &LessonText) -> Page {
    // The page's launch traces one warp for the per-line view's map, as `app` asks for it.
    let mut input = state.launch();
    input.trace = Some(crate::line_model::trace_request(
        state.page.trace_block,
        state.page.trace_warp,
        &input,
    ));
    let result = simulate(&input);
    let prediction = result.as_ref().ok().map(predict);
    let setting = state.variant.sweep();
    let runs = swept_values(text)
        .into_iter()
        .filter(|(swept, _)| *swept == setting)
        .map(|(_, value)| {
            let at = setting.with(state.settings(), value);
            let input = state.variant.launch(at, state.source());
            let launch = simulate(&input).ok().map(|report| {
                Rc::new(SweptLaunch {
                    prediction: predict(&report),
                    report,
                })
            });
            SweepRun {
                value,
                failed: launch.is_none(),
                input,
                launch,
            }
        })
        .collect();
    let declarations =
        memplay_sim::memory_spaces::declarations(&input.source, &input.defines, &input.kernel);
    Page {
        state: state.clone(),
        run: SimulationRun {
            input,
            result,
            prediction,
            elapsed_ms: 0.0,
            declarations,
        },
        sweep: SweepRuns { setting, runs },
    }
}

/// What the views beside the lesson's words say about its launch, as the page shows them.
fn view_statements(page: &Page) -> Vec<Statement> {
    let run = &page.run;
    let views = page.state.variant.lesson().views();
    let mut statements = Vec::new();
    if let (Ok(report), Some(prediction)) = (&run.result, &run.prediction) {
        statements.extend(measured_statements(
            crate::measured::compare(&run.input, report),
            Some(prediction.time_ms),
        ));
    }
    if views.contains(&View::MemorySpaces) {
        statements.extend(memory_spaces_statements(&MemorySpacesProps {
            kernel: run.input.kernel.clone(),
            declarations: Some(run.declarations.clone()),
            threads_per_block: run.input.block.count(),
            blocks: run.input.grid.count(),
        }));
    }
    if views.contains(&View::Pitched) {
        statements.extend(pitched_statements(
            page.state.device,
            PitchedInputs::default(),
        ));
    }
    if let Some(prediction) = &run.prediction {
        statements.extend(unit_bar_statements(prediction));
    }
    if views.contains(&View::Occupancy) {
        let (resources, launch) = crate::model::lesson_occupancy(&run.input, &run.result);
        statements.extend(occupancy_statements(
            &run.input.device,
            &resources,
            &run.input.kernel,
            &launch,
        ));
    }
    if let Ok(report) = &run.result {
        statements.extend(counter_statements(report));
        // Every lesson has the per-line view, in its first screen or one tab away.
        {
            let view = crate::line_model::line_view(
                &run.input,
                report,
                None,
                page.state.variant.opens_on(),
                0,
            );
            statements.extend(crate::line_model::access_statements(&view));
        }
    }
    if views.contains(&View::LatencyHiding) {
        if let Some(facts) = run
            .prediction
            .as_ref()
            .and_then(|prediction| LatencyFacts::new(run, prediction))
        {
            statements.extend(facts.statements());
        }
    }
    if views.contains(&View::Roofline) {
        let device = &run.input.device;
        let simulated = match (&run.result, &run.prediction) {
            (Ok(report), Some(prediction)) => {
                crate::model::simulated_point(&run.input.kernel, report, prediction)
            }
            _ => None,
        };
        if let (Ok(report), Some(prediction)) = (&run.result, &run.prediction) {
            statements.extend(roofline_levels_statements(
                &memplay_sim::roofline::hierarchical(report, prediction),
            ));
        }
        statements.extend(
            roofline_statements(
                device,
                &memplay_sim::roofline::ceilings(device),
                page.state.tile,
                simulated.as_ref(),
            )
            .into_iter()
            .map(|line| line.statement),
        );
    }
    statements
}

/// Checks what a statement claims: a formula recomputes from its printed terms, a bound called
/// "at most" holds the prediction beside it, a rate is called "at most" only as such a bound, and
/// every
/// label of one access (the per-line table's, the map's) names one conflict degree.
fn check_claims(statements: &[Statement], context: &str) {
    let mut degrees: std::collections::BTreeMap<&str, BTreeSet<u32>> = Default::default();
    for statement in statements {
        if let Claim::Access {
            site,
            degree_in_words,
            ..
        } = &statement.claim
        {
            degrees.entry(site).or_default().insert(*degree_in_words);
        }
    }
    for (site, named) in degrees {
        assert_eq!(named.len(), 1, "{context}: {site} is labelled {named:?}");
    }
    for statement in statements {
        match statement.claim {
            Claim::Formula {
                shown,
                recomputed,
                tolerance,
            } => assert!(
                (shown - recomputed).abs() <= tolerance * recomputed.abs(),
                "{context}: {shown} printed, {recomputed} from the printed terms: {}",
                statement.text
            ),
            Claim::AtMost { bound, predicted } => assert!(
                predicted <= bound * 1.005,
                "{context}: {predicted} predicted beyond the bound {bound}: {}",
                statement.text
            ),
            // A capacity ("an SM holds at most 64 warps") is no prediction's bound; a rate
            // called "at most" is, and must be checked against the prediction beside it.
            _ => assert!(
                !(statement.text.contains("at most")
                    && (statement.text.contains("GFLOP/s") || statement.text.contains("GB/s"))),
                "{context}: \"at most\" without a bound it is checked against: {}",
                statement.text
            ),
        }
    }
}

/// What the lesson's words say at `state`, filled in as the page fills them.
fn lesson_words(page: &Page, text: &LessonText) -> Vec<String> {
    lesson_words_and_unfilled(page, text).0
}

/// The lesson's words, and those of its paragraphs with a placeholder still waiting for a launch.
fn lesson_words_and_unfilled(page: &Page, text: &LessonText) -> (Vec<String>, Vec<String>) {
    let mut unfilled = Vec::new();
    let run = &page.run;
    let shown = LaunchView {
        input: &run.input,
        outcome: match (&run.result, &run.prediction) {
            (Ok(report), Some(prediction)) => Some((report, prediction)),
            _ => None,
        },
        failed: run.result.is_err(),
    };
    let views = page.sweep.views();
    let context = FactContext {
        shown,
        sweep: Some((page.sweep.setting, views.as_slice())),
    };
    // The prompt reads the question's launch at the page's settings, before anything runs.
    let question_input = State {
        variant: page.state.variant.lesson().question_variant(),
        ..page.state.clone()
    }
    .launch();
    let prompt_context = FactContext {
        shown: LaunchView {
            input: &question_input,
            outcome: None,
            failed: false,
        },
        sweep: None,
    };
    let mut words: Vec<String> = text
        .paragraphs()
        .into_iter()
        .map(|paragraph| {
            let context = if std::ptr::eq(paragraph, &text.question.prompt) {
                &prompt_context
            } else {
                &context
            };
            let shown = fill(paragraph, Some(context));
            if shown.contains(&Shown::Number("…".to_string())) {
                unfilled.push(plain(&shown));
            }
            plain(&shown)
        })
        .collect();
    let lesson = page.state.variant.lesson();
    words.push(answer_words(lesson, &simulator_answer(lesson, Some(run))));
    words.extend(
        view_statements(page)
            .into_iter()
            .map(|statement| statement.text),
    );
    // The pattern explorer's sentence, where the lesson has one.
    if page
        .state
        .variant
        .lesson()
        .views()
        .contains(&crate::lessons::View::BankMap)
    {
        let state = &page.state;
        let pattern =
            memplay_sim::patterns::build(state.pattern, crate::state::pattern_params(state));
        let report = memplay_sim::banks::analyze(&pattern.access, &state.device.device());
        words.push(crate::model::explain(&report));
    }
    (words, unfilled)
}

/// The reveal's sentence on the simulator's number.
fn simulator_answer_words(page: &Page) -> String {
    let lesson = page.state.variant.lesson();
    answer_words(lesson, &simulator_answer(lesson, Some(&page.run)))
}

/// The page at a variant's first settings on `device`, as its link opens it.
fn state_at(variant: Variant, device: DeviceId) -> State {
    State {
        variant,
        device,
        pattern: crate::state::default_pattern(variant.lesson()),
        ..State::default()
    }
}

#[test]
fn no_lesson_types_a_number_outside_a_placeholder_a_quotation_or_code() {
    for lesson in crate::lessons::all() {
        let text = lesson.words();
        assert_eq!(typed_numbers(text), Vec::<String>::new(), "{lesson:?}");
    }
}

#[test]
fn a_question_names_only_numbers_known_before_its_launch_runs() {
    for lesson in crate::lessons::all() {
        let text = lesson.words();
        for piece in &text.question.prompt {
            if let Inline::Fact(fact) = piece {
                assert!(
                    !matches!(fact.fact, Fact::Metric(_)) && fact.at.is_none(),
                    "{lesson:?}: the prompt's {{{}}} needs a simulation",
                    fact.fact.key()
                );
            }
        }
    }
}

#[test]
fn every_placeholder_reads_a_value_the_lessons_sweep_has() {
    // `{predicted-time pad=1}` reads the sweep's launch at PAD = 1, so the sweep must be over the
    // padding and run 1; otherwise the page could never fill it in.
    for lesson in crate::lessons::all() {
        let text = lesson.words();
        for (setting, value) in swept_values(text) {
            for variant in lesson.variants() {
                assert_eq!(variant.sweep(), setting, "{lesson:?} {variant:?}");
                assert!(setting.values().contains(&value), "{lesson:?}: {value}");
            }
        }
    }
}

#[test]
fn every_lesson_at_every_variant_on_every_device_fills_in_every_number_and_names_nothing_internal()
{
    let mut refused = BTreeSet::new();
    for lesson in crate::lessons::all() {
        let text = lesson.words();
        for variant in lesson.variants() {
            for device in DeviceId::ALL {
                let state = state_at(variant, device);
                let page = page_at(&state, text);
                let (words, unfilled) = lesson_words_and_unfilled(&page, text);
                check_claims(&view_statements(&page), &format!("{variant:?} on {device}"));
                let ran = page.run.result.is_ok();
                if !ran {
                    refused.insert((format!("{variant:?}"), device.as_str()));
                }
                for sentence in words.iter().chain([&variant.title().to_string()]) {
                    assert_eq!(
                        internal_names(sentence),
                        Vec::<&str>::new(),
                        "{variant:?} on {device}: {sentence}"
                    );
                }
                // A launch that runs fills in every number; one that does not run shows its
                // simulator's numbers as "—" and says why instead.
                assert_eq!(
                    unfilled,
                    Vec::<String>::new(),
                    "{variant:?} on {device}: a number left open"
                );
            }
        }
        assert!(internal_names(&text.lectures).is_empty(), "{lesson:?}");
    }
    let expected: BTreeSet<(String, &str)> = DeviceId::ALL
        .into_iter()
        .map(|device| ("boundary-checks/unguarded".to_string(), device.as_str()))
        .chain([
            ("atomics/global".to_string(), "g80"),
            ("atomics/hierarchical".to_string(), "g80"),
        ])
        .collect();
    assert_eq!(refused, expected);
}

#[test]
fn a_refused_launch_is_answered_with_its_reason_not_a_number() {
    let text = crate::lessons::lesson("boundary-checks").words();
    let page = page_at(
        &state_at(
            crate::lessons::variant("boundary-checks", "unguarded"),
            DeviceId::H100,
        ),
        text,
    );
    let answer = simulator_answer_words(&page);
    assert!(answer.contains("Kernel menu"), "{answer}");
    let text = crate::lessons::lesson("memory-spaces").words();
    let state = State {
        device: DeviceId::G80,
        tile: 32,
        ..state_at(
            crate::lessons::variant("memory-spaces", "tiled"),
            DeviceId::G80,
        )
    };
    let page = page_at(&state, text);
    let answer = simulator_answer_words(&page);
    assert!(answer.contains("does not run"), "{answer}");
    assert!(!answer.contains("0 bytes"), "{answer}");
}

/// The settings of a control that a sweep can vary.
fn swept(control: Control) -> Option<SweepSetting> {
    match control {
        Control::Tile => Some(SweepSetting::Tile),
        Control::Pad => Some(SweepSetting::Pad),
        Control::Stride => Some(SweepSetting::Stride),
        Control::Block => Some(SweepSetting::Block),
        Control::Regs => Some(SweepSetting::Regs),
        Control::Pattern | Control::HostMemory => None,
    }
}

#[test]
fn every_numeric_control_of_a_lesson_moves_a_number_its_words_show() {
    for lesson in crate::lessons::all() {
        let text = lesson.words();
        for variant in lesson.variants() {
            for control in state_at(variant, DeviceId::H100).controls() {
                let Some(setting) = swept(control) else {
                    continue;
                };
                let shown: BTreeSet<Vec<String>> = setting
                    .values()
                    .iter()
                    .map(|&value| {
                        let mut state = state_at(variant, DeviceId::H100);
                        let settings = setting.with(state.settings(), value);
                        state.tile = settings.tile;
                        state.pad = settings.pad;
                        state.stride = settings.stride;
                        state.block = settings.block;
                        state.regs = settings.regs;
                        lesson_words(&page_at(&state, text), text)
                    })
                    .collect();
                assert!(
                    shown.len() > 1,
                    "{variant:?}: the {} moves nothing the lesson's words show",
                    setting.label()
                );
            }
        }
    }
}

#[test]
fn a_placeholder_about_another_device_names_that_devices_preset() {
    let text = "title: T\nlectures: L\nquestion-variant: strided-copy\n\n== intro\n\
                {banks device=g80} and {banks}.\n\n== question\nQ?\nmetric: sectors-per-load-request\n\
                choice*: 4\n\n== why\nW.\n\n== devices\nD.\n\n== next\natomics\n";
    let text = parse(text).expect("parses");
    let page = page_at(
        &state_at(
            crate::lessons::variant("coalescing", "strided-copy"),
            DeviceId::H100,
        ),
        &text,
    );
    assert_eq!(lesson_words(&page, &text)[0], "16 and 32.");
    assert!(matches!(
        text.intro[0][0],
        Inline::Fact(fact) if matches!(fact.fact, Fact::Device(_))
    ));
}

#[test]
fn the_coalescing_lessons_stride_is_explained_in_global_memory() {
    let coalescing = crate::components::controls::stride_hint(
        &crate::lessons::variant("coalescing", "strided-copy").controls(),
    );
    assert!(coalescing.contains("global"), "{coalescing}");
    assert!(!coalescing.contains("shared"), "{coalescing}");
    let banks = crate::components::controls::stride_hint(
        &crate::lessons::variant("bank-conflicts", "stride").controls(),
    );
    assert!(banks.contains("shared"), "{banks}");
}

#[test]
fn every_try_link_opens_its_lesson_at_the_settings_it_names() {
    for lesson in crate::lessons::all() {
        let text = lesson.words();
        for piece in text.paragraphs().into_iter().flatten() {
            let Inline::Try { settings, .. } = piece else {
                continue;
            };
            let query: String = settings
                .iter()
                .map(|(key, value)| format!("&{key}={value}"))
                .collect();
            let state = State::from_query(&format!("lesson={}{query}", lesson.key()));
            assert_eq!(state.notes, Vec::<String>::new(), "{lesson:?}: {query}");
            assert_eq!(state.variant.lesson(), lesson);
            assert_ne!(
                state,
                State::from_query(&format!("lesson={}", lesson.key()))
            );
        }
    }
}

#[test]
fn the_occupancy_lessons_g80_link_reaches_the_lectures_three_blocks_of_256_threads() {
    // The lecture: "For 16X16, we have 256 threads per Block ... it can take up to 3 Blocks".
    let state = State::from_query("lesson=occupancy&device=g80&tile=16&regs=10");
    let report = simulate(&state.launch()).expect("the G80 runs 16 x 16 blocks at 10 registers");
    assert_eq!(report.occupancy.active_blocks_per_sm, 3);
    assert_eq!(report.occupancy.active_warps_per_sm * 32, 768);
}

#[test]
fn every_choice_says_in_one_line_why_it_is_or_is_not_the_answer() {
    for lesson in crate::lessons::all() {
        let text = lesson.words();
        for choice in &text.question.choices {
            assert!(!choice.reason.is_empty(), "{lesson:?}: {}", choice.text);
        }
    }
}

#[test]
fn a_wrong_pick_is_told_apart_from_the_answer_the_simulator_gives() {
    use crate::components::lesson_guide::{verdict, SimulatorAnswer};
    let answer = SimulatorAnswer::Number {
        value: 32.0,
        printed: "32".into(),
        choice: Some(3),
    };
    assert_eq!(
        verdict(Some(3), &answer, Some(3)),
        Some("Your prediction was right.")
    );
    assert!(verdict(Some(0), &answer, Some(3))
        .expect("a verdict")
        .starts_with("Your prediction was not the simulator's"));
    // At settings where the simulator's number is none of the choices, no pick is right.
    let elsewhere = SimulatorAnswer::Number {
        value: 7.0,
        printed: "7".into(),
        choice: None,
    };
    assert!(verdict(Some(3), &elsewhere, Some(3))
        .expect("a verdict")
        .contains("none of the choices"));
    assert_eq!(verdict(None, &answer, Some(3)), None);
}

#[test]
fn the_roofline_reveal_prints_the_answer_as_the_choice_reads() {
    // The reveal said "0.2 FLOP per byte ... (the answer 0.25)": one decimal of 0.25.
    let text = crate::lessons::lesson("roofline").words();
    let page = page_at(
        &state_at(crate::lessons::variant("roofline", "naive"), DeviceId::H100),
        text,
    );
    let answer = lesson_words(&page, text)
        .into_iter()
        .find(|words| words.starts_with("The simulator, at the settings on the page"))
        .expect("the simulator's answer");
    assert!(
        answer.contains(": 0.25 FLOP per byte") && answer.contains("(the answer \"0.25\")"),
        "{answer}"
    );
}

#[test]
fn no_roofline_bound_is_exceeded_by_the_prediction_beside_it_at_any_tile_on_any_device() {
    // The page said "Naive matmul: 0.25 FLOP/B, at most 752.8 GFLOP/s" beside a prediction of
    // 5,087 GFLOP/s: the lecture's count, every load from DRAM, is no bound on a cached launch.
    for device in DeviceId::ALL {
        for variant in [
            crate::lessons::variant("roofline", "naive"),
            crate::lessons::variant("roofline", "tiled"),
        ] {
            for tile in [4, 8, 16, 32] {
                let state = State {
                    tile,
                    ..state_at(variant, device)
                };
                let text = crate::lessons::lesson("roofline").words();
                let page = page_at(&state, text);
                check_claims(
                    &view_statements(&page),
                    &format!("{variant:?} at tile {tile} on {device}"),
                );
            }
        }
    }
}

#[test]
fn a_number_of_a_sweep_launch_the_device_cannot_run_is_marked_and_explained() {
    // The G80's 8,192 registers hold no block of 256 threads at 64 registers per thread.
    let text = crate::lessons::lesson("latency-hiding").words();
    let page = page_at(
        &state_at(
            crate::lessons::variant("latency-hiding", "adjacent-difference"),
            DeviceId::G80,
        ),
        text,
    );
    let (words, unfilled) = lesson_words_and_unfilled(&page, text);
    assert!(unfilled.is_empty(), "{unfilled:?}");
    let raise = words
        .iter()
        .find(|words| words.starts_with("Raise the registers"))
        .expect("the paragraph about more registers");
    assert!(raise.contains("cover —%"), "{raise}");
    assert!(
        raise.ends_with("does not run on this device at that setting.)"),
        "{raise}"
    );
}

#[test]
fn every_access_a_lesson_opens_on_is_an_access_of_its_kernel() {
    let mut named = 0;
    for variant in crate::lessons::all_variants() {
        let Some(code) = variant.opens_on() else {
            continue;
        };
        named += 1;
        let page = page_at(&state_at(variant, DeviceId::H100), variant.lesson().words());
        let report = page.run.result.as_ref().expect("the launch runs");
        let view = crate::line_model::line_view(&page.run.input, report, None, Some(code), 0);
        let picked = view.picked.map(|i| view.rows[i].access.clone());
        let plain = |code: &str| code.split_whitespace().collect::<String>();
        assert_eq!(
            picked.as_deref().map(plain),
            Some(plain(code)),
            "{variant:?}"
        );
    }
    assert!(named >= 4, "the lessons about one access name it");
}
