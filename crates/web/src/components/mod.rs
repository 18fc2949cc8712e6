//! The page's components. Each receives plain data props and reports through `on_*` callbacks;
//! none of them holds state of its own or touches the URL.

pub mod bank_map;
pub mod chart;
pub mod controls;
pub mod embed_bar;
pub mod export;
pub mod kernel_view;
pub mod line_view;
pub mod notes;
pub mod occupancy_view;
pub mod roofline_view;
pub mod time_sweep;
