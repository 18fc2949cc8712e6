//! The web crate's modules import one another without a cycle: a module can be read, tested and
//! changed knowing only the modules below it (ARCHITECTURE.md, "Invariants").
//!
//! The test reads every file of `src/`, takes each `crate::module` (and
//! `crate::components::component`) a file names outside its tests as an edge, and looks for a
//! strongly connected set of more than one module. Test modules are left out: a test may build
//! the page's state to check a view.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module of `src/` (`state`, `components/kernel_view`) and the source outside its tests.
fn modules() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeMap::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder)
            .expect("src/ is readable")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&root).expect("under src/");
            let name = relative
                .with_extension("")
                .to_string_lossy()
                .replace('\\', "/");
            let name = name.strip_suffix("/mod").unwrap_or(&name).to_string();
            if name == "main" || name == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file is text");
            found.insert(name, outside_tests(&text));
        }
    }
    found
}

/// The source without its `#[cfg(test)]` items: the tests module, and any other item the tests
/// alone compile, up to its closing brace at the start of a line.
fn outside_tests(text: &str) -> String {
    let mut kept = String::new();
    let mut skipping = false;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if skipping {
            if line.trim_end() == "}" {
                skipping = false;
            }
            continue;
        }
        if line.trim_start() == "#[cfg(test)]" {
            // A one-line item (a `use`, a `mod x;`) ends on its own line.
            if let Some(next) = lines.next() {
                skipping = !next.trim_end().ends_with(';');
            }
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

/// The modules a source names: `crate::a`, `crate::components::b`, `crate::components::{b, c}`.
fn named(text: &str, modules: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (start, _) in text.match_indices("crate::") {
        let rest = &text[start + "crate::".len()..];
        let word = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let first = word(rest);
        if first == "components" {
            let inner = &rest["components".len()..];
            if let Some(group) = inner.strip_prefix("::{") {
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    names.insert(format!("components/{}", word(part.trim())));
                }
            } else if let Some(component) = inner.strip_prefix("::") {
                names.insert(format!("components/{}", word(component)));
            }
        } else {
            names.insert(first);
        }
    }
    names.retain(|name| modules.contains_key(name));
    names
}

/// The strongly connected sets of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, node: &'a str) {
        let next = walk.index.len();
        walk.index.insert(node, next);
        walk.low.insert(node, next);
        walk.stack.push(node);
        for target in &walk.edges[node] {
            let target = target.as_str();
            if !walk.index.contains_key(target) {
                visit(walk, target);
                let low = walk.low[node].min(walk.low[target]);
                walk.low.insert(node, low);
            } else if walk.stack.contains(&target) {
                let low = walk.low[node].min(walk.index[target]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let mut set = BTreeSet::new();
            while let Some(top) = walk.stack.pop() {
                set.insert(top.to_string());
                if top == node {
                    break;
                }
            }
            if set.len() > 1 {
                walk.found.push(set);
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

#[test]
fn no_two_modules_of_the_web_crate_import_each_other_even_through_others() {
    let modules = modules();
    assert!(modules.len() > 30, "found {} modules", modules.len());
    let edges: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|(name, text)| {
            let mut targets = named(text, &modules);
            targets.remove(name);
            (name.clone(), targets)
        })
        .collect();
    let found = cycles(&edges);
    let described: Vec<String> = found
        .iter()
        .map(|set| {
            set.iter()
                .map(|name| {
                    let inside: Vec<&String> = edges[name].intersection(set).collect();
                    format!("{name} -> {inside:?}")
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect();
    assert!(found.is_empty(), "import cycles: {described:?}");
}

#[test]
fn the_cycle_finder_finds_a_cycle_of_three() {
    let edge = |from: &str, to: &[&str]| {
        (
            from.to_string(),
            to.iter()
                .map(|t| t.to_string())
                .collect::<BTreeSet<String>>(),
        )
    };
    let edges: BTreeMap<String, BTreeSet<String>> = [
        edge("state", &["url"]),
        edge("url", &["model"]),
        edge("model", &["state"]),
        edge("app", &["state"]),
    ]
    .into_iter()
    .collect();
    let expected: BTreeSet<String> = ["model", "state", "url"].map(String::from).into();
    assert_eq!(cycles(&edges), vec![expected]);
}
