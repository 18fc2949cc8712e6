//! The lessons' files, fetched when the page needs them rather than carried in its module.
//!
//! The lesson files of `www/lessons/` and the kernels of `www/kernels/` are copied into the site
//! (`lessons/`, `kernels/`: index.html's `copy-dir`s) and cached by the service worker with
//! every other file of the site, so after one visit they arrive without the network. The module
//! carries only the menu (`lessons::SHIPPED_LESSONS`, which `build.rs` writes from the files'
//! first fields), so a lesson costs the download only its file's bytes, when it is opened.
//!
//! The page fetches the lesson its link names, and the home lesson every state starts from,
//! before it starts (`link_lessons`, `fetch_then`); a lesson picked from the menu, or named by a link that Back,
//! Forward or the course page sets, is fetched before the page turns to it. A lesson's kernels
//! of `www/kernels/` come with it, and so do those a lesson loaded at run time names
//! (`?lesson-url=`, `#lesson=`), which the lesson is read against.

use crate::lessons::{self, ShippedLesson};
use crate::url;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The text of a file of the page's own site (the policy allows no other: `connect-src 'self'`).
pub async fn fetch_text(address: &str) -> Result<String, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(address))
        .await
        .map_err(|_| "the site did not answer".to_string())?;
    let response: web_sys::Response = response
        .dyn_into()
        .map_err(|_| "the answer is not a file".to_string())?;
    if !response.ok() {
        return Err(format!("the site answered {}", response.status()));
    }
    let text = response
        .text()
        .map_err(|_| "the file is not text".to_string())?;
    JsFuture::from(text)
        .await
        .ok()
        .and_then(|text| text.as_string())
        .ok_or_else(|| "the file is not text".to_string())
}

/// Fetches the kernels of `www/kernels/` that a lesson's text names and the page does not hold
/// yet, so that the lesson can be read.
pub async fn fetch_kernels(text: &str) -> Result<(), String> {
    for file in lessons::missing_kernels(text) {
        let kernel = fetch_text(&format!("kernels/{file}"))
            .await
            .map_err(|why| format!("its kernel {file} could not be loaded: {why}"))?;
        lessons::hold_kernel(file, kernel);
    }
    Ok(())
}

/// Fetches the shipped lesson that `key` (its id, or an old key of its kernel) names, with its
/// kernels, where the page does not hold it yet. A key of no shipped lesson is left to the
/// link's reading, which says so. The error says in words which lesson did not arrive and why.
async fn fetch_lesson(key: &str) -> Result<(), String> {
    let Some(shipped) = ShippedLesson::named(key) else {
        return Ok(());
    };
    if lessons::holds(shipped) {
        return Ok(());
    }
    let words = |why: String| format!("The lesson {} could not be loaded: {why}.", shipped.title);
    let text = fetch_text(&format!("lessons/{}.txt", shipped.key))
        .await
        .map_err(words)?;
    fetch_kernels(&text).await.map_err(words)?;
    lessons::hold_shipped(shipped, &text)
        .map(drop)
        .map_err(|error| words(format!("its file does not read: {error}")))
}

/// The lessons the page at the link `query` shows: the home lesson, which every state starts
/// from, and the lesson the link names.
pub fn link_lessons(query: &str) -> Vec<String> {
    let mut keys = vec![ShippedLesson::home().key.to_string()];
    keys.extend(url::query_value(query, "lesson"));
    keys
}

/// Fetches the lessons `keys` name (`fetch_lesson`), one after another, then tells `done`
/// whether they all arrived or which did not and why. Every caller shares this one task.
pub fn fetch_then(keys: Vec<String>, done: Box<dyn FnOnce(Result<(), String>)>) {
    wasm_bindgen_futures::spawn_local(async move {
        let mut arrived = Ok(());
        for key in &keys {
            arrived = fetch_lesson(key).await;
            if arrived.is_err() {
                break;
            }
        }
        done(arrived);
    });
}

#[cfg(test)]
mod tests {
    use super::link_lessons;

    #[test]
    fn a_link_fetches_the_home_lesson_and_the_lesson_it_names_before_the_page_starts() {
        assert_eq!(link_lessons("?tile=8"), ["tiled-matmul"]);
        assert_eq!(
            link_lessons("?lesson=coalescing&tile=8"),
            ["tiled-matmul", "coalescing"]
        );
        // An old key of a kernel is fetched as its lesson (`fetch_lesson` resolves it).
        assert_eq!(
            link_lessons("lesson=transpose-swizzle"),
            ["tiled-matmul", "transpose-swizzle"]
        );
    }
}
