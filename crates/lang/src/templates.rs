//! Function templates at the launch: the canonical name of an instantiation, the one spelling
//! the rest of memplay names it by, and the instantiation of a launched kernel template.
//!
//! A kernel template runs once it has its arguments (C++ [temp.inst]): `memplay simulate k.cu
//! --kernel 'mm<float, 16>'` instantiates `mm` at `float` and 16 before the semantic check, as
//! nvcc instantiates it at the launch `mm<float, 16><<<g, b>>>(...)`. However it is written
//! (`mm<float,16>`, `mm< float , 0x10 >`), its name is canonical: the template's name, `<`, the
//! arguments separated by `, ` (a type as `ast::Type` displays it, an integer in decimal), `>`.
//! The parser (`parser/template.rs`) reads the templates themselves.

use crate::ast::{Item, TranslationUnit};
use crate::lexer::lex;
use crate::parser;
use crate::refused;
use crate::span::Diagnostic;

/// The canonical spelling of a kernel's name as a user writes it: `mm<float,16>` and `mm< float
/// , 0x10 >` are `mm<float, 16>`; a plain name is itself. The integers are constant expressions
/// of literals (`2 * 8`); a type is one of the kernel language's (`unsigned int`, `const
/// float*`).
pub fn canonical_name(spelling: &str) -> Result<String, Diagnostic> {
    parser::canonical_name(&lex(spelling)?)
}

/// Makes the kernel `kernel` (any spelling) of `unit` ready to check: a kernel template with
/// its arguments is instantiated into `unit` (the file read again with one more instantiation
/// asked for). Returns the name to launch it by, canonical for a template; a kernel template
/// named without its arguments is an error that names them. A name that is no template of the
/// file is returned as it came, for the lookup of the kernel to answer.
pub fn instantiate(unit: &mut TranslationUnit, kernel: &str) -> Result<String, Diagnostic> {
    let name = kernel.trim();
    let is_function = unit
        .items
        .iter()
        .any(|item| matches!(item, Item::Function(f) if f.name == name));
    let base = name.split('<').next().unwrap_or(name).trim();
    let template = unit.templates.list.iter().find(|t| t.name == base);
    let Some(template) = template.filter(|_| !is_function) else {
        return Ok(kernel.to_string());
    };
    if !name.contains('<') {
        return Err(Diagnostic::new(template.span, template.missing(0)));
    }
    let mut requests = unit.templates.requests.clone();
    requests.push(name.to_string());
    let tokens = &unit.templates.tokens;
    let grown = parser::parse_with(tokens, &requests).map_err(|e| refused::explain(e, tokens))?;
    *unit = grown;
    Ok(unit.templates.requests.last().cloned().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::{canonical_name, instantiate};
    use crate::{parse, sema};

    /// The kernel `kernel` of `source`, instantiated and checked: its parameters' types, or the
    /// error.
    fn launched(source: &str, kernel: &str) -> Result<(String, Vec<String>), String> {
        let mut unit = parse(source, &[]).map_err(|e| e.to_string())?;
        let name = instantiate(&mut unit, kernel).map_err(|e| e.to_string())?;
        let program = sema::check(&unit).map_err(|e| e.to_string())?;
        let function = program.kernel(&name).map_err(|e| e.to_string())?;
        let params = function.params.iter().map(|p| p.ty.to_string()).collect();
        Ok((name, params))
    }

    #[test]
    fn any_spelling_of_an_instantiation_has_one_canonical_name() {
        let cases = [
            ("mm<float,16>", "mm<float, 16>"),
            ("mm< float , 0x10 >", "mm<float, 16>"),
            ("mm<unsigned, 2 * 8>", "mm<unsigned int, 16>"),
            ("mm<const float *, (1 << 4)>", "mm<const float*, 16>"),
            ("reduce<double, -1>", "reduce<double, -1>"),
            ("ns::k<int>", "ns::k<int>"),
            ("  plain  ", "plain"),
        ];
        for (spelling, canonical) in cases {
            assert_eq!(
                canonical_name(spelling).as_deref(),
                Ok(canonical),
                "{spelling}"
            );
        }
        let unclosed = canonical_name("mm<float").expect_err("no '>'");
        assert_eq!(
            unclosed.to_string(),
            "1:9: expected '>', found the end of the file"
        );
        let more = canonical_name("mm<float> x").expect_err("text after the name");
        assert_eq!(
            more.to_string(),
            "1:11: expected the end of the kernel's name, found 'x'"
        );
    }

    const TILED: &str = "template <typename T, int TILE = 16>\n\
        __global__ void scale(T* out, const T* in, T factor) {\n\
          __shared__ T tile[TILE];\n\
          tile[threadIdx.x % TILE] = in[threadIdx.x];\n\
          __syncthreads();\n\
          out[threadIdx.x] = tile[threadIdx.x % TILE] * factor;\n\
        }\n";

    #[test]
    fn a_kernel_template_is_instantiated_at_its_launch_in_any_spelling() {
        assert_eq!(
            launched(TILED, "scale<float,8>"),
            Ok((
                "scale<float, 8>".to_string(),
                vec!["float*".into(), "const float*".into(), "float".into()]
            ))
        );
        assert_eq!(
            launched(TILED, "scale< double >").map(|(name, _)| name),
            Ok("scale<double, 16>".to_string())
        );
    }

    #[test]
    fn a_template_argument_sizes_shared_memory_as_a_define_would() {
        let mut unit = parse(TILED, &[]).expect("parses");
        let name = instantiate(&mut unit, "scale<double, 8>").expect("instantiates");
        let program = sema::check(&unit).expect("checks");
        program.kernel(&name).expect("the kernel checks");
        // `__shared__ double tile[8]`: 8 elements of 8 bytes.
        let tile = program.objects.iter().find(|o| o.name == "tile");
        assert_eq!(tile.map(|o| o.ty.size()), Some(64));
    }

    #[test]
    fn a_kernel_template_launched_without_its_arguments_names_them() {
        assert_eq!(
            launched(TILED, "scale"),
            Err(
                "2:17: 'scale' needs its template argument T (template <typename T, int TILE = 16>)"
                    .to_string()
            )
        );
        assert_eq!(
            launched(TILED, "scale<float, float>"),
            Err("1:1: the template parameter 'int TILE' takes an integer, not a type".to_string())
        );
    }

    #[test]
    fn the_kernel_list_offers_a_template_with_its_parameters() {
        let program = crate::compile(TILED, &[]).expect("compiles");
        assert_eq!(program.kernel_names(), ["scale<typename T, int TILE = 16>"]);
    }

    #[test]
    fn device_templates_are_instantiated_by_explicit_and_deduced_calls() {
        let source =
            "template <typename T> __device__ T larger(T a, T b) { return a > b ? a : b; }\n\
            template <typename T, int N> __device__ T sum_of(const T* v) {\n\
              T s = 0;\n\
              for (int i = 0; i < N; ++i) s = s + v[i];\n\
              return larger<T>(s, (T)0);\n\
            }\n\
            __global__ void k(float* out, const double* in, int n) {\n\
              out[0] = larger(out[1], 2.0f);\n\
              out[2] = (float)sum_of<double, 4>(in);\n\
              out[3] = (float)larger(n, 3);\n\
            }\n";
        let program = crate::compile(source, &[]).expect("compiles");
        program.kernel("k").expect("the kernel checks");
        let mut names: Vec<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "k",
                "larger<double>",
                "larger<float>",
                "larger<int>",
                "sum_of<double, 4>"
            ]
        );
    }

    #[test]
    fn a_deduction_that_disagrees_is_an_error_in_words() {
        let source =
            "template <typename T> __device__ T larger(T a, T b) { return a > b ? a : b; }\n\
            __global__ void k(float* out, int n) { out[0] = larger(out[1], n); }\n";
        let program = crate::compile(source, &[]).expect("compiles");
        assert_eq!(
            program.kernel("k").map(|_| ()).map_err(|e| e.to_string()),
            Err("2:64: 'larger' deduces T as both 'float' and 'int'".to_string())
        );
    }

    #[test]
    fn a_struct_template_is_instantiated_where_a_type_names_it() {
        let source = "template <class T> struct SharedMemory {\n\
              __device__ T* get() { extern __shared__ int smem[]; return (T*)smem; }\n\
            };\n\
            template <class T> struct Pair { T lo, hi; __device__ T sum() const { return lo + hi; } };\n\
            template <typename T> __global__ void k(const T* in, T* out) {\n\
              SharedMemory<T> shared;\n\
              T* s = shared.get();\n\
              SharedMemory<T> again;\n\
              s[threadIdx.x] = in[threadIdx.x];\n\
              Pair<T> p;\n\
              p.lo = again.get()[0];\n\
              p.hi = in[1];\n\
              out[threadIdx.x] = p.sum();\n\
            }\n";
        for (kernel, size) in [("k<float>", 8), ("k<double>", 16)] {
            let mut unit = parse(source, &[]).expect("parses");
            let name = instantiate(&mut unit, kernel).expect("instantiates");
            let program = sema::check(&unit).expect("checks");
            program.kernel(&name).expect("the kernel checks");
            let names: Vec<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
            assert!(
                names
                    .iter()
                    .any(|n| n.starts_with("Pair<") && n.ends_with("sum()")),
                "{names:?}"
            );
            let pair = unit.items.iter().find_map(|item| match item {
                crate::ast::Item::Function(f) if f.name.ends_with("::sum()") => f.params.first(),
                _ => None,
            });
            assert_eq!(pair.map(|p| p.ty.size()), Some(size), "{kernel}");
        }
    }

    #[test]
    fn a_template_that_instantiates_itself_without_end_stops_at_the_limit() {
        let source = "template <int N> __device__ int depth() { return depth<N + 1>(); }\n\
            __global__ void k(int* out) { out[0] = depth<0>(); }\n";
        let error = parse(source, &[]).expect_err("endless");
        assert!(
            error
                .message
                .starts_with("the file instantiates more than 256 templates"),
            "{error}"
        );
    }
}
