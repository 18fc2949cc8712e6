//! A lesson's launch as its file writes it: the grid, the block, the defines, the arguments and
//! the buffers of one kernel as expressions of the page's settings (`tile`, `block`, `pad`,
//! `stride`, `regs`), of the device (`max_grid_x`, the most blocks a grid takes along x) and of
//! the file's own names (`let n = 1024`).
//!
//! The expressions are C's, folded by the simulator's own front end
//! (`memplay_sim::kernel::constant_expressions`), the same folding the my-kernel form uses: each
//! setting and each `let` is a `-D` define of an empty program, so `(n + tile - 1) / tile` and
//! `a < b ? a : b` mean what nvcc would make of them. The names are not defined in the kernel's
//! own source, so a file's `n` never rewrites a kernel's parameter `n`; what the kernel sees is
//! what the file passes it (`define TILE_WIDTH = tile`, `arg n = n`).

use crate::settings::Settings;
use memplay_sim::kernel::{self, Dim3, Value};
use memplay_sim::simulate::SimulationInput;
use memplay_sim::transfer::Layout;

/// One expression of the file, with the line it is on for errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expression {
    pub text: String,
    pub line: usize,
}

impl Expression {
    pub fn new(text: &str, line: usize) -> Expression {
        Expression {
            text: text.trim().to_string(),
            line,
        }
    }
}

/// A launch written in a lesson file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    /// `let NAME = EXPR`, in order: each may use the ones before.
    pub lets: Vec<(String, Expression)>,
    /// `define NAME = EXPR`: the kernel's `#define`s the launch sets.
    pub defines: Vec<(String, Expression)>,
    pub grid: [Expression; 3],
    pub block: [Expression; 3],
    /// Bytes of dynamic shared memory per block.
    pub dynamic_shared: Expression,
    /// `arg NAME = EXPR`: the kernel's scalar parameters.
    pub args: Vec<(String, Expression)>,
    /// `buffer NAME = EXPR`: elements behind each pointer parameter, with the bytes of one
    /// element, read from the kernel's parameter when the file is read.
    pub buffers: Vec<(String, Expression, u64)>,
    /// `pitched-rows = EXPR`: the copies move rows of this many bytes (`cudaMemcpy2D`); without
    /// it, each buffer moves as one block.
    pub pitched_rows: Option<Expression>,
}

/// An expression that gives no value, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The names every expression may use: the page's settings and the device's grid limit.
fn setting_names(settings: Settings) -> Vec<(String, String)> {
    let device = settings.device.device();
    [
        ("tile", u64::from(settings.tile)),
        ("block", u64::from(settings.block)),
        ("pad", u64::from(settings.pad)),
        ("stride", u64::from(settings.stride)),
        ("regs", u64::from(settings.regs)),
        ("max_grid_x", u64::from(device.max_grid_dim[0])),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value.to_string()))
    .collect()
}

impl LaunchSpec {
    /// A launch of one block of one thread: the file's lines fill it in.
    pub fn new(line: usize) -> LaunchSpec {
        let one = || Expression::new("1", line);
        LaunchSpec {
            lets: Vec::new(),
            defines: Vec::new(),
            grid: [one(), one(), one()],
            block: [one(), one(), one()],
            dynamic_shared: Expression::new("0", line),
            args: Vec::new(),
            buffers: Vec::new(),
            pitched_rows: None,
        }
    }

    /// Every expression's value at `settings`, or the first that has none.
    fn values(&self, settings: Settings) -> Result<Vec<i64>, LaunchError> {
        let mut names = setting_names(settings);
        for (name, expression) in &self.lets {
            let value = fold(&names, &[expression])?[0];
            names.push((name.clone(), value.to_string()));
        }
        let mut expressions: Vec<&Expression> = Vec::new();
        expressions.extend(self.defines.iter().map(|(_, e)| e));
        expressions.extend(&self.grid);
        expressions.extend(&self.block);
        expressions.push(&self.dynamic_shared);
        expressions.extend(self.args.iter().map(|(_, e)| e));
        expressions.extend(self.buffers.iter().map(|(_, e, _)| e));
        expressions.extend(&self.pitched_rows);
        fold(&names, &expressions)
    }

    /// The launch of `kernel` in `source` at `settings`, or the first expression without a value
    /// (the file is checked at the first settings when it is read; a value out of range at
    /// others becomes the nearest one in range).
    pub fn launch(
        &self,
        kernel: &str,
        source: &str,
        settings: Settings,
    ) -> Result<(SimulationInput, Layout), LaunchError> {
        let values = self.values(settings)?;
        let mut values = values.into_iter();
        let mut next = || values.next().unwrap_or(0);
        let mut input = SimulationInput::new(source, kernel, settings.device.device());
        input.regs = settings.regs;
        input.compile = settings.compile;
        input.defines = self
            .defines
            .iter()
            .map(|(name, _)| (name.clone(), next().to_string()))
            .collect();
        let extent = |value: i64| u32::try_from(value.max(1)).unwrap_or(u32::MAX);
        input.grid = Dim3::new(extent(next()), extent(next()), extent(next()));
        input.block = Dim3::new(extent(next()), extent(next()), extent(next()));
        input.dyn_smem = u32::try_from(next().max(0)).unwrap_or(u32::MAX);
        input.args = self
            .args
            .iter()
            .map(|(name, _)| (name.clone(), Value::Int(next())))
            .collect();
        input.buffers = self
            .buffers
            .iter()
            .map(|(name, _, element_bytes)| {
                let elements = u64::try_from(next().max(1)).unwrap_or(1);
                (name.clone(), elements.saturating_mul(*element_bytes))
            })
            .collect();
        let layout = match self.pitched_rows {
            Some(_) => Layout::Pitched {
                row_bytes: u64::try_from(next().max(1)).unwrap_or(1),
            },
            None => Layout::Linear,
        };
        Ok((input, layout))
    }

    /// Checks that every expression has a value at `settings`: a file's errors are found when
    /// it is read, not when a student turns a control.
    pub fn check(&self, settings: Settings) -> Result<(), LaunchError> {
        self.values(settings).map(|_| ())
    }
}

/// The values of `expressions` with `names` defined, in one pass of the front end; the first
/// error names its line.
fn fold(names: &[(String, String)], expressions: &[&Expression]) -> Result<Vec<i64>, LaunchError> {
    let texts: Vec<&str> = expressions.iter().map(|e| e.text.as_str()).collect();
    kernel::constant_expressions("", names, &texts)
        .into_iter()
        .zip(expressions)
        .map(|(result, expression)| {
            result.map_err(|error| LaunchError {
                line: expression.line,
                message: format!("`{}`: {}", expression.text, error.message),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplay_sim::compile_effects::CompileEffects;
    use memplay_sim::DeviceId;

    fn settings(device: DeviceId, block: u32) -> Settings {
        Settings {
            device,
            tile: 16,
            block,
            pad: 0,
            stride: 1,
            regs: 32,
            compile: CompileEffects::AS_COMPILED,
        }
    }

    fn spec(lets: &[(&str, &str)], grid_x: &str) -> LaunchSpec {
        let mut spec = LaunchSpec::new(1);
        spec.lets = lets
            .iter()
            .map(|(name, text)| (name.to_string(), Expression::new(text, 2)))
            .collect();
        spec.grid[0] = Expression::new(grid_x, 3);
        spec
    }

    #[test]
    fn a_let_may_use_the_settings_the_device_and_the_lets_before_it() {
        let spec = spec(
            &[
                ("n", "1 << 26"),
                ("most", "max_grid_x * block"),
                ("covered", "n < most ? n : most"),
            ],
            "(covered + block - 1) / block",
        );
        let (h100, _) = spec
            .launch("k", "", settings(DeviceId::H100, 256))
            .expect("folds");
        assert_eq!(h100.grid.x, (1 << 26) / 256);
        // The G80 takes at most 65,535 blocks along x: the launch covers what they cover.
        let (g80, _) = spec
            .launch("k", "", settings(DeviceId::G80, 256))
            .expect("folds");
        assert_eq!(g80.grid.x, 65_535);
    }

    #[test]
    fn an_unknown_name_is_refused_with_its_line() {
        let error = spec(&[], "n / 32")
            .check(settings(DeviceId::H100, 256))
            .expect_err("n is not defined");
        assert_eq!(error.line, 3);
        assert!(
            error.to_string().starts_with("line 3: `n / 32`: "),
            "{error}"
        );
    }
}
