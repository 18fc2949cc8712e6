//! Mutations of the real lecture kernels (`www/kernels/*.cu`, read at test time): tokens deleted,
//! duplicated, swapped, numbers made extreme, hostile snippets inserted, bytes dropped, repeated or
//! scrambled, the text cut short. Each mutant is launched as one of its file's kernels with a
//! plausible launch (or, now and then, a random one).

use super::case::Case;
use super::grammar::{self, LaunchParts};
use proptest::prelude::*;
use proptest::sample::{select, Index};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A lecture file and the signatures of its kernels.
#[derive(Clone, Debug)]
pub struct Lecture {
    pub file: String,
    pub source: String,
    pub kernels: Vec<Signature>,
}

#[derive(Clone, Debug)]
pub struct Signature {
    pub name: String,
    /// Scalar parameters and whether each is a float.
    pub scalars: Vec<(String, bool)>,
    pub pointers: Vec<String>,
}

pub fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../www/kernels")
}

/// The lecture kernels, read once.
pub fn lectures() -> &'static [Lecture] {
    static LECTURES: OnceLock<Vec<Lecture>> = OnceLock::new();
    LECTURES.get_or_init(|| {
        let dir = kernels_dir();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read the lecture kernels in {}: {e}", dir.display()))
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "cu"))
            .collect();
        files.sort();
        let lectures: Vec<Lecture> = files
            .iter()
            .map(|path| {
                let source = std::fs::read_to_string(path)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
                Lecture {
                    file: path
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned(),
                    kernels: signatures(&source),
                    source,
                }
            })
            .collect();
        assert!(
            lectures.iter().any(|l| !l.kernels.is_empty()),
            "no __global__ kernel found in {}",
            dir.display()
        );
        lectures
    })
}

/// The `__global__ void NAME(PARAMS)` signatures of a source, read with string matching.
fn signatures(source: &str) -> Vec<Signature> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("__global__ void ") {
        rest = &rest[at + "__global__ void ".len()..];
        let Some(open) = rest.find('(') else { break };
        let Some(close) = rest.find(')') else { break };
        if close < open {
            continue;
        }
        let name = rest[..open].trim().to_string();
        let mut signature = Signature {
            name,
            scalars: Vec::new(),
            pointers: Vec::new(),
        };
        for param in rest[open + 1..close].split(',') {
            let param = param.trim();
            let Some(name) = param
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .filter(|n| !n.is_empty())
            else {
                continue;
            };
            if param.contains('*') {
                signature.pointers.push(name.to_string());
            } else {
                signature.scalars.push((
                    name.to_string(),
                    param.contains("float") || param.contains("double"),
                ));
            }
        }
        out.push(signature);
    }
    out
}

/// One change to a source.
#[derive(Clone, Debug)]
pub enum Mutation {
    DeleteToken(Index),
    DuplicateToken(Index),
    SwapTokens(Index, Index),
    InsertSnippet(Index, String),
    ExtremeNumber(Index, String),
    Truncate(Index),
    DeleteBytes(Index, usize),
    DuplicateBytes(Index, usize),
    InsertBytes(Index, Vec<u8>),
    FlipByte(Index, u8),
}

fn snippet() -> BoxedStrategy<String> {
    prop_oneof![
        3 => grammar::hostile_expr(),
        3 => grammar::hostile_stmt(),
        1 => grammar::hostile_prelude(),
        1 => select(vec![
            "{", "}", "(", ")", "[", "]", ";", ",", "?", ":", "#", "\\", "/*", "*/", "//", "\"",
            "'", "__syncthreads();", "return;", "break;", "continue;", "for (;;)", "while (1)",
            "else", "if (threadIdx.x & 1)", "*", "&", "->", ".", "...", "::", "##", "\u{feff}",
            "\u{0}", "\n#", "\n#if 1\n", "\n#endif\n", "\n#define TILE_WIDTH 0\n",
            "\n#define n (n + 1)\n", "extern", "__shared__", "__device__", "__global__", "int",
            "float4", "unsigned", "long long", "const", "volatile", "sizeof", "=", "+=", "<<=",
            "1e39f", "-9223372036854775807LL-1", "0", "-1",
        ])
        .prop_map(str::to_string),
    ]
    .boxed()
}

fn mutation() -> BoxedStrategy<Mutation> {
    let bytes = prop::collection::vec(
        prop_oneof![
            3 => any::<u8>(),
            1 => select(vec![0u8, b'\n', b'\r', 0x1b, 0x7f, 0xef, 0xbb, 0xbf, b'{', b'(', b'#']),
        ],
        1..8,
    );
    prop_oneof![
        3 => any::<Index>().prop_map(Mutation::DeleteToken),
        2 => any::<Index>().prop_map(Mutation::DuplicateToken),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapTokens(a, b)),
        3 => (any::<Index>(), snippet()).prop_map(|(at, s)| Mutation::InsertSnippet(at, s)),
        3 => (any::<Index>(), prop_oneof![
                grammar::extreme_int_literal(),
                grammar::extreme_float_literal(),
                select(vec!["0", "1", "-1", "33", "1024", "2048", "65536", "4294967296"])
                    .prop_map(str::to_string),
            ])
            .prop_map(|(at, n)| Mutation::ExtremeNumber(at, n)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        1 => (any::<Index>(), 1usize..40).prop_map(|(at, n)| Mutation::DeleteBytes(at, n)),
        1 => (any::<Index>(), 1usize..400).prop_map(|(at, n)| Mutation::DuplicateBytes(at, n)),
        1 => (any::<Index>(), bytes).prop_map(|(at, b)| Mutation::InsertBytes(at, b)),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Mutation::FlipByte(at, b)),
    ]
    .boxed()
}

/// Byte ranges of the source's tokens, whitespace and comments left out: identifiers, numbers
/// (with suffixes and exponents) and single punctuation characters.
fn tokens(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
        } else if b.is_ascii_digit() {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'.'
                    || (matches!(bytes[i], b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
        } else {
            i += 1;
            while i < bytes.len() && !text.is_char_boundary(i) {
                i += 1;
            }
        }
        out.push((start, i));
    }
    out
}

/// The largest char boundary at or before `at`.
fn boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

pub fn apply(source: &str, mutation: &Mutation) -> String {
    let toks = tokens(source);
    let token = |at: &Index| (!toks.is_empty()).then(|| toks[at.index(toks.len())]);
    let byte_at = |at: &Index| at.index(source.len() + 1);
    let mut text = source.to_string();
    match mutation {
        Mutation::DeleteToken(at) => {
            if let Some((s, e)) = token(at) {
                text.replace_range(s..e, "");
            }
        }
        Mutation::DuplicateToken(at) => {
            if let Some((s, e)) = token(at) {
                text.insert_str(e, &format!(" {}", &source[s..e]));
            }
        }
        Mutation::SwapTokens(a, b) => {
            if let (Some(a), Some(b)) = (token(a), token(b)) {
                let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                if first.1 <= second.0 {
                    text = format!(
                        "{}{}{}{}{}",
                        &source[..first.0],
                        &source[second.0..second.1],
                        &source[first.1..second.0],
                        &source[first.0..first.1],
                        &source[second.1..]
                    );
                }
            }
        }
        Mutation::InsertSnippet(at, snippet) => {
            let at = token(at).map_or(0, |(s, _)| s);
            text.insert_str(at, &format!(" {snippet} "));
        }
        Mutation::ExtremeNumber(at, number) => {
            let numbers: Vec<(usize, usize)> = toks
                .iter()
                .copied()
                .filter(|&(s, _)| source.as_bytes()[s].is_ascii_digit())
                .collect();
            if !numbers.is_empty() {
                let (s, e) = numbers[at.index(numbers.len())];
                text.replace_range(s..e, number);
            }
        }
        Mutation::Truncate(at) => text.truncate(boundary(source, byte_at(at))),
        Mutation::DeleteBytes(at, n) | Mutation::DuplicateBytes(at, n) => {
            let mut bytes = source.as_bytes().to_vec();
            let s = byte_at(at).min(bytes.len());
            let e = (s + n).min(bytes.len());
            if matches!(mutation, Mutation::DeleteBytes(..)) {
                bytes.drain(s..e);
            } else {
                let copy = bytes[s..e].to_vec();
                bytes.splice(e..e, copy);
            }
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        Mutation::InsertBytes(at, inserted) => {
            let mut bytes = source.as_bytes().to_vec();
            let s = byte_at(at).min(bytes.len());
            bytes.splice(s..s, inserted.iter().copied());
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        Mutation::FlipByte(at, value) => {
            let mut bytes = source.as_bytes().to_vec();
            if !bytes.is_empty() {
                let s = byte_at(at).min(bytes.len() - 1);
                bytes[s] ^= value | 1;
            }
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    text
}

/// A launch a lecture's page could make: small grids, warp-multiple blocks, moderate sizes.
fn plausible_launch() -> BoxedStrategy<LaunchParts> {
    (
        prop_oneof![
            3 => (1u32..5).prop_map(|x| [x, 1, 1]),
            2 => (1u32..4, 1u32..4).prop_map(|(x, y)| [x, y, 1]),
            1 => select(vec![[64u32, 64, 1], [1024, 1, 1], [65_535, 1, 1]]),
        ],
        select(vec![
            [32u32, 1, 1],
            [32, 8, 1],
            [16, 16, 1],
            [8, 8, 1],
            [32, 32, 1],
            [256, 1, 1],
            [1024, 1, 1],
            [64, 1, 1],
        ]),
        prop_oneof![4 => Just(0u32), 1 => select(vec![128u32, 1024, 4096, 49_152])],
        grammar::device(),
        grammar::step_budget(),
        prop_oneof![
            4 => Just(Vec::new()),
            1 => prop::collection::vec(
                (select(vec!["TILE_WIDTH", "PAD"]), select(vec!["0", "1", "8", "16", "32", "33"]))
                    .prop_map(|(n, v)| (n.to_string(), v.to_string())),
                1..3,
            ),
            1 => prop::collection::vec(grammar::define(), 1..3),
        ],
    )
        .prop_map(
            |(grid, block, dyn_smem, device, step_budget, defines)| LaunchParts {
                grid,
                block,
                dyn_smem,
                regs: 0,
                device,
                all_blocks: false,
                step_budget,
                defines,
            },
        )
        .boxed()
}

/// A lecture kernel with up to a handful of mutations, launched as one of its kernels.
pub fn mutated_lecture_case() -> BoxedStrategy<Case> {
    let count = lectures().len();
    (0..count)
        .prop_flat_map(|file| {
            let lecture = &lectures()[file];
            let kernels = lecture.kernels.len().max(1);
            (Just(file), 0..kernels)
        })
        .prop_flat_map(|(file, kernel)| {
            let lecture = &lectures()[file];
            let signature = lecture.kernels.get(kernel).cloned().unwrap_or(Signature {
                name: "k".to_string(),
                scalars: Vec::new(),
                pointers: Vec::new(),
            });
            let scalars: Vec<(String, bool)> = signature.scalars.clone();
            let plausible_args = prop::collection::vec(
                prop_oneof![
                    6 => select(vec![0i64, 1, 2, 3, 7, 16, 17, 32, 33, 64, 100, 256, 1024]),
                    1 => select(vec![-1i64, 2048, 1 << 20, i64::MAX, i64::MIN]),
                ],
                scalars.len(),
            )
            .prop_map(move |values| {
                scalars
                    .iter()
                    .zip(values)
                    .map(|((name, is_float), v)| {
                        let value = if *is_float {
                            memplay_sim::kernel::Value::Float(v as f64)
                        } else {
                            memplay_sim::kernel::Value::Int(v)
                        };
                        (name.clone(), value)
                    })
                    .collect::<Vec<_>>()
            });
            let pointers = signature.pointers.clone();
            let plausible_buffers = prop::collection::vec(
                prop_oneof![
                    8 => select(vec![1u64 << 12, 1 << 16, 1 << 20, 1 << 22, 16 << 20]),
                    1 => grammar::buffer_bytes(),
                ],
                pointers.len(),
            )
            .prop_map(move |sizes| pointers.iter().cloned().zip(sizes).collect::<Vec<_>>());
            let launch_and_args = prop_oneof![
                5 => (plausible_launch(), plausible_args, plausible_buffers),
                1 => (
                    grammar::launch_parts(),
                    grammar::args_and_buffers(signature.scalars.clone(), signature.pointers.clone())
                ).prop_map(|(launch, (args, buffers))| (launch, args, buffers)),
            ];
            (
                Just(file),
                Just(signature.name),
                launch_and_args,
                prop::collection::vec(mutation(), 0..5),
            )
        })
        .prop_map(|(file, kernel, (launch, args, buffers), mutations)| {
            let mut source = lectures()[file].source.clone();
            for mutation in &mutations {
                source = apply(&source, mutation);
            }
            grammar::assemble(source, kernel, launch, args, buffers)
        })
        .boxed()
}
