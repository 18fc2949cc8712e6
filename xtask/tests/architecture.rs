//! ARCHITECTURE.md names only what exists: every path and every Rust item it writes in backticks
//! is looked up in the repository, so that the document cannot drift from the code unnoticed.
//!
//! `cargo xtask test` runs this file (it runs `cargo test --workspace`, and xtask is a member).
//!
//! Each backticked token of the document outside fenced code blocks is sorted by these rules, in
//! this order:
//!
//! 1. **Code snippets are skipped**: a token with any character other than ASCII letters, digits,
//!    `_`, `:`, `/`, `.` and `-` (a space, an operator, `=`, a quote, a bracket, `*`, `#`, `!`,
//!    `&`, `,`), or one that starts with a digit (a number, a version) or a `.`, or that holds
//!    `...`, is text about code, not a name: `row < n`, `bank_map(&BankMapProps)`,
//!    `opt-level = "z"`, `#lesson=`, `www/kernels/*.cu`, `1e-9`.
//! 2. **Paths must exist**: a token with a `/`, or ending in a file extension this repository uses
//!    (`.rs`, `.md`, `.toml`, `.json`, `.jsonl`, `.cu`, `.txt`, `.js`, `.html`, `.css`, `.svg`,
//!    `.lock`), is a file or folder. It must exist relative to the repository's root or, for a
//!    path inside a crate's sources such as `kernel/interp/loops.rs`, under some `crates/*/src/`;
//!    a bare file name (`h100.json`) must be the name of some file in the repository.
//! 3. **Other dotted tokens are skipped**: a field access or a metric (`threadIdx.x`,
//!    `dram__bytes.sum`).
//! 4. **Hyphenated tokens are packages, flags, HTML attributes, URL keys or CSS classes**: a token
//!    that starts with `memplay-` must be the name of a package of the workspace; the others are
//!    skipped (`lesson-url`, `data-testid`, `--check`).
//! 5. **Double underscores are CUDA's or Nsight Compute's**: `__syncthreads`,
//!    `smsp__inst_executed` are skipped.
//! 6. **Everything else is a Rust item or module path** (`Machine`, `move_unit`,
//!    `simulate::BlockSink`, `kernel::interp::sink`, `memplay_sim::kernel::ir`). A first segment
//!    that names a crate of the workspace (`memplay_sim`, `xtask`) is dropped (a crate's name
//!    alone names that crate), and a path into `std`,
//!    `core` or `alloc` is skipped. Every segment before the last must be a module (a file
//!    `NAME.rs`, a folder `NAME/`, or an inline `mod NAME`) when it starts in lower case, or a
//!    type (`struct`, `enum`, `trait`, `type`, `union`) when it starts in upper case. The last
//!    segment must be defined: `fn`, `struct`, `enum`, `trait`, `mod`, `const`, `static`, `type`,
//!    `union` or `macro_rules!` followed by the name, or a module file or folder of that name;
//!    and where the segment before it is a type, also a field (`NAME:` opening a line, after an
//!    optional visibility) or an enum variant (`NAME` opening a line, alone or followed by `,`,
//!    `(` or ` {`). Definitions are read from the sources of `crates/*/src`, `xtask/src` and
//!    `tests/*/src`, found by the name alone: the check says a name exists, not that it lives in
//!    the module the path names (re-exports make both true).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The file extensions that make a token a path (rule 2).
const FILE_EXTENSIONS: [&str; 12] = [
    ".rs", ".md", ".toml", ".json", ".jsonl", ".cu", ".txt", ".js", ".html", ".css", ".svg",
    ".lock",
];

/// The keywords after which a Rust source defines a name (rule 6).
const DEFINING_KEYWORDS: [&str; 10] = [
    "fn",
    "struct",
    "enum",
    "trait",
    "mod",
    "const",
    "static",
    "type",
    "union",
    "macro_rules",
];

/// The keywords that define a type, which a path's upper-case segment must name.
const TYPE_KEYWORDS: [&str; 5] = ["struct", "enum", "trait", "type", "union"];

/// The crates outside the workspace whose paths the document may name without a check.
const EXTERNAL_CRATES: [&str; 3] = ["std", "core", "alloc"];

/// What the repository holds that a document may name: its files and the names its Rust sources
/// define.
#[derive(Debug, Default)]
struct Repository {
    root: PathBuf,
    /// Every file's name, for bare file names.
    file_names: BTreeSet<String>,
    /// The `src` folders of the crates, under which a crate-relative path may lie.
    source_roots: Vec<PathBuf>,
    /// Names defined by an item keyword, and module files and folders.
    items: BTreeSet<String>,
    /// Names defined as a type (`struct`, `enum`, `trait`, `type`, `union`).
    types: BTreeSet<String>,
    /// Module names: files `NAME.rs`, folders, and inline `mod NAME`.
    modules: BTreeSet<String>,
    /// Names that open a line as a field or an enum variant would.
    members: BTreeSet<String>,
    /// The package names of the workspace.
    packages: BTreeSet<String>,
    /// The crate names of the workspace's packages (`memplay_sim`).
    crate_names: BTreeSet<String>,
}

/// Why a backticked token does not name something that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Missing {
    /// A path (rule 2) that is no file or folder.
    Path(String),
    /// A `memplay-` package (rule 4) that the workspace does not have.
    Package(String),
    /// A Rust path (rule 6) whose segment is not defined as its place in the path requires.
    Item { token: String, segment: String },
}

/// How a token is read, by the rules of the module's documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TokenKind {
    Skipped,
    Path,
    Package,
    RustPath,
}

fn classify(token: &str) -> TokenKind {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '/' | '.' | '-');
    let starts_badly = token
        .chars()
        .next()
        .is_none_or(|c| c.is_ascii_digit() || c == '.');
    if !token.chars().all(allowed) || starts_badly || token.contains("...") {
        return TokenKind::Skipped;
    }
    if token.contains('/') || FILE_EXTENSIONS.iter().any(|ext| token.ends_with(ext)) {
        return TokenKind::Path;
    }
    if token.contains('.') {
        return TokenKind::Skipped;
    }
    if token.contains('-') {
        return if token.starts_with("memplay-") {
            TokenKind::Package
        } else {
            TokenKind::Skipped
        };
    }
    if token.contains("__") {
        return TokenKind::Skipped;
    }
    TokenKind::RustPath
}

/// The backticked tokens of a Markdown text, fenced code blocks left out.
fn backticked_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut in_fence = false;
    let mut paragraph = String::new();
    let flush = |paragraph: &mut String, tokens: &mut Vec<String>| {
        // Inline code may wrap over lines within a paragraph; its pieces alternate with text.
        for (i, piece) in paragraph.split('`').enumerate() {
            if i % 2 == 1 {
                tokens.push(piece.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        paragraph.clear();
    };
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            flush(&mut paragraph, &mut tokens);
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut paragraph, &mut tokens);
        } else {
            paragraph.push_str(line);
            paragraph.push('\n');
        }
    }
    flush(&mut paragraph, &mut tokens);
    tokens
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Repository {
    fn read(root: &Path) -> Repository {
        let mut repository = Repository {
            root: root.to_path_buf(),
            ..Repository::default()
        };
        repository.walk_files(root);
        let mut source_folders = Vec::new();
        for parent in ["crates", "tests"] {
            if let Ok(entries) = fs::read_dir(root.join(parent)) {
                for entry in entries.flatten() {
                    let src = entry.path().join("src");
                    if src.is_dir() {
                        source_folders.push(src);
                    }
                    repository.read_manifest(&entry.path().join("Cargo.toml"));
                }
            }
        }
        repository.read_manifest(&root.join("xtask/Cargo.toml"));
        source_folders.push(root.join("xtask/src"));
        for src in &source_folders {
            repository.read_sources(src);
        }
        repository.source_roots = source_folders
            .into_iter()
            .filter(|src| src.starts_with(root.join("crates")))
            .collect();
        repository
    }

    fn walk_files(&mut self, folder: &Path) {
        let Ok(entries) = fs::read_dir(folder) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                // Build outputs and git's own files are not the repository's.
                if !matches!(name.as_str(), "target" | ".git" | "dist" | "node_modules") {
                    self.walk_files(&path);
                }
            } else {
                self.file_names.insert(name);
            }
        }
    }

    fn read_manifest(&mut self, manifest: &Path) {
        let Ok(text) = fs::read_to_string(manifest) else {
            return;
        };
        let name = text
            .lines()
            .filter_map(|line| line.trim().strip_prefix("name"))
            .filter_map(|rest| rest.trim().strip_prefix('='))
            .map(|value| value.trim().trim_matches('"').to_string())
            .next();
        if let Some(name) = name {
            self.crate_names.insert(name.replace('-', "_"));
            self.packages.insert(name);
        }
    }

    fn read_sources(&mut self, folder: &Path) {
        let Ok(entries) = fs::read_dir(folder) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                self.modules.insert(name.clone());
                self.items.insert(name);
                self.read_sources(&path);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                self.modules.insert(stem.to_string());
                self.items.insert(stem.to_string());
                if let Ok(text) = fs::read_to_string(&path) {
                    self.read_definitions(&text);
                }
            }
        }
    }

    /// Records the names a Rust source defines, and those that open a line as a field or a
    /// variant would.
    fn read_definitions(&mut self, text: &str) {
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            let words: Vec<&str> = code
                .split(|c: char| !is_identifier_char(c))
                .filter(|word| !word.is_empty())
                .collect();
            for pair in words.windows(2) {
                if DEFINING_KEYWORDS.contains(&pair[0]) {
                    self.items.insert(pair[1].to_string());
                    if TYPE_KEYWORDS.contains(&pair[0]) {
                        self.types.insert(pair[1].to_string());
                    }
                    if pair[0] == "mod" {
                        self.modules.insert(pair[1].to_string());
                    }
                }
            }
            if let Some(member) = opening_member(code) {
                self.members.insert(member.to_string());
            }
        }
    }

    /// What is missing of the names a document writes in backticks.
    fn missing_in(&self, text: &str) -> Vec<Missing> {
        let mut missing = Vec::new();
        for token in backticked_tokens(text) {
            let found = match classify(&token) {
                TokenKind::Skipped => Ok(()),
                TokenKind::Path => self.check_path(&token),
                TokenKind::Package => self.check_package(&token),
                TokenKind::RustPath => self.check_rust_path(&token),
            };
            if let Err(why) = found {
                if !missing.contains(&why) {
                    missing.push(why);
                }
            }
        }
        missing
    }

    fn check_path(&self, token: &str) -> Result<(), Missing> {
        let relative = token.trim_end_matches('/');
        let exists = if relative.contains('/') {
            self.root.join(relative).exists()
                || self
                    .source_roots
                    .iter()
                    .any(|src| src.join(relative).exists())
        } else {
            self.file_names.contains(relative) || self.root.join(relative).exists()
        };
        if exists {
            Ok(())
        } else {
            Err(Missing::Path(token.to_string()))
        }
    }

    fn check_package(&self, token: &str) -> Result<(), Missing> {
        if self.packages.contains(token) {
            Ok(())
        } else {
            Err(Missing::Package(token.to_string()))
        }
    }

    fn check_rust_path(&self, token: &str) -> Result<(), Missing> {
        let mut segments: Vec<&str> = token.split("::").collect();
        if segments.iter().any(|segment| segment.is_empty()) {
            return Err(Missing::Item {
                token: token.to_string(),
                segment: String::new(),
            });
        }
        if EXTERNAL_CRATES.contains(&segments[0]) {
            return Ok(());
        }
        if self.crate_names.contains(segments[0]) {
            if segments.len() == 1 {
                return Ok(());
            }
            segments.remove(0);
        }
        let missing = |segment: &str| Missing::Item {
            token: token.to_string(),
            segment: segment.to_string(),
        };
        let (last, leading) = segments.split_last().expect("a token has a segment");
        for segment in leading {
            let upper = segment.starts_with(|c: char| c.is_ascii_uppercase());
            let known = if upper {
                self.types.contains(*segment)
            } else {
                self.modules.contains(*segment)
            };
            if !known {
                return Err(missing(segment));
            }
        }
        let after_type = leading
            .last()
            .is_some_and(|segment| segment.starts_with(|c: char| c.is_ascii_uppercase()));
        if self.items.contains(*last) || (after_type && self.members.contains(*last)) {
            Ok(())
        } else {
            Err(missing(last))
        }
    }
}

/// The name that opens a line of code as a field (`pub(super) quiet: bool,`) or an enum variant
/// (`WarpRan,`, `Lead(usize),`, `Item { .. }`) would, after an optional visibility.
fn opening_member(code: &str) -> Option<&str> {
    let mut rest = code.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let end = rest
        .find(|c: char| !is_identifier_char(c))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let is_field = after.starts_with(':') && !after.starts_with("::");
    let is_variant = after.trim().is_empty()
        || after.starts_with(',')
        || after.starts_with('(')
        || after.starts_with(" {");
    (is_field || is_variant).then_some(name)
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lies in the repository's root")
        .to_path_buf()
}

#[test]
fn every_path_and_item_architecture_md_names_exists() {
    let root = repository_root();
    let text = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md reads");
    let missing = Repository::read(&root).missing_in(&text);
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what does not exist: {missing:#?}"
    );
}

/// The lines of the repository's document `name`.
fn document_lines(name: &str) -> usize {
    fs::read_to_string(repository_root().join(name))
        .unwrap_or_else(|error| panic!("{name} reads: {error}"))
        .lines()
        .count()
}

#[test]
fn architecture_md_is_at_most_400_lines() {
    let lines = document_lines("ARCHITECTURE.md");
    assert!(lines <= 400, "{lines} lines");
}

#[test]
fn benchmarks_md_is_at_most_400_lines() {
    let lines = document_lines("BENCHMARKS.md");
    assert!(lines <= 400, "{lines} lines");
}

#[test]
fn made_up_names_and_paths_are_reported() {
    let repository = Repository::read(&repository_root());
    let text = "The sink is `simulate::NoSuchSink`, kept in `crates/sim/src/no_such_file.rs` \
                and `no_such_module::Machine`, built by `memplay-nowhere`, with `no_such_fn`.";
    assert_eq!(
        repository.missing_in(text),
        vec![
            Missing::Item {
                token: "simulate::NoSuchSink".to_string(),
                segment: "NoSuchSink".to_string(),
            },
            Missing::Path("crates/sim/src/no_such_file.rs".to_string()),
            Missing::Item {
                token: "no_such_module::Machine".to_string(),
                segment: "no_such_module".to_string(),
            },
            Missing::Package("memplay-nowhere".to_string()),
            Missing::Item {
                token: "no_such_fn".to_string(),
                segment: "no_such_fn".to_string(),
            },
        ]
    );
}

#[test]
fn names_that_exist_and_snippets_pass() {
    let repository = Repository::read(&repository_root());
    let text = "`simulate::BlockSink`, `kernel::interp::sink`, `memplay_sim::kernel::ir`, \
                `Machine`, `move_unit`, `RepeatNeed::WarpRan`, `kernel/interp/loops.rs`, \
                `crates/sim/tests/snapshot.rs`, `h100.json`, `www/kernels/`, `memplay-lang`, \
                `row < n`, `opt-level = \"z\"`, `threadIdx.x`, `lesson-url`, `__syncthreads`, \
                `std::rc::Rc`, `1e-9`.\n\n```\nNotAName\n```\n";
    assert_eq!(repository.missing_in(text), Vec::new());
}

#[test]
fn inline_code_wrapped_over_two_lines_is_one_token() {
    assert_eq!(
        backticked_tokens("a `kernel::\ninterp` b\n\n`x`"),
        vec!["kernel:: interp".to_string(), "x".to_string()]
    );
}

#[test]
fn a_field_and_a_variant_open_their_lines_but_a_call_does_not() {
    assert_eq!(opening_member("    pub(super) quiet: bool,"), Some("quiet"));
    assert_eq!(opening_member("    WarpRan,"), Some("WarpRan"));
    assert_eq!(opening_member("    Lead(usize),"), Some("Lead"));
    assert_eq!(opening_member("    let x = f(y);"), None);
    assert_eq!(opening_member("    memplay_sim::simulate(&input)"), None);
}
