//! Rust names for what a model names: attributes as snake_case fields, tables and entities as
//! CamelCase types.

/// `RoomID` → `room_id`, `agentID` → `agent_id`, `default-card` → `default_card`; a keyword
/// or a leading digit gets a `_` added.
pub(super) fn field(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (at, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let previous = at.checked_sub(1).and_then(|at| chars.get(at));
            let next = chars.get(at + 1);
            let starts_word = previous
                .is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (previous.is_some_and(char::is_ascii_uppercase)
                    && next.is_some_and(char::is_ascii_lowercase));
            if starts_word && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_owned();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        return format!("_{out}");
    }
    if KEYWORDS.contains(&out.as_str()) {
        return format!("{out}_");
    }
    out
}

/// `session_store` → `SessionStore`, `User` → `User`, `GSI-1` → `Gsi1`.
pub(super) fn type_name(name: &str) -> String {
    let mut out = String::new();
    for word in field(name).split('_').filter(|word| !word.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

const KEYWORDS: [&str; 38] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_snake_case() {
        assert_eq!(field("RoomID"), "room_id");
        assert_eq!(field("agentID"), "agent_id");
        assert_eq!(field("PaymentDetails"), "payment_details");
        assert_eq!(field("TTL"), "ttl");
        assert_eq!(field("default-card"), "default_card");
        assert_eq!(field("comm_date"), "comm_date");
        assert_eq!(field("SubId"), "sub_id");
        assert_eq!(field("type"), "type_");
        assert_eq!(field("1st"), "_1st");
    }

    #[test]
    fn types_are_camel_case() {
        assert_eq!(type_name("session_store"), "SessionStore");
        assert_eq!(
            type_name("Complaint_management_system"),
            "ComplaintManagementSystem"
        );
        assert_eq!(type_name("ReoccuringPayments"), "ReoccuringPayments");
        assert_eq!(type_name("metadata"), "Metadata");
    }
}
