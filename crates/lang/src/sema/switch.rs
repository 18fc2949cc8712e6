//! `switch` statements (C11 6.8.4.2), lowered to the ops that loops and branches already use.
//!
//! A `switch` is a one-trip loop (`Op::LoopBegin` with `switch` set, no `LoopCond`, no jump back)
//! so that its `break` is the loop's: lanes that break wait at its end, as lanes that leave a loop
//! do, and lanes of one warp may take different cases. The body is cut at its labels into
//! sections, and each section runs under an `if`. The lanes that reach a section's `if` without
//! falling into it from the section before are those that matched no earlier section (a section
//! that ends in `break`, `continue` or `return` lets none through), so a `case` section tests only
//! its own values, and `default` tests that the value is none of the values labelled after it
//! (nothing, when it is last). Where the section before can fall through, the lanes that did are
//! remembered in a register: `matched = matched | (value == c)`. nvcc compiles a short `switch`
//! the same way, a compare and a branch per label.
//!
//! `continue` inside a `switch` continues the loop around it: its lanes set a flag and break, and
//! after the switch the lanes whose flag is set clear it and continue. Registers start at zero
//! and every lane that sets the flag clears it, so it needs no other initialisation.

use super::{err, int_bits, konst, promote, Sema};
use crate::ast::{Expr, Scalar, Stmt, StmtKind, Type};
use crate::ir::{BinOp, Elem, Ex, ExKind, Op, Place, Reg, Unroll};
use crate::name_map::NameMap;
use crate::span::{Diagnostic, Span};

/// A `switch` whose body is being lowered.
pub(super) struct OpenSwitch {
    /// The loop depth where the switch is: a `continue` at this depth continues a loop around it.
    loop_depth: u32,
    /// The register that lanes continuing the loop around the switch set, once one does.
    continue_flag: Option<Reg>,
}

/// The statements of a `switch` body from one run of labels to the next.
struct Section<'a> {
    /// The labels' values as register bits (`None` for `default`).
    labels: Vec<Option<u64>>,
    span: Span,
    statements: Vec<&'a Stmt>,
}

/// `case` or `default`, for messages.
pub(super) fn case_word(is_case: bool) -> &'static str {
    if is_case {
        "case"
    } else {
        "default"
    }
}

/// No lane runs past the end of the statement: it ends in `break`, `continue` or `return`.
fn ends_in_jump(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => true,
        StmtKind::Block(inner) => inner.last().is_some_and(ends_in_jump),
        _ => false,
    }
}

fn reg(reg: Reg, span: Span) -> Ex {
    Ex::new(ExKind::Reg(reg), 1, span)
}

fn binary(op: BinOp, ty: Scalar, lhs: Ex, rhs: Ex, span: Span) -> Ex {
    Ex::new(
        ExKind::Binary {
            op,
            ty,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        1,
        span,
    )
}

fn assign(target: Reg, value: Ex, span: Span) -> Ex {
    Ex::assign_reg(target, Elem::scalar(Scalar::I32), value, 1, span)
}

impl Sema<'_> {
    pub(super) fn switch_statement(
        &mut self,
        value: &Expr,
        body: &Stmt,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let (ex, ty) = self.rvalue(value)?;
        let from = match &ty {
            Type::Scalar(s) if s.is_integer() => *s,
            other => {
                return err(
                    value.span,
                    format!("a 'switch' needs an integer value, not '{other}'"),
                )
            }
        };
        let scalar = promote(from);
        let ex = self.convert_scalar(ex, from, scalar);
        // A variable's register is compared where it is: a lane's body can change it only after
        // the lane has matched.
        let value_reg = match ex.kind {
            ExKind::Reg(r) => r,
            _ => {
                let r = self.alloc(1);
                let store = Ex::new(
                    ExKind::Assign {
                        place: Place::Reg {
                            reg: r,
                            elem: Elem::scalar(scalar),
                        },
                        value: Box::new(ex),
                    },
                    1,
                    value.span,
                );
                self.emit(Op::Eval(store), value.span);
                r
            }
        };
        let begin = self.emit(
            Op::LoopBegin {
                end_at: 0,
                unroll: Unroll::Times(1),
                counter: None,
                switch: true,
            },
            span,
        );
        self.switches.push(OpenSwitch {
            loop_depth: self.loop_depth,
            continue_flag: None,
        });
        self.scopes.push(NameMap::new());
        let result = self.switch_body(body, value_reg, scalar);
        self.scopes.pop();
        let open = self.switches.pop();
        result?;
        self.finish_loop(begin, span, Some(Unroll::Times(1)), None);
        if let Some(flag) = open.and_then(|open| open.continue_flag) {
            let if_at = self.emit(
                Op::If {
                    cond: reg(flag, span),
                    else_at: 0,
                    predicated: None,
                },
                span,
            );
            self.emit(
                Op::Eval(assign(flag, konst(0, Scalar::I32, span), span)),
                span,
            );
            self.continue_statement(span);
            let end = self.emit(Op::EndIf, span);
            self.point_if_at(if_at, end);
        }
        Ok(())
    }

    /// `continue`: the innermost loop's, or, inside a `switch` in that loop, a flag set and a
    /// `break` out of the switch (the module doc).
    pub(super) fn continue_statement(&mut self, span: Span) {
        let in_switch = self
            .switches
            .last()
            .is_some_and(|open| open.loop_depth == self.loop_depth);
        if !in_switch {
            self.emit(Op::Continue, span);
            return;
        }
        let flag = match self.switches.last().and_then(|open| open.continue_flag) {
            Some(flag) => flag,
            None => {
                let flag = self.alloc(1);
                if let Some(open) = self.switches.last_mut() {
                    open.continue_flag = Some(flag);
                }
                flag
            }
        };
        self.emit(
            Op::Eval(assign(flag, konst(1, Scalar::I32, span), span)),
            span,
        );
        self.emit(Op::Break, span);
    }

    fn point_if_at(&mut self, if_at: usize, end: usize) {
        if let Op::If { else_at, .. } = &mut self.code[if_at] {
            *else_at = end;
        }
    }

    /// The sections of a `switch` body, each under its `if`.
    fn switch_body(
        &mut self,
        body: &Stmt,
        value_reg: Reg,
        scalar: Scalar,
    ) -> Result<(), Diagnostic> {
        let statements = match &body.kind {
            StmtKind::Block(statements) => statements.as_slice(),
            _ => std::slice::from_ref(body),
        };
        let mut before: Vec<&Stmt> = Vec::new();
        let mut sections: Vec<Section> = Vec::new();
        let mut seen: Vec<Option<u64>> = Vec::new();
        for statement in statements {
            let mut s = statement;
            let mut labels = Vec::new();
            while let StmtKind::Case(label, inner) = &s.kind {
                let bits = match label {
                    None => None,
                    Some(e) => match self.const_value(e) {
                        Some(super::consts::ConstValue::Int(v)) => Some(int_bits(v, scalar)),
                        _ => {
                            return err(
                                e.span,
                                "a 'case' value must be an integer constant expression",
                            )
                        }
                    },
                };
                if seen.contains(&bits) {
                    let what = match label {
                        Some(_) => "this 'case' value",
                        None => "'default'",
                    };
                    return err(s.span, format!("{what} appears twice in one 'switch'"));
                }
                seen.push(bits);
                labels.push(bits);
                s = inner;
            }
            match (labels.is_empty(), sections.last_mut()) {
                (false, _) => sections.push(Section {
                    labels,
                    span: statement.span,
                    statements: vec![s],
                }),
                (true, Some(section)) => section.statements.push(s),
                (true, None) => before.push(s),
            }
        }
        if !before.is_empty() {
            // Statements before the first label never run; their declarations still count.
            let span = before[0].span;
            let if_at = self.emit(
                Op::If {
                    cond: konst(0, Scalar::Bool, span),
                    else_at: 0,
                    predicated: None,
                },
                span,
            );
            for s in before {
                self.statement(s)?;
            }
            let end = self.emit(Op::EndIf, span);
            self.point_if_at(if_at, end);
        }
        let mut matched: Option<Reg> = None;
        let mut falls_in = false;
        for (k, section) in sections.iter().enumerate() {
            let span = section.span;
            let later: Vec<u64> = sections[k + 1..]
                .iter()
                .flat_map(|later| later.labels.iter().flatten().copied())
                .collect();
            let mut cond: Option<Ex> = None;
            for label in &section.labels {
                let test = match label {
                    Some(bits) => Some(binary(
                        BinOp::Eq,
                        scalar,
                        reg(value_reg, span),
                        konst(*bits, scalar, span),
                        span,
                    )),
                    None => later.iter().fold(None, |all, &bits| {
                        let differs = binary(
                            BinOp::Ne,
                            scalar,
                            reg(value_reg, span),
                            konst(bits, scalar, span),
                            span,
                        );
                        Some(match all {
                            Some(all) => binary(BinOp::BitAnd, Scalar::I32, all, differs, span),
                            None => differs,
                        })
                    }),
                };
                let Some(test) = test else {
                    // `default` with no label after it: every lane here matches.
                    cond = None;
                    break;
                };
                cond = Some(match cond {
                    Some(c) => binary(BinOp::BitOr, Scalar::I32, c, test, span),
                    None => test,
                });
            }
            let cond = match (falls_in, matched, cond) {
                (true, Some(m), Some(c)) => {
                    Some(binary(BinOp::BitOr, Scalar::I32, reg(m, span), c, span))
                }
                (_, _, c) => c,
            };
            let always = || konst(1, Scalar::I32, span);
            let falls_out = k + 1 < sections.len()
                && !section.statements.last().is_some_and(|s| ends_in_jump(s));
            let cond = if falls_out {
                let m = match matched {
                    Some(m) => m,
                    None => {
                        let m = self.alloc(1);
                        matched = Some(m);
                        m
                    }
                };
                assign(m, cond.unwrap_or_else(always), span)
            } else {
                cond.unwrap_or_else(always)
            };
            let if_at = self.emit(
                Op::If {
                    cond,
                    else_at: 0,
                    predicated: None,
                },
                span,
            );
            for s in &section.statements {
                self.statement(s)?;
            }
            let end = self.emit(Op::EndIf, span);
            self.point_if_at(if_at, end);
            falls_in = falls_out;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::{FunctionIr, Op};
    use crate::issue::{annotate, LOADS_IN_FLIGHT_OUTSIDE_LOOPS};

    fn first_kernel(source: &str) -> FunctionIr {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        program.functions[0].clone()
    }

    fn error(source: &str) -> String {
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        match program.kernel("k") {
            Ok(_) => "compiles".to_string(),
            Err(d) => d.to_string(),
        }
    }

    /// The issue cost and loads in flight of the ops on `line`, summed and taken from the first.
    fn line_issue(function: &FunctionIr, line: u32) -> (u32, u32) {
        let (issue, in_flight) = annotate(function);
        let ops: Vec<usize> = (0..function.code.len())
            .filter(|&pc| {
                function.spans[pc].line == line && matches!(function.code[pc], Op::Eval(_))
            })
            .collect();
        (ops.iter().map(|&pc| issue[pc]).sum(), in_flight[ops[0]])
    }

    #[test]
    fn a_statement_in_a_switch_costs_what_it_costs_in_an_if() {
        // In a loop, `threadIdx.x + n` would be hoisted (it reads nothing the loop writes) and
        // the load's copies in flight would be the loop's unrolling; a switch is no loop.
        let in_switch = first_kernel(
            "__global__ void k(float* a, int n) {\n\
               switch (n) {\n\
               case 1: a[threadIdx.x] = a[threadIdx.x + n] * 2.0f; break;\n\
               }\n\
             }",
        );
        let in_if = first_kernel(
            "__global__ void k(float* a, int n) {\n\
               if (n == 1) {\n\
               a[threadIdx.x] = a[threadIdx.x + n] * 2.0f;\n\
               }\n\
             }",
        );
        let (switch_issue, switch_in_flight) = line_issue(&in_switch, 3);
        assert_eq!(switch_issue, line_issue(&in_if, 3).0);
        assert_eq!(switch_in_flight, LOADS_IN_FLIGHT_OUTSIDE_LOOPS);
        // The switch is one `LoopBegin` marked as a switch, with no loop test.
        let begins: Vec<bool> = in_switch
            .code
            .iter()
            .filter_map(|op| match op {
                Op::LoopBegin { switch, .. } => Some(*switch),
                _ => None,
            })
            .collect();
        assert_eq!(begins, [true]);
        assert!(!in_switch
            .code
            .iter()
            .any(|op| matches!(op, Op::LoopCond { .. })));
    }

    #[test]
    fn each_case_is_one_compare_and_a_branch_and_a_last_default_only_a_branch() {
        // Cases that end in `break` need no register of lanes matched so far: the `if` of
        // `case 2` tests `v == 2` (a compare and a branch, 2 instructions), and `default`, last,
        // tests nothing (its branch, 1).
        let function = first_kernel(
            "__global__ void k(int* a, int v) {\n\
               switch (v) {\n\
               case 1: a[0] = 1; break;\n\
               case 2: a[0] = 2; break;\n\
               default: a[0] = 3;\n\
               }\n\
             }",
        );
        let (issue, _) = annotate(&function);
        let if_issue = |line: u32| -> Vec<u32> {
            (0..function.code.len())
                .filter(|&pc| {
                    function.spans[pc].line == line && matches!(function.code[pc], Op::If { .. })
                })
                .map(|pc| issue[pc] / crate::issue::ISSUE_SCALE)
                .collect()
        };
        assert_eq!(if_issue(3), [2]);
        assert_eq!(if_issue(4), [2]);
        assert_eq!(if_issue(5), [1]);
    }

    #[test]
    fn bad_switches_and_labels_are_named() {
        let cases = [
            (
                "__global__ void k(float x) { switch (x) { default: break; } }",
                "1:38: a 'switch' needs an integer value, not 'float'",
            ),
            (
                "__global__ void k(int x, int y) { switch (x) { case y: break; } }",
                "1:53: a 'case' value must be an integer constant expression",
            ),
            (
                "__global__ void k(int x) { switch (x) { case 1: case 1: break; } }",
                "1:49: this 'case' value appears twice in one 'switch'",
            ),
            (
                "__global__ void k(int x) { case 1: x = 2; }",
                "1:28: 'case' label outside a 'switch'",
            ),
            (
                "__global__ void k(int x) { switch (x) { case 0: if (x) { default: x = 1; } } }",
                "1:58: a 'default' label inside a nested statement of a 'switch' (as in Duff's device) is not simulated",
            ),
            (
                "__global__ void k(int x) { switch (x) { case 0: continue; } }",
                "1:49: 'continue' outside a loop",
            ),
            (
                "__global__ void k(int x) { switch (x) { case 0: break; } break; }",
                "1:58: 'break' outside a loop or 'switch'",
            ),
            (
                "__global__ void k(int* a) { goto end; end: a[0] = 1; }",
                "1:29: 'goto' is not simulated; use a loop with 'break' or 'continue', or if/else",
            ),
        ];
        for (source, expected) in cases {
            assert_eq!(error(source), expected, "{source}");
        }
    }
}
