//! The table-design rules the derives check at compile time, as traits: whether a table or
//! an index has a sort key. (A collection's rule, `InTable`, lives with `Entity`.) The derive
//! names each as a path, `<T as Rule>::CHECKED`, so that a broken rule is one error at the
//! user's tokens, with the rule's message and no note pointing into this crate.

#[doc(hidden)]
/// Implemented by the `Table` derive when the table has a sort key.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` has no sort key, so an entity in it cannot have an `sk` template",
    label = "remove this `sk` template, or declare `sk = \"SK\"` on `{Self}`"
)]
pub trait HasSortKey {
    /// What the derive's check names: `<T as Trait>::CHECKED` reports an unmet bound at the
    /// user's tokens, with no note pointing into this crate.
    #[doc(hidden)]
    const CHECKED: () = ();
}

#[doc(hidden)]
/// Implemented by the `Table` derive when the table has no sort key.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` has a sort key, so every entity in it needs an `sk` template",
    label = "add an `sk = \"...\"` template to this entity"
)]
pub trait HasNoSortKey {
    /// What the derive's check names: `<T as Trait>::CHECKED` reports an unmet bound at the
    /// user's tokens, with no note pointing into this crate.
    #[doc(hidden)]
    const CHECKED: () = ();
}

#[doc(hidden)]
/// Marks an index declared with a sort key.
#[derive(Debug, Clone, Copy)]
pub enum WithSortKey {}

#[doc(hidden)]
/// Marks an index declared without a sort key.
#[derive(Debug, Clone, Copy)]
pub enum WithoutSortKey {}

#[doc(hidden)]
/// Holds for [`WithSortKey`]: the entity gives a sort key template to an index that has one.
#[diagnostic::on_unimplemented(
    message = "this index has no sort key, so the entity cannot give it a sort key template",
    label = "remove this template, or declare `sk = \"...\"` on the table's index"
)]
pub trait IndexSortKeyDeclared {
    /// What the derive's check names: `<T as Trait>::CHECKED` reports an unmet bound at the
    /// user's tokens, with no note pointing into this crate.
    #[doc(hidden)]
    const CHECKED: () = ();
}
impl IndexSortKeyDeclared for WithSortKey {}

#[doc(hidden)]
/// Holds for [`WithoutSortKey`]: the entity gives no sort key template to an index without one
/// (`Slot` is the index, named in the message).
#[diagnostic::on_unimplemented(
    message = "index `{Slot}` has a sort key, so the entity needs a sort key for it",
    label = "add `{Slot}sk = \"...\"` (a template) or `{Slot}sk = field` next to this one",
    note = "where the index sorts on the table's own partition or sort key attribute, give `{Slot}sk` the entity's template for that key: the item's key then serves the index"
)]
pub trait IndexSortKeyAbsent<Slot> {
    /// What the derive's check names: `<T as Trait>::CHECKED` reports an unmet bound at the
    /// user's tokens, with no note pointing into this crate.
    #[doc(hidden)]
    const CHECKED: () = ();
}
impl<Slot> IndexSortKeyAbsent<Slot> for WithoutSortKey {}
