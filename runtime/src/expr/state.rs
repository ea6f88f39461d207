//! Type-level bookkeeping that makes an update which would leave an index stale a compile
//! error.
//!
//! The derive gives each entity an update state, a tuple with one element per field that feeds
//! an index key or a sparse-index rule (fields of the primary key excepted: the key supplies
//! them). Each `set`/`given`/`add`... moves that field's element to [`Changed`], [`Given`] or
//! [`Relative`]; `send` requires [`UpdateComplete`] of the entity, which holds when, for every index, either
//! no input changes or every input is known.
//!
//! An entity with unique values also has an element for each unique value and for its
//! expiry, which its sentinels carry: a transaction the caller assembles takes an update only
//! while those are untouched or given (`unique::InTransaction`).

use super::field_role::FieldOf;

/// The field is neither changed nor supplied.
#[derive(Debug)]
pub enum Untouched {}
/// The update sets the field to a known value.
#[derive(Debug)]
pub enum Changed {}
/// The caller supplied the field's current value (`given`).
#[derive(Debug)]
pub enum Given {}
/// The update changes the field by an amount (`ADD`, increment, append): its new value is
/// unknown, so an index computed from it cannot be.
#[derive(Debug)]
pub enum Relative {}

/// Type-level true.
#[derive(Debug)]
pub enum Yes {}
/// Type-level false.
#[derive(Debug)]
pub enum No {}

/// A type-level boolean.
pub trait Bit {
    /// `self || B`
    type Or<B: Bit>: Bit;
    /// `self && B`
    type And<B: Bit>: Bit;
    /// `if self { A } else { B }`
    type Pick<A, B>;
}

impl Bit for Yes {
    type Or<B: Bit> = Yes;
    type And<B: Bit> = B;
    type Pick<A, B> = A;
}

impl Bit for No {
    type Or<B: Bit> = B;
    type And<B: Bit> = No;
    type Pick<A, B> = B;
}

/// What an input's state means for its index.
pub trait InputState {
    /// Whether the update changes it.
    type Changes: Bit;
    /// Whether its new (or current) value is known.
    type Known: Bit;
}

impl InputState for Untouched {
    type Changes = No;
    type Known = No;
}

impl InputState for Given {
    type Changes = No;
    type Known = Yes;
}

impl InputState for Changed {
    type Changes = Yes;
    type Known = Yes;
}

impl InputState for Relative {
    type Changes = Yes;
    type Known = No;
}

/// The state after an operation of kind `M` on a field in state `Self`.
pub trait Join<M> {
    /// The new state.
    type Out;
}

impl<S> Join<Changed> for S {
    type Out = Changed;
}

impl<S> Join<Relative> for S {
    type Out = Relative;
}

impl Join<Given> for Untouched {
    type Out = Given;
}

impl Join<Given> for Given {
    type Out = Given;
}

impl Join<Given> for Changed {
    type Out = Changed;
}

impl Join<Given> for Relative {
    type Out = Relative;
}

/// An index whose inputs are untouched, or all known.
#[derive(Debug)]
pub enum Complete {}
/// An index some of whose inputs change while others are unknown.
#[derive(Debug)]
pub enum Incomplete {}

/// `(changes any input, knows every input)` to a verdict.
pub trait Verdict {
    /// [`Complete`] or [`Incomplete`].
    type Out;
}

impl<Known> Verdict for (No, Known) {
    type Out = Complete;
}

impl Verdict for (Yes, Yes) {
    type Out = Complete;
}

impl Verdict for (Yes, No) {
    type Out = Incomplete;
}

/// The update state after an operation of kind `M` on field `F` (its marker type) in update
/// state `S`: what the field's [`FieldOf::Input`] makes of it.
pub trait Touch<S, F, M> {
    /// The new update state.
    type Out;
}

// One impl for every entity and field: the derive writes a `TouchInput` impl only for the
// fields an index reads, and none for the rest (compile cost, issue 32).
impl<E, S, F, M> Touch<S, F, M> for E
where
    F: FieldOf<E>,
    F::Input: TouchInput<S, M>,
{
    type Out = <F::Input as TouchInput<S, M>>::Out;
}

/// How an operation of kind `M` on a field changes update state `S`: implemented by the
/// derive on the marker of each field an index reads, and by [`NoInput`] for the others.
pub trait TouchInput<S, M> {
    /// The new update state.
    type Out;
}

/// The [`FieldOf::Input`] of a field no index reads: its updates leave the state as it is.
#[derive(Debug)]
pub enum NoInput {}

impl<S, M> TouchInput<S, M> for NoInput {
    type Out = S;
}

/// Implemented by the derive on the entity: in update state `S`, no index would go stale.
#[diagnostic::on_unimplemented(
    message = "this update would leave an index of `{Self}` stale",
    label = "some index input changes while others are unknown"
)]
pub trait UpdateComplete<S> {}

/// The verdict for index `I` of entity `E` and its input `F`, where `C` is the first input of
/// `I` the update changes: [`Complete`] implements it for every index and input,
/// [`Incomplete`] for none, so an update that changes `C` while `F` is unknown fails here,
/// naming all four. It fails where the update is sent, not at the change: a `.given(..)` may
/// still come after it.
#[diagnostic::on_unimplemented(
    message = "this update changes `{C}`, an input of index `{I}`, without knowing the value of `{F}`, so the index key cannot be recomputed",
    label = "this update would leave index `{I}` stale",
    note = "set `{F}`, or supply its current value with `.given(..)` anywhere before this call (the request also asserts it); a value changed by `add`, `increment` or `append` is unknown and cannot feed an index"
)]
pub trait Knows<E, I, C, F> {}

impl<E, I, C, F> Knows<E, I, C, F> for Complete {}
