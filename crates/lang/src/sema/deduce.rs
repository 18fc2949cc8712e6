//! Template argument deduction for a call of a function template without its arguments
//! (`max_of(a, b)`), in the simple cases of C++ [temp.deduct.call]: a parameter written `T` takes
//! the argument's type with arrays decayed, one written `T*` or `const T*` the type the argument
//! points to; arguments left undeduced take their defaults. Two arguments that deduce different
//! types for one parameter are an error, as nvcc makes them.

use super::{err, Lv, Sema};
use crate::ast::{Expr, Type};
use crate::span::{Diagnostic, Span};

impl Sema<'_> {
    /// The instantiation a call of `name` with `args` calls, when `name` is a function template
    /// of the file and no function; an error when it cannot be deduced, or when the file lacks
    /// the instantiation (which `check` then asks for, reading the file again).
    pub(super) fn deduced(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
    ) -> Result<Option<String>, Diagnostic> {
        let unit = self.unit;
        let Some(template) = unit.templates.list.iter().find(|t| t.name == name) else {
            return Ok(None);
        };
        if self.function_index.contains_key(name) {
            return Ok(None);
        }
        let mut deduced: Vec<Option<Type>> = vec![None; template.params.len()];
        for (arg, pattern) in args.iter().zip(&template.deduce) {
            let Some(pattern) = pattern else { continue };
            let ty = match self.lower(arg)? {
                Lv::Value(_, ty) | Lv::Var { ty, .. } | Lv::Mem { ty, .. } => ty,
            };
            let ty = match ty {
                Type::Array(elem, _) => Type::pointer_to(*elem, false),
                other => other,
            };
            let param = &template.params[pattern.param].name;
            let found = match (pattern.pointer, ty) {
                (true, Type::Pointer { pointee, .. }) => *pointee,
                (false, ty) => ty,
                (true, other) => {
                    return err(
                        arg.span,
                        format!("'{name}' deduces {param} from a pointer, not from '{other}'"),
                    )
                }
            };
            match &deduced[pattern.param] {
                Some(before) if *before != found => {
                    return err(
                        arg.span,
                        format!("'{name}' deduces {param} as both '{before}' and '{found}'"),
                    )
                }
                _ => deduced[pattern.param] = Some(found),
            }
        }
        let mut spelled = Vec::new();
        for (k, (param, found)) in template.params.iter().zip(deduced).enumerate() {
            match (found, &param.default) {
                (Some(ty), _) => spelled.push(ty.to_string()),
                (None, Some(default)) => spelled.push(default.to_string()),
                (None, None) => return err(name_span, template.missing(k)),
            }
        }
        // `S<float> >`, as C++03 wrote it: the name is read again, and `>>` would be a shift.
        let space = if spelled.last().is_some_and(|a| a.ends_with('>')) {
            " "
        } else {
            ""
        };
        let instance = format!("{name}<{}{space}>", spelled.join(", "));
        if self.function_index.contains_key(&instance) {
            return Ok(Some(instance));
        }
        if !self.wanted.contains(&instance) {
            self.wanted.push(instance.clone());
        }
        err(
            name_span,
            format!("'{instance}' is instantiated when the file is read again"),
        )
    }
}
