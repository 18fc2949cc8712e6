//! `struct` and `class` definitions: data members, static constants, member functions,
//! constructors and operators (C++ [class], [class.mem], [over.oper]).
//!
//! A class body is a complete-class context ([class.mem]): a member function may use members
//! declared after it. So the body is read twice: first its data members and static constants,
//! from which the struct is laid out (`record`) and its name becomes a type; then its member
//! functions, which can now name the whole struct. A member function `f` of `S` becomes the
//! `__device__` function `S::f` whose first parameter `this` is the object, passed by value
//! (sema copies it back when the function changes it); a constructor is `S::S`, returning the
//! object it built; an operator is `S::operator+`. Constructors and operators may be
//! overloaded, so their names carry their parameter types (`S::S(float,float)`) and sema picks
//! the one a call's arguments match. Inside the body the struct is a scope like a namespace:
//! `N` names the static constant `S::N` and `f()` the member function `S::f`.

use super::Parser;
use crate::ast::{
    BinaryOp, Declaration, Declarator, Expr, ExprKind, Initializer, Item, Param, Record, Stmt,
    StmtKind, Storage, Type, UnaryOp,
};
use crate::lexer::{Punct, TokenKind};
use crate::refused;
use crate::span::{Diagnostic, DiagnosticKind, Span};
use std::sync::Arc;

/// Words before a member function's name that say nothing memplay needs.
const FUNCTION_WORDS: [&str; 8] = [
    "__device__",
    "__host__",
    "__forceinline__",
    "inline",
    "__inline__",
    "explicit",
    "constexpr",
    "__noinline__",
];

fn not_simulated(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::of_kind(DiagnosticKind::NotSimulated, span, message)
}

fn expr(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// `*this`: the object a member function works on.
pub(crate) fn this_object(span: Span) -> Expr {
    let this = expr(ExprKind::Ident("this".to_string()), span);
    expr(ExprKind::Unary(UnaryOp::Deref, Box::new(this)), span)
}

/// The name of the constructors of the struct named `full` (`geometry::Point::Point`).
/// The name of a struct's conversion operator to `to` (`operator float*`): one per target type,
/// which an implicit conversion of the struct to that type calls (C++ [class.conv.fct]).
pub(crate) fn conversion_name(to: &Type) -> String {
    format!("operator {to}")
}

pub(crate) fn constructor_name(full: &str) -> String {
    let short = full.rsplit("::").next().unwrap_or(full);
    format!("{full}::{short}")
}

/// A member function as the struct's code calls it: `this` first (unless it is static or a
/// friend), a constructor returning the object it built, and the name of an overloadable one
/// with its parameter types.
fn finish_member(
    mut function: crate::ast::Function,
    this_type: Option<&Type>,
    constructor: bool,
    overloadable: bool,
) -> crate::ast::Function {
    if let Some(ty) = this_type {
        function.params.insert(
            0,
            Param {
                name: "this".to_string(),
                span: function.span,
                ty: ty.clone(),
                is_const: false,
                reference: false,
            },
        );
    }
    if constructor {
        function.body.push(Stmt {
            kind: StmtKind::Return(Some(this_object(function.end_span))),
            span: function.end_span,
        });
    }
    if overloadable {
        let types: Vec<String> = function
            .params
            .iter()
            .skip(usize::from(this_type.is_some()))
            .map(|p| p.ty.to_string())
            .collect();
        function.name = format!("{}({})", function.name, types.join(","));
    }
    function
}

/// What a definition's head says: a definition, a forward declaration, or none here.
#[derive(PartialEq)]
enum Head {
    Definition,
    Forward,
}

impl<'a> Parser<'a> {
    /// What the `struct` or `class` at the current position starts (a definition, a forward
    /// declaration), or `None` for any other use of the word (`struct S x;`). Looks at most a
    /// few tokens ahead: the name and alignment attributes.
    fn record_head(&self) -> Option<Head> {
        if !(self.at_word("struct") || self.at_word("class")) {
            return None;
        }
        let mut ahead = 1;
        let mut names = 0;
        let mut depth = 0usize;
        while ahead < 64 {
            let t = self.peek_at(ahead)?;
            ahead += 1;
            if t.is_punct(Punct::LParen) || t.is_punct(Punct::LBracket) {
                depth += 1;
            } else if t.is_punct(Punct::RParen) || t.is_punct(Punct::RBracket) {
                depth = depth.checked_sub(1)?;
            } else if depth > 0 {
                continue;
            } else if t.is_punct(Punct::LBrace) || t.is_punct(Punct::Colon) {
                return Some(Head::Definition);
            } else if t.is_punct(Punct::Semi) {
                return (names == 1).then_some(Head::Forward);
            } else if let Some(word) = t.ident() {
                let attribute = matches!(
                    word,
                    "__align__" | "alignas" | "__attribute__" | "__attribute" | "final"
                );
                if !attribute {
                    names += 1;
                    if names > 1 {
                        return None;
                    }
                }
            } else {
                return None;
            }
        }
        None
    }

    /// A definition or forward declaration of a struct starts here.
    pub(super) fn at_record(&self) -> bool {
        self.record_head().is_some()
    }

    /// A file-scope `struct`/`class` definition or forward declaration, with its `;`; its
    /// static constants and member functions go to the file's items.
    pub(super) fn record_item(&mut self) -> Result<(), Diagnostic> {
        self.record_definition(None)?;
        if !self.at(Punct::Semi) {
            return Err(not_simulated(
                self.here(),
                "a variable declared with its struct's definition is not simulated: declare it \
                 in a declaration of its own",
            ));
        }
        self.pos += 1;
        Ok(())
    }

    /// `record_item` for a struct template's instantiation: the struct's type.
    pub(super) fn record_item_type(&mut self) -> Result<Option<Type>, Diagnostic> {
        let ty = self.record_definition(None)?;
        self.expect_semi("the struct")?;
        Ok(ty)
    }

    /// Reads `struct [attributes] [Name] [attributes] { members }` (or a forward declaration
    /// `struct Name`) up to the closing brace; `typedef_name` names an anonymous struct. Returns
    /// the struct's type (`None` for a forward declaration).
    pub(super) fn record_definition(
        &mut self,
        typedef_name: Option<&str>,
    ) -> Result<Option<Type>, Diagnostic> {
        let head = self.record_head();
        let start = self.here();
        // An instantiation of a struct template names the struct by its canonical name and
        // gives it an identity of its own (`template`).
        let (instance, id) = match self.templates.take_record_instance() {
            Some((name, id)) => (Some(name), id),
            None => (None, self.pos as u32),
        };
        self.pos += 1;
        let mut align = self.attributes()?;
        let name = match self.peek().and_then(|t| t.ident()) {
            Some(word) if word != "final" => {
                self.pos += 1;
                Some(instance.unwrap_or_else(|| word.to_string()))
            }
            _ => None,
        };
        align = self.attributes()?.or(align);
        if self.at_word("final") {
            self.pos += 1;
        }
        if head == Some(Head::Forward) {
            return Ok(None);
        }
        if self.at(Punct::Colon) {
            return Err(not_simulated(
                self.here(),
                "inheritance (`struct B : A`) is not simulated; make the base a member",
            ));
        }
        let Some(short) = name.or_else(|| typedef_name.map(str::to_string)) else {
            return Err(not_simulated(
                start,
                "an anonymous struct is not simulated; give it a name",
            ));
        };
        // An instantiation's canonical name is already full: its namespace, read again around
        // it, is not named twice.
        let scope = format!("{}::", self.names.namespace.join("::"));
        let short = match short.strip_prefix(&scope) {
            Some(rest) if !self.names.namespace.is_empty() => rest.to_string(),
            _ => short,
        };
        let full = self.names.declare(&short);
        let open = self.expect(Punct::LBrace)?;
        let body = self.pos;
        self.names.namespace.push(short.clone());
        let members = self.record_members(&full, None);
        self.names.namespace.pop();
        let (fields, mut items) = members?;
        let record = Record::lay_out(id, &full, fields, align)
            .map_err(|message| Diagnostic::new(start, message))?;
        let ty = Type::Struct(Arc::new(record));
        self.new_alias(&short, ty.clone(), false, Vec::new())?;
        // The second reading: member functions, with the struct complete.
        let end = self.pos;
        self.pos = body;
        self.names.namespace.push(short);
        let functions = self.record_members(&full, Some(&ty));
        self.names.namespace.pop();
        items.extend(functions?.1);
        if self.pos != end {
            return Err(Diagnostic::new(
                open,
                "this struct's members read differently twice",
            ));
        }
        self.expect(Punct::RBrace)?;
        self.pending.extend(items);
        Ok(Some(ty))
    }

    /// One reading of a class body, from after its `{` to its `}` (not read): without `this_type`
    /// the data members (name, type) and static constants, with it the member functions.
    #[allow(clippy::type_complexity)]
    fn record_members(
        &mut self,
        full: &str,
        this_type: Option<&Type>,
    ) -> Result<(Vec<(String, Type)>, Vec<Item>), Diagnostic> {
        let mut fields = Vec::new();
        let mut items = Vec::new();
        let short = full.rsplit("::").next().unwrap_or(full).to_string();
        self.nested(|p| {
            loop {
                let Some(token) = p.peek() else {
                    return Err(p.error_here("'}' to close the struct"));
                };
                if token.is_punct(Punct::RBrace) {
                    return Ok(());
                }
                if p.eat(Punct::Semi) {
                    continue;
                }
                let word = token.ident().unwrap_or_default();
                if word == "static_assert" {
                    let assertion = p.static_assertion()?;
                    p.static_asserts.push(assertion);
                    continue;
                }
                if matches!(word, "public" | "private" | "protected") {
                    p.pos += 1;
                    p.expect(Punct::Colon)?;
                    continue;
                }
                if matches!(
                    word,
                    "struct" | "class" | "union" | "enum" | "typedef" | "using"
                ) {
                    return Err(not_simulated(
                        token.span,
                        "a type declared inside a struct is not simulated; declare it at file \
                         scope",
                    ));
                }
                if let Some(message) = refused::keyword(word) {
                    return Err(not_simulated(token.span, message));
                }
                if token.is_punct(Punct::Tilde) {
                    // A destructor: device code never destroys what memplay simulates.
                    p.skip_function()?;
                    continue;
                }
                let friend = p.at_word("friend");
                if friend {
                    p.pos += 1;
                }
                p.member(full, &short, friend, this_type, &mut fields, &mut items)?;
            }
        })?;
        Ok((fields, items))
    }

    /// Whether the member declaration starting here declares a function: a `(` comes before
    /// anything that ends or sizes a data member (attributes' parentheses aside).
    fn at_member_function(&self) -> bool {
        let mut ahead = 0;
        while let Some(t) = self.peek_at(ahead) {
            if matches!(t.ident(), Some("__align__" | "alignas" | "__attribute__")) {
                return false;
            }
            if t.is_punct(Punct::LParen) {
                return true;
            }
            if [
                Punct::Semi,
                Punct::Assign,
                Punct::LBracket,
                Punct::Comma,
                Punct::LBrace,
            ]
            .iter()
            .any(|&p| t.is_punct(p))
            {
                return false;
            }
            ahead += 1;
        }
        false
    }

    /// One member declaration: a constructor, member function, operator, static constant or
    /// data members. The first reading (no `this_type`) takes the data and skips the functions,
    /// the second the other way round.
    fn member(
        &mut self,
        full: &str,
        short: &str,
        friend: bool,
        this_type: Option<&Type>,
        fields: &mut Vec<(String, Type)>,
        items: &mut Vec<Item>,
    ) -> Result<(), Diagnostic> {
        let mut ahead = 0;
        let mut device = false;
        let mut is_static = false;
        while let Some(word) = self.peek_at(ahead).and_then(|t| t.ident()) {
            if word == "static" {
                is_static = true;
            } else if !FUNCTION_WORDS.contains(&word) {
                break;
            }
            device |= matches!(word, "__device__" | "constexpr");
            ahead += 1;
        }
        let function = self.at_member_function();
        let Some(this_type) = this_type else {
            if function {
                // Declared now, so that a member function that calls one written after it
                // finds it.
                let mut at = self.pos;
                while at + 1 < self.tokens.len() && !self.tokens[at + 1].is_punct(Punct::LParen) {
                    at += 1;
                }
                let friend_or_static = friend || is_static;
                let name = self.tokens.get(at).and_then(|t| t.ident());
                let operator = self.tokens[self.pos..at]
                    .iter()
                    .any(|t| t.ident() == Some("operator"));
                if let (Some(name), false) = (name, friend_or_static || operator) {
                    if name != short && name != "operator" {
                        self.names.declare(name);
                    }
                }
                return self.skip_function();
            }
            if self.at_word(short) {
                return Err(not_simulated(
                    self.here(),
                    format!(
                        "a member of the struct's own type (`{short}*` inside `{short}`) is not \
                         simulated"
                    ),
                ));
            }
            return self.data_members(is_static, fields, items);
        };
        if !function {
            return self.skip_function();
        }
        if !device {
            // A host member function: the host calls it, device code cannot.
            return self.skip_function();
        }
        let constructor = self.peek_at(ahead).and_then(|t| t.ident()) == Some(short)
            && self
                .peek_at(ahead + 1)
                .is_some_and(|t| t.is_punct(Punct::LParen));
        // `operator T*()`: a conversion operator, named by the type it converts to.
        let conversion = self.peek_at(ahead).and_then(|t| t.ident()) == Some("operator")
            && self
                .peek_at(ahead + 1)
                .is_some_and(|t| !matches!(t.kind, crate::lexer::TokenKind::Punct(_)));
        let (spec, ret, name, span) = if conversion {
            self.pos += ahead;
            let span = self.here();
            self.pos += 1;
            let written = self.specifiers()?;
            let (ret, _) = self.pointers(written.base.clone(), written.is_const)?;
            let spec = super::Specifiers {
                function: Some(crate::ast::FunctionKind::Device),
                span,
                ..written
            };
            let name = conversion_name(&ret);
            (spec, ret, name, span)
        } else if constructor {
            self.pos += ahead;
            let span = self.here();
            self.pos += 1;
            let spec = super::Specifiers {
                base: Type::Void,
                is_const: false,
                storage: Storage::Automatic,
                function: Some(crate::ast::FunctionKind::Device),
                span,
                launch_bounds: None,
                align: None,
                dims: Vec::new(),
                compile_time: false,
                is_auto: false,
            };
            (spec, this_type.clone(), short.to_string(), span)
        } else {
            let spec = self.specifiers()?;
            let (ret, _) = self.pointers(spec.base.clone(), spec.is_const)?;
            // A reference to the struct returned by an operator (`S& operator+=`) is taken as
            // the value: the result is read, not assigned to.
            self.eat(Punct::Amp);
            let span = self.here();
            let name = if self.at_word("operator") {
                self.pos += 1;
                self.operator_name()?
            } else {
                self.ident("a member function's name")?.0
            };
            (spec, ret, name, span)
        };
        let has_this = !friend && !is_static;
        let overloadable = true;
        // A friend is a free function of the namespace around the struct.
        let own_name = if friend {
            let inner = self.names.namespace.pop();
            let declared = self.names.declare(&name);
            self.names.namespace.extend(inner);
            declared
        } else {
            format!("{full}::{name}")
        };
        let Some(function) = self.function(spec, ret, own_name, span)? else {
            return Ok(());
        };
        let this = has_this.then_some(this_type);
        items.push(Item::Function(finish_member(
            function,
            this,
            constructor,
            overloadable,
        )));
        Ok(())
    }

    /// `S::m` (or `ns::S::m`) at `ahead` tokens on, where `S` names a struct and a `(` or an
    /// operator follows: the struct, the member's name and the tokens the name takes.
    fn struct_member_name(&self, ahead: usize) -> Option<(Arc<Record>, String, usize)> {
        let (written, taken) = self.peek_name_at(ahead)?;
        let (owner, member) = written.rsplit_once("::")?;
        let full = self.names.resolve(owner);
        let Type::Struct(record) = &self.names.alias(&full)?.ty else {
            return None;
        };
        let next = self.peek_at(taken)?;
        (next.is_punct(Punct::LParen) || member == "operator")
            .then(|| (record.clone(), member.to_string(), taken - ahead))
    }

    /// A member function of a struct defined after it starts here (its `S::`).
    pub(super) fn struct_member_name_here(&self) -> bool {
        self.struct_member_name(0).is_some()
    }

    /// A member function, operator or constructor of a struct defined after the struct, at
    /// file scope (`__device__ float Complex::norm() const { ... }`), when one starts here;
    /// `spec` and `ret` are read already except for a constructor, which has none.
    pub(super) fn member_definition(
        &mut self,
        read: Option<(super::Specifiers, Type)>,
    ) -> Result<Option<Option<Item>>, Diagnostic> {
        let mut ahead = 0;
        if read.is_none() {
            while self
                .peek_at(ahead)
                .and_then(|t| t.ident())
                .is_some_and(|w| FUNCTION_WORDS.contains(&w))
            {
                ahead += 1;
            }
        }
        let Some((record, mut member, taken)) = self.struct_member_name(ahead) else {
            return Ok(None);
        };
        let short = record
            .name
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_string();
        let this_type = Type::Struct(record.clone());
        let constructor = read.is_none();
        if constructor && member != short {
            return Ok(None);
        }
        let (spec, ret) = match read {
            Some(read) => read,
            None => {
                let device = (0..ahead).any(|k| {
                    matches!(
                        self.peek_at(k).and_then(|t| t.ident()),
                        Some("__device__" | "constexpr")
                    )
                });
                let spec = super::Specifiers {
                    base: Type::Void,
                    is_const: false,
                    storage: Storage::Automatic,
                    function: device.then_some(crate::ast::FunctionKind::Device),
                    span: self.here(),
                    launch_bounds: None,
                    align: None,
                    dims: Vec::new(),
                    compile_time: false,
                    is_auto: false,
                };
                (spec, this_type.clone())
            }
        };
        self.pos += ahead;
        let span = self.here();
        self.pos += taken;
        if member == "operator" {
            member = self.operator_name()?;
        }
        if spec.function.is_none() && !spec.compile_time {
            // A host member function: the host calls it, device code cannot.
            self.skip_function()?;
            return Ok(Some(None));
        }
        let scope: Vec<String> = record.name.split("::").map(str::to_string).collect();
        let outer = std::mem::replace(&mut self.names.namespace, scope);
        let own_name = format!("{}::{member}", record.name);
        let function = self.function(spec, ret, own_name, span);
        self.names.namespace = outer;
        let Some(function) = function? else {
            return Ok(Some(None));
        };
        let overloadable = true;
        let function = finish_member(function, Some(&this_type), constructor, overloadable);
        Ok(Some(Some(Item::Function(function))))
    }

    /// Data members or a static constant, to their `;`.
    fn data_members(
        &mut self,
        is_static: bool,
        fields: &mut Vec<(String, Type)>,
        items: &mut Vec<Item>,
    ) -> Result<(), Diagnostic> {
        let spec = self.specifiers()?;
        loop {
            let (ty, _) = self.pointers(spec.base.clone(), spec.is_const)?;
            let (name, span) = self.ident("a member name")?;
            let dims = self.dims()?;
            self.attributes()?;
            let mut ty = ty;
            for dim in dims.iter().rev() {
                match dim.as_ref().and_then(|e| self.fold(e, 0)) {
                    Some(value) if (1..=1 << 28).contains(&value) => {
                        ty = Type::Array(Box::new(ty), Some(value as u32));
                    }
                    _ => {
                        return Err(not_simulated(
                            span,
                            "the size of a struct's array member must be a constant the \
                             simulator folds as it reads the struct (a number, a #define, an \
                             integer constant declared before it)",
                        ))
                    }
                }
            }
            if is_static {
                let init = if self.eat(Punct::Assign) {
                    Some(self.initializer()?)
                } else {
                    None
                };
                if !spec.is_const || init.is_none() {
                    return Err(not_simulated(
                        span,
                        "a static data member is simulated only as a constant with its value \
                         (`static const int N = 4;`)",
                    ));
                }
                let full_name = self.names.declare(&name);
                if let Some(Initializer::Expr(value)) = &init {
                    if let Some(value) = self.fold(value, 0) {
                        self.names.constants.push((full_name.clone(), value));
                    }
                }
                items.push(Item::Variable(Declaration {
                    storage: Storage::Automatic,
                    is_const: true,
                    compile_time: spec.compile_time,
                    is_auto: false,
                    declarators: vec![Declarator {
                        name: full_name,
                        span,
                        pointer_const: false,
                        ty,
                        dims: Vec::new(),
                        init,
                        align: None,
                        reference: false,
                    }],
                    span,
                }));
            } else {
                if self.at(Punct::Assign) || self.at(Punct::LBrace) {
                    return Err(not_simulated(
                        self.here(),
                        "a default member initialiser is not simulated; set the member in a \
                         constructor",
                    ));
                }
                fields.push((name, ty));
            }
            if !self.eat(Punct::Comma) {
                break;
            }
        }
        self.expect_semi("the member")
    }

    /// A free operator function at file scope (`__device__ S operator*(float s, S v)`) after its
    /// return type, named with its parameter types as member operators are; one of them must
    /// be a struct or a vector type (`float3 operator+(float3, float3)`, as the CUDA samples'
    /// `helper_math.h` defines them), the operands memplay overloads operators for.
    pub(super) fn free_operator(
        &mut self,
        spec: super::Specifiers,
        ret: Type,
    ) -> Result<Item, Diagnostic> {
        let at = self.here();
        self.pos += 1;
        let name = self.operator_name()?;
        let name = self.names.declare(&name);
        let Some(mut function) = self.function(spec, ret, name, at)? else {
            return Ok(Item::Variable(Declaration {
                storage: Storage::Automatic,
                is_const: true,
                compile_time: true,
                is_auto: false,
                declarators: Vec::new(),
                span: at,
            }));
        };
        if !function
            .params
            .iter()
            .any(|p| matches!(p.ty, Type::Struct(_) | Type::Vector(..)))
        {
            return Err(not_simulated(at, refused::OPERATORS));
        }
        let types: Vec<String> = function.params.iter().map(|p| p.ty.to_string()).collect();
        function.name = format!("{}({})", function.name, types.join(","));
        Ok(Item::Function(function))
    }

    /// Keeps the values of a file-scope declaration's integer constants that fold here.
    pub(super) fn remember_constants(&mut self, declaration: &Declaration) {
        if !declaration.is_const || declaration.storage != Storage::Automatic {
            return;
        }
        for d in &declaration.declarators {
            if let (Some(Initializer::Expr(value)), Type::Scalar(s)) = (&d.init, &d.ty) {
                if s.is_integer() && d.dims.is_empty() {
                    if let Some(value) = self.fold(value, 0) {
                        self.names.constants.push((d.name.clone(), value));
                    }
                }
            }
        }
    }

    /// The value of an integer constant expression of literals, constants the parser knows
    /// (`remember_constants`) and C's arithmetic; `None` for anything else. `depth` counts the
    /// levels descended, which the parser's tree depth bounds already.
    pub(super) fn fold(&self, e: &Expr, depth: usize) -> Option<i64> {
        if depth > crate::limits::MAX_TREE_DEPTH {
            return None;
        }
        let go = |e: &Expr| self.fold(e, depth + 1);
        Some(match &e.kind {
            ExprKind::Int { value, .. } => i64::try_from(*value).ok()?,
            ExprKind::SizeofType(ty) => i64::try_from(ty.size()).ok()?,
            ExprKind::Ident(name) => {
                let found = self.names.constants.iter().rev().find(|(n, _)| n == name);
                found?.1
            }
            ExprKind::Unary(UnaryOp::Neg, a) => go(a)?.checked_neg()?,
            ExprKind::Unary(UnaryOp::Plus, a) => go(a)?,
            ExprKind::Cast(Type::Scalar(s), a) if s.is_integer() => go(a)?,
            ExprKind::Conditional(c, a, b) => {
                if go(c)? != 0 {
                    go(a)?
                } else {
                    go(b)?
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (go(a)?, go(b)?);
                match op {
                    BinaryOp::Add => a.checked_add(b)?,
                    BinaryOp::Sub => a.checked_sub(b)?,
                    BinaryOp::Mul => a.checked_mul(b)?,
                    BinaryOp::Div => a.checked_div(b)?,
                    BinaryOp::Rem => a.checked_rem(b)?,
                    BinaryOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
                    BinaryOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
                    BinaryOp::Eq => i64::from(a == b),
                    BinaryOp::Ne => i64::from(a != b),
                    BinaryOp::Lt => i64::from(a < b),
                    BinaryOp::Gt => i64::from(a > b),
                    BinaryOp::Le => i64::from(a <= b),
                    BinaryOp::Ge => i64::from(a >= b),
                    _ => return None,
                }
            }
            _ => return None,
        })
    }

    /// `+`, `+=`, `[]`, `()` after `operator`: the function's name, `operator+`.
    fn operator_name(&mut self) -> Result<String, Diagnostic> {
        let Some(TokenKind::Punct(p)) = self.peek().map(|t| &t.kind) else {
            return Err(not_simulated(
                self.here(),
                "a conversion operator (`operator float()`) is simulated where its struct defines it, not after it",
            ));
        };
        let p = *p;
        self.pos += 1;
        let close = match p {
            Punct::LBracket => Some(Punct::RBracket),
            Punct::LParen => Some(Punct::RParen),
            _ => None,
        };
        if let Some(close) = close {
            self.expect(close)?;
            return Ok(format!("operator{}{}", p.as_str(), close.as_str()));
        }
        Ok(format!("operator{}", p.as_str()))
    }

    /// Skips a function from its parameters (or a destructor from its `~`) to the end of its
    /// body or prototype: brackets are matched as a flat count, so nothing here nests.
    fn skip_function(&mut self) -> Result<(), Diagnostic> {
        let open = self.here();
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            self.pos += 1;
            if t.is_punct(Punct::LParen) || t.is_punct(Punct::LBrace) || t.is_punct(Punct::LBracket)
            {
                depth += 1;
            } else if t.is_punct(Punct::RParen) || t.is_punct(Punct::RBracket) {
                depth = depth.saturating_sub(1);
            } else if t.is_punct(Punct::RBrace) {
                depth = depth.saturating_sub(1);
                let initialiser = self.at(Punct::Comma) || self.at(Punct::LBrace);
                if depth == 0 && !initialiser {
                    return Ok(());
                }
            } else if t.is_punct(Punct::Semi) && depth == 0 {
                return Ok(());
            }
        }
        Err(Diagnostic::new(
            open,
            "this member function is never closed",
        ))
    }

    /// After a member function's parameters: `const`, `noexcept`, `override` and `final`,
    /// which change nothing memplay simulates.
    pub(super) fn member_function_qualifiers(&mut self) {
        while matches!(
            self.peek().and_then(|t| t.ident()),
            Some("const" | "noexcept" | "override" | "final" | "volatile")
        ) {
            self.pos += 1;
        }
    }

    /// A constructor's member initialisers `: re(r), im{i}`, as the assignments `(*this).re =
    /// r;` its body starts with; none when no `:` follows.
    pub(super) fn member_initializers(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        let mut stmts = Vec::new();
        if !self.eat(Punct::Colon) {
            return Ok(stmts);
        }
        loop {
            let (field, field_span) = self.ident("a member to initialise")?;
            let value = match self.initializer_after_name()? {
                Some(value) => value,
                None => {
                    return Err(not_simulated(
                        field_span,
                        "a member initialiser needs one value here",
                    ))
                }
            };
            let span = field_span.to(value.span);
            let member = expr(
                ExprKind::Member {
                    base: Box::new(this_object(field_span)),
                    field,
                    field_span,
                },
                field_span,
            );
            let assign = ExprKind::Assign(None, Box::new(member), Box::new(value));
            stmts.push(Stmt {
                kind: StmtKind::Expr(expr(assign, span)),
                span,
            });
            if !self.eat(Punct::Comma) {
                return Ok(stmts);
            }
        }
    }

    /// `(value)` or `{value}` after a member's name in a member initialiser.
    fn initializer_after_name(&mut self) -> Result<Option<Expr>, Diagnostic> {
        let close = if self.eat(Punct::LParen) {
            Punct::RParen
        } else {
            self.expect(Punct::LBrace)?;
            Punct::RBrace
        };
        let value = self.assignment_expr()?;
        self.expect(close)?;
        Ok(Some(value))
    }

    /// After `typedef`: a struct's definition, as the specifiers of the names that follow it
    /// (`typedef struct { float re, im; } Complex;`), or `None` when no definition starts here.
    pub(super) fn typedef_record(&mut self) -> Result<Option<super::Specifiers>, Diagnostic> {
        if self.record_head() != Some(Head::Definition) {
            return Ok(None);
        }
        // An anonymous struct takes the typedef's name: the first name after its `}`.
        let mut at = self.pos;
        while self
            .tokens
            .get(at)
            .is_some_and(|t| !t.is_punct(Punct::LBrace))
        {
            at += 1;
        }
        let mut depth = 0usize;
        while let Some(t) = self.tokens.get(at) {
            at += 1;
            if t.is_punct(Punct::LBrace) {
                depth += 1;
            } else if t.is_punct(Punct::RBrace) {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
        }
        let name = self
            .tokens
            .get(at)
            .and_then(|t| t.ident())
            .map(str::to_string);
        let span = self.here();
        let Some(base) = self.record_definition(name.as_deref())? else {
            return Ok(None);
        };
        Ok(Some(super::Specifiers {
            base,
            is_const: false,
            storage: Storage::Automatic,
            function: None,
            span,
            launch_bounds: None,
            align: None,
            dims: Vec::new(),
            compile_time: false,
            is_auto: false,
        }))
    }

    /// The struct type a name at the current position stands for, if it names one.
    fn struct_alias_here(&self) -> Option<Type> {
        let (written, _) = self.peek_name()?;
        if self.names.locals.contains(&written) {
            return None;
        }
        let full = self.names.resolve(&written);
        let ty = self.names.alias(&full)?.ty.clone();
        matches!(ty, Type::Struct(_)).then_some(ty)
    }

    /// `S(args)` or `S{args}` where `S` names a struct: a call of its constructor (or, for a
    /// struct without one, its members in order), as the cast to `S` of the call `S::S`.
    pub(super) fn struct_construction(&mut self) -> Result<Option<super::Tree>, Diagnostic> {
        let start = self.here();
        let (record, taken) = match self.struct_alias_here() {
            Some(Type::Struct(record)) => (record, self.peek_name().unwrap_or_default().1),
            _ => {
                // A struct template's instantiation, `SharedMemory<float>()`.
                let Some((written, taken)) = self.peek_name() else {
                    return Ok(None);
                };
                let full = self.names.resolve(&written);
                if !self.at_struct_template(&full, taken) {
                    return Ok(None);
                }
                match self.struct_template_type() {
                    Some(Type::Struct(record)) => (record, 0),
                    _ => {
                        let error = self.unsupported.take();
                        return Err(error
                            .unwrap_or_else(|| self.error_here("a struct template's arguments")));
                    }
                }
            }
        };
        let braces = self
            .peek_at(taken)
            .is_some_and(|t| t.is_punct(Punct::LBrace));
        if !braces
            && !self
                .peek_at(taken)
                .is_some_and(|t| t.is_punct(Punct::LParen))
        {
            return Ok(None);
        }
        self.pos += taken;
        let (args, depth, close) = if braces {
            self.arguments_between(Punct::LBrace, Punct::RBrace)?
        } else {
            self.constructor_arguments()?
        };
        let span = start.to(close);
        let call = ExprKind::Call {
            name: constructor_name(&record.name),
            name_span: start,
            args,
        };
        let kind = ExprKind::Cast(Type::Struct(record), Box::new(expr(call, span)));
        self.node(kind, span, depth + 1, start).map(Some)
    }
}
