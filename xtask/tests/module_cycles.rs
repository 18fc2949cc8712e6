//! The modules of each crate (the kernel language, the simulator, the page) import one another
//! without a cycle: a module can be read, tested and changed knowing only the modules below it
//! (ARCHITECTURE.md, "Invariants").
//!
//! The test reads every file of a crate's `src/` (a module is a file, `foo.rs` or `foo/mod.rs`) and takes as
//! an edge each module a file names outside its tests: a `crate::a::b` path goes to the deepest
//! module it names (`crate::kernel::interp::Launch` to `kernel/interp`, `crate::kernel::ast::Type`
//! to `kernel/ast`), a `super::` or `self::` path is resolved from the module it is written in, and
//! `use super::*` is an edge to the parent. Then it looks for a strongly connected set of more than
//! one module. Comments, string literals, `#[cfg(test)]` items and the files only tests compile
//! are left out: a test may build whatever it needs to check a module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module of the crate `crates/CRATE/src/` (`profile`, `kernel/interp/launch`), with the
/// source that the crate compiles outside its tests. The crate roots (`lib.rs`, `main.rs`) and
/// the files only tests compile are left out.
fn modules(krate: &str) -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates")
        .join(krate)
        .join("src");
    let mut found = BTreeMap::new();
    let mut test_only = BTreeSet::new();
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
            let name = module_name(path.strip_prefix(&root).expect("under src/"));
            let text = std::fs::read_to_string(&path).expect("a source file is text");
            let (kept, test_children) = outside_tests(&code_only(&text));
            for child in test_children {
                test_only.insert(join(&name, &child));
            }
            if name.is_empty() {
                continue;
            }
            found.insert(name, kept);
        }
    }
    found.retain(|name, _| !test_only.contains(name));
    found
}

/// The module a file holds, as its path under `src/` without `.rs` or `/mod.rs`; the crate
/// root is the empty name.
fn module_name(relative: &Path) -> String {
    let name = relative
        .with_extension("")
        .to_string_lossy()
        .replace('\\', "/");
    let name = name.strip_suffix("/mod").unwrap_or(&name).to_string();
    if name == "lib" || name == "main" || name == "mod" {
        String::new()
    } else {
        name
    }
}

/// The module `child` of the module `parent`.
fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_string()
    } else {
        format!("{parent}/{child}")
    }
}

/// The source with its comments and the contents of its string and character literals blanked,
/// so that a path or a brace in either is not read as code.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut kept = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
            kept.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && raw_string_at(&chars, at)
        {
            let hashes = chars[at + 1..].iter().take_while(|&&h| h == '#').count();
            at += 2 + hashes;
            while at < chars.len() {
                if chars[at] == '"' && chars[at + 1..].iter().take(hashes).all(|&h| h == '#') {
                    at += 1 + hashes;
                    break;
                }
                at += 1;
            }
            kept.push_str("\"\"");
        } else if c == '"' {
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            kept.push_str("\"\"");
        } else if c == '\'' && next == Some('\\') {
            at += 2;
            while at < chars.len() && chars[at] != '\'' {
                at += 1;
            }
            at += 1;
            kept.push_str("' '");
        } else if c == '\'' && chars.get(at + 2) == Some(&'\'') {
            at += 3;
            kept.push_str("' '");
        } else {
            // A lifetime (`'a`) or any other character is kept as it is.
            kept.push(c);
            at += 1;
        }
    }
    kept
}

/// Whether a raw string literal (`r"..."`, `r#"..."#`) starts at `at`, rather than an identifier
/// that ends in `r`.
fn raw_string_at(chars: &[char], at: usize) -> bool {
    if at > 0 && is_identifier_char(chars[at - 1]) {
        return false;
    }
    let hashes = chars[at + 1..].iter().take_while(|&&h| h == '#').count();
    chars.get(at + 1 + hashes) == Some(&'"')
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The code without its `#[cfg(test)]` items, and the names of the child modules declared as
/// test-only files (`#[cfg(test)] mod tests;`). An item ends at its first `;` outside braces,
/// or at the brace that closes its first one.
fn outside_tests(code: &str) -> (String, Vec<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut kept = String::new();
    let mut test_children = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find(MARK) {
        kept.push_str(&rest[..start]);
        let item = &rest[start + MARK.len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (offset, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = offset + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = offset + 1;
                    let words: Vec<&str> = item[..offset].split_whitespace().collect();
                    if let [.., "mod", name] = words.as_slice() {
                        test_children.push(name.to_string());
                    }
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    kept.push_str(rest);
    (kept, test_children)
}

/// The modules that `code`, the code of module `name`, names: each `crate::`, `super::` and
/// `self::` path, and each path of a `{...}` group, goes to the deepest module it names. A path
/// inside an inline `mod inner { ... }` resolves `super::` from that inline module.
fn named(name: &str, code: &str, modules: &BTreeMap<String, String>) -> BTreeSet<String> {
    let tokens = tokens(code);
    let file_module: Vec<String> = if name.is_empty() {
        Vec::new()
    } else {
        name.split('/').map(str::to_string).collect()
    };
    let mut names = BTreeSet::new();
    // The inline modules the walk is inside, with the brace depth each one opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut at = 0;
    while at < tokens.len() {
        let token = tokens[at].as_str();
        match token {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, opened)| *opened == depth) {
                    inline.pop();
                }
            }
            "mod" if tokens.get(at + 2).map(String::as_str) == Some("{") => {
                inline.push((tokens[at + 1].clone(), depth));
                depth += 1;
                at += 3;
                continue;
            }
            _ => {}
        }
        let starts_path = matches!(token, "crate" | "super" | "self")
            && tokens.get(at + 1).map(String::as_str) == Some("::")
            && (at == 0 || tokens[at - 1] != "::");
        if !starts_path {
            at += 1;
            continue;
        }
        let mut base: Vec<String> = file_module.clone();
        base.extend(inline.iter().map(|(inner, _)| inner.clone()));
        let mut cursor = at;
        match token {
            "crate" => {
                base.clear();
                cursor += 2;
            }
            "self" => cursor += 2,
            _ => {
                while tokens.get(cursor).map(String::as_str) == Some("super")
                    && tokens.get(cursor + 1).map(String::as_str) == Some("::")
                {
                    base.pop();
                    cursor += 2;
                }
            }
        }
        let mut paths = Vec::new();
        let end = read_tree(&tokens, cursor, base, &mut paths);
        for path in paths {
            if let Some(target) = deepest_module(&path, modules) {
                names.insert(target);
            }
        }
        at = end.max(at + 1);
    }
    names.remove(name);
    names
}

/// Splits code into identifiers, `::`, and single characters, leaving out white space.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c.is_whitespace() {
            at += 1;
        } else if is_identifier_char(c) {
            let start = at;
            while at < chars.len() && is_identifier_char(chars[at]) {
                at += 1;
            }
            found.push(chars[start..at].iter().collect());
        } else if c == ':' && chars.get(at + 1) == Some(&':') {
            found.push("::".to_string());
            at += 2;
        } else {
            found.push(c.to_string());
            at += 1;
        }
    }
    found
}

/// Reads the path (or `{...}` group of paths) that starts at token `at` below `prefix`, adds each
/// full path to `paths`, and returns the token after it.
fn read_tree(
    tokens: &[String],
    mut at: usize,
    prefix: Vec<String>,
    paths: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    loop {
        match tokens.get(at).map(String::as_str) {
            Some("{") => {
                at += 1;
                loop {
                    match tokens.get(at).map(String::as_str) {
                        None => return at,
                        Some("}") => return at + 1,
                        Some(",") => at += 1,
                        Some(_) => {
                            let before = at;
                            at = read_tree(tokens, at, path.clone(), paths);
                            // Skip what a path does not consume, such as `as name`.
                            while !matches!(
                                tokens.get(at).map(String::as_str),
                                None | Some(",") | Some("}")
                            ) {
                                at += 1;
                            }
                            if at == before {
                                at += 1;
                            }
                        }
                    }
                }
            }
            Some(word) if word == "*" || word.chars().all(is_identifier_char) => {
                if word != "*" && word != "self" {
                    path.push(word.to_string());
                }
                at += 1;
                if tokens.get(at).map(String::as_str) == Some("::") {
                    at += 1;
                    continue;
                }
                paths.push(path);
                return at;
            }
            _ => {
                paths.push(path);
                return at;
            }
        }
    }
}

/// The deepest module of `modules` that `path` names, if any; the crate root is none.
fn deepest_module(path: &[String], modules: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|length| path[..length].join("/"))
        .find(|candidate| modules.contains_key(candidate))
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

/// Every module's edges to the other modules it names.
fn edges(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    modules
        .iter()
        .map(|(name, code)| (name.clone(), named(name, code, modules)))
        .collect()
}

/// The import cycles among the modules of `crates/CRATE/src/`, each described by its edges.
fn described_cycles(krate: &str, at_least: usize) -> Vec<String> {
    let modules = modules(krate);
    assert!(
        modules.len() >= at_least,
        "found {} modules in {krate}",
        modules.len()
    );
    let edges = edges(&modules);
    cycles(&edges)
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
        .collect()
}

#[test]
fn no_two_modules_of_the_kernel_language_import_each_other_even_through_others() {
    let found = described_cycles("lang", 15);
    assert!(found.is_empty(), "import cycles: {found:#?}");
}

#[test]
fn no_two_modules_of_the_simulator_import_each_other_even_through_others() {
    let found = described_cycles("sim", 30);
    assert!(found.is_empty(), "import cycles: {found:#?}");
}

#[test]
fn no_two_modules_of_the_page_import_each_other_even_through_others() {
    let found = described_cycles("web", 40);
    assert!(found.is_empty(), "import cycles: {found:#?}");
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
        edge("device", &["transfer"]),
        edge("transfer", &["timing"]),
        edge("timing", &["device"]),
        edge("simulate", &["device"]),
    ]
    .into_iter()
    .collect();
    let expected: BTreeSet<String> = ["device", "timing", "transfer"].map(String::from).into();
    assert_eq!(cycles(&edges), vec![expected]);
}

/// A few modules with empty code, for the path reader's tests.
fn module_set(names: &[&str]) -> BTreeMap<String, String> {
    names
        .iter()
        .map(|name| (name.to_string(), String::new()))
        .collect()
}

#[test]
fn a_path_goes_to_the_deepest_module_it_names() {
    let modules = module_set(&["kernel", "kernel/ast", "kernel/interp", "profile"]);
    let code = code_only(
        "use crate::kernel::{ast::Type, interp::{Launch, Dim3}, Diagnostic};\n\
         fn f() { crate::profile::build(); }",
    );
    let expected: BTreeSet<String> = ["kernel", "kernel/ast", "kernel/interp", "profile"]
        .map(String::from)
        .into();
    assert_eq!(named("timing", &code, &modules), expected);
}

#[test]
fn super_paths_resolve_from_the_file_and_from_inline_modules() {
    let modules = module_set(&[
        "kernel",
        "kernel/ast",
        "kernel/interp",
        "kernel/interp/launch",
    ]);
    let glob = code_only("use super::*;\nuse super::super::ast::Scalar;");
    assert_eq!(
        named("kernel/interp/launch", &glob, &modules),
        ["kernel/ast", "kernel/interp"].map(String::from).into()
    );
    let inline = code_only("mod inner {\n use super::super::ast::Type;\n}\nuse self::inner::x;");
    assert_eq!(
        named("kernel/interp", &inline, &modules),
        ["kernel/ast"].map(String::from).into()
    );
}

#[test]
fn comments_strings_and_test_items_name_no_module() {
    let modules = module_set(&["device", "transfer"]);
    let source = "// crate::transfer::HostLink\n\
                  /* crate::transfer */\n\
                  const NOTE: &str = \"crate::transfer::HostLink\";\n\
                  const BRACE: char = '{';\n\
                  #[cfg(test)]\n\
                  mod tests {\n    use crate::transfer::HostLink;\n}\n";
    let (code, _) = outside_tests(&code_only(source));
    assert_eq!(named("device", &code, &modules), BTreeSet::new());
}

#[test]
fn a_test_only_file_is_found_by_its_declaration() {
    let (kept, test_children) = outside_tests(&code_only(
        "pub mod ast;\n#[cfg(test)]\nmod tests;\nfn kept() {}\n",
    ));
    assert_eq!(test_children, vec!["tests".to_string()]);
    assert!(kept.contains("fn kept"));
    assert!(!kept.contains("tests"));
}
