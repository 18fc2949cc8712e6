//! "My kernel": the launch a student writes for any `__global__` of the edited source: the
//! kernel's name, grid and block as expressions of the source's `#define`s, a value for every
//! scalar parameter, a size in elements and a fill for every pointer, and the dynamic shared
//! memory. A pointer may point into its buffer past the start, as host code launches
//! `stencil<<<g, b>>>(d_in + RADIUS)`: its field says `in + RADIUS`, the buffer (named after
//! the pointer, as each pointer has its own) and an offset in elements, the syntax of the command
//! line's `--arg in=d_in+3` (`memplay_sim::pointer_argument`). The expressions are folded by the simulator's own front end
//! (`memplay_sim::kernel::constant_expression`), so `(N + 255) / 256` means what nvcc would
//! make of it. Everything here is pure: the page's state holds a `MyLaunch`, the link carries
//! its `encode`d text, and `build` turns it into the `SimulationInput` the worker runs. A whole
//! program's launches (`kernel::launches`) fill the form (`from_program`): what its host code
//! fixes as numbers, what it computes at run time as the host's own text, which the form then
//! lists as not constant, for the student to give.

use crate::settings::Settings;
use memplay_sim::device::DeviceId;
use memplay_sim::fill::Fill;
use memplay_sim::kernel::ast::Type;
use memplay_sim::kernel::launches::{find_launches, ArgumentValue, HostLaunch, HostValue};
use memplay_sim::kernel::{self, Dim3, Value};
use memplay_sim::pointer_argument::PointerArgument;
use memplay_sim::simulate::SimulationInput;

/// The starting source of the lesson, which its file names.
#[cfg(test)]
pub const STARTER: &str = include_str!("../../../www/kernels/my-kernel.cu");

/// A launch as the student wrote it: every number is an expression's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MyLaunch {
    pub kernel: String,
    pub grid: [String; 3],
    pub block: [String; 3],
    /// Each scalar parameter's value.
    pub args: Vec<(String, String)>,
    /// Each pointer parameter's size in elements, and its contents.
    pub buffers: Vec<(String, String, Fill)>,
    /// Bytes of dynamic shared memory per block.
    pub dyn_smem: String,
    /// Where a pointer that does not point at its buffer's start points: `in + RADIUS`.
    pub pointers: Vec<(String, String)>,
}

impl Default for MyLaunch {
    /// The starter's launch: saxpy over N floats in blocks of 256.
    fn default() -> MyLaunch {
        let text = |s: &str| s.to_string();
        MyLaunch {
            kernel: text("saxpy"),
            grid: [text("(N + 255) / 256"), text("1"), text("1")],
            block: [text("256"), text("1"), text("1")],
            args: vec![(text("a"), text("2")), (text("n"), text("N"))],
            buffers: vec![
                (text("y"), text("N"), Fill::Random),
                (text("x"), text("N"), Fill::Random),
            ],
            dyn_smem: text("0"),
            pointers: Vec::new(),
        }
    }
}

/// One parameter of a kernel, as the launch form asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    /// The size of the element a pointer points to; `None` for a scalar.
    pub element_bytes: Option<u64>,
    /// A `float` or `double` scalar, whose value the form folds as a `double` (`2.5`, `N / 2.0`)
    /// rather than as an integer.
    pub floating_point: bool,
    /// For a member of a struct or vector parameter (`p.n`, `c.x`), the parameter's name: the
    /// form asks for each member, where the host code passes the whole value.
    pub member_of: Option<String>,
}

/// The kernels of `source` with their parameters, in source order, then each kernel template
/// with its template parameters shown (`mm<typename T, int TILE>`) and no parameters: the form
/// asks for its instantiation (`kernel_params`). The compile error if it does not compile.
pub fn kernels(source: &str) -> Result<Vec<(String, Vec<Param>)>, String> {
    let program = kernel::compile(source, &device_pass()).map_err(|e| e.to_string())?;
    Ok(program
        .kernel_names()
        .into_iter()
        .filter_map(|name| match program.kernel(name) {
            Ok(function) => Some((name.to_string(), params_of(function))),
            Err(_) if program.kernel_templates.iter().any(|t| t == name) => {
                Some((name.to_string(), Vec::new()))
            }
            Err(_) => None,
        })
        .collect())
}

/// The launches of `source`'s host code, in source order (none when it has no host code, or
/// its host code does not read).
pub fn program_launches(source: &str) -> Vec<HostLaunch> {
    find_launches(source, &device_pass()).unwrap_or_default()
}

/// The macros nvcc's device pass defines (`__CUDACC__`, `__CUDA_ARCH__`), so a kernel behind
/// `#ifdef __CUDACC__` is listed and its parameters read. The form is filled before a device is
/// involved, so it reads the source as compiled for the newest preset; the run itself compiles
/// for the page's device (`simulate`).
fn device_pass() -> Vec<(String, String)> {
    DeviceId::H100
        .device()
        .compute_capability
        .device_pass_defines(&[])
}

/// The form of `launch`, a launch of `source`'s host code: each value the host code fixes as its
/// number, each it computes at run time as its text; a buffer's size in elements of its
/// parameter's type, and a pointer moved into its buffer as `in + K`.
pub fn from_program(source: &str, launch: &HostLaunch) -> MyLaunch {
    let text = |value: &HostValue| match value {
        HostValue::Known(v) => v.to_string(),
        HostValue::Unknown(text) => text.clone(),
    };
    let params = kernel_params(source, &launch.kernel).unwrap_or_default();
    let mut form = MyLaunch {
        kernel: launch.kernel.clone(),
        grid: launch.grid.clone().map(|v| text(&v)),
        block: launch.block.clone().map(|v| text(&v)),
        args: Vec::new(),
        buffers: Vec::new(),
        dyn_smem: text(&launch.shared_bytes),
        pointers: Vec::new(),
    };
    // The parameters' rows, a struct's members grouped under the one argument that passes it.
    let mut grouped: Vec<Vec<&Param>> = Vec::new();
    for param in &params {
        match grouped.last_mut() {
            Some(group) if param.member_of.is_some() && group[0].member_of == param.member_of => {
                group.push(param)
            }
            _ => grouped.push(vec![param]),
        }
    }
    for (group, arg) in grouped.iter().zip(&launch.args) {
        if group[0].member_of.is_some() {
            // The host code's value of a whole struct is not followed: each member starts at 1.
            form.args.extend(
                group
                    .iter()
                    .map(|member| (member.name.clone(), "1".to_string())),
            );
            continue;
        }
        let param = group[0];
        let name = param.name.clone();
        match (&arg.value, param.element_bytes) {
            (ArgumentValue::Buffer(buffer), Some(element)) => {
                let elements = match buffer.bytes {
                    HostValue::Known(bytes) => (bytes as u64 / element).max(1).to_string(),
                    HostValue::Unknown(ref bytes) => format!("({bytes}) / {element}"),
                };
                match &buffer.offset {
                    HostValue::Known(0) => {}
                    offset => form
                        .pointers
                        .push((name.clone(), format!("{name} + {}", text(offset)))),
                }
                form.buffers.push((name, elements, Fill::Small));
            }
            (_, Some(_)) => form.buffers.push((name, arg.text.clone(), Fill::Small)),
            (ArgumentValue::Integer(v), None) => form.args.push((name, v.to_string())),
            // As the value would be written in the source, `2.5` or `2.0`.
            (ArgumentValue::Float(v), None) => form.args.push((name, Value::Float(*v).to_string())),
            (ArgumentValue::Unknown(text), None) => form.args.push((name, text.clone())),
            (ArgumentValue::Buffer(_), None) => form.args.push((name, arg.text.clone())),
        }
    }
    form
}

/// The parameters of kernel `kernel` of `source`, a template's instantiation in any spelling
/// (`mm<float, 16>`) included; `None` if it does not compile or has no such kernel.
pub fn kernel_params(source: &str, kernel: &str) -> Option<Vec<Param>> {
    let mut unit = kernel::parse(source, &device_pass()).ok()?;
    let name = kernel::templates::instantiate(&mut unit, kernel).ok()?;
    let program = kernel::sema::check(&unit).ok()?;
    let function = program.kernel(&name).ok()?;
    Some(params_of(function))
}

/// What the launch form asks for each parameter of `function`.
fn params_of(function: &kernel::ir::FunctionIr) -> Vec<Param> {
    let mut rows = Vec::new();
    for p in &function.params {
        if !matches!(p.ty, Type::Pointer { .. } | Type::Scalar(_)) {
            // A struct or vector passed by value: a row per member (a struct the launch cannot
            // give, with a pointer member, keeps one row, whose run then says why).
            if let Ok(leaves) = kernel::interp::parameter_leaves(&p.name, &p.ty) {
                rows.extend(leaves.into_iter().map(|(name, scalar)| Param {
                    name,
                    element_bytes: None,
                    floating_point: scalar.is_float(),
                    member_of: Some(p.name.clone()),
                }));
                continue;
            }
        }
        rows.push(Param {
            name: p.name.clone(),
            element_bytes: match &p.ty {
                Type::Pointer { pointee, .. } => Some(pointee.size().max(1)),
                _ => None,
            },
            floating_point: matches!(&p.ty, Type::Scalar(scalar) if scalar.is_float()),
            member_of: None,
        });
    }
    rows
}

impl MyLaunch {
    /// Where pointer `name` points, as its field shows it: `in + RADIUS`, or `in` at the start.
    pub fn points_to(&self, name: &str) -> String {
        self.pointers
            .iter()
            .find(|(pointer, _)| pointer == name)
            .map_or_else(|| name.to_string(), |(_, text)| text.clone())
    }

    /// Sets where pointer `name` points; its buffer's start (`in`, or nothing) needs no entry.
    pub fn set_points_to(&mut self, name: &str, text: String) {
        self.pointers.retain(|(pointer, _)| pointer != name);
        if !matches!(text.trim(), "" | "0") && text.trim() != name {
            self.pointers.push((name.to_string(), text));
        }
    }

    /// The launch with one row per parameter of `params`: the rows it had are kept, missing ones
    /// get `1` (a scalar) or `N` elements of small values (a pointer), others are dropped.
    pub fn fitted(&self, kernel: &str, params: &[Param]) -> MyLaunch {
        let mut launch = self.clone();
        launch.kernel = kernel.to_string();
        launch.args = params
            .iter()
            .filter(|p| p.element_bytes.is_none())
            .map(|p| {
                let kept = self.args.iter().find(|(name, _)| *name == p.name);
                (
                    p.name.clone(),
                    kept.map_or("1".to_string(), |(_, v)| v.clone()),
                )
            })
            .collect();
        launch.buffers = params
            .iter()
            .filter(|p| p.element_bytes.is_some())
            .map(|p| {
                let kept = self.buffers.iter().find(|(name, ..)| *name == p.name);
                kept.cloned()
                    .unwrap_or((p.name.clone(), "1024".to_string(), Fill::Small))
            })
            .collect();
        launch
            .pointers
            .retain(|(name, _)| launch.buffers.iter().any(|(b, ..)| b == name));
        launch
    }
}

/// An expression of the launch that does not give a usable value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field, as the form labels it ("grid x", "n", "x elements").
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The simulation input of `launch` over `source`, and what is wrong with its values: a value
/// that is not a constant, or is out of its range, is listed and replaced by the nearest value in
/// range (1 for the extents and sizes), so the page still has a launch to show. An unknown
/// kernel or a missing parameter is left for the simulation to name. All the values are folded
/// in one pass of the front end (`kernel::constant_expressions`).
pub fn build(
    launch: &MyLaunch,
    source: &str,
    settings: Settings,
) -> (SimulationInput, Vec<FieldError>) {
    const EXTENT: (i64, i64) = (1, u32::MAX as i64);
    let mut errors_before = Vec::new();
    let axis = ["x", "y", "z"];
    // Every value with its field's name and range, in one list for one pass.
    let mut fields: Vec<(String, &str, (i64, i64))> = Vec::new();
    for (what, texts) in [("grid", &launch.grid), ("block", &launch.block)] {
        for (text, a) in texts.iter().zip(axis) {
            fields.push((format!("{what} {a}"), text, EXTENT));
        }
    }
    fields.push((
        "dynamic shared memory".to_string(),
        &launch.dyn_smem,
        (0, 1 << 20),
    ));
    for (name, text) in &launch.args {
        fields.push((name.clone(), text, (i64::from(i32::MIN), i64::MAX)));
    }
    for (name, text, _) in &launch.buffers {
        fields.push((format!("{name} elements"), text, (1, 1 << 30)));
    }
    // A pointer's offset: the expression after `name +`, where the text names its own buffer.
    let mut pointer_names = Vec::new();
    for (name, text) in &launch.pointers {
        let (buffer, offset) = text.split_once('+').unwrap_or((text, "0"));
        if buffer.trim() != name {
            errors_before.push(FieldError {
                field: format!("{name} points to"),
                message: format!("'{name}' points into its own buffer: {name} + elements"),
            });
            continue;
        }
        pointer_names.push(name);
        fields.push((format!("{name} points to"), offset, (0, 1 << 30)));
    }
    let texts: Vec<&str> = fields.iter().map(|(_, text, _)| *text).collect();
    let mut errors = errors_before;
    let values: Vec<i64> = kernel::constant_expressions(source, &device_pass(), &texts)
        .into_iter()
        .zip(&fields)
        .map(|(result, (field, _, (low, high)))| {
            let fallback = (*low).max(1).min(*high);
            match result {
                Ok(v) if (*low..=*high).contains(&v) => v,
                Ok(v) => {
                    errors.push(FieldError {
                        field: field.clone(),
                        message: format!("{v} is outside {low} to {high}"),
                    });
                    fallback
                }
                Err(error) => {
                    errors.push(FieldError {
                        field: field.clone(),
                        message: format!("column {}: {}", error.span.col, error.message),
                    });
                    fallback
                }
            }
        })
        .collect();
    let params = kernel_params(source, &launch.kernel).unwrap_or_default();
    // A float parameter's value is folded again as a double, in one more pass for all of them,
    // and its error replaces the integer pass's.
    let is_float = |name: &str| params.iter().any(|p| p.name == name && p.floating_point);
    let float_texts: Vec<&str> = launch
        .args
        .iter()
        .filter(|(name, _)| is_float(name))
        .map(|(_, text)| text.as_str())
        .collect();
    let mut floats = if float_texts.is_empty() {
        Vec::new()
    } else {
        kernel::constant_float_expressions(source, &device_pass(), &float_texts)
    }
    .into_iter();
    let mut float_values = Vec::new();
    for (name, _) in launch.args.iter().filter(|(name, _)| is_float(name)) {
        errors.retain(|error| error.field != *name);
        match floats.next() {
            Some(Ok(v)) => float_values.push((name.clone(), Value::Float(v))),
            Some(Err(error)) => {
                errors.push(FieldError {
                    field: name.clone(),
                    message: format!("column {}: {}", error.span.col, error.message),
                });
                float_values.push((name.clone(), Value::Float(0.0)));
            }
            None => {}
        }
    }
    let extent = |index: usize| u32::try_from(values[index]).unwrap_or(1);
    let mut input = SimulationInput::new(source, &launch.kernel, settings.device.device());
    input.grid = Dim3::new(extent(0), extent(1), extent(2));
    input.block = Dim3::new(extent(3), extent(4), extent(5));
    input.dyn_smem = u32::try_from(values[6]).unwrap_or(0);
    input.regs = settings.regs;
    input.compile = settings.compile;
    let args_at = 7;
    input.args = launch
        .args
        .iter()
        .zip(&values[args_at..])
        .map(|((name, _), &v)| {
            let float = float_values.iter().find(|(n, _)| n == name);
            (
                name.clone(),
                float.map_or(Value::Int(v), |(_, f)| f.clone()),
            )
        })
        .collect();
    let buffers_at = args_at + launch.args.len();
    input.buffers = launch
        .buffers
        .iter()
        .zip(&values[buffers_at..])
        .map(|((name, _, _), &elements)| {
            let bytes = params
                .iter()
                .find(|p| p.name == *name)
                .and_then(|p| p.element_bytes)
                .unwrap_or(4);
            (name.clone(), (elements as u64).saturating_mul(bytes))
        })
        .collect();
    input.fills = launch
        .buffers
        .iter()
        .map(|(name, _, fill)| (name.clone(), *fill))
        .collect();
    let pointers_at = buffers_at + launch.buffers.len();
    input.pointers = pointer_names
        .into_iter()
        .zip(&values[pointers_at..])
        .filter(|(_, &offset)| offset != 0)
        .map(|(name, &offset)| PointerArgument {
            parameter: name.clone(),
            buffer: name.clone(),
            offset: offset as u64,
        })
        .collect();
    (input, errors)
}

/// The launch as one line of the link: `k=`, `g=`, `b=`, `a=`, `m=` and `s=` parts joined by
/// `~` (which no launch expression needs: it is C's bitwise not), lists by `,`, pairs by `:`.
/// A pointer that points past its buffer's start adds its field as a fourth part of its buffer,
/// `in:N+6:small:in + 3`; a link written before offsets has three parts, and opens at the start.
pub fn encode(launch: &MyLaunch) -> String {
    let args: Vec<String> = launch
        .args
        .iter()
        .map(|(n, v)| format!("{n}:{v}"))
        .collect();
    let buffers: Vec<String> = launch
        .buffers
        .iter()
        .map(|(n, e, f)| {
            let mut item = format!("{n}:{e}:{}", f.as_str());
            if let Some((_, to)) = launch.pointers.iter().find(|(p, _)| p == n) {
                item = format!("{item}:{to}");
            }
            item
        })
        .collect();
    format!(
        "k={}~g={}~b={}~a={}~m={}~s={}",
        launch.kernel,
        launch.grid.join(","),
        launch.block.join(","),
        args.join(","),
        buffers.join(","),
        launch.dyn_smem
    )
}

/// Reads `encode`'s text; the error says what is wrong, for the page's note.
pub fn decode(text: &str) -> Result<MyLaunch, String> {
    let mut launch = MyLaunch {
        kernel: String::new(),
        args: Vec::new(),
        buffers: Vec::new(),
        ..MyLaunch::default()
    };
    let three = |value: &str| -> Result<[String; 3], String> {
        let parts: Vec<&str> = value.split(',').collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(format!("'{value}' is not one to three extents"));
        }
        let mut out = [String::from("1"), String::from("1"), String::from("1")];
        for (slot, part) in out.iter_mut().zip(parts) {
            *slot = part.trim().to_string();
        }
        Ok(out)
    };
    for part in text.split('~').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').ok_or(format!("'{part}' has no '='"))?;
        let list = || value.split(',').filter(|item| !item.is_empty());
        match key {
            "k" => launch.kernel = value.to_string(),
            "g" => launch.grid = three(value)?,
            "b" => launch.block = three(value)?,
            "a" => {
                for item in list() {
                    let (name, v) = item
                        .split_once(':')
                        .ok_or(format!("the argument '{item}' has no ':'"))?;
                    launch.args.push((name.to_string(), v.to_string()));
                }
            }
            "m" => {
                for item in list() {
                    let mut fields = item.splitn(4, ':');
                    let (Some(name), Some(elements)) = (fields.next(), fields.next()) else {
                        return Err(format!("the buffer '{item}' is not name:elements:fill"));
                    };
                    let fill = match fields.next() {
                        Some(fill) => fill.parse::<Fill>().map_err(|e| e.to_string())?,
                        None => Fill::Small,
                    };
                    if let Some(to) = fields.next() {
                        launch.pointers.push((name.to_string(), to.to_string()));
                    }
                    launch
                        .buffers
                        .push((name.to_string(), elements.to_string(), fill));
                }
            }
            "s" => launch.dyn_smem = value.to_string(),
            other => return Err(format!("'{other}' is not a part of a launch")),
        }
    }
    if launch.kernel.is_empty() {
        return Err("the launch names no kernel".to_string());
    }
    Ok(launch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;
    use memplay_sim::simulate::simulate;

    fn check(launch: &MyLaunch, source: &str, expected: Result<(u32, u32, u64), &str>) {
        let (input, errors) = build(launch, source, State::default().settings());
        let built = if errors.is_empty() {
            Ok(input)
        } else {
            Err(errors)
        };
        match (built, expected) {
            (Ok(input), Ok((grid_x, block_x, first_buffer_bytes))) => {
                assert_eq!((input.grid.x, input.block.x), (grid_x, block_x));
                assert_eq!(input.buffers[0].1, first_buffer_bytes);
            }
            (Err(errors), Err(word)) => assert!(
                errors.iter().any(|e| e.to_string().contains(word)),
                "{errors:?}"
            ),
            (found, expected) => panic!("found {found:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn the_starter_launches_saxpy_over_a_million_floats_and_loads_twice_per_warp() {
        check(&MyLaunch::default(), STARTER, Ok((4096, 256, 4 << 20)));
        let (input, errors) = build(&MyLaunch::default(), STARTER, State::default().settings());
        assert!(errors.is_empty(), "{errors:?}");
        let report = simulate(&input).expect("saxpy runs");
        let requests = report
            .counters
            .get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
            .expect("a counter");
        assert_eq!(requests, 2.0 * f64::from(1 << 20) / 32.0);
    }

    #[test]
    fn a_bad_expression_names_its_field_and_column() {
        let mut launch = MyLaunch::default();
        launch.grid[0] = "(N + 255) / BLOCK".to_string();
        check(&launch, STARTER, Err("grid x: column 1"));
        launch.grid[0] = "0".to_string();
        check(&launch, STARTER, Err("grid x: 0 is outside 1"));
    }

    #[test]
    fn a_new_kernel_gets_a_row_per_parameter() {
        let source = "__global__ void scale(double* v, int n, double s) { v[0] *= s; }\n";
        let params = kernels(source).expect("compiles")[0].1.clone();
        let empty = MyLaunch {
            grid: ["4096".to_string(), "1".to_string(), "1".to_string()],
            args: Vec::new(),
            buffers: Vec::new(),
            ..MyLaunch::default()
        };
        let fitted = empty.fitted("scale", &params);
        assert_eq!(
            fitted.args,
            [
                ("n".to_string(), "1".to_string()),
                ("s".to_string(), "1".to_string())
            ]
        );
        assert_eq!(
            fitted.buffers,
            [("v".to_string(), "1024".to_string(), Fill::Small)]
        );
        // Doubles are 8 bytes: 1,024 of them are 8 KiB.
        check(&fitted, source, Ok((4096, 256, 8192)));
    }

    #[test]
    fn a_struct_or_vector_passed_by_value_gets_a_row_per_member() {
        let source = "#define N (1 << 20)\nstruct Params { int n; float alpha; };\n\
                      __global__ void axpy(Params p, float2 c, float* y) { y[0] = p.alpha + c.y; }\n";
        let params = kernels(source).expect("compiles")[0].1.clone();
        let fitted = MyLaunch::default().fitted("axpy", &params);
        let names: Vec<&str> = fitted.args.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["p.n", "p.alpha", "c.x", "c.y"]);
        let floating: Vec<bool> = params.iter().map(|p| p.floating_point).collect();
        assert_eq!(floating, [false, true, true, true, false]);
        check(&fitted, source, Ok((4096, 256, 4 << 20)));
        let (input, errors) = build(&fitted, source, State::default().settings());
        assert!(errors.is_empty(), "{errors:?}");
        assert!(simulate(&input).is_ok(), "the members reach the simulation");
    }

    #[test]
    fn a_kernel_template_is_listed_by_its_parameters_and_launched_as_the_typed_instantiation() {
        let source = "#define N (1 << 20)\ntemplate <typename T, int STEP>\n\
                      __global__ void stride(T* v, int n) { v[threadIdx.x * STEP] = n; }\n";
        let listed = kernels(source).expect("compiles");
        assert_eq!(
            listed,
            [("stride<typename T, int STEP>".to_string(), Vec::new())]
        );
        let params = kernel_params(source, "stride<double,2>").expect("instantiates");
        let launch = MyLaunch::default().fitted("stride<double,2>", &params);
        assert_eq!(launch.args, [("n".to_string(), "N".to_string())]);
        // 1,024 doubles of 8 bytes.
        check(&launch, source, Ok((4096, 256, 8192)));
        assert_eq!(decode(&encode(&launch)), Ok(launch));
        assert_eq!(kernel_params(source, "stride"), None);
    }

    #[test]
    fn a_launch_survives_the_link_and_a_broken_one_is_refused() {
        let launch = MyLaunch::default();
        assert_eq!(decode(&encode(&launch)), Ok(launch));
        assert!(decode("k=saxpy~m=x")
            .unwrap_err()
            .contains("name:elements:fill"));
        assert!(decode("k=saxpy~m=x:N:lots").is_err());
        assert!(decode("g=1").unwrap_err().contains("no kernel"));
    }

    #[test]
    fn a_pointer_field_of_buffer_plus_an_expression_points_that_many_elements_in() {
        let source = "#define RADIUS 3\n__global__ void stencil(const float* in, float* out) {\n\
                      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                      out[i] = in[i - RADIUS] + in[i + RADIUS];\n}\n";
        let params = kernels(source).expect("compiles")[0].1.clone();
        let mut launch = MyLaunch::default().fitted("stencil", &params);
        launch.grid[0] = "4".to_string();
        launch.set_points_to("in", "in + RADIUS".to_string());
        // The start, written either way, needs no entry.
        launch.set_points_to("out", "out".to_string());
        assert_eq!(
            launch.pointers,
            [("in".to_string(), "in + RADIUS".to_string())]
        );
        let (input, errors) = build(&launch, source, State::default().settings());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            input.pointers,
            [PointerArgument {
                parameter: "in".to_string(),
                buffer: "in".to_string(),
                offset: 3
            }]
        );
        // 4 blocks of 256 over buffers of 1024 elements: thread 1018 is the first whose
        // in[i + 3] is past the end, element 3 + 1018 + 3 = 1024 of the buffer, which the
        // error counts from the buffer's start.
        let error = simulate(&input).expect_err("in[1021] is out of bounds");
        assert!(
            error
                .to_string()
                .contains("index 1024 is outside buffer 'in'"),
            "{error}"
        );

        launch.set_points_to("in", "out + 1".to_string());
        let (_, errors) = build(&launch, source, State::default().settings());
        assert_eq!(
            errors[0].to_string(),
            "in points to: 'in' points into its own buffer: in + elements"
        );
        launch.set_points_to("in", "in + WIDTH".to_string());
        let (_, errors) = build(&launch, source, State::default().settings());
        assert!(
            errors[0].to_string().starts_with("in points to: column"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_float_parameter_takes_a_fraction_and_an_expression_of_the_defines() {
        let source = "#define N 5\n__global__ void scale(float* x, float a, double b, int n) {\n  \
                      x[threadIdx.x] *= a * b;\n}\n";
        let mut launch = MyLaunch {
            kernel: "scale".to_string(),
            grid: ["1".to_string(), "1".to_string(), "1".to_string()],
            block: ["32".to_string(), "1".to_string(), "1".to_string()],
            args: vec![
                ("a".to_string(), "2.5".to_string()),
                ("b".to_string(), "N / 2.0".to_string()),
                ("n".to_string(), "N / 2".to_string()),
            ],
            buffers: vec![("x".to_string(), "32".to_string(), Fill::Small)],
            dyn_smem: "0".to_string(),
            pointers: Vec::new(),
        };
        let (input, errors) = build(&launch, source, State::default().settings());
        assert_eq!(errors, []);
        assert_eq!(
            input.args,
            [
                ("a".to_string(), Value::Float(2.5)),
                ("b".to_string(), Value::Float(2.5)),
                ("n".to_string(), Value::Int(2)),
            ]
        );
        // A float field that is no constant names its column, as an integer field does.
        launch.args[0].1 = "2.5 * x".to_string();
        let (_, errors) = build(&launch, source, State::default().settings());
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["a"]);
    }

    #[test]
    fn a_kernel_behind_the_device_pass_guard_is_listed() {
        let source =
            "#ifdef __CUDACC__\n__global__ void guarded(int* x) { x[0] = __CUDA_ARCH__; }\n\
                      #endif\n";
        let listed = kernels(source).expect("compiles");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].0, "guarded");
    }

    /// A stencil program: 4096 floats and a halo of 3, in blocks of 128; the count `main` reads
    /// from its arguments in the second launch.
    const PROGRAM: &str = "#include <cstdlib>
#define RADIUS 3
__global__ void stencil(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i - RADIUS] + in[i + RADIUS];
}
int main(int argc, char** argv) {
  const int n = 4096;
  float *d_in, *d_out;
  cudaMalloc(&d_in, (n + 2 * RADIUS) * sizeof(float));
  cudaMalloc(&d_out, n * sizeof(float));
  stencil<<<n / 128, 128>>>(d_in + RADIUS, d_out, n);
  int m = atoi(argv[1]);
  stencil<<<m / 128, 128>>>(d_in + RADIUS, d_out, m);
  return 0;
}
";

    #[test]
    fn a_program_s_launch_fills_the_form_and_what_the_host_reads_at_run_time_is_asked_for() {
        let launches = program_launches(PROGRAM);
        assert_eq!(launches.len(), 2);
        // 4096 / 128 = 32 blocks; d_in holds 4096 + 6 = 4102 floats, and in points 3 in.
        let first = from_program(PROGRAM, &launches[0]);
        let text = |s: &str| s.to_string();
        assert_eq!(first.grid, [text("32"), text("1"), text("1")]);
        assert_eq!(first.block, [text("128"), text("1"), text("1")]);
        assert_eq!(first.args, [(text("n"), text("4096"))]);
        assert_eq!(
            first.buffers,
            [
                (text("in"), text("4102"), Fill::Small),
                (text("out"), text("4096"), Fill::Small)
            ]
        );
        assert_eq!(first.pointers, [(text("in"), text("in + 3"))]);
        let (_, errors) = build(&first, PROGRAM, State::default().settings());
        assert_eq!(errors, []);
        // The second launch's count is the host's atoi(argv[1]): its fields say so and are
        // listed as not constant.
        let second = from_program(PROGRAM, &launches[1]);
        assert_eq!(second.args, [(text("n"), text("atoi(argv[1])"))]);
        let (_, errors) = build(&second, PROGRAM, State::default().settings());
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["grid x", "n"]);
    }
}
