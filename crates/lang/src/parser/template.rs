//! Function templates (C++ [temp]): `template <typename T, int TILE> __global__ void mm(...)`.
//!
//! A template's definition is kept as the range of its tokens; its declaration is read only when
//! an instantiation needs it, as C++ checks a template's body when it is instantiated
//! ([temp.res]). An instantiation reads the tokens again with each type parameter bound as a type
//! alias and each non-type parameter's name replaced by its value as an integer literal, so that
//! a template argument is exactly a `#define`: array sizes, loop bounds and unrolling are those of
//! the same kernel written with `#define TILE 16`. The instantiated function is an ordinary
//! function named by its canonical spelling (`canonical_name`): the template's name, `<`, its
//! arguments (a type as `Type` displays it, an integer in decimal) separated by `, `, and `>`.
//!
//! Instantiations are asked for by the file's calls (`max_of<float>(a, b)`), by the launch
//! (`parse_with`'s requests) and by sema for the calls whose arguments it deduces; the body of
//! each may ask for more, read one after the other, at most `limits::MAX_INSTANTIATIONS`.
//! A struct template (`template <class T> struct SharedMemory { ... };`) is instantiated where a
//! type names it (`SharedMemory<float> s;`), at once, as the struct `SharedMemory<float>` with
//! an identity of its own (`parser/record.rs` reads it).
//! An explicit specialisation of a struct template (`template <> struct SharedMemory<double>`)
//! is kept by the canonical name it defines and read instead of the template for it. A function
//! template's explicit specialisation, partial specialisation, template template parameters,
//! parameter packs (variadic templates) and SFINAE are refused in words.

use std::ops::Range;

use super::Parser;
use crate::ast::{
    Deduce, ExprKind, FunctionKind, Item, Scalar, Template, TemplateArg, TemplateParam, Templates,
    Type,
};
use crate::lexer::{Punct, Token, TokenKind};
use crate::limits::MAX_INSTANTIATIONS;
use crate::span::{Diagnostic, DiagnosticKind, Span};

/// The templates read so far and the instantiations they were asked for.
#[derive(Default)]
pub(super) struct State {
    definitions: Vec<Definition>,
    /// Instantiations asked for: canonical name, template, arguments; read in order.
    queue: Vec<(String, usize, Vec<TemplateArg>)>,
    /// The struct templates' instantiations read so far, by canonical name.
    structs: Vec<(String, Type)>,
    /// The name and identity the struct definition read next takes: an instantiation's.
    record_instance: Option<(String, u32)>,
    /// Explicit specialisations of struct templates (`template <> struct S<double> {...};`):
    /// the canonical name they define and their definition's tokens, as `struct S {...};`.
    specialisations: Vec<(String, Vec<Token>)>,
}

impl State {
    /// The name and identity of the struct instantiation being read, once.
    pub(super) fn take_record_instance(&mut self) -> Option<(String, u32)> {
        self.record_instance.take()
    }
}

/// A function template: what the rest of the front end sees of it, and where its declaration's
/// tokens are, with the namespaces it was defined in.
struct Definition {
    template: Template,
    /// The declaration's tokens (an instantiation may be read inside another, whose parser
    /// reads other tokens than the file's).
    tokens: Vec<Token>,
    scope: Vec<String>,
    /// A struct template, instantiated where a type names it rather than at the file's end.
    record: bool,
}

fn not_simulated(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::of_kind(DiagnosticKind::NotSimulated, span, message)
}

/// The token at which the bracket opened at `open` (`(`, `[`, `{` or a template's `<`) closes,
/// found by counting, without recursion.
fn closing(tokens: &[Token], open: usize) -> Option<usize> {
    let angle = tokens.get(open)?.is_punct(Punct::Lt);
    // Brackets, and a template's angles outside them (`(a > b)` closes no angle).
    let (mut brackets, mut angles) = (0usize, 0usize);
    for (at, token) in tokens.iter().enumerate().skip(open) {
        let TokenKind::Punct(p) = token.kind else {
            continue;
        };
        match p {
            Punct::LParen | Punct::LBracket | Punct::LBrace => brackets += 1,
            Punct::RParen | Punct::RBracket | Punct::RBrace => {
                brackets = brackets.saturating_sub(1)
            }
            Punct::Lt if angle && brackets == 0 => angles += 1,
            Punct::Gt if angle && brackets == 0 => angles = angles.saturating_sub(1),
            Punct::Shr if angle && brackets == 0 => angles = angles.saturating_sub(2),
            _ => continue,
        }
        if brackets == 0 && angles == 0 {
            return Some(at);
        }
    }
    None
}

/// What call arguments deduce of a function parameter written with `tokens` (its type, name and
/// default): a parameter `T`, `T*`, `const T*` or `T&` where `T` is a type parameter.
fn deduction(tokens: &[Token], params: &[TemplateParam]) -> Option<Deduce> {
    let end = tokens
        .iter()
        .position(|t| t.is_punct(Punct::Assign))
        .unwrap_or(tokens.len());
    let mut words: Vec<&Token> = tokens[..end]
        .iter()
        .filter(|t| !matches!(t.ident(), Some("const" | "volatile" | "__restrict__")))
        .collect();
    if words.len() > 1 && words.last().is_some_and(|t| t.ident().is_some()) {
        words.pop();
    }
    let pointer = match words.as_slice() {
        [_] => false,
        [_, last] if last.is_punct(Punct::Amp) => false,
        [_, last] if last.is_punct(Punct::Star) => true,
        _ => return None,
    };
    let name = words.first()?.ident()?;
    let param = params
        .iter()
        .position(|p| p.value_type.is_none() && p.name == name)?;
    Some(Deduce { param, pointer })
}

/// `value` as a non-type parameter of type `ty` holds it (C++ [conv.integral]).
fn wrapped(value: i64, ty: &Type) -> i64 {
    match ty.scalar() {
        Some(Scalar::Bool) => i64::from(value != 0),
        Some(Scalar::I8) => i64::from(value as i8),
        Some(Scalar::U8) => i64::from(value as u8),
        Some(Scalar::I16) => i64::from(value as i16),
        Some(Scalar::U16) => i64::from(value as u16),
        Some(Scalar::I32) => i64::from(value as i32),
        Some(Scalar::U32) => i64::from(value as u32),
        _ => value,
    }
}

/// The tokens of `token` in an instantiation: a non-type parameter's name becomes its value as
/// a literal of the parameter's type (a negative one in parentheses), as a `#define` would.
fn substituted(token: &Token, params: &[TemplateParam], args: &[TemplateArg]) -> Vec<Token> {
    let value = token.ident().and_then(|word| {
        params
            .iter()
            .zip(args)
            .find_map(|(param, arg)| match (arg, &param.value_type) {
                (TemplateArg::Value(v), Some(ty)) if param.name == word => Some((*v, ty)),
                _ => None,
            })
    });
    let Some((value, ty)) = value else {
        return vec![token.clone()];
    };
    let scalar = ty.scalar().unwrap_or(Scalar::I32);
    let with = |kind| Token {
        kind,
        ..token.clone()
    };
    let literal = with(TokenKind::Int {
        value: value.unsigned_abs(),
        unsigned: !scalar.is_signed() && scalar != Scalar::Bool,
        long: scalar.size() == 8,
        hex: false,
    });
    if value >= 0 {
        return vec![literal];
    }
    let punct = |p| with(TokenKind::Punct(p));
    vec![
        punct(Punct::LParen),
        punct(Punct::Minus),
        literal,
        punct(Punct::RParen),
    ]
}

fn too_many() -> String {
    format!(
        "the file instantiates more than {MAX_INSTANTIATIONS} templates, the simulator's limit \
         (does a template instantiate itself without end?)"
    )
}

/// The canonical spelling of a template's name with its arguments.
fn spelled(name: &str, args: &[TemplateArg]) -> String {
    let args: Vec<String> = args.iter().map(TemplateArg::to_string).collect();
    // `S<float> >`, as C++03 wrote it: the name is read again, and `>>` would be a shift.
    let space = if args.last().is_some_and(|a| a.ends_with('>')) {
        " "
    } else {
        ""
    };
    format!("{name}<{}{space}>", args.join(", "))
}

/// The canonical spelling of a kernel's name as a user writes it: `mm<float,16>` and
/// `mm< float , 0x10 >` are `mm<float, 16>`; a name without arguments is itself.
pub fn canonical_name(tokens: &[Token]) -> Result<String, Diagnostic> {
    let mut parser = Parser {
        tokens,
        pos: 0,
        nesting: 0,
        unsupported: None,
        names: super::names::Names::default(),
        pending: Vec::new(),
        linkage_blocks: 0,
        templates: State::default(),
        return_type: None,
        static_asserts: Vec::new(),
    };
    let Some((name, taken)) = parser.peek_name() else {
        return Err(parser.error_here("a kernel's name"));
    };
    parser.pos += taken;
    let args = if parser.eat(Punct::Lt) {
        Some(parser.template_arguments()?)
    } else {
        None
    };
    if parser.peek().is_some() {
        return Err(parser.error_here("the end of the kernel's name"));
    }
    Ok(match args {
        Some(args) => spelled(&name, &args),
        None => name,
    })
}

impl<'a> Parser<'a> {
    /// `template <...> declaration` at file scope: the template is kept and its declaration
    /// read past. An explicit instantiation (`template __global__ void mm<float>(float*);`) is
    /// read past too: the launch instantiates what it needs.
    pub(super) fn template_definition(&mut self) -> Result<(), Diagnostic> {
        let start = self.here();
        self.pos += 1;
        if !self.at(Punct::Lt) {
            while !self.eat(Punct::Semi) {
                if self.peek().is_none() {
                    return Err(self.error_here("';' after the explicit instantiation"));
                }
                self.pos += 1;
            }
            return Ok(());
        }
        let header_end = closing(self.tokens, self.pos)
            .ok_or_else(|| Diagnostic::new(self.here(), "this '<' is never closed"))?;
        let sfinae = self.tokens[self.pos..header_end]
            .iter()
            .find(|t| t.ident().is_some_and(|w| w.contains("enable_if")));
        if let Some(token) = sfinae {
            return Err(not_simulated(
                token.span,
                "SFINAE (`std::enable_if` in a template's parameters) is not simulated",
            ));
        }
        self.pos += 1;
        if self.at(Punct::Gt) {
            if let Some(done) = self.struct_specialisation() {
                return done;
            }
            return Err(not_simulated(
                start,
                "explicit specialisation of a function template (`template <>`) is not simulated; give the special \
                 case a function of its own",
            ));
        }
        let mut params = Vec::new();
        loop {
            params.push(self.template_parameter(&params)?);
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect(Punct::Gt)?;
        self.template_declaration(start, params)
    }

    /// One template parameter: `typename T`, `class T`, `int N`, with a default argument.
    fn template_parameter(
        &mut self,
        before: &[TemplateParam],
    ) -> Result<TemplateParam, Diagnostic> {
        let at = self.here();
        if self.at_word("template") {
            return Err(not_simulated(
                at,
                "template template parameters (`template <class> class C`) are not simulated",
            ));
        }
        let value_type = if self.at_word("typename") || self.at_word("class") {
            self.pos += 1;
            None
        } else {
            let ty = self.type_name()?;
            if !ty.scalar().is_some_and(Scalar::is_integer) {
                return Err(not_simulated(
                    at,
                    format!(
                        "a template parameter of type '{ty}' is not simulated; use an integer \
                         type or a type parameter"
                    ),
                ));
            }
            Some(ty)
        };
        if self.at(Punct::Ellipsis) {
            return Err(not_simulated(
                self.here(),
                "variadic templates (parameter packs, `typename... Ts`) are not simulated",
            ));
        }
        let (name, _) = self.ident("a template parameter's name")?;
        if before.iter().any(|p| p.name == name) {
            return Err(Diagnostic::new(
                at,
                format!("two template parameters are named '{name}'"),
            ));
        }
        let default = if self.eat(Punct::Assign) {
            let arg_at = self.here();
            let arg = self.template_argument().map_err(|_| {
                not_simulated(
                    arg_at,
                    "a default template argument that names another template parameter is \
                     not simulated; write its value",
                )
            })?;
            Some(self.argument_for(&name, value_type.as_ref(), arg, arg_at)?)
        } else {
            None
        };
        Ok(TemplateParam {
            name,
            value_type,
            default,
        })
    }

    /// The declaration after a template's parameters: a function, whose name, kind and
    /// parameters' deductions are found in its tokens, which are then read past.
    fn template_declaration(
        &mut self,
        start: Span,
        params: Vec<TemplateParam>,
    ) -> Result<(), Diagnostic> {
        if matches!(self.peek().and_then(Token::ident), Some("struct" | "class")) {
            return self.struct_template(start, params);
        }
        let first = self.pos;
        let mut at = first;
        let open = loop {
            let Some(token) = self.tokens.get(at) else {
                return Err(self.error_here("a function after the template's parameters"));
            };
            if token.is_punct(Punct::Semi) || token.is_punct(Punct::Assign) {
                return Err(not_simulated(
                    token.span,
                    "variable templates are not simulated; a template declares a function here",
                ));
            }
            if token.is_punct(Punct::LParen) {
                let before = self.tokens.get(at.wrapping_sub(1));
                if before.is_some_and(|t| t.is_punct(Punct::Gt)) {
                    return Err(not_simulated(
                        token.span,
                        "partial specialisation (`f<T*>(...)`) is not simulated",
                    ));
                }
                let named = before.and_then(Token::ident).is_some_and(|w| {
                    !matches!(
                        w,
                        "__launch_bounds__" | "__attribute__" | "__attribute" | "alignas"
                    ) && w != "__align__"
                });
                if named {
                    break at;
                }
            }
            at = if token.is_punct(Punct::LParen) {
                closing(self.tokens, at).map_or(self.tokens.len(), |close| close + 1)
            } else {
                at + 1
            };
        };
        let name_token = &self.tokens[open - 1];
        let name = name_token.ident().unwrap_or_default().to_string();
        let close = closing(self.tokens, open)
            .ok_or_else(|| Diagnostic::new(self.tokens[open].span, "this '(' is never closed"))?;
        let mut body = close + 1;
        while let Some(token) = self.tokens.get(body) {
            if token.is_punct(Punct::Semi) || token.is_punct(Punct::LBrace) {
                break;
            }
            body += 1;
        }
        let end = match self.tokens.get(body) {
            Some(t) if t.is_punct(Punct::LBrace) => closing(self.tokens, body)
                .ok_or_else(|| Diagnostic::new(t.span, "this '{' is never closed"))?,
            // A declaration without a body names the template; its definition follows.
            Some(_) => {
                self.pos = body + 1;
                return Ok(());
            }
            None => return Err(Diagnostic::new(start, "this template is never defined")),
        };
        let kernel = self.tokens[first..open]
            .iter()
            .any(|t| t.ident() == Some("__global__"));
        let mut deduce = Vec::new();
        let mut param_start = open + 1;
        let mut at = open + 1;
        while at < close {
            let token = &self.tokens[at];
            if token.is_punct(Punct::Comma) {
                deduce.push(deduction(&self.tokens[param_start..at], &params));
                param_start = at + 1;
            }
            at = match token.kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket) => {
                    closing(self.tokens, at).map_or(close, |c| c + 1)
                }
                _ => at + 1,
            };
        }
        if param_start < close {
            deduce.push(deduction(&self.tokens[param_start..close], &params));
        }
        let kind = if kernel {
            FunctionKind::Kernel
        } else {
            FunctionKind::Device
        };
        let template = Template {
            name,
            kind,
            params,
            deduce,
            span: name_token.span,
        };
        self.define(template, first..end + 1, false)
    }

    /// Keeps the template whose declaration's tokens are `tokens`, and reads past them.
    fn define(
        &mut self,
        mut template: Template,
        tokens: Range<usize>,
        record: bool,
    ) -> Result<(), Diagnostic> {
        template.name = self.names.declare(&template.name);
        self.within_name_limit()?;
        let scope = self.names.swap_scope(Vec::new());
        self.names.swap_scope(scope.clone());
        self.pos = tokens.end;
        self.templates.definitions.push(Definition {
            template,
            tokens: self.tokens[tokens].to_vec(),
            scope,
            record,
        });
        Ok(())
    }

    /// `template <class T> struct S { ... };`: kept until a type names an instantiation of it
    /// (`S<float>`), which is then read as the struct `S<float>`.
    fn struct_template(
        &mut self,
        start: Span,
        params: Vec<TemplateParam>,
    ) -> Result<(), Diagnostic> {
        let first = self.pos;
        let name = self.tokens[first + 1..]
            .iter()
            .take_while(|t| !t.is_punct(Punct::LBrace))
            .filter_map(Token::ident)
            .find(|w| !matches!(*w, "__align__" | "alignas" | "__attribute__" | "final"));
        let open = (first..self.tokens.len()).find(|&at| {
            let t = &self.tokens[at];
            t.is_punct(Punct::LBrace) || t.is_punct(Punct::Semi)
        });
        let (Some(name), Some(open)) = (name, open) else {
            return Err(Diagnostic::new(start, "this struct template has no name"));
        };
        let close = closing(self.tokens, open)
            .filter(|_| self.tokens[open].is_punct(Punct::LBrace))
            .ok_or_else(|| Diagnostic::new(start, "this struct template is never defined"))?;
        if !self
            .tokens
            .get(close + 1)
            .is_some_and(|t| t.is_punct(Punct::Semi))
        {
            return Err(not_simulated(
                self.tokens[close].span,
                "a variable declared with its struct template's definition is not simulated",
            ));
        }
        let template = Template {
            name: name.to_string(),
            kind: FunctionKind::Device,
            params,
            deduce: Vec::new(),
            span: self.tokens[first].span,
        };
        self.define(template, first..close + 2, true)
    }

    /// `template <> struct S<args> { ... };` after its `<`, where `S` is a struct template read
    /// before: kept as the definition of the instantiation `S<args>` names. `None` when no struct
    /// template's specialisation starts here (a function's is refused by the caller).
    fn struct_specialisation(&mut self) -> Option<Result<(), Diagnostic>> {
        let keyword = self
            .peek_at(1)
            .filter(|t| matches!(t.ident(), Some("struct" | "class")))?;
        let keyword = keyword.clone();
        let name_token = self.peek_at(2)?.clone();
        let written = name_token.ident()?.to_string();
        let full = self.names_resolve(&written);
        if !self.peek_at(3).is_some_and(|t| t.is_punct(Punct::Lt)) {
            return None;
        }
        let index = self.template_index(&full)?;
        self.templates.definitions[index].record.then_some(())?;
        let at = name_token.span;
        self.pos += 4;
        Some(self.template_arguments().and_then(|args| {
            let (canonical, _) = self.complete(index, args, at)?;
            let open = self.pos;
            if !self.at(Punct::LBrace) {
                return Err(self.error_here("'{' opening the specialisation's definition"));
            }
            let close = closing(self.tokens, open)
                .ok_or_else(|| Diagnostic::new(at, "this specialisation is never defined"))?;
            if !self
                .tokens
                .get(close + 1)
                .is_some_and(|t| t.is_punct(Punct::Semi))
            {
                return Err(self.error_here("';' after the specialisation's definition"));
            }
            let mut tokens = vec![keyword, name_token];
            tokens.extend_from_slice(&self.tokens[open..close + 2]);
            self.pos = close + 2;
            self.templates.specialisations.push((canonical, tokens));
            Ok(())
        }))
    }

    /// Whether `full`, a name read here, is a struct template and the token `after` on is its
    /// `<`: a type starts here.
    pub(super) fn at_struct_template(&self, full: &str, after: usize) -> bool {
        self.peek_at(after).is_some_and(|t| t.is_punct(Punct::Lt))
            && self
                .templates
                .definitions
                .iter()
                .any(|d| d.record && d.template.name == full)
    }

    /// A struct template's instantiation named here (`S<float>`): read as a struct the first
    /// time, and its type. An error in it stops the statement (or the file) around it.
    pub(super) fn struct_template_type(&mut self) -> Option<Type> {
        let (written, taken) = self.peek_name()?;
        let at = self.here();
        let full = self.names_resolve(&written);
        if !self.at_struct_template(&full, taken) {
            return None;
        }
        let index = self.template_index(&full)?;
        self.pos += taken + 1;
        let read = self.template_arguments().and_then(|args| {
            let (name, args) = self.complete(index, args, at)?;
            let known = self.templates.structs.iter().find(|(n, _)| *n == name);
            if let Some((_, ty)) = known {
                return Ok(ty.clone());
            }
            if self.templates.structs.len() >= MAX_INSTANTIATIONS {
                return Err(Diagnostic::new(at, too_many()));
            }
            let special = self.templates.specialisations.iter();
            let special = special
                .rev()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t.clone());
            let ty = match special {
                Some(tokens) => self.read_instance(&name, index, &[], tokens)?,
                None => self.instantiate(&name, index, &args)?,
            }
            .unwrap_or(Type::Void);
            self.templates.structs.push((name, ty.clone()));
            Ok(ty)
        });
        Some(read.unwrap_or_else(|error| {
            if self.unsupported.is_none() {
                self.unsupported = Some(error);
            }
            Type::Void
        }))
    }

    /// The template arguments after `<`, up to and with the `>`.
    pub(super) fn template_arguments(&mut self) -> Result<Vec<TemplateArg>, Diagnostic> {
        let mut args = Vec::new();
        while !self.eat(Punct::Gt) {
            args.push(self.template_argument()?);
            if !self.eat(Punct::Comma) {
                self.expect(Punct::Gt)?;
                break;
            }
        }
        Ok(args)
    }

    /// One template argument: a type, or an integer constant expression without `<`, `>` or
    /// shifts outside parentheses (C++ [temp.names]: the first `>` ends the list).
    fn template_argument(&mut self) -> Result<TemplateArg, Diagnostic> {
        if self.starts_declaration() {
            return Ok(TemplateArg::Type(self.type_name()?));
        }
        let value = self.nested(|p| p.binary(9))?.expr;
        match self.fold(&value, 0) {
            Some(v) => Ok(TemplateArg::Value(v)),
            None => Err(Diagnostic::of_kind(
                DiagnosticKind::NotConstant,
                value.span,
                "a template argument is a type or a constant integer expression",
            )),
        }
    }

    /// `arg` checked against the template parameter `name` (a type when `value_type` is
    /// `None`), and an integer converted to the parameter's type.
    fn argument_for(
        &self,
        name: &str,
        value_type: Option<&Type>,
        arg: TemplateArg,
        at: Span,
    ) -> Result<TemplateArg, Diagnostic> {
        match (value_type, arg) {
            (Some(ty), TemplateArg::Value(v)) => Ok(TemplateArg::Value(wrapped(v, ty))),
            (None, TemplateArg::Type(ty)) => Ok(TemplateArg::Type(ty)),
            (Some(ty), TemplateArg::Type(_)) => Err(Diagnostic::new(
                at,
                format!("the template parameter '{ty} {name}' takes an integer, not a type"),
            )),
            (None, TemplateArg::Value(_)) => Err(Diagnostic::new(
                at,
                format!("the template parameter 'typename {name}' takes a type, not a value"),
            )),
        }
    }

    /// A name used in an expression that names a template followed by `<`: its arguments are
    /// read, the instantiation asked for, and the name becomes the instantiation's.
    pub(super) fn template_id(&mut self, kind: ExprKind) -> Result<ExprKind, Diagnostic> {
        let ExprKind::Ident(name) = &kind else {
            return Ok(kind);
        };
        let Some(index) = self.template_index(name) else {
            return Ok(kind);
        };
        if self.templates.definitions[index].record {
            return Ok(kind);
        }
        if !self.at(Punct::Lt) {
            // A call whose arguments sema deduces.
            return Ok(kind);
        }
        let at = self.here();
        self.pos += 1;
        let args = self.template_arguments()?;
        Ok(ExprKind::Ident(self.ask_for(index, args, at)?))
    }

    pub(super) fn template_index(&self, name: &str) -> Option<usize> {
        self.templates
            .definitions
            .iter()
            .rposition(|d| d.template.name == name)
    }

    /// The canonical name of template `index` at `args`, completed by its default arguments.
    fn complete(
        &self,
        index: usize,
        mut args: Vec<TemplateArg>,
        at: Span,
    ) -> Result<(String, Vec<TemplateArg>), Diagnostic> {
        let template = &self.templates.definitions[index].template;
        if args.len() > template.params.len() {
            return Err(Diagnostic::new(
                at,
                format!(
                    "'{}' takes {} template arguments, not {}",
                    template.name,
                    template.params.len(),
                    args.len()
                ),
            ));
        }
        for (k, param) in template.params.iter().enumerate() {
            let arg = match args.get(k) {
                Some(arg) => arg.clone(),
                None => match &param.default {
                    Some(default) => default.clone(),
                    None => return Err(Diagnostic::new(at, template.missing(k))),
                },
            };
            let arg = self.argument_for(&param.name, param.value_type.as_ref(), arg, at)?;
            match args.get_mut(k) {
                Some(slot) => *slot = arg,
                None => args.push(arg),
            }
        }
        Ok((spelled(&template.name, &args), args))
    }

    /// Asks for the instantiation of function template `index` at `args`; its canonical name.
    fn ask_for(
        &mut self,
        index: usize,
        args: Vec<TemplateArg>,
        at: Span,
    ) -> Result<String, Diagnostic> {
        let (name, args) = self.complete(index, args, at)?;
        let queue = &mut self.templates.queue;
        if !queue.iter().any(|(queued, ..)| *queued == name) {
            if queue.len() >= MAX_INSTANTIATIONS {
                return Err(Diagnostic::new(at, too_many()));
            }
            queue.push((name.clone(), index, args));
        }
        Ok(name)
    }

    /// Runs `read` on a parser of `tokens` that shares this one's names, items and templates.
    fn with_tokens<T>(
        &mut self,
        tokens: &[Token],
        read: impl FnOnce(&mut Parser<'_>) -> Result<T, Diagnostic>,
    ) -> Result<T, Diagnostic> {
        let mut inner = Parser {
            tokens,
            pos: 0,
            nesting: self.nesting,
            unsupported: None,
            names: std::mem::take(&mut self.names),
            pending: std::mem::take(&mut self.pending),
            linkage_blocks: 0,
            templates: std::mem::take(&mut self.templates),
            return_type: None,
            static_asserts: std::mem::take(&mut self.static_asserts),
        };
        let result = read(&mut inner);
        self.names = inner.names;
        self.pending = inner.pending;
        self.templates = inner.templates;
        self.static_asserts = inner.static_asserts;
        result
    }

    /// An instantiation asked for from outside the file (`mm<float, 16>`): its canonical name,
    /// or `None` when the text names no template of the file.
    fn request(&mut self, text: &str) -> Result<Option<String>, Diagnostic> {
        let tokens = crate::lexer::lex(text)?;
        self.with_tokens(&tokens, |p| {
            let Some((written, taken)) = p.peek_name() else {
                return Ok(None);
            };
            let at = p.here();
            let full = p.resolve_name(&written, at);
            p.unsupported = None;
            let Some(index) = p.template_index(&full) else {
                return Ok(None);
            };
            p.pos += taken;
            if !p.eat(Punct::Lt) {
                let template = &p.templates.definitions[index].template;
                return Err(Diagnostic::new(template.span, template.missing(0)));
            }
            let args = p.template_arguments()?;
            if p.peek().is_some() {
                return Err(p.error_here("the end of the kernel's name"));
            }
            p.ask_for(index, args, at).map(Some)
        })
    }

    /// Reads the instantiations asked for, by the file and by `requests`, and those they ask
    /// for in turn; what the translation unit keeps of the templates.
    pub(super) fn instantiate_all(&mut self, requests: &[String]) -> Result<Templates, Diagnostic> {
        let mut asked = Vec::new();
        for text in requests {
            if let Some(name) = self.request(text)? {
                asked.push(name);
            }
        }
        let mut next = 0;
        while let Some((name, index, args)) = self.templates.queue.get(next).cloned() {
            self.instantiate(&name, index, &args)?;
            next += 1;
        }
        let functions = self.templates.definitions.iter().filter(|d| !d.record);
        if self.templates.definitions.is_empty() {
            return Ok(Templates::default());
        }
        Ok(Templates {
            list: functions.map(|d| d.template.clone()).collect(),
            tokens: self.tokens.to_vec(),
            requests: asked,
        })
    }

    /// Reads template `index`'s declaration with `args` bound, as the function or struct
    /// `name`; the struct's type.
    fn instantiate(
        &mut self,
        name: &str,
        index: usize,
        args: &[TemplateArg],
    ) -> Result<Option<Type>, Diagnostic> {
        let definition = &self.templates.definitions[index];
        let params = &definition.template.params;
        let tokens: Vec<Token> = definition
            .tokens
            .iter()
            .flat_map(|t| substituted(t, params, args))
            .collect();
        self.read_instance(name, index, args, tokens)
    }

    /// Reads `tokens`, template `index`'s declaration (or an explicit specialisation of it)
    /// with `args` bound, as the function or struct `name`; the struct's type.
    fn read_instance(
        &mut self,
        name: &str,
        index: usize,
        args: &[TemplateArg],
        tokens: Vec<Token>,
    ) -> Result<Option<Type>, Diagnostic> {
        let definition = &self.templates.definitions[index];
        let params = definition.template.params.clone();
        let scope = definition.scope.clone();
        let record = definition.record;
        // A struct's identity, distinct from every token position that names other structs.
        let id = u32::MAX - self.templates.structs.len() as u32;
        let (item, ty) = self.with_tokens(&tokens, |p| {
            let outer = p.names.swap_scope(scope);
            let in_function = std::mem::replace(&mut p.names.in_function, false);
            let start = p.names.mark().1;
            let mut bound = 0;
            for (param, arg) in params.iter().zip(args) {
                if let TemplateArg::Type(ty) = arg {
                    p.names.bind_type(&param.name, ty.clone());
                    bound += 1;
                }
            }
            let read = if record {
                p.templates.record_instance = Some((name.to_string(), id));
                p.record_item_type().map(|ty| (None, ty))
            } else {
                p.item().map(|item| (item, None))
            };
            p.names.unbind_types(start, bound);
            p.names.in_function = in_function;
            p.names.swap_scope(outer);
            read
        })?;
        if let Some(Item::Function(mut function)) = item {
            self.names.copy_defaults(&function.name, name);
            function.name = name.to_string();
            self.pending.push(Item::Function(function));
        }
        Ok(ty)
    }

    /// The full name a use of `written` refers to here.
    fn names_resolve(&mut self, written: &str) -> String {
        let keep = self.unsupported.take();
        let full = self.resolve_name(written, self.here());
        self.unsupported = keep;
        full
    }
}
