//! Where each variable of the kernel lives, who sees it, how long it lives and how fast it is.
//!
//! The tables of the lecture CUDA Memories (CS 193G, lecture 4: "CUDA Variable Type Qualifiers",
//! "CUDA Variable Type Performance", "CUDA Variable Type Scale"), filled in for the kernel on the
//! page, edited or not:
//! `memplay_sim::memory_spaces` lists its variables in the simulation worker, with the launch they
//! belong to, so the counts of threads here are the launch's. One row per variable; choosing a row
//! (its name is a button, so a click, Enter and Space all work) marks the row and explains that
//! variable in one sentence, read out by screen readers as it changes. A kernel that does not
//! compile shows the simulator's one-line error instead of a table.
//!
//! The row chosen is this view's own state, like a focus: it is not a setting of the launch and
//! not part of the page's link, so a lesson places this view with its data props alone.
//!
//! `memory_spaces_statements` is every sentence the view can show for its props (the explanation
//! of every row, as each is shown when chosen); the view writes its words with the same functions.

use crate::format::format_number;
#[cfg(test)]
use crate::statements::Statement;
use memplay_sim::kernel::Diagnostic;
use memplay_sim::memory_spaces::{Declaration, DeclarationKind, MemorySpace, Scope};
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct MemorySpacesProps {
    /// The kernel whose variables these are.
    pub kernel: String,
    /// The variables, or why the kernel does not compile; `None` before the worker's first answer.
    pub declarations: Option<Result<Vec<Declaration>, Diagnostic>>,
    /// Threads in one block of the launch.
    pub threads_per_block: u64,
    /// Blocks in the launch's grid.
    pub blocks: u64,
}

/// The longest name shown whole: a kernel may name a variable with hundreds of kilobytes of
/// letters, which the table and its sentence show cut, as the simulator's messages are.
pub const MAX_NAME_CHARS: usize = 48;

/// A variable's name as the page shows it: whole, or its start and an ellipsis.
pub fn shown_name(name: &str) -> String {
    match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_string(),
    }
}

/// The space as a word for the page's tests and stylesheet (`data-space`, a class).
pub fn space_key(space: MemorySpace) -> &'static str {
    match space {
        MemorySpace::Registers => "registers",
        MemorySpace::RegistersOrLocal => "registers-or-local",
        MemorySpace::Local => "local",
        MemorySpace::Shared => "shared",
        MemorySpace::Global => "global",
        MemorySpace::Constant => "constant",
        MemorySpace::Parameter => "parameter",
    }
}

/// A count of threads or blocks with its noun, in the singular for one.
fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", format_number(n as f64))
    }
}

/// Who sees the variable, with the launch's numbers (the lecture CUDA Memories, "CUDA Variable
/// Type Scale").
pub fn who_sees(declaration: &Declaration, threads_per_block: u64, blocks: u64) -> String {
    let grid_threads = threads_per_block.saturating_mul(blocks);
    match declaration.scope {
        Scope::Thread => format!(
            "only its own thread: {} copies, one per thread",
            format_number(grid_threads as f64)
        ),
        Scope::Block => format!(
            "the {} of its block: {}, one per block",
            count(threads_per_block, "thread", "threads"),
            count(blocks, "copy", "copies")
        ),
        Scope::Grid => format!(
            "every thread of the grid ({}): one copy",
            count(grid_threads, "thread", "threads")
        ),
        Scope::GridAndHost => format!(
            "every thread of the grid ({}) and the host: one copy",
            count(grid_threads, "thread", "threads")
        ),
    }
}

/// How long the variable lives, in words.
fn lives(declaration: &Declaration) -> &'static str {
    match declaration.kind {
        DeclarationKind::PointerParameter => {
            "lives from the host's cudaMalloc to its cudaFree, across launches"
        }
        DeclarationKind::ScalarParameter => "lives as long as the launch",
        DeclarationKind::Device | DeclarationKind::Constant => {
            "lives as long as the application, across launches"
        }
        DeclarationKind::Shared | DeclarationKind::DynamicShared => "lives as long as the block",
        DeclarationKind::AutomaticScalar
        | DeclarationKind::AutomaticPointer
        | DeclarationKind::AutomaticArray => "lives as long as the thread",
    }
}

/// What is particular to this kind of declaration, as one more sentence.
fn remark(declaration: &Declaration) -> &'static str {
    match (declaration.kind, declaration.space) {
        (DeclarationKind::PointerParameter, _) => {
            "The pointer itself is a parameter, in constant memory; the data it points to is the \
             host's cudaMalloc'ed global memory."
        }
        (DeclarationKind::ScalarParameter, _) => {
            "The host passes its value at the launch, and every thread reads the same value."
        }
        (DeclarationKind::AutomaticScalar, _) => {
            "The compiler spills it to local memory only if the registers run out."
        }
        (DeclarationKind::AutomaticPointer, _) => {
            "The pointer is in a register; what it points to is wherever its address came from \
             (the lecture CUDA Memories, \"About Pointers\")."
        }
        (DeclarationKind::AutomaticArray, MemorySpace::Local) => {
            "An index is computed at run time, and registers cannot be indexed, so it is in local \
             memory (the lecture Overview of Memory Spaces, \"Local Memory\")."
        }
        (DeclarationKind::AutomaticArray, _) => {
            "Every index is known at compile time, so nvcc can keep it in registers; a large one \
             may still go to local memory (the lecture Overview of Memory Spaces, \
             \"Local Memory\")."
        }
        (DeclarationKind::Shared, _) => {
            "Its threads share it: __syncthreads() orders their writes and reads."
        }
        (DeclarationKind::DynamicShared, _) => {
            "Its size is the launch's third parameter, the dynamic shared memory per block."
        }
        (DeclarationKind::Device, _) => {
            "The host reaches it with cudaMemcpyToSymbol and cudaMemcpyFromSymbol."
        }
        (DeclarationKind::Constant, _) => {
            "It is read-only in the kernel; the host writes it with cudaMemcpyToSymbol."
        }
    }
}

/// The sentence that explains one variable, as the lecture would say it.
pub fn explanation(declaration: &Declaration, threads_per_block: u64, blocks: u64) -> String {
    let space = match declaration.kind {
        DeclarationKind::PointerParameter => "points to global memory".to_string(),
        _ => declaration.space.label().to_string(),
    };
    format!(
        "{}: {space}, seen by {}, {}; {}. {} See the lecture CUDA Memories.",
        shown_name(&declaration.name),
        who_sees(declaration, threads_per_block, blocks),
        lives(declaration),
        declaration.space.speed(),
        remark(declaration)
    )
}

/// The part of the page these statements belong to.
#[cfg(test)]
const VIEW: &str = "memory-spaces";

/// The card's heading, around the kernel's name (which the page sets as code).
const TITLE: (&str, &str) = ("Memory spaces: where each variable of ", " lives");

/// The card's one line on the spaces, above the table.
const HELP: &str = "Registers and shared memory are on chip and fast; local and global memory are \
                    off-chip DRAM, hundreds of cycles away; constant memory is cached and \
                    broadcast (the lecture CUDA Memories).";

/// What the card says before the worker's first answer.
const PENDING: &str = "Listing the kernel's variables…";

/// What the card says while no row is chosen.
const CHOOSE: &str = "Choose a variable to see where it lives, who sees it, how long and how fast.";

/// The table's caption, read by screen readers.
fn caption(kernel: &str) -> String {
    format!(
        "The variables of {kernel}: memory space, scope, lifetime and speed. Choose a name to \
         explain it."
    )
}

/// The table's column headings.
const COLUMNS: [&str; 7] = [
    "variable",
    "declared at",
    "type",
    "memory space",
    "scope",
    "lifetime",
    "speed",
];

/// One row's cells, in the order of `COLUMNS`.
fn row_cells(declaration: &Declaration) -> [String; 7] {
    let space = if declaration.kind == DeclarationKind::PointerParameter {
        format!("{} (pointed to)", declaration.space.label())
    } else {
        declaration.space.label().to_string()
    };
    [
        shown_name(&declaration.name),
        declaration.span.to_string(),
        declaration.type_text.clone(),
        space,
        declaration.scope.label().to_string(),
        declaration.lifetime.label().to_string(),
        declaration.space.speed().to_string(),
    ]
}

/// Every sentence the card can show for `props`: its heading and help line; then the pending
/// line, the kernel's error, or the table (caption, headings, each row as its cells joined by
/// " | "), the line shown while no row is chosen and each row's explanation.
#[cfg(test)]
pub fn memory_spaces_statements(props: &MemorySpacesProps) -> Vec<Statement> {
    let mut statements = vec![
        Statement::words(VIEW, format!("{}{}{}", TITLE.0, props.kernel, TITLE.1)),
        Statement::words(VIEW, HELP),
    ];
    match &props.declarations {
        None => statements.push(Statement::words(VIEW, PENDING)),
        Some(Err(error)) => statements.push(Statement::words(VIEW, error.to_string())),
        Some(Ok(declarations)) => {
            statements.push(Statement::words(VIEW, caption(&props.kernel)));
            statements.push(Statement::words(VIEW, COLUMNS.join(" | ")));
            statements.extend(
                declarations
                    .iter()
                    .map(|d| Statement::words(VIEW, row_cells(d).join(" | "))),
            );
            statements.push(Statement::words(VIEW, CHOOSE));
            statements.extend(declarations.iter().map(|d| {
                Statement::words(VIEW, explanation(d, props.threads_per_block, props.blocks))
            }));
        }
    }
    statements
}

/// The key that keeps a row chosen while the same variable is listed: its name and place.
fn row_key(declaration: &Declaration) -> String {
    format!("{}@{}", declaration.name, declaration.span)
}

#[function_component(MemorySpaces)]
pub fn memory_spaces(props: &MemorySpacesProps) -> Html {
    let chosen = use_state(|| None::<String>);
    let body = match &props.declarations {
        None => html! { <p class="pending">{ PENDING }</p> },
        Some(Err(error)) => html! {
            <p class="error" data-testid="memory-spaces-error">{ error.to_string() }</p>
        },
        Some(Ok(declarations)) => {
            let selected = declarations
                .iter()
                .find(|d| chosen.as_deref() == Some(row_key(d).as_str()));
            let explained = match selected {
                Some(d) => explanation(d, props.threads_per_block, props.blocks),
                None => CHOOSE.to_string(),
            };
            html! {
                <>
                    <div class="memory-scroll scroll-edge" tabindex="0" role="region"
                         aria-label="Variables and their memory spaces">
                        <table class="memory-table">
                            <caption class="sr-only">{ caption(&props.kernel) }</caption>
                            <thead>
                                <tr>
                                    { for COLUMNS.iter().map(|column| html! {
                                        <th scope="col">{ *column }</th>
                                    }) }
                                </tr>
                            </thead>
                            <tbody>
                                { for declarations.iter().map(|d| {
                                    let key = row_key(d);
                                    let is_chosen = chosen.as_deref() == Some(key.as_str());
                                    let onclick = {
                                        let chosen = chosen.clone();
                                        let key = key.clone();
                                        Callback::from(move |_: MouseEvent| {
                                            // Choosing the chosen row again clears the choice.
                                            let next = (chosen.as_deref() != Some(key.as_str()))
                                                .then(|| key.clone());
                                            chosen.set(next);
                                        })
                                    };
                                    let [name, span, type_text, space, scope, lifetime, speed] =
                                        row_cells(d);
                                    html! {
                                        <tr key={key.clone()}
                                            class={classes!(format!("space-{}", space_key(d.space)),
                                                            is_chosen.then_some("selected"))}
                                            data-testid="memory-space-row"
                                            data-name={d.name.clone()}
                                            data-space={space_key(d.space)}>
                                            <th scope="row">
                                                // The place in the name tells apart two
                                                // variables of one name (two loops' `i`).
                                                <button type="button" class="variable"
                                                        aria-label={format!("{name}, declared at {span}")}
                                                        aria-pressed={is_chosen.to_string()}
                                                        onclick={onclick}>
                                                    <code>{ name }</code>
                                                </button>
                                            </th>
                                            <td>{ span }</td>
                                            <td><code>{ type_text }</code></td>
                                            <td>{ space }</td>
                                            <td>{ scope }</td>
                                            <td>{ lifetime }</td>
                                            <td>{ speed }</td>
                                        </tr>
                                    }
                                }) }
                            </tbody>
                        </table>
                    </div>
                    <p class="memory-explanation" data-testid="memory-space-explanation"
                       aria-live="polite">
                        { explained }
                    </p>
                </>
            }
        }
    };
    html! {
        <section class="card memory-card" data-testid="memory-spaces"
                 aria-labelledby="memory-spaces-title">
            <h2 id="memory-spaces-title">
                { TITLE.0 }<code>{ props.kernel.clone() }</code>{ TITLE.1 }
            </h2>
            <p class="grid-help">{ HELP }</p>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplay_sim::lesson_kernels::MATMUL;
    use memplay_sim::memory_spaces::declarations;

    /// The explanation of `name` in `source`'s kernel `k`, in a launch of 4 blocks of 256 threads.
    fn check(source: &str, name: &str, expected: &str) {
        let found = declarations(source, &[], "k").expect("the kernel compiles");
        let declaration = found
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("no variable {name} in {found:?}"));
        assert_eq!(explanation(declaration, 256, 4), expected);
    }

    #[test]
    fn a_shared_tile_is_explained_per_block_with_the_block_s_threads() {
        check(
            "__global__ void k(float* a) { __shared__ float sa[16][16]; sa[0][0] = a[0]; }",
            "sa",
            "sa: shared memory, seen by the 256 threads of its block: 4 copies, one per block, \
             lives as long as the block; fast, on chip (about 1x), unless bank conflicts \
             serialize a warp's access. Its threads share it: __syncthreads() orders their \
             writes and reads. See the lecture CUDA Memories.",
        );
    }

    #[test]
    fn a_pointer_parameter_is_explained_as_the_global_memory_it_points_to() {
        check(
            "__global__ void k(float* a) { a[0] = 1; }",
            "a",
            "a: points to global memory, seen by every thread of the grid (1,024 threads) and the \
             host: one copy, lives from the host's cudaMalloc to its cudaFree, across launches; \
             slow, off-chip DRAM, hundreds of clock cycles (about 100x). The pointer itself is a \
             parameter, in constant memory; the data it points to is the host's cudaMalloc'ed \
             global memory. See the lecture CUDA Memories.",
        );
    }

    #[test]
    fn an_automatic_scalar_is_explained_as_one_register_per_thread() {
        check(
            "__global__ void k(float* a) { int i = threadIdx.x; a[i] = 1; }",
            "i",
            "i: registers, seen by only its own thread: 1,024 copies, one per thread, lives as \
             long as the thread; fastest, on chip (1x). The compiler spills it to local memory \
             only if the registers run out. See the lecture CUDA Memories.",
        );
    }

    #[test]
    fn one_block_of_one_thread_is_counted_in_the_singular() {
        let found = declarations(
            "__global__ void k(float* a) { __shared__ float s[1]; s[0] = a[0]; }",
            &[],
            "k",
        )
        .expect("the kernel compiles");
        assert_eq!(
            who_sees(&found[1], 1, 1),
            "the 1 thread of its block: 1 copy, one per block"
        );
        assert_eq!(
            who_sees(&found[0], 1, 1),
            "every thread of the grid (1 thread) and the host: one copy"
        );
    }

    #[test]
    fn a_name_of_400_000_letters_is_shown_cut() {
        let long = "x".repeat(400_000);
        let source = format!("__global__ void k(int* {long}) {{ {long}[0] = 1; }}");
        let found = declarations(&source, &[], "k").expect("the kernel compiles");
        let sentence = explanation(&found[0], 32, 1);
        assert!(
            sentence.starts_with(&format!("{}…: points to global memory", "x".repeat(48))),
            "{}",
            &sentence[..80]
        );
        assert_eq!(shown_name("sa"), "sa");
        assert_eq!(shown_name(&"é".repeat(49)), format!("{}…", "é".repeat(48)));
    }

    #[test]
    fn no_sentence_of_the_card_names_a_lecture_by_a_file_number_or_a_probe() {
        // Every kind of declaration, so that every remark is among the explanations.
        let source = "__constant__ float c[4]; __device__ float g;\n\
            __global__ void k(float* a, int n) {\n\
              __shared__ float s[32]; extern __shared__ float d[];\n\
              int i = threadIdx.x; float* p = a; float r[4]; float q[4];\n\
              r[0] = 1; q[i & 3] = 2; s[i] = c[0] + g + d[0] + r[0] + q[0] + p[n]; a[i] = s[i];\n\
            }";
        let props = MemorySpacesProps {
            kernel: "k".to_string(),
            declarations: Some(declarations(source, &[], "k")),
            threads_per_block: 256,
            blocks: 4,
        };
        let statements = memory_spaces_statements(&props);
        let explained = statements
            .iter()
            .filter(|s| s.text.contains(", seen by "))
            .count();
        assert!(explained >= 10, "{statements:#?}");
        for statement in &statements {
            let text = statement.text.to_lowercase();
            assert!(
                !text.contains("seed") && !text.contains("probe"),
                "{}",
                statement.text
            );
        }
        assert!(statements[1]
            .text
            .ends_with("broadcast (the lecture CUDA Memories)."));
    }

    #[test]
    fn the_tiled_matmul_has_shared_tiles_and_global_matrices() {
        let defines = vec![
            ("TILE_WIDTH".to_string(), "16".to_string()),
            ("PAD".to_string(), "0".to_string()),
        ];
        let found = declarations(MATMUL, &defines, "mm_tiled").expect("the lesson compiles");
        let keys: Vec<String> = found
            .iter()
            .map(|d| format!("{} {}", d.name, space_key(d.space)))
            .collect();
        for expected in [
            "a global",
            "b global",
            "c global",
            "n parameter",
            "sa shared",
        ] {
            assert!(keys.contains(&expected.to_string()), "{keys:?}");
        }
    }
}
