//! The page's components. Each receives plain data props and reports through `on_*` callbacks;
//! none of them touches the URL, and none holds state of its own except the two lesson views,
//! `memory_spaces` (the row chosen) and `pitched` (its worked example's inputs), whose state is
//! what the student looks at, not a setting of the launch or part of the link, so that a lesson
//! can place them with data props alone.

pub mod bank_map;
pub mod chart;
pub mod compare_view;
pub mod controls;
pub mod embed_bar;
pub mod export;
pub mod kernel_view;
pub mod lesson_guide;
pub mod line_view;
pub mod measured_view;
pub mod memory_spaces;
pub mod notes;
pub mod occupancy_view;
pub mod pitched;
pub mod roofline_view;
pub mod time_sweep;
