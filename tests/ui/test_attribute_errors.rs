// Every mistake is reported at once: arguments to the attribute, a plain `fn`, and no table.
#[singletable::test(fast)]
fn not_async() {}

fn main() {}
