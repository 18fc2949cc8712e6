//! The sweep chart: predicted time of the lesson's kernel against one setting (tile width, block
//! size, padding or stride), with the current choice marked, so a student sees which way to move.
//!
//! The page's worker simulates the sweep's launches one after the other, after the lesson's own
//! launch: a point still being simulated shows as "…" on its tick, and the chart fills in.

use crate::components::chart::{
    capitalized, chart_numbers, in_sentence, points, px, ChartNumbersProps, NumberRow, Scale,
};
use crate::components::export::{chart_export, ChartExportProps};
use crate::format::format_time;
use yew::prelude::*;

/// One value of the swept setting and the predicted time, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub struct TimePoint {
    pub value: u32,
    /// `None` while the launch is being simulated.
    pub time_ms: Option<Result<f64, String>>,
}

impl TimePoint {
    /// The predicted time, if the launch ran.
    fn ran(&self) -> Option<f64> {
        self.time_ms
            .as_ref()
            .and_then(|time| time.as_ref().ok().copied())
    }
}

#[derive(Debug)]
pub struct TimeSweepProps {
    /// The swept setting, in words ("tile width").
    pub setting: &'static str,
    pub points: Vec<TimePoint>,
    /// The current value of the setting; marked if it is one of the points.
    pub current: u32,
}

const WIDTH: f64 = 420.0;
const HEIGHT: f64 = 210.0;
const LEFT: f64 = 74.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 48.0;

/// The value of the setting at which the predicted time is shortest, among the points that ran.
fn fastest(points: &[TimePoint]) -> Option<u32> {
    points
        .iter()
        .filter_map(|point| point.ran().map(|ms| (point.value, ms)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(value, _)| value)
}

/// The chart's points as rows of its table; the current value and the fastest, which the chart
/// marks with colour and size, are noted in words.
pub fn number_rows(points: &[TimePoint], current: u32) -> Vec<NumberRow> {
    let best = fastest(points);
    points
        .iter()
        .map(|point| {
            let value = match &point.time_ms {
                Some(Ok(ms)) => format_time(*ms),
                Some(Err(reason)) => format!("does not run: {reason}"),
                None => "being simulated".to_string(),
            };
            let mut notes = Vec::new();
            if point.value == current {
                notes.push("now");
            }
            if Some(point.value) == best {
                notes.push("fastest");
            }
            NumberRow {
                label: point.value.to_string(),
                value,
                notes,
            }
        })
        .collect()
}

/// The chart's description for screen readers, and the test's reading of it.
pub fn describe(setting: &str, points: &[TimePoint], current: u32) -> String {
    let parts: Vec<String> = points
        .iter()
        .map(|point| match &point.time_ms {
            Some(Ok(ms)) => format!("{} {}", point.value, format_time(*ms)),
            Some(Err(_)) => format!("{} does not run", point.value),
            None => format!("{} still being simulated", point.value),
        })
        .collect();
    let best_text = fastest(points).map_or(String::new(), |value| {
        format!(" Fastest at {setting} {value}.")
    });
    format!(
        "Predicted time against {setting}: {}. Now {setting} {current}.{best_text}",
        parts.join(", ")
    )
}

pub fn time_sweep(props: &TimeSweepProps) -> Html {
    let n = props.points.len().max(1);
    let max_ms = props
        .points
        .iter()
        .filter_map(TimePoint::ran)
        .fold(0.0f64, f64::max);
    let y_max = if max_ms > 0.0 { max_ms * 1.15 } else { 1.0 };
    let y = Scale::linear((0.0, y_max), (HEIGHT - BOTTOM, TOP));
    // The values sit evenly spaced, whatever their numbers: 4, 8, 16, 32 read as steps.
    let slot = (WIDTH - LEFT - RIGHT) / n as f64;
    let x_at = |index: usize| LEFT + slot * (index as f64 + 0.5);
    let line: Vec<(f64, f64)> = props
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, point)| point.ran().map(|ms| (x_at(i), y.map(ms))))
        .collect();
    let title = format!("Predicted time against {}", props.setting);
    // A new reference each render: Yew binds it to the element as this render is drawn, and the
    // export buttons made in this render read it.
    let figure = NodeRef::default();
    let file_name = format!("time-vs-{}", props.setting.replace(' ', "-"));

    html! {
        <figure class="time-sweep" data-testid="time-sweep" ref={figure.clone()}>
            <figcaption>{ title.clone() }</figcaption>
            <svg viewBox={format!("0 0 {WIDTH} {HEIGHT}")} role="img" aria-label={title.clone()}
                 aria-describedby="description-time-sweep">
                { for [0.0, 0.5, 1.0].into_iter().map(|fraction| {
                    let value = max_ms * fraction;
                    let at = y.map(value);
                    html! {
                        <g class="tick">
                            <line class="grid" x1={px(LEFT)} x2={px(WIDTH - RIGHT)}
                                  y1={px(at)} y2={px(at)} />
                            <text x={px(LEFT - 6.0)} y={px(at + 4.0)} text-anchor="end">
                                { if value > 0.0 { format_time(value) } else { "0".to_string() } }
                            </text>
                        </g>
                    }
                }) }
                <line class="axis" x1={px(LEFT)} x2={px(WIDTH - RIGHT)}
                      y1={px(HEIGHT - BOTTOM)} y2={px(HEIGHT - BOTTOM)} />
                <text class="axis-title" x={px((LEFT + WIDTH - RIGHT) / 2.0)}
                      y={px(HEIGHT - 8.0)} text-anchor="middle">{ props.setting }</text>
                <polyline class="sweep-line" points={points(&line)} />
                { for props.points.iter().enumerate().map(|(i, point)| {
                    let cx = x_at(i);
                    let is_current = point.value == props.current;
                    let tick = html! {
                        <text class={classes!("tick-label", is_current.then_some("current-label"))}
                              x={px(cx)} y={px(HEIGHT - BOTTOM + 18.0)} text-anchor="middle">
                            { point.value.to_string() }
                        </text>
                    };
                    match &point.time_ms {
                        Some(Ok(ms)) => {
                            let cy = y.map(*ms);
                            html! {
                                <g class={classes!("time-point", is_current.then_some("current"))}>
                                    <title>{ format!("{} {}: {}", props.setting, point.value, format_time(*ms)) }</title>
                                    <circle cx={px(cx)} cy={px(cy)} r={if is_current { "7" } else { "4.5" }} />
                                    if is_current {
                                        <text class="current-label" x={px(cx)} y={px(cy - 12.0)}
                                              text-anchor="middle">{ format_time(*ms) }</text>
                                    }
                                    { tick }
                                </g>
                            }
                        }
                        Some(Err(reason)) => html! {
                            <g class={classes!("time-point", "failed", is_current.then_some("current"))}>
                                <title>{ format!("{} {}: {reason}", props.setting, point.value) }</title>
                                <text x={px(cx)} y={px(HEIGHT - BOTTOM - 8.0)} text-anchor="middle">{ "×" }</text>
                                { tick }
                            </g>
                        },
                        None => html! {
                            <g class={classes!("time-point", "pending", is_current.then_some("current"))}>
                                <title>{ format!("{} {}: being simulated", props.setting, point.value) }</title>
                                <text x={px(cx)} y={px(HEIGHT - BOTTOM - 8.0)} text-anchor="middle">{ "…" }</text>
                                { tick }
                            </g>
                        },
                    }
                }) }
            </svg>
            // Hidden from view and from reading order: a screen reader reads it as the chart's
            // description, and the table below shows the same numbers to everyone.
            <p id="description-time-sweep" hidden=true>
                { describe(props.setting, &props.points, props.current) }
            </p>
            { chart_export(&ChartExportProps {
                chart: figure,
                name: file_name,
                id_suffix: "",
                title: in_sentence(&title).into(),
            }) }
            { chart_numbers(&ChartNumbersProps {
                title,
                columns: (capitalized(props.setting), "Predicted time".to_string()),
                rows: number_rows(&props.points, props.current),
                test_id: "numbers-time-sweep".to_string(),
            }) }
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(points: &[(u32, Option<f64>)], current: u32, expected: &str) {
        let points: Vec<TimePoint> = points
            .iter()
            .map(|&(value, ms)| TimePoint {
                value,
                time_ms: Some(ms.ok_or_else(|| "too many threads".to_string())),
            })
            .collect();
        assert_eq!(describe("tile width", &points, current), expected);
    }

    #[test]
    fn the_description_names_every_point_and_the_fastest() {
        check(
            &[
                (8, Some(0.39)),
                (16, Some(0.268)),
                (32, Some(0.229)),
                (64, None),
            ],
            16,
            "Predicted time against tile width: 8 0.390 ms, 16 0.268 ms, 32 0.229 ms, \
             64 does not run. Now tile width 16. Fastest at tile width 32.",
        );
    }

    #[test]
    fn a_point_still_being_simulated_is_named_as_such_and_not_the_fastest() {
        let points = [
            TimePoint {
                value: 8,
                time_ms: Some(Ok(0.39)),
            },
            TimePoint {
                value: 16,
                time_ms: None,
            },
        ];
        assert_eq!(
            describe("tile width", &points, 8),
            "Predicted time against tile width: 8 0.390 ms, 16 still being simulated. \
             Now tile width 8. Fastest at tile width 8."
        );
    }

    #[test]
    fn the_table_notes_the_current_and_the_fastest_value_in_words() {
        let points = [
            TimePoint {
                value: 8,
                time_ms: Some(Ok(0.39)),
            },
            TimePoint {
                value: 16,
                time_ms: Some(Ok(0.268)),
            },
            TimePoint {
                value: 32,
                time_ms: Some(Err("too many threads".to_string())),
            },
            TimePoint {
                value: 64,
                time_ms: None,
            },
        ];
        let rows: Vec<(String, String)> = number_rows(&points, 16)
            .iter()
            .map(|row| (row.label.clone(), row.value_text()))
            .collect();
        let expected = [
            ("8", "0.390 ms"),
            ("16", "0.268 ms (now, fastest)"),
            ("32", "does not run: too many threads"),
            ("64", "being simulated"),
        ];
        assert_eq!(
            rows,
            expected.map(|(label, value)| (label.to_string(), value.to_string()))
        );
    }

    #[test]
    fn a_sweep_where_nothing_runs_names_no_fastest() {
        check(
            &[(64, None)],
            64,
            "Predicted time against tile width: 64 does not run. Now tile width 64.",
        );
    }
}
