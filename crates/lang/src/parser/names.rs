//! The C++ names kernels bring beyond C: namespaces (`namespace x { ... }`, `x::f`, `::f`,
//! `using namespace x;`, `namespace a = b;`, `using x::f;`), type aliases (`typedef`, `using T =
//! ...;`), enumerations (`enum`, `enum class`) and default arguments.
//!
//! The parser resolves a name as it reads it, so that the later stages only see full names
//! (`a::b::f`): a file-scope declaration inside `namespace a { namespace b { ... } }` is named
//! `a::b::f`, and a use is looked up as C++ looks up names ([basic.lookup.unqual],
//! [namespace.udir]): a local variable first, then the enclosing namespaces from the innermost
//! out, then the namespaces of `using namespace` directives, and a qualified name after its first
//! part is resolved the same way. Namespace aliases, using-declarations and the `E::A` spelling of
//! an unscoped enumerator are renames of a full name or its leading parts.
//!
//! An enumeration becomes a `constexpr` declaration of its enumerators (each one more than the
//! one before unless it says otherwise, [dcl.enum]), and its name an alias of its underlying
//! type. `cooperative_groups` is a namespace the simulator knows without modelling it: a name in
//! it (`cg::this_thread_block` through `namespace cg = cooperative_groups;`) is refused with one
//! message that names cooperative groups. `std::` is the global namespace, where the CUDA headers
//! declare `min`, `max` and the math functions for device code.

use super::{is_decl_word, is_statement_word, Parser, Specifiers};
use crate::ast::{
    BinaryOp, Declaration, Declarator, Expr, ExprKind, Initializer, Item, Scalar, StmtKind,
    Storage, Type,
};
use crate::lexer::Punct;
use crate::limits::MAX_DECLARED_NAMES;
use crate::refused;
use crate::span::{Diagnostic, DiagnosticKind, Span};

/// The names of the cooperative groups API that a `using namespace cooperative_groups;` brings
/// (CUDA C++ Programming Guide, "Cooperative Groups").
const COOPERATIVE_GROUPS: [&str; 12] = [
    "thread_block",
    "thread_group",
    "grid_group",
    "thread_block_tile",
    "coalesced_group",
    "this_thread_block",
    "this_grid",
    "tiled_partition",
    "coalesced_threads",
    "sync",
    "reduce",
    "memcpy_async",
];

const COOPERATIVE_GROUPS_NAMESPACE: &str = "cooperative_groups::";

/// What a type alias stands for: a base type, its `const`, and array dimensions
/// (`typedef float Row[16];`) that a declaration of the alias adds after its own.
#[derive(Clone, Debug)]
pub(super) struct Alias {
    pub ty: Type,
    pub is_const: bool,
    pub dims: Vec<Option<Expr>>,
}

/// The names the parser has seen, for resolving the ones it reads next.
#[derive(Default)]
pub(super) struct Names {
    /// The namespaces around the current position, outermost first.
    pub(super) namespace: Vec<String>,
    /// Every file-scope name declared so far, in full, namespaces included.
    members: Vec<String>,
    /// Full names (or leading parts of them) that stand for others.
    renames: Vec<(String, String)>,
    /// The namespaces of `using namespace` directives.
    usings: Vec<String>,
    /// Type aliases by full name; local ones last, so that a search from the end finds the
    /// innermost.
    types: Vec<(String, Alias)>,
    /// The parameters and local variables in scope.
    pub(super) locals: Vec<String>,
    /// The default arguments of each function that has some, one entry per parameter.
    defaults: Vec<(String, Vec<Option<Expr>>)>,
    /// The parser is inside a function body.
    pub in_function: bool,
    /// Integer constants of file scope and of structs whose value the parser can fold, by full
    /// name: the sizes of a struct's array members, which its layout needs as it is read.
    pub(super) constants: Vec<(String, i64)>,
}

/// `scope::name`, or `name` in the global namespace.
fn join(scope: &str, name: &str) -> String {
    if scope.is_empty() {
        name.to_string()
    } else {
        format!("{scope}::{name}")
    }
}

impl Names {
    /// `full` with the rename of its longest renamed leading part applied, repeatedly (an alias
    /// may name an alias), and `std::` dropped.
    fn expand(&self, full: &str) -> String {
        let mut name = full.strip_prefix("std::").unwrap_or(full).to_string();
        for _ in 0..8 {
            let renamed = self.renames.iter().rev().find_map(|(from, to)| {
                let rest = name.strip_prefix(from.as_str())?;
                if rest.is_empty() {
                    Some(to.clone())
                } else {
                    rest.strip_prefix("::").map(|tail| join(to, tail))
                }
            });
            match renamed {
                Some(next) if next != name => name = next,
                _ => break,
            }
        }
        name
    }

    /// The full name a use of `written` (`f`, `a::f`, `::f`) refers to.
    pub(super) fn resolve(&self, written: &str) -> String {
        let (absolute, path) = match written.strip_prefix("::") {
            Some(path) => (true, path),
            None => (false, written),
        };
        let qualified = path.contains("::");
        if !absolute && !qualified && self.locals.iter().any(|l| l == path) {
            return path.to_string();
        }
        let depth = if absolute { 0 } else { self.namespace.len() };
        let enclosing = (0..=depth).rev().map(|k| self.namespace[..k].join("::"));
        let used = self.usings.iter().filter(|_| !absolute).cloned();
        for scope in enclosing.chain(used) {
            let full = self.expand(&join(&scope, path));
            let cooperative = full.starts_with(COOPERATIVE_GROUPS_NAMESPACE)
                && (qualified || COOPERATIVE_GROUPS.contains(&path));
            if cooperative || self.members.contains(&full) {
                return full;
            }
        }
        // `::x` names no local variable: kept as written, a local `x` does not answer for it.
        if absolute && !qualified && self.locals.iter().any(|l| l == path) {
            return written.to_string();
        }
        self.expand(path)
    }

    /// The type alias a resolved name stands for.
    pub(super) fn alias(&self, full: &str) -> Option<&Alias> {
        self.types
            .iter()
            .rev()
            .find(|(name, _)| name == full)
            .map(|(_, a)| a)
    }

    /// The full name of a declaration of `name` here, which is from now on in scope.
    pub(super) fn declare(&mut self, name: &str) -> String {
        if self.in_function {
            self.locals.push(name.to_string());
            return name.to_string();
        }
        let full = join(&self.namespace.join("::"), name);
        self.members.push(full.clone());
        full
    }

    /// Where the local names and types stand, to go back there at the end of a block.
    pub(super) fn mark(&self) -> (usize, usize) {
        (self.locals.len(), self.types.len())
    }

    /// Forgets the local names and types declared since `mark`.
    pub(super) fn leave(&mut self, mark: (usize, usize)) {
        self.locals.truncate(mark.0);
        self.types.truncate(mark.1);
    }

    /// The namespaces around the current position, and a way back there: a template is
    /// instantiated in the namespace that defines it.
    pub(super) fn swap_scope(&mut self, scope: Vec<String>) -> Vec<String> {
        std::mem::replace(&mut self.namespace, scope)
    }

    /// Makes `name` stand for `ty` until `leave`: a template's type parameter in an
    /// instantiation.
    pub(super) fn bind_type(&mut self, name: &str, ty: Type) {
        let alias = Alias {
            ty,
            is_const: false,
            dims: Vec::new(),
        };
        self.types.push((name.to_string(), alias));
    }

    /// Forgets the `count` type aliases bound from `start` on (`bind_type`), keeping those
    /// declared after them.
    pub(super) fn unbind_types(&mut self, start: usize, count: usize) {
        let end = (start + count).min(self.types.len());
        self.types.drain(start.min(end)..end);
    }

    /// Gives the calls of `to` (an instantiation) the default arguments of `from` (its template).
    pub(super) fn copy_defaults(&mut self, from: &str, to: &str) {
        let found = self.defaults.iter().rev().find(|(f, _)| f == from);
        if let Some((_, defaults)) = found.cloned() {
            self.defaults.push((to.to_string(), defaults));
        }
    }

    /// Keeps the default arguments of `function` (one entry per parameter) for its calls.
    pub(super) fn set_defaults(&mut self, function: &str, defaults: Vec<Option<Expr>>) {
        if defaults.iter().any(Option::is_some) {
            self.defaults.push((function.to_string(), defaults));
        }
    }
}

impl<'a> Parser<'a> {
    /// The name written at the current position (`f`, `a::b::f`, `::f`) and how many tokens it
    /// takes, without reading it.
    pub(super) fn peek_name(&self) -> Option<(String, usize)> {
        self.peek_name_at(0)
    }

    /// `peek_name` `ahead` tokens on; the count includes them.
    pub(super) fn peek_name_at(&self, ahead: usize) -> Option<(String, usize)> {
        let mut name = String::new();
        let mut taken = ahead;
        if self.peek_at(taken)?.is_punct(Punct::ColonColon) {
            name.push_str("::");
            taken += 1;
        }
        loop {
            name.push_str(self.peek_at(taken)?.ident()?);
            taken += 1;
            let more = self
                .peek_at(taken)
                .is_some_and(|t| t.is_punct(Punct::ColonColon))
                && self.peek_at(taken + 1).and_then(|t| t.ident()).is_some();
            if !more {
                return Some((name, taken));
            }
            name.push_str("::");
            taken += 1;
        }
    }

    /// A name used in an expression (`f`, `a::f`, `::f`), read and resolved; `nullptr` and
    /// `NULL` are the null pointer constant 0 ([conv.ptr]).
    pub(super) fn name_expression(&mut self) -> Option<(ExprKind, Span)> {
        let (written, taken) = self.peek_name()?;
        let first = written.trim_start_matches("::").split("::").next()?;
        if is_decl_word(first) || is_statement_word(first) || first == "true" || first == "false" {
            return None;
        }
        let span = self.here().to(self.peek_at(taken - 1)?.span);
        self.pos += taken;
        if written == "nullptr" || written == "NULL" {
            let zero = ExprKind::Int {
                value: 0,
                unsigned: false,
                long: false,
                hex: false,
            };
            return Some((zero, span));
        }
        Some((ExprKind::Ident(self.resolve_name(&written, span)), span))
    }

    /// Resolves a name that was read at `span`; a name of cooperative groups is kept as the
    /// unsupported construct of the statement (or file) around it.
    pub(super) fn resolve_name(&mut self, written: &str, span: Span) -> String {
        let full = self.names.resolve(written);
        // memplay's own cooperative_groups.h (`cooperative_groups`) declares what it simulates;
        // a grid-wide group needs a cooperative launch.
        let declared = self.names.members.contains(&full)
            || self.names.alias(&full).is_some()
            || self.template_index(&full).is_some();
        let refusal = if full.starts_with(COOPERATIVE_GROUPS_NAMESPACE) && !declared {
            Some(if full.contains("grid") {
                format!(
                    "a grid-wide group (`{written}`) needs a cooperative launch, which memplay \
                     does not simulate"
                )
            } else {
                format!("cooperative groups' `{written}` is not simulated")
            })
        } else {
            // A namespace of CUDA's that memplay does not simulate (`wmma::`).
            let first = full.split("::").next().filter(|_| full.contains("::"));
            first.and_then(refused::keyword).map(str::to_string)
        };
        if let (Some(message), None) = (refusal, &self.unsupported) {
            let refusal = Diagnostic::of_kind(DiagnosticKind::NotSimulated, span, message);
            self.unsupported = Some(refusal);
        }
        full
    }

    /// A type alias (or a type of cooperative groups) at the current position: reads it and
    /// returns what it stands for. Template arguments after a cooperative groups type
    /// (`thread_block_tile<32>`) are skipped with it.
    pub(super) fn alias_type(&mut self) -> Option<Alias> {
        if let Some(ty) = self.struct_template_type() {
            return Some(Alias {
                ty,
                is_const: false,
                dims: Vec::new(),
            });
        }
        let (written, taken) = self.peek_name()?;
        let full = self.names.resolve(&written);
        let alias = match self.names.alias(&full) {
            Some(alias) => alias.clone(),
            None if full.starts_with(COOPERATIVE_GROUPS_NAMESPACE) => Alias {
                ty: Type::Void,
                is_const: false,
                dims: Vec::new(),
            },
            None => return None,
        };
        let span = self.here();
        self.pos += taken;
        self.resolve_name(&written, span);
        if self.at(Punct::Lt) {
            let mut open = 0usize;
            while let Some(t) = self.peek() {
                self.pos += 1;
                if t.is_punct(Punct::Lt) {
                    open += 1;
                } else if t.is_punct(Punct::Gt) {
                    open = open.saturating_sub(1);
                    if open == 0 {
                        break;
                    }
                } else if t.is_punct(Punct::Shr) {
                    open = open.saturating_sub(2);
                    if open == 0 {
                        break;
                    }
                }
            }
        }
        Some(alias)
    }

    /// A type alias starts here, or a cooperative groups type followed by a name, `<` or `&`
    /// (a declaration, template arguments or a reference), not a local variable's name.
    pub(super) fn at_alias_type(&self) -> bool {
        self.at_alias_type_at(0)
    }

    /// `at_alias_type` `ahead` tokens on.
    pub(super) fn at_alias_type_at(&self, ahead: usize) -> bool {
        let Some((written, taken)) = self.peek_name_at(ahead) else {
            return false;
        };
        let full = self.names.resolve(&written);
        let is_type = self.names.alias(&full).is_some()
            || self.at_struct_template(&full, taken)
            || (full.starts_with(COOPERATIVE_GROUPS_NAMESPACE)
                && self.peek_at(taken).is_some_and(|t| {
                    t.ident().is_some() || t.is_punct(Punct::Lt) || t.is_punct(Punct::Amp)
                }));
        is_type && !self.names.locals.contains(&written)
    }

    /// The words that start the declarations of this module.
    pub(super) fn at_name_declaration(&self) -> bool {
        let word = self.peek().and_then(|t| t.ident());
        matches!(word, Some("typedef" | "namespace" | "enum"))
            || (word == Some("using")
                && self
                    .peek_at(1)
                    .is_some_and(|t| t.ident().is_some() || t.is_punct(Punct::ColonColon)))
    }

    /// A `typedef`, `using`, `namespace` or `enum` declaration, at file scope (a namespace's
    /// items go to `pending`) or in a function; the enumerators' declaration, if any.
    pub(super) fn name_declaration(&mut self) -> Result<Option<Declaration>, Diagnostic> {
        let start = self.here();
        let word = self.peek().and_then(|t| t.ident()).unwrap_or_default();
        self.pos += 1;
        match word {
            "typedef" => {
                // `typedef unsigned int uint;` names a type the simulator already knows, as
                // the headers do: the name keeps its meaning.
                let end = self.tokens[self.pos..]
                    .iter()
                    .position(|t| t.is_punct(Punct::Semi) || t.is_punct(Punct::LBrace));
                let last = end
                    .and_then(|n| n.checked_sub(1))
                    .map(|n| &self.tokens[self.pos + n]);
                if let (Some(n), Some(word)) = (end, last.and_then(|t| t.ident())) {
                    if is_decl_word(word) && self.tokens[self.pos + n].is_punct(Punct::Semi) {
                        self.pos += n + 1;
                        return Ok(None);
                    }
                }
                // `typedef struct [S] { ... } Name;` defines the struct and names it.
                let spec = match self.typedef_record()? {
                    Some(spec) => spec,
                    None => self.specifiers()?,
                };
                loop {
                    let (ty, _) = self.pointers(spec.base.clone(), spec.is_const)?;
                    let (name, _) = self.ident("a type name after 'typedef'")?;
                    let mut dims = self.dims()?;
                    dims.extend(spec.dims.iter().cloned());
                    self.new_alias(&name, ty, spec.is_const, dims)?;
                    if !self.eat(Punct::Comma) {
                        break;
                    }
                }
                self.expect_semi("the typedef")?;
                Ok(None)
            }
            "using" if self.at_word("namespace") => {
                self.pos += 1;
                let target = self.namespace_name()?;
                self.names.usings.push(target);
                self.expect_semi("'using namespace'")?;
                Ok(None)
            }
            "using" if self.peek_at(1).is_some_and(|t| t.is_punct(Punct::Assign)) => {
                let (name, _) = self.ident("a type name after 'using'")?;
                self.expect(Punct::Assign)?;
                let spec = self.specifiers()?;
                let (ty, _) = self.pointers(spec.base.clone(), spec.is_const)?;
                let mut dims = self.dims()?;
                dims.extend(spec.dims.iter().cloned());
                self.new_alias(&name, ty, spec.is_const, dims)?;
                self.expect_semi("the alias")?;
                Ok(None)
            }
            "using" => {
                // A using-declaration: `using a::f;` makes `f` here stand for `a::f`.
                let (written, taken) = self.peek_name().unwrap_or_default();
                self.pos += taken;
                let target = self.names.resolve(&written);
                let last = written.rsplit("::").next().unwrap_or_default();
                let here = self.names.declare(last);
                if here != target {
                    self.names.renames.push((here, target));
                }
                self.expect_semi("the using-declaration")?;
                Ok(None)
            }
            "namespace" => {
                self.namespace_definition(start)?;
                Ok(None)
            }
            _ => self.enumeration(start).map(Some),
        }
    }

    /// A namespace name after `using namespace` or `namespace a =`: the full name of a declared
    /// namespace, or the name as written for one the file does not declare.
    fn namespace_name(&mut self) -> Result<String, Diagnostic> {
        let Some((written, taken)) = self.peek_name() else {
            return Err(self.error_here("a namespace name"));
        };
        self.pos += taken;
        Ok(self.names.resolve(&written))
    }

    /// Declares the type alias `name` here.
    pub(super) fn new_alias(
        &mut self,
        name: &str,
        ty: Type,
        is_const: bool,
        dims: Vec<Option<Expr>>,
    ) -> Result<(), Diagnostic> {
        // A local alias is a type, not a variable that would hide a namespace member.
        let full = if self.names.in_function {
            name.to_string()
        } else {
            self.names.declare(name)
        };
        self.names.types.push((full, Alias { ty, is_const, dims }));
        self.within_name_limit()
    }

    /// Whether the names declared so far are within `limits::MAX_DECLARED_NAMES`; an error at
    /// the token just read when they are not.
    pub(super) fn within_name_limit(&self) -> Result<(), Diagnostic> {
        if self.names.members.len() <= MAX_DECLARED_NAMES
            && self.names.types.len() <= MAX_DECLARED_NAMES
        {
            return Ok(());
        }
        Err(Diagnostic::new(
            self.previous_span(),
            format!(
                "the file declares more than {MAX_DECLARED_NAMES} names, the simulator's limit"
            ),
        ))
    }

    /// `namespace a { ... }` or `namespace a = b;` after `namespace`. Items of the namespace
    /// go to the pending list the file-scope loop takes them from.
    fn namespace_definition(&mut self, start: Span) -> Result<(), Diagnostic> {
        let name = if self.at(Punct::LBrace) {
            None
        } else {
            Some(self.ident("a namespace name")?.0)
        };
        if let (Some(alias), true) = (&name, self.eat(Punct::Assign)) {
            let target = self.namespace_name()?;
            let here = self.names.declare(alias);
            self.names.renames.push((here, target));
            return self.expect_semi("the namespace alias");
        }
        // An alias may be local; a namespace is not (C++ [namespace.def]).
        if self.names.in_function {
            return Err(Diagnostic::new(
                start,
                "a namespace cannot be defined inside a function",
            ));
        }
        let open = self.expect(Punct::LBrace)?;
        if let Some(name) = &name {
            self.names.declare(name);
            self.names.namespace.push(name.clone());
        }
        let result = self.nested(|p| {
            while !p.at(Punct::RBrace) {
                if p.peek().is_none() {
                    return Err(Diagnostic::new(open, "this '{' is never closed"));
                }
                if !p.eat(Punct::Semi) {
                    let item = p.item()?;
                    p.pending.extend(item);
                }
            }
            Ok(())
        });
        if name.is_some() {
            self.names.namespace.pop();
        }
        result?;
        self.expect(Punct::RBrace)?;
        Ok(())
    }

    /// `enum [class] [E] [: T] { A, B = 4, C };` after `enum`: a declaration of the enumerators
    /// as compile-time constants of the underlying type `T` (`int` unless it says), and `E` an
    /// alias of `T`.
    fn enumeration(&mut self, start: Span) -> Result<Declaration, Diagnostic> {
        let scoped = self.at_word("class") || self.at_word("struct");
        if scoped {
            self.pos += 1;
        }
        let name = if self.at(Punct::LBrace) || self.at(Punct::Colon) {
            None
        } else {
            Some(self.ident("the enumeration's name")?.0)
        };
        let underlying = if self.eat(Punct::Colon) {
            self.specifiers()?.base
        } else {
            Type::Scalar(Scalar::I32)
        };
        if let Some(name) = &name {
            self.new_alias(name, underlying.clone(), false, Vec::new())?;
        }
        self.expect(Punct::LBrace)?;
        let mut declarators = Vec::new();
        let mut previous: Option<(String, Span)> = None;
        while !self.at(Punct::RBrace) {
            self.within_name_limit()?;
            let (enumerator, span) = self.ident("an enumerator name")?;
            let value = if self.eat(Punct::Assign) {
                self.assignment_expr()?
            } else {
                let literal = |value| Expr {
                    kind: ExprKind::Int {
                        value,
                        unsigned: false,
                        long: false,
                        hex: false,
                    },
                    span,
                };
                match previous.take() {
                    None => literal(0),
                    Some((before, at)) => Expr {
                        kind: ExprKind::Binary(
                            BinaryOp::Add,
                            Box::new(Expr {
                                kind: ExprKind::Ident(before),
                                span: at,
                            }),
                            Box::new(literal(1)),
                        ),
                        span,
                    },
                }
            };
            let full = match (&name, scoped) {
                (Some(e), true) => self.names.declare(&format!("{e}::{enumerator}")),
                (Some(e), false) => {
                    let full = self.names.declare(&enumerator);
                    let qualified = self.names.declare(&format!("{e}::{enumerator}"));
                    self.names.renames.push((qualified, full.clone()));
                    full
                }
                (None, _) => self.names.declare(&enumerator),
            };
            previous = Some((full.clone(), span));
            declarators.push(Declarator {
                name: full,
                span,
                pointer_const: false,
                ty: underlying.clone(),
                dims: Vec::new(),
                init: Some(Initializer::Expr(value)),
                align: None,
                reference: false,
            });
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect(Punct::RBrace)?;
        if !self.at(Punct::Semi) {
            return Err(Diagnostic::of_kind(
                DiagnosticKind::NotSimulated,
                self.here(),
                "a variable declared with its enum's definition is not simulated: declare it in a \
                 declaration of its own",
            ));
        }
        self.pos += 1;
        Ok(Declaration {
            storage: Storage::Automatic,
            is_const: true,
            compile_time: true,
            is_auto: false,
            declarators,
            span: start.to(self.previous_span()),
        })
    }

    /// A file-scope declaration of this module, or `None` when there is none here; `Some(None)`
    /// for one that makes no item.
    pub(super) fn name_item(&mut self) -> Result<Option<Option<Item>>, Diagnostic> {
        if !self.at_name_declaration() || self.at_enum_type() {
            return Ok(None);
        }
        Ok(Some(self.name_declaration()?.map(Item::Variable)))
    }

    /// A statement of this module in a function: the enumerators' declaration or nothing.
    pub(super) fn name_statement(&mut self) -> Result<StmtKind, Diagnostic> {
        Ok(match self.name_declaration()? {
            Some(declaration) => StmtKind::Declaration(declaration),
            None => StmtKind::Empty,
        })
    }

    /// `enum E x` (the elaborated name of a type) rather than an enumeration's definition.
    pub(super) fn at_enum_type(&self) -> bool {
        self.at_word("enum")
            && !self.peek_at(1).is_some_and(|t| {
                t.is_punct(Punct::LBrace)
                    || t.is_punct(Punct::Colon)
                    || matches!(t.ident(), Some("class" | "struct"))
            })
            && !self
                .peek_at(2)
                .is_some_and(|t| t.is_punct(Punct::LBrace) || t.is_punct(Punct::Colon))
    }

    /// The arguments of a call, with the default arguments of the parameters it leaves out.
    pub(super) fn with_defaults(&self, function: &str, args: &mut Vec<Expr>) {
        let Some((_, defaults)) = self.names.defaults.iter().find(|(f, _)| f == function) else {
            return;
        };
        for default in defaults.iter().skip(args.len()) {
            match default {
                Some(value) => args.push(value.clone()),
                None => break,
            }
        }
    }

    /// A type name's type with the array dimensions of its alias (`sizeof(Row)`), which must be
    /// literals here: a type name has no declaration to check them later.
    pub(super) fn with_alias_dims(&self, ty: Type, spec: &Specifiers) -> Result<Type, Diagnostic> {
        let mut ty = ty;
        for dim in spec.dims.iter().rev() {
            if ty != spec.base && !matches!(ty, Type::Array(..)) {
                return Err(Diagnostic::new(
                    spec.span,
                    "a pointer to an array type is not simulated",
                ));
            }
            match dim.as_ref().map(|e| &e.kind) {
                Some(ExprKind::Int { value, .. }) if (1..=1 << 28).contains(value) => {
                    ty = Type::Array(Box::new(ty), Some(*value as u32));
                }
                _ => {
                    return Err(Diagnostic::new(
                        spec.span,
                        "an array type alias in a cast or sizeof needs literal sizes here",
                    ))
                }
            }
        }
        Ok(ty)
    }

    /// Enters a function body whose parameters are `params`; `leave_function` goes back.
    pub(super) fn enter_function(&mut self, params: &[String]) -> (usize, usize) {
        let mark = self.names.mark();
        self.names.in_function = true;
        self.names.locals.extend(params.iter().cloned());
        mark
    }

    pub(super) fn leave_function(&mut self, mark: (usize, usize)) {
        self.names.leave(mark);
        self.names.in_function = false;
    }
}
