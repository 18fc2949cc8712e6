//! Constant expressions: what a `const` name or an array size folds to, whether a loop has a constant trip count, and C's integer folding and literals.
//! Also the walks over the syntax tree the passes share: what a statement assigns, its full
//! expressions, the function of a name.

use super::*;

/// A compile-time constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ConstValue {
    Int(i64),
    Float(f64),
}

impl ConstValue {
    fn as_f64(self) -> f64 {
        match self {
            ConstValue::Int(i) => i as f64,
            ConstValue::Float(f) => f,
        }
    }
}

/// Does the statement or expression assign, increment or take the address of `name`?
pub(super) fn stmt_modifies(s: &Stmt, name: &str) -> bool {
    match &s.kind {
        StmtKind::Declaration(d) => d.declarators.iter().any(|x| {
            x.name == name
                || match &x.init {
                    Some(Initializer::Expr(e)) => expr_modifies(e, name),
                    _ => false,
                }
        }),
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr_modifies(e, name),
        StmtKind::Block(stmts) => stmts.iter().any(|s| stmt_modifies(s, name)),
        StmtKind::If(c, a, b) => {
            expr_modifies(c, name)
                || stmt_modifies(a, name)
                || b.as_ref().is_some_and(|b| stmt_modifies(b, name))
        }
        StmtKind::While(c, body) | StmtKind::DoWhile(body, c) => {
            expr_modifies(c, name) || stmt_modifies(body, name)
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
            ..
        } => {
            init.as_ref().is_some_and(|s| stmt_modifies(s, name))
                || cond.as_ref().is_some_and(|e| expr_modifies(e, name))
                || step.as_ref().is_some_and(|e| expr_modifies(e, name))
                || stmt_modifies(body, name)
        }
        StmtKind::Switch(c, body) => expr_modifies(c, name) || stmt_modifies(body, name),
        StmtKind::Case(_, s) => stmt_modifies(s, name),
        StmtKind::Return(None)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Empty
        | StmtKind::Unsupported(_) => false,
    }
}

/// Whether what a declarator declares (a variable, or the elements of an array) is itself
/// `const`. The declaration's `const` belongs to its base type: `const int n` and `const float
/// w[3]` are constant, but in `const float* p` it is what `p` points to that is constant (the
/// pointer type says so), and `p` may move; in `float* const p` the pointer itself is constant.
pub(super) fn const_elements(decl: &Declaration, d: &Declarator) -> bool {
    if matches!(d.ty, Type::Pointer { .. }) {
        d.pointer_const
    } else {
        decl.is_const
    }
}

pub(super) fn is_ident(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Ident(n) if n == name)
}

pub(super) fn expr_modifies(e: &Expr, name: &str) -> bool {
    match &e.kind {
        ExprKind::Assign(_, lhs, rhs) => {
            is_ident(lhs, name) || expr_modifies(lhs, name) || expr_modifies(rhs, name)
        }
        ExprKind::Unary(op, a) => {
            (matches!(
                op,
                UnaryOp::PreInc
                    | UnaryOp::PreDec
                    | UnaryOp::PostInc
                    | UnaryOp::PostDec
                    | UnaryOp::AddrOf
            ) && is_ident(a, name))
                || expr_modifies(a, name)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) | ExprKind::Comma(a, b) => {
            expr_modifies(a, name) || expr_modifies(b, name)
        }
        ExprKind::Conditional(a, b, c) => {
            expr_modifies(a, name) || expr_modifies(b, name) || expr_modifies(c, name)
        }
        ExprKind::Call { args, .. } => args.iter().any(|a| expr_modifies(a, name)),
        ExprKind::Member { base, .. } => expr_modifies(base, name),
        ExprKind::Cast(_, a) | ExprKind::SizeofExpr(a) => expr_modifies(a, name),
        _ => false,
    }
}

impl Sema<'_> {
    pub(super) fn const_value(&self, e: &Expr) -> Option<ConstValue> {
        use ConstValue::*;
        Some(match &e.kind {
            ExprKind::Int { value, .. } => Int(*value as i64),
            ExprKind::Bool(b) => Int(i64::from(*b)),
            ExprKind::Float { value, .. } => Float(*value),
            ExprKind::Ident(name) => match self.lookup(name) {
                Some(Symbol::Var {
                    const_value: Some(v),
                    ..
                }) => Int(*v),
                Some(Symbol::Constant { value, .. }) => *value,
                _ if name == "warpSize" => Int(32),
                _ => return None,
            },
            ExprKind::SizeofType(ty) => Int(ty.size() as i64),
            ExprKind::Call { name, args, .. } => self.constexpr_call(name, args)?,
            ExprKind::Unary(op, a) => {
                let a = self.const_value(a)?;
                match (op, a) {
                    (UnaryOp::Neg, Int(i)) => Int(i.wrapping_neg()),
                    (UnaryOp::Neg, Float(f)) => Float(-f),
                    (UnaryOp::Plus, v) => v,
                    (UnaryOp::BitNot, Int(i)) => Int(!i),
                    (UnaryOp::Not, v) => Int(i64::from(v.as_f64() == 0.0)),
                    _ => return None,
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.const_value(a)?, self.const_value(b)?);
                match (a, b) {
                    (Int(x), Int(y)) => Int(match op {
                        BinaryOp::Add => x.wrapping_add(y),
                        BinaryOp::Sub => x.wrapping_sub(y),
                        BinaryOp::Mul => x.wrapping_mul(y),
                        BinaryOp::Div => x.checked_div(y)?,
                        BinaryOp::Rem => x.checked_rem(y)?,
                        BinaryOp::Shl => x.wrapping_shl(y as u32),
                        BinaryOp::Shr => x.wrapping_shr(y as u32),
                        BinaryOp::BitAnd => x & y,
                        BinaryOp::BitOr => x | y,
                        BinaryOp::BitXor => x ^ y,
                        BinaryOp::Lt => i64::from(x < y),
                        BinaryOp::Gt => i64::from(x > y),
                        BinaryOp::Le => i64::from(x <= y),
                        BinaryOp::Ge => i64::from(x >= y),
                        BinaryOp::Eq => i64::from(x == y),
                        BinaryOp::Ne => i64::from(x != y),
                        BinaryOp::And => i64::from(x != 0 && y != 0),
                        BinaryOp::Or => i64::from(x != 0 || y != 0),
                    }),
                    (x, y) => {
                        let (x, y) = (x.as_f64(), y.as_f64());
                        match op {
                            BinaryOp::Add => Float(x + y),
                            BinaryOp::Sub => Float(x - y),
                            BinaryOp::Mul => Float(x * y),
                            BinaryOp::Div => Float(x / y),
                            _ => return None,
                        }
                    }
                }
            }
            ExprKind::Conditional(c, a, b) => {
                if self.const_value(c)?.as_f64() != 0.0 {
                    self.const_value(a)?
                } else {
                    self.const_value(b)?
                }
            }
            ExprKind::Cast(Type::Scalar(s), a) => match self.const_value(a)? {
                Int(i) if s.is_integer() => Int(int_bits(i, *s) as i64),
                Float(f) if s.is_integer() => Int(int_bits(f as i64, *s) as i64),
                v => Float(v.as_f64()),
            },
            _ => return None,
        })
    }

    /// An index that is known at compile time once constant-trip loops are unrolled.
    pub(super) fn unrollable(&self, e: &Expr) -> bool {
        if matches!(self.const_value(e), Some(ConstValue::Int(_))) {
            return true;
        }
        match &e.kind {
            ExprKind::Ident(name) => {
                matches!(self.lookup(name), Some(Symbol::Var { reg, .. }) if self.unroll_regs.contains(reg))
            }
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot, a)
            | ExprKind::Cast(_, a) => self.unrollable(a),
            ExprKind::Binary(op, a, b) => {
                !matches!(op, BinaryOp::And | BinaryOp::Or)
                    && self.unrollable(a)
                    && self.unrollable(b)
            }
            _ => false,
        }
    }

    // ----- functions and statements -----

    /// The variable of `for (int k = A; k < B; ++k)` with constant `A`, `B` and step, not changed
    /// in the body: nvcc can unroll such a loop, which makes `k` a constant in each copy.
    pub(super) fn constant_trip_variable(
        &self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &Stmt,
    ) -> Option<String> {
        let StmtKind::Declaration(d) = &init?.kind else {
            return None;
        };
        let [x] = d.declarators.as_slice() else {
            return None;
        };
        // `auto k = 0` is an `int` (the type of its integer initialiser).
        let integer = matches!(x.ty, Type::Scalar(s) if s.is_integer()) || d.is_auto;
        if !x.dims.is_empty() || !integer {
            return None;
        }
        let Some(Initializer::Expr(start)) = &x.init else {
            return None;
        };
        let start = self.const_value(start)?;
        if d.is_auto && !matches!(start, ConstValue::Int(_)) {
            return None;
        }
        let name = x.name.as_str();
        let ExprKind::Binary(op, lhs, rhs) = &cond?.kind else {
            return None;
        };
        if !matches!(
            op,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Ne
        ) || !is_ident(lhs, name)
        {
            return None;
        }
        self.const_value(rhs)?;
        let step_ok = match &step?.kind {
            ExprKind::Unary(
                UnaryOp::PreInc | UnaryOp::PostInc | UnaryOp::PreDec | UnaryOp::PostDec,
                v,
            ) => is_ident(v, name),
            ExprKind::Assign(Some(BinaryOp::Add | BinaryOp::Sub), v, by) => {
                is_ident(v, name) && self.const_value(by).is_some()
            }
            // `w <<= 1` from a constant to a constant: nvcc counts the trips (eight in
            // `p_pred_grow`'s `for (int w = 1; w < 256; w <<= 1)`) and unrolls them all.
            ExprKind::Assign(
                Some(BinaryOp::Shl | BinaryOp::Shr | BinaryOp::Mul | BinaryOp::Div),
                v,
                by,
            ) => {
                is_ident(v, name)
                    && matches!(self.const_value(by), Some(ConstValue::Int(b)) if b != 0)
            }
            _ => false,
        };
        if !step_ok || stmt_modifies(body, name) || self.may_change(body, name) {
            return None;
        }
        Some(name.to_string())
    }
}

/// An integer literal with C's type rules: the first of int, unsigned (hex only), long,
/// unsigned long that holds it, with `u` and `l` suffixes narrowing the choice.
pub(super) fn int_literal(v: u64, unsigned: bool, long: bool, hex: bool, span: Span) -> Lv {
    let ty = match (unsigned, long) {
        (false, false) if v <= i32::MAX as u64 => Scalar::I32,
        (false, false) if hex && v <= u64::from(u32::MAX) => Scalar::U32,
        (true, false) if v <= u64::from(u32::MAX) => Scalar::U32,
        (false, _) if v <= i64::MAX as u64 => Scalar::I64,
        _ => Scalar::U64,
    };
    Lv::Value(konst(v, ty, span), Type::Scalar(ty))
}

pub(super) fn comparison(op: BinaryOp) -> BinOp {
    match op {
        BinaryOp::Lt => BinOp::Lt,
        BinaryOp::Le => BinOp::Le,
        BinaryOp::Gt => BinOp::Gt,
        BinaryOp::Ge => BinOp::Ge,
        BinaryOp::Eq => BinOp::Eq,
        _ => BinOp::Ne,
    }
}

/// Folds integer arithmetic on canonical constants of type `ty` (not division: that may fault).
pub(super) fn fold_int(op: BinOp, a: i64, b: i64, ty: Scalar) -> Option<i64> {
    let bits = ty.size() * 8;
    let (ua, ub) = (a as u64, b as u64);
    let shift = (b as u32) & (bits - 1);
    let signed = ty.is_signed();
    let cmp = |o: std::cmp::Ordering| -> std::cmp::Ordering { o };
    let ord = if signed {
        cmp(a.cmp(&b))
    } else {
        cmp(ua.cmp(&ub))
    };
    Some(match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::Shl => a.wrapping_shl(shift),
        BinOp::Shr if signed => a.wrapping_shr(shift),
        BinOp::Shr => {
            let masked = if bits == 64 {
                ua
            } else {
                ua & ((1u64 << bits) - 1)
            };
            (masked >> shift) as i64
        }
        BinOp::Lt => i64::from(ord.is_lt()),
        BinOp::Le => i64::from(ord.is_le()),
        BinOp::Gt => i64::from(ord.is_gt()),
        BinOp::Ge => i64::from(ord.is_ge()),
        BinOp::Eq => i64::from(a == b),
        BinOp::Ne => i64::from(a != b),
        BinOp::Min => {
            if ord.is_le() {
                a
            } else {
                b
            }
        }
        BinOp::Max => {
            if ord.is_ge() {
                a
            } else {
                b
            }
        }
        BinOp::Div | BinOp::Rem => return None,
    })
}

/// The parsed function named `name`.
pub(super) fn function_ast<'u>(unit: &'u TranslationUnit, name: &str) -> Option<&'u Function> {
    unit.items.iter().find_map(|item| match item {
        Item::Function(f) if f.name == name => Some(f),
        _ => None,
    })
}

/// Calls `visit` with each full expression of the statement and of the statements in it, and
/// whether it is the initialiser of a reference to a non-`const` place.
pub(super) fn each_expression(s: &Stmt, visit: &mut dyn FnMut(&Expr, bool)) {
    match &s.kind {
        StmtKind::Declaration(d) => {
            for x in &d.declarators {
                if let Some(Initializer::Expr(e)) = &x.init {
                    visit(e, x.reference && !const_elements(d, x));
                }
            }
        }
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => visit(e, false),
        StmtKind::Block(inner) => inner.iter().for_each(|s| each_expression(s, visit)),
        StmtKind::If(c, a, b) => {
            visit(c, false);
            each_expression(a, visit);
            if let Some(b) = b {
                each_expression(b, visit);
            }
        }
        StmtKind::While(c, body) | StmtKind::DoWhile(body, c) | StmtKind::Switch(c, body) => {
            visit(c, false);
            each_expression(body, visit);
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
            ..
        } => {
            if let Some(init) = init {
                each_expression(init, visit);
            }
            cond.iter().chain(step.iter()).for_each(|e| visit(e, false));
            each_expression(body, visit);
        }
        StmtKind::Case(_, s) => each_expression(s, visit),
        _ => {}
    }
}
