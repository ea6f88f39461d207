//! Key templates parsed at compile time: `"STATUS#{status}#TICKET#{id}"`, `"SEQ#{seq:6}"`,
//! `"TEAM#{team_id}#{shard(id, 8)}"`.

use syn::LitStr;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Constant text.
    Literal(String),
    /// A field, with an optional integer width.
    Field { name: String, width: Option<u8> },
    /// A shard of the partition, `count` of them, decided by field `name`.
    Shard { name: String, count: u16 },
}

/// The most shards a template may name (the runtime's `MAX_SHARDS`).
const MAX_SHARDS: u16 = 1000;

/// A parsed template with the string literal it came from (for spans).
#[derive(Debug, Clone)]
pub struct Template {
    pub literal: LitStr,
    pub pieces: Vec<Piece>,
}

impl Template {
    /// Parses the literal; errors are spanned at it. `{{` and `}}` stand for braces.
    pub fn parse(literal: &LitStr) -> syn::Result<Template> {
        let source = literal.value();
        let error = |message: String| syn::Error::new(literal.span(), message);
        if source.is_empty() {
            return Err(error(
                "key template is empty; DynamoDB key attributes cannot be empty (use constant text such as \"TICKET\")".into(),
            ));
        }
        let mut pieces = Vec::new();
        let mut literal_text = String::new();
        let mut chars = source.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal_text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal_text.push('}');
                }
                '}' => {
                    return Err(error(format!(
                    "unbalanced `}}` in key template {source:?}; write `}}}}` for a literal brace"
                )))
                }
                '{' => {
                    let mut inner = String::new();
                    let mut closed = false;
                    for c in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        if c == '{' {
                            break;
                        }
                        inner.push(c);
                    }
                    if !closed {
                        return Err(error(format!(
                            "unbalanced `{{` in key template {source:?}: every `{{field}}` needs its `}}`; write `{{{{` for a literal brace"
                        )));
                    }
                    if !literal_text.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal_text)));
                    }
                    if let Some(Piece::Field { name, .. } | Piece::Shard { name, .. }) =
                        pieces.last()
                    {
                        return Err(error(format!(
                            "fields `{name}` and `{}` are adjacent in key template {source:?}; put constant text between them (such as `#`) so the key can be split back into its fields",
                            inner.split(':').next().unwrap_or_default().trim()
                        )));
                    }
                    let piece = parse_piece(&inner, &source).map_err(error)?;
                    if matches!(piece, Piece::Shard { .. })
                        && pieces
                            .iter()
                            .any(|piece| matches!(piece, Piece::Shard { .. }))
                    {
                        return Err(error(format!(
                            "key template {source:?} has two shard parts; one `{{shard(field, count)}}` spreads the partition over `count` keys"
                        )));
                    }
                    pieces.push(piece);
                }
                c => literal_text.push(c),
            }
        }
        if !literal_text.is_empty() {
            pieces.push(Piece::Literal(literal_text));
        }
        Ok(Template {
            literal: literal.clone(),
            pieces,
        })
    }

    /// Whether field number `position` ends the template: no text follows it.
    pub fn ends_with_field(&self, position: usize) -> bool {
        let mut fields = (self.pieces.iter().enumerate())
            .filter(|(_, piece)| !matches!(piece, Piece::Literal(_)));
        fields
            .nth(position)
            .is_some_and(|(index, _)| index + 1 == self.pieces.len())
    }

    /// The field names, in order: a shard part's field counts, as its value decides the key.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Field { name, .. } | Piece::Shard { name, .. } => Some(name.as_str()),
            Piece::Literal(_) => None,
        })
    }

    /// The shard part, if the template has one: its field and count.
    pub fn shard(&self) -> Option<(&str, u16)> {
        self.pieces.iter().find_map(|piece| match piece {
            Piece::Shard { name, count } => Some((name.as_str(), *count)),
            _ => None,
        })
    }

    /// The fields whose own text the template writes, in order (a shard part's field only
    /// where the template also writes it).
    pub fn written_fields(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Field { name, .. } => Some(name.as_str()),
            _ => None,
        })
    }
}

/// `{field}`, `{field:width}` or `{shard(field, count)}`.
fn parse_piece(inner: &str, source: &str) -> Result<Piece, String> {
    let Some(arguments) = inner.trim().strip_prefix("shard(") else {
        return parse_field(inner, source);
    };
    let shape = || {
        format!(
            "`{{{inner}}}` in key template {source:?} is not a shard part; write `{{shard(field, count)}}`, e.g. `{{shard(id, 8)}}`"
        )
    };
    let arguments = arguments.strip_suffix(')').ok_or_else(shape)?;
    let (field, count) = arguments.split_once(',').ok_or_else(shape)?;
    let Piece::Field { name, width: None } = parse_field(field, source)? else {
        return Err(shape());
    };
    match count.trim().parse::<u16>() {
        Ok(count) if (2..=MAX_SHARDS).contains(&count) => Ok(Piece::Shard { name, count }),
        _ => Err(format!(
            "the shard count `{}` in key template {source:?} must be a number from 2 to {MAX_SHARDS}: a query of the partition sends one request per shard",
            count.trim()
        )),
    }
}

fn parse_field(inner: &str, source: &str) -> Result<Piece, String> {
    let (name, width) = match inner.split_once(':') {
        Some((name, width)) => (name.trim(), Some(width.trim())),
        None => (inner.trim(), None),
    };
    // `{r#type}` and `{type}` both name the field `r#type`.
    let name = name.strip_prefix("r#").unwrap_or(name);
    if name.is_empty() {
        return Err(format!(
            "empty `{{}}` in key template {source:?}; name a field, e.g. `{{id}}`"
        ));
    }
    if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(format!(
            "`{{{inner}}}` in key template {source:?} is not a field name; fields are written `{{field}}` or, for integers, `{{field:width}}`"
        ));
    }
    let width = match width {
        None => None,
        Some(text) => match text.parse::<u8>() {
            Ok(width) if (1..=38).contains(&width) => Some(width),
            _ => {
                return Err(format!(
                    "width `{text}` of `{name}` in key template {source:?} must be a number of digits from 1 to 38"
                ))
            }
        },
    };
    Ok(Piece::Field {
        name: name.to_owned(),
        width,
    })
}
