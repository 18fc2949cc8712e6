//! The page's components. Each receives plain data props and reports through `on_*` callbacks;
//! none of them touches the URL, and none holds state of its own except the two lesson views,
//! `memory_spaces` (the row chosen) and `pitched` (its worked example's inputs), whose state is
//! what the student looks at, not a setting of the launch or part of the link, so that a lesson
//! can place them with data props alone.

pub mod bank_map;
pub mod chart;
pub mod compare_view;
pub mod controls;
pub mod divergence_view;
pub mod embed_bar;
pub mod export;
pub mod kernel_view;
pub mod latency_view;
pub mod launch_form;
pub mod lesson_bar;
pub mod lesson_file;
pub mod lesson_guide;
pub mod line_view;
pub mod measured_view;
pub mod memory_spaces;
pub mod notes;
pub mod occupancy_view;
pub mod pitched;
pub mod roofline_levels;
pub mod roofline_view;
pub mod tabs;
pub mod time_sweep;
pub mod transfer_view;

#[cfg(test)]
mod tests {
    /// The components' classes are styled by one stylesheet; a rule left open (a merge gone
    /// wrong) silently drops every rule after it, so the braces must balance and no rule may sit
    /// inside another (the stylesheet uses no nesting, only `@media` and `@keyframes` blocks).
    #[test]
    fn the_stylesheet_closes_every_rule_it_opens() {
        let css = include_str!("../../../../www/style.css");
        let mut depth = 0i32;
        let mut opened_by_at_rule = Vec::new();
        let mut selector = String::new();
        for character in css.chars() {
            match character {
                '{' => {
                    let at_rule = selector.trim_start().starts_with('@')
                        || selector
                            .lines()
                            .last()
                            .is_some_and(|line| line.trim().starts_with('@'));
                    assert!(
                        depth == 0 || opened_by_at_rule.last() == Some(&true),
                        "a rule opens inside another: {:?}",
                        selector.trim()
                    );
                    opened_by_at_rule.push(at_rule);
                    depth += 1;
                    selector.clear();
                }
                '}' => {
                    depth -= 1;
                    assert!(depth >= 0, "a brace closes nothing");
                    opened_by_at_rule.pop();
                    selector.clear();
                }
                ';' => selector.clear(),
                other => selector.push(other),
            }
        }
        assert_eq!(depth, 0, "every rule is closed");
        assert!(!css.contains("<<<<<<<") && !css.contains(">>>>>>>"));
    }
}
