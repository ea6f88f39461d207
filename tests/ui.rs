//! Every diagnostic of the derives, as the user sees it.

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

/// The diagnostics speak in the user's names: no generated item (`__private`, `__PK`, a
/// `__singletable_*` helper) and no field by number (a const index such as `Field<User, u32, 3>`)
/// appears in any expected output.
#[test]
fn diagnostics_name_no_generated_item() {
    let mut read = 0;
    for entry in std::fs::read_dir("tests/ui").expect("tests/ui is readable") {
        let path = entry.expect("a directory entry").path();
        if path
            .extension()
            .is_none_or(|extension| extension != "stderr")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("an expected output is text");
        read += 1;
        for (number, line) in text.lines().enumerate() {
            // Source lines quoted from the case itself may hold anything the user wrote.
            if line.trim_start().starts_with(|c: char| c.is_ascii_digit()) && line.contains(" | ") {
                continue;
            }
            let place = format!("{}:{}: {line}", path.display(), number + 1);
            assert!(!generated_name(line), "a generated name in {place}");
            assert!(!number_argument(line), "a field by number in {place}");
            assert!(
                !anonymous_path(line),
                "a name by its anonymous path in {place}"
            );
            assert!(
                !line.contains("consider manually implementing"),
                "advice to implement a library trait in {place}"
            );
        }
    }
    assert!(read > 50, "only {read} expected outputs found in tests/ui");
}

/// Whether `line` holds an identifier starting with two underscores.
fn generated_name(line: &str) -> bool {
    let bytes = line.as_bytes();
    (0..bytes.len().saturating_sub(2)).any(|at| {
        let starts_word =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        starts_word
            && bytes[at] == b'_'
            && bytes[at + 1] == b'_'
            && bytes[at + 2].is_ascii_alphabetic()
    })
}

/// Whether `line` names a type by a path through an anonymous constant (`_::id`), as rustc
/// prints a type whose name another type shares. Its own `_::_` (in notes on constant
/// evaluation), serde's `_::_serde`, and `_::<impl User>::CACHE` (how rustc names an
/// associated constant on deprecating it, beside our message naming the field) are not.
fn anonymous_path(line: &str) -> bool {
    line.match_indices("_::").any(|(at, _)| {
        let starts_word = at == 0 || !line.as_bytes()[at - 1].is_ascii_alphanumeric();
        let rest = &line[at + 3..];
        starts_word && !rest.starts_with('_') && !rest.starts_with("<impl ")
    })
}

/// Whether `line` holds a generic argument that is a bare number (`<3>`, `, 3>`, `<3, `).
fn number_argument(line: &str) -> bool {
    let mut rest = line;
    while let Some(at) = rest.find(['<', ',']) {
        let after = rest[at + 1..].trim_start();
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && after[digits..].starts_with(['>', ',']) {
            return true;
        }
        rest = &rest[at + 1..];
    }
    false
}
