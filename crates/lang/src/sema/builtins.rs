//! Calls: `__device__` functions and the CUDA and math builtins (`__syncthreads`, atomics, `fmaf`, `sqrtf`, ...).

use super::*;
use crate::header_names::vector_type;
use crate::refused;

impl Sema<'_> {
    #[inline(never)]
    pub(super) fn call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        if let Some(instance) = self.deduced(name, name_span, args)? {
            return self.call(&instance, name_span, args, span);
        }
        if let Some(&index) = self.function_index.get(name) {
            let callee = &self.functions[index];
            if callee.kind == FunctionKind::Kernel {
                return err(name_span, format!("'{name}' is a __global__ kernel; kernels cannot be called from device code"));
            }
            if args.len() != callee.params.len() {
                return err(
                    name_span,
                    format!(
                        "'{name}' takes {} arguments, not {}",
                        callee.params.len(),
                        args.len()
                    ),
                );
            }
            if self.lowered_in_place(name) {
                return self.inline_call(name, args, name_span);
            }
            let param_types: Vec<Type> = callee.params.iter().map(|p| p.ty.clone()).collect();
            let ret_ty = self.unit_return_type(name);
            let mut lowered = Vec::new();
            for (a, pty) in args.iter().zip(&param_types) {
                let (ex, ty) = self.rvalue(a)?;
                lowered.push(self.convert(ex, &ty, pty, a.span)?);
            }
            if !self.callees.contains(&index) {
                self.callees.push(index);
            }
            let width = width_of(&ret_ty);
            return Ok((
                Ex::new(
                    ExKind::Call {
                        function: index,
                        args: lowered,
                    },
                    width,
                    span,
                ),
                ret_ty,
            ));
        }
        // An overloaded function (`dot` of `float2` and of `float3`): the best match of the
        // arguments' types among the functions of that name (`parser::name_overloads`).
        let overloads = self.overloads(name);
        if !overloads.is_empty() {
            let mut lowered = Vec::with_capacity(args.len());
            for a in args {
                let (ex, ty) = self.rvalue(a)?;
                lowered.push((ex, ty, a.span));
            }
            let types: Vec<Type> = lowered.iter().map(|(_, t, _)| t.clone()).collect();
            let Some(index) = self.best_overload(&overloads, &types, false) else {
                let written: Vec<String> = types.iter().map(Type::to_string).collect();
                return err(
                    name_span,
                    format!("no '{name}' takes ({})", written.join(", ")),
                );
            };
            return self.call_function(index, Vec::new(), lowered, span);
        }
        self.builtin(name, name_span, args, span)
    }

    pub(super) fn expect_args(
        &self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        n: usize,
    ) -> Result<(), Diagnostic> {
        if args.len() != n {
            let plural = if n == 1 { "argument" } else { "arguments" };
            return err(
                name_span,
                format!("'{name}' takes {n} {plural}, not {}", args.len()),
            );
        }
        Ok(())
    }

    pub(super) fn scalar_arg(&mut self, a: &Expr, name: &str) -> Result<(Ex, Scalar), Diagnostic> {
        let (ex, ty) = self.rvalue(a)?;
        match ty {
            Type::Scalar(s) => Ok((ex, s)),
            other => err(
                a.span,
                format!("'{name}' needs a number here, not '{other}'"),
            ),
        }
    }

    #[inline(never)]
    pub(super) fn builtin(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        // The `_block` and `_system` scopes of an atomic are the same operation on one GPU.
        let name = match name
            .strip_suffix("_block")
            .or_else(|| name.strip_suffix("_system"))
        {
            Some(atomic) if atomic.starts_with("atomic") => atomic,
            _ => name,
        };
        if let Some(half) = self.half_builtin(name, name_span, args, span) {
            return half;
        }
        if let Some(warp) = self.warp_builtin(name, name_span, args, span) {
            return warp;
        }
        if let Some(vote) = self.barrier_vote(name, name_span, args, span) {
            return vote;
        }
        if let Some(intrinsic) = self.intrinsic(name, name_span, args, span) {
            return intrinsic;
        }
        if let Some(output) = self.output_builtin(name, name_span, args, span) {
            return output;
        }
        if let Some(random) = self.curand_builtin(name, name_span, args, span) {
            return random;
        }
        let math1 = |f: &str| -> Option<(MathFn, Option<Scalar>)> {
            let (base, ty) = match f.strip_suffix('f') {
                Some(b) if !matches!(f, "erf" | "fmaf") => (b, Some(Scalar::F32)),
                _ => (f, None),
            };
            let fast = base.starts_with("__");
            let base = base.strip_prefix("__").unwrap_or(base);
            let m = match base {
                "sin" if fast => MathFn::FastSin,
                "cos" if fast => MathFn::FastCos,
                "exp" if fast => MathFn::FastExp,
                "log" if fast => MathFn::FastLog,
                "sqrt" => MathFn::Sqrt,
                "rsqrt" => MathFn::Rsqrt,
                "exp" => MathFn::Exp,
                "log" => MathFn::Log,
                "sin" => MathFn::Sin,
                "cos" => MathFn::Cos,
                "tan" => MathFn::Tan,
                "fabs" => MathFn::Fabs,
                "floor" => MathFn::Floor,
                "ceil" => MathFn::Ceil,
                "round" => MathFn::Round,
                "trunc" => MathFn::Trunc,
                "exp2" => MathFn::Exp2,
                "log2" => MathFn::Log2,
                "log10" => MathFn::Log10,
                "tanh" => MathFn::Tanh,
                "sinh" => MathFn::Sinh,
                "cosh" => MathFn::Cosh,
                "asin" => MathFn::Asin,
                "acos" => MathFn::Acos,
                "atan" => MathFn::Atan,
                "cbrt" => MathFn::Cbrt,
                "expm1" => MathFn::Expm1,
                "log1p" => MathFn::Log1p,
                _ => return None,
            };
            Some((m, ty))
        };
        match name {
            "__syncthreads" | "__syncwarp" => err(
                name_span,
                format!("{name}() must be a statement of its own"),
            ),
            "__threadfence" | "__threadfence_block" => {
                self.expect_args(name, name_span, args, 0)?;
                Ok((Ex::new(ExKind::Fence, 0, span), Type::Void))
            }
            "fmaf" | "fma" | "__fmaf_rn" => {
                self.expect_args(name, name_span, args, 3)?;
                let ty = if name == "fma" {
                    Scalar::F64
                } else {
                    Scalar::F32
                };
                let mut parts = Vec::new();
                for a in args {
                    let (ex, s) = self.scalar_arg(a, name)?;
                    parts.push(self.convert_scalar(ex, s, ty));
                }
                let c = parts.pop();
                let b = parts.pop();
                let a = parts.pop();
                let (Some(a), Some(b), Some(c)) = (a, b, c) else {
                    return err(name_span, "internal: fma arguments");
                };
                Ok((
                    Ex::new(
                        ExKind::Fma {
                            ty,
                            a: Box::new(a),
                            b: Box::new(b),
                            c: Box::new(c),
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
            "min" | "max" | "umin" | "umax" | "fminf" | "fmaxf" | "fmin" | "fmax" => {
                self.expect_args(name, name_span, args, 2)?;
                let (ea, sa) = self.scalar_arg(&args[0], name)?;
                let (eb, sb) = self.scalar_arg(&args[1], name)?;
                let ty = match name {
                    "fminf" | "fmaxf" => Scalar::F32,
                    "fmin" | "fmax" => Scalar::F64,
                    _ => common(sa, sb),
                };
                let ea = self.convert_scalar(ea, sa, ty);
                let eb = self.convert_scalar(eb, sb, ty);
                let op = if name.contains("min") {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                Ok((
                    Ex::new(
                        ExKind::Binary {
                            op,
                            ty,
                            lhs: Box::new(ea),
                            rhs: Box::new(eb),
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
            "abs" | "labs" | "llabs" => {
                self.expect_args(name, name_span, args, 1)?;
                let (ex, s) = self.scalar_arg(&args[0], name)?;
                let ty = promote(s);
                let ex = self.convert_scalar(ex, s, ty);
                Ok((
                    Ex::new(
                        ExKind::Math {
                            f: MathFn::Abs,
                            ty,
                            args: vec![ex],
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
            "powf" | "pow" | "__powf" | "atan2f" | "atan2" | "hypotf" | "hypot" | "copysignf"
            | "copysign" | "fmodf" | "fmod" => {
                self.expect_args(name, name_span, args, 2)?;
                let ty = if name.ends_with('f') {
                    Scalar::F32
                } else {
                    Scalar::F64
                };
                let f = match name.trim_start_matches('_').trim_end_matches('f') {
                    "atan2" => MathFn::Atan2,
                    "hypot" => MathFn::Hypot,
                    "copysign" => MathFn::Copysign,
                    "fmod" => MathFn::Fmod,
                    _ => MathFn::Pow,
                };
                let mut parts = Vec::new();
                for a in args {
                    let (ex, s) = self.scalar_arg(a, name)?;
                    parts.push(self.convert_scalar(ex, s, ty));
                }
                Ok((
                    Ex::new(ExKind::Math { f, ty, args: parts }, 1, span),
                    Type::Scalar(ty),
                ))
            }
            "__fdividef" | "fdividef" => {
                self.expect_args(name, name_span, args, 2)?;
                let (ea, sa) = self.scalar_arg(&args[0], name)?;
                let (eb, sb) = self.scalar_arg(&args[1], name)?;
                let ea = self.convert_scalar(ea, sa, Scalar::F32);
                let eb = self.convert_scalar(eb, sb, Scalar::F32);
                let ex = Ex::new(
                    ExKind::Binary {
                        op: BinOp::Div,
                        ty: Scalar::F32,
                        lhs: Box::new(ea),
                        rhs: Box::new(eb),
                    },
                    1,
                    span,
                );
                Ok((ex, Type::Scalar(Scalar::F32)))
            }
            _ if vector_maker(name).is_some() => {
                let (scalar, n) = vector_maker(name).unwrap_or((Scalar::I32, 1));
                self.expect_args(name, name_span, args, usize::from(n))?;
                self.make_vector(name, args, (scalar, n), span)
            }
            "dim3" => self.dim3(name_span, args, span),
            "atomicAdd" | "atomicSub" | "atomicExch" | "atomicMin" | "atomicMax" | "atomicAnd"
            | "atomicOr" | "atomicXor" | "atomicCAS" | "atomicInc" | "atomicDec" => {
                let op = match name {
                    "atomicAdd" => AtomicOp::Add,
                    "atomicSub" => AtomicOp::Sub,
                    "atomicExch" => AtomicOp::Exch,
                    "atomicMin" => AtomicOp::Min,
                    "atomicMax" => AtomicOp::Max,
                    "atomicAnd" => AtomicOp::And,
                    "atomicOr" => AtomicOp::Or,
                    "atomicXor" => AtomicOp::Xor,
                    "atomicInc" => AtomicOp::Inc,
                    "atomicDec" => AtomicOp::Dec,
                    _ => AtomicOp::Cas,
                };
                self.expect_args(
                    name,
                    name_span,
                    args,
                    if op == AtomicOp::Cas { 3 } else { 2 },
                )?;
                let (pex, pty) = self.rvalue(&args[0])?;
                let Type::Pointer {
                    pointee,
                    pointee_const,
                } = pty
                else {
                    return err(args[0].span, format!("the first argument of '{name}' must be a pointer (write '&x'), not '{pty}'"));
                };
                // The types of the function's overloads (CUDA C++ Programming Guide, "Atomic
                // Functions"), named as there.
                let allowed: &[Scalar] = match op {
                    AtomicOp::Add => &[
                        Scalar::I32,
                        Scalar::U32,
                        Scalar::U64,
                        Scalar::F32,
                        Scalar::F64,
                        Scalar::F16,
                        Scalar::BF16,
                    ],
                    AtomicOp::Exch => &[
                        Scalar::I32,
                        Scalar::U32,
                        Scalar::U64,
                        Scalar::F32,
                        Scalar::F64,
                    ],
                    _ => &[Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64],
                };
                let works_on = || {
                    let mut names: Vec<&str> = allowed.iter().map(|&a| a.name()).collect();
                    if op == AtomicOp::Add {
                        names.extend(["half2", "__nv_bfloat162"]);
                    }
                    match names.split_last() {
                        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                        None => String::new(),
                    }
                };
                // `atomicAdd` on a pair of 16-bit floats adds each half.
                if let (AtomicOp::Add, Type::Vector(s, 2)) = (op, &*pointee) {
                    if s.is_half() {
                        let pair = (*s, pointee_const);
                        return self.atomic_add_pair(pair, pex, &args[..2], span);
                    }
                }
                let Type::Scalar(s) = *pointee else {
                    return err(
                        args[0].span,
                        format!("'{name}' works on {}, not '{pointee}'", works_on()),
                    );
                };
                if !allowed.contains(&s) {
                    return err(
                        args[0].span,
                        format!(
                            "'{name}' does not work on '{}': it works on {}",
                            s.name(),
                            works_on()
                        ),
                    );
                }
                if pointee_const {
                    return err(
                        args[0].span,
                        format!("'{name}' cannot change a const location"),
                    );
                }
                let (vex, vs) = self.scalar_arg(&args[1], name)?;
                let value = self.convert_scalar(vex, vs, s);
                let value2 = if op == AtomicOp::Cas {
                    let (ex2, s2) = self.scalar_arg(&args[2], name)?;
                    Some(Box::new(self.convert_scalar(ex2, s2, s)))
                } else {
                    None
                };
                let ex = Ex::new(
                    ExKind::Atomic {
                        op,
                        ty: s,
                        addr: Box::new(pex),
                        value: Box::new(value),
                        value2,
                    },
                    1,
                    span,
                );
                Ok((ex, Type::Scalar(s)))
            }
            other => {
                let Some((f, single)) = math1(other) else {
                    if let Some(library) = self.library_call(other, name_span, args, span) {
                        return library;
                    }
                    if let Some(refusal) = refused::function(other) {
                        return Err(Diagnostic::of_kind(
                            DiagnosticKind::NotSimulated,
                            name_span,
                            refusal,
                        ));
                    }
                    return err(
                        name_span,
                        format!("'{other}' is not declared (no such function or builtin)"),
                    );
                };
                self.expect_args(name, name_span, args, 1)?;
                let (ex, s) = self.scalar_arg(&args[0], name)?;
                let ty = single.unwrap_or(if s == Scalar::F32 {
                    Scalar::F32
                } else {
                    Scalar::F64
                });
                let ex = self.convert_scalar(ex, s, ty);
                Ok((
                    Ex::new(
                        ExKind::Math {
                            f,
                            ty,
                            args: vec![ex],
                        },
                        1,
                        span,
                    ),
                    Type::Scalar(ty),
                ))
            }
        }
    }

    /// A vector of the components `args` (as many as it has, or fewer with the rest 1 for
    /// `dim3`), each converted to its component type.
    fn make_vector(
        &mut self,
        name: &str,
        args: &[Expr],
        (scalar, n): (Scalar, u8),
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        let mut parts = Vec::new();
        for a in args {
            let (ex, ty) = self.rvalue(a)?;
            match ty {
                Type::Scalar(s) => parts.push(self.convert_scalar(ex, s, scalar)),
                // `dim3(threadIdx)`: dim3's constructor from a `uint3` copies it.
                Type::Vector(s, k)
                    if name == "dim3" && args.len() == 1 && (s, k) == (scalar, n) =>
                {
                    return Ok((ex, ty))
                }
                other => {
                    return err(
                        a.span,
                        format!("'{name}' needs a number here, not '{other}'"),
                    )
                }
            }
        }
        while parts.len() < usize::from(n) {
            parts.push(konst(1, scalar, span));
        }
        Ok((
            Ex::new(ExKind::MakeVector { scalar, parts }, n, span),
            Type::Vector(scalar, n),
        ))
    }

    /// `dim3(x, y, z)`: the constructor of `vector_types.h`, whose missing components are 1.
    fn dim3(
        &mut self,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(Ex, Type), Diagnostic> {
        if args.len() > 3 {
            return err(
                name_span,
                format!("'dim3' takes at most 3 values, not {}", args.len()),
            );
        }
        self.make_vector("dim3", args, (Scalar::U32, 3), span)
    }
}

/// The component type and count of the vector `name` makes: `make_float3` and its kin of
/// `vector_functions.h`, one for every vector type but `dim3`.
fn vector_maker(name: &str) -> Option<(Scalar, u8)> {
    name.strip_prefix("make_")
        .filter(|word| *word != "dim3")
        .and_then(vector_type)
}
