//! Decoding a small block (the provider, its `lock`, `preflight_endpoints` and `pricing`,
//! `removed`, `variable`) against a table of what it accepts. One walk reports what the table
//! does not know (an unknown attribute or block, with a "did you mean"), a nested block given
//! twice and a required attribute left out; then the string attributes are evaluated and
//! checked to be strings. Each block's own rules
//! on the values (a bucket name, an update mode, a variable's type) stay with the block.

use std::ops::Range;

use hcl::edit::Span;
use hcl::edit::expr::Expression;
use hcl::edit::structure::{Attribute, Block};

use crate::diagnostic::{Diagnostic, SourceFile, did_you_mean};
use crate::language::evaluator::{Evaluator, Scope, takes_string};
use crate::language::functions::string_text;
use crate::language::source::block_head;

/// What a block accepts, and how its diagnostics name it.
pub(crate) struct BlockSchema {
    /// The block as messages name it: `the provider`, `` `removed` ``, `a variable block`.
    pub(crate) name: &'static str,
    /// What messages call an attribute: `attribute`, or `argument` (Terraform's word in
    /// `variable` blocks).
    pub(crate) member: &'static str,
    pub(crate) attributes: &'static [AttributeSchema],
    /// The nested blocks it takes, each at most once.
    pub(crate) blocks: &'static [&'static str],
    /// The hint for an unknown attribute close to no known one: these words, then the list.
    pub(crate) accepts: &'static str,
    pub(crate) unknown_block: UnknownBlock,
}

/// One attribute a block accepts.
pub(crate) struct AttributeSchema {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    /// The hint when it is left out; `None` when it may be.
    pub(crate) required: Option<&'static str>,
}

impl AttributeSchema {
    /// An optional string attribute.
    pub(crate) const fn string(name: &'static str) -> Self {
        Self {
            name,
            kind: Kind::String,
            required: None,
        }
    }

    /// An optional attribute the block reads as written.
    pub(crate) const fn expression(name: &'static str) -> Self {
        Self {
            name,
            kind: Kind::Expression,
            required: None,
        }
    }

    /// This attribute, required; `hint` says what to add.
    pub(crate) const fn required(self, hint: &'static str) -> Self {
        Self {
            required: Some(hint),
            ..self
        }
    }
}

/// What an attribute's value is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string, evaluated in the load's scope ([`Members::strings`]).
    String,
    /// An expression the block reads as written, without evaluating it.
    Expression,
}

/// How an unknown nested block is reported.
pub(crate) enum UnknownBlock {
    /// As an unknown attribute, at the block's head (Terraform's wording for `variable`).
    LikeAnAttribute,
    /// As an unknown block, at its name: a "did you mean" among the nested blocks, else the
    /// hint this gives.
    Hint(fn(&BlockSchema) -> String),
}

/// The known attributes and nested blocks of a block, as [`BlockSchema::walk`] found them.
pub(crate) struct Members<'b> {
    attributes: Vec<(&'static AttributeSchema, &'b Attribute)>,
    blocks: Vec<&'b Block>,
}

/// The string attributes whose values are right, in source order.
pub(crate) struct Strings {
    pub(crate) values: Vec<(&'static str, String, Option<Range<usize>>)>,
    /// The attributes whose values depend on variables that have none yet.
    pub(crate) unknown: Vec<&'static str>,
}

impl Strings {
    /// The value of `name`, with where it is written, taken out.
    pub(crate) fn take(&mut self, name: &str) -> Option<(String, Option<Range<usize>>)> {
        let index = self.values.iter().position(|(n, _, _)| *n == name)?;
        let (_, text, range) = self.values.remove(index);
        Some((text, range))
    }
}

impl BlockSchema {
    /// The names of its attributes, in table order.
    pub(crate) fn attribute_names(&self) -> Vec<&'static str> {
        self.attributes.iter().map(|a| a.name).collect()
    }

    /// Reports every member of `block` the table does not know, every nested block given
    /// again and every required attribute left out; the members it knows.
    pub(crate) fn walk<'b>(
        &'static self,
        file: &SourceFile,
        block: &'b Block,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Members<'b> {
        let mut members = Members {
            attributes: Vec::new(),
            blocks: Vec::new(),
        };
        for nested in block.body.blocks() {
            let name = nested.ident.as_str();
            let known = self.blocks.contains(&name);
            if known && !members.blocks.iter().any(|b| b.ident.as_str() == name) {
                members.blocks.push(nested);
            } else if known {
                diagnostics.push(file.error(
                    nested.ident.span(),
                    format!("the {name} block is declared more than once"),
                    Some(format!("keep one `{name}` block")),
                ));
            } else {
                diagnostics.push(self.unknown_block(file, nested));
            }
        }
        for attribute in block.body.attributes() {
            let name = attribute.key.as_str();
            match self.attributes.iter().find(|a| a.name == name) {
                Some(schema) => members.attributes.push((schema, attribute)),
                None => diagnostics.push(self.unknown_member(file, attribute.key.span(), name)),
            }
        }
        for required in self.attributes.iter().filter(|a| !members.has(a.name)) {
            if let Some(hint) = required.required {
                diagnostics.push(file.error(
                    block_head(block),
                    format!("{} block sets no `{}`", self.name, required.name),
                    Some(hint.to_owned()),
                ));
            }
        }
        members
    }

    fn unknown_member(
        &self,
        file: &SourceFile,
        range: Option<Range<usize>>,
        name: &str,
    ) -> Diagnostic {
        let names = self.attribute_names();
        let hint = did_you_mean(name, names.iter().copied())
            .unwrap_or_else(|| format!("{} {}", self.accepts, names.join(", ")));
        file.error(
            range,
            format!("unknown {} `{name}` in {}", self.member, self.name),
            Some(hint),
        )
    }

    fn unknown_block(&self, file: &SourceFile, nested: &Block) -> Diagnostic {
        let name = nested.ident.as_str();
        match self.unknown_block {
            UnknownBlock::LikeAnAttribute => self.unknown_member(file, block_head(nested), name),
            UnknownBlock::Hint(hint) => file.error(
                nested.ident.span(),
                format!("unknown block `{name}` in {}", self.name),
                Some(did_you_mean(name, self.blocks.iter().copied()).unwrap_or_else(|| hint(self))),
            ),
        }
    }
}

impl<'b> Members<'b> {
    /// Whether the attribute `name` is written, whatever its value.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.expression(name).is_some()
    }

    /// The value of the attribute `name` as written.
    pub(crate) fn expression(&self, name: &str) -> Option<&'b Expression> {
        self.attributes
            .iter()
            .find(|(schema, _)| schema.name == name)
            .map(|(_, attribute)| &attribute.value)
    }

    /// The nested block `name`, the first one written.
    pub(crate) fn block(&self, name: &str) -> Option<&'b Block> {
        self.blocks
            .iter()
            .find(|block| block.ident.as_str() == name)
            .copied()
    }

    /// Evaluates the attributes of [`Kind::String`] in `scope`: the values that are strings,
    /// and the names of those that depend on unknown variables. A value that is broken or not
    /// a string is reported.
    pub(crate) fn strings(
        &self,
        eval: &mut Evaluator,
        file: &SourceFile,
        scope: Scope<'_>,
    ) -> Strings {
        let mut strings = Strings {
            values: Vec::new(),
            unknown: Vec::new(),
        };
        for (schema, attribute) in &self.attributes {
            if schema.kind != Kind::String {
                continue;
            }
            let name = schema.name;
            let range = attribute.value.span();
            let Some(evaluated) = eval.value(file, &attribute.value, scope) else {
                if eval.depends_on_unknown(&attribute.value) {
                    strings.unknown.push(name);
                }
                eval.check_unknown_type(file, name, &attribute.value, takes_string);
                continue;
            };
            match string_text(&evaluated.value) {
                Ok(text) => strings.values.push((name, text, range)),
                Err(message) => eval.diagnostics.push(file.error(
                    range,
                    format!("wrong value for `{name}`: {message}"),
                    None,
                )),
            }
        }
        strings
    }
}
