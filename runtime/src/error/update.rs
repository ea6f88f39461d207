//! Why an update cannot be sent as it is.

/// An update that cannot keep the entity's indexes correct.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UpdateError {
    /// The update changes some inputs of an index key but the others' current values are
    /// unknown, so the index key cannot be recomputed.
    #[error("this update of {entity} changes {changed} but not {missing}, which index `{index}` also needs ({templates}); supply their current values with `.given(...)` so the index key is recomputed in the same request")]
    IndexInputsMissing {
        /// The entity.
        entity: &'static str,
        /// The index slot.
        index: &'static str,
        /// The changed inputs, as text (`` `status` ``).
        changed: String,
        /// The inputs whose values are unknown, as text.
        missing: String,
        /// The index's templates and rule, as text.
        templates: String,
    },
    /// An update with [`or_create`](crate::op::update::Update::or_create) cannot be applied to the item
    /// it would create: its `initial` value lacks what an action needs (`SET x = x + 1` of a
    /// missing `x`, as DynamoDB refuses it), or its key differs from the update's.
    #[error("{entity}: the update cannot make the item it would create: {reason}")]
    NotApplicableToNewItem {
        /// The entity.
        entity: &'static str,
        /// Why.
        reason: String,
    },
    /// An update conditioned on the stored item (`condition`, `expect_version`, `advance`)
    /// cannot create one: no item is there to check.
    #[error("this update of {entity} is conditioned on the stored item (`{condition}`), so it cannot create one with `or_create`")]
    ConditionedCreation {
        /// The entity.
        entity: &'static str,
        /// Which condition.
        condition: &'static str,
    },
    /// An input of an index key changes by an amount (`ADD`, increment, append) rather than to a
    /// known value, so the new index key is unknown.
    #[error("`{field}` of {entity} feeds index `{index}`, so it must be changed with `set` (to a known value), not by {operation}")]
    RelativeIndexInput {
        /// The entity.
        entity: &'static str,
        /// The field.
        field: &'static str,
        /// The index slot.
        index: &'static str,
        /// What the update did.
        operation: &'static str,
    },
    /// A unique value changes by an amount or a position (`ADD`, increment, append), so its new
    /// value, which its sentinel is keyed by, is unknown before the write. Typed paths make
    /// this a compile error; this is the check behind it, before anything is sent.
    #[error("`{field}` of {entity} is unique, so it must be changed with `set` (to a known value, whose sentinel the update claims), not by `{action}`")]
    RelativeUniqueValue {
        /// The entity.
        entity: &'static str,
        /// The unique value (field names joined by `+`).
        field: &'static str,
        /// The action, values elided.
        action: String,
    },
    /// A unique value changes inside a transaction the caller assembles, which cannot hold
    /// the sentinel writes (each item appears once, and the old value is read first). Typed
    /// paths make this a compile error; this is the check behind it.
    #[error("this update of {entity} changes its unique `{field}`, whose sentinel a hand-built transaction cannot keep: send the update on its own, which moves the sentinel in its own transaction")]
    UniqueInTransaction {
        /// The entity.
        entity: &'static str,
        /// The unique value (field names joined by `+`).
        field: &'static str,
    },
    /// The expiry of an entity with unique values changes inside a transaction the caller
    /// assembles: the sentinels of its values carry the item's expiry, so that a value is
    /// held exactly as long as its owner, and such a transaction cannot hold their writes.
    /// Typed paths make this a compile error; this is the check behind it.
    #[error("this update of {entity} changes its expiry `{field}`, which the sentinels of its unique values carry, and a hand-built transaction cannot rewrite them: send the update on its own, which rewrites them in its own transaction")]
    ExpiryInTransaction {
        /// The entity.
        entity: &'static str,
        /// The TTL attribute.
        field: &'static str,
    },
    /// An action's operand is an empty set (an `ADD` or `DELETE` of no elements, or a set
    /// with none), which DynamoDB refuses; nothing was sent.
    #[error("this update of {entity} has `{action}` with an empty set, which DynamoDB refuses: leave the action out when there is nothing to add or delete")]
    EmptySet {
        /// The entity.
        entity: &'static str,
        /// The action, values elided.
        action: String,
    },
    /// Two actions change overlapping document paths (the same attribute twice, or a path and
    /// one inside it), which DynamoDB refuses in one update; nothing was sent.
    #[error("this update of {entity} has `{first}` and `{second}`, whose document paths overlap; DynamoDB refuses both in one update: drop one, or split them into two updates")]
    OverlappingPaths {
        /// The entity.
        entity: &'static str,
        /// The earlier action, values elided (`REMOVE tags[2]`).
        first: String,
        /// The later action it overlaps.
        second: String,
    },
    /// The update has nothing to do.
    #[error("this update of {entity} changes nothing")]
    Empty {
        /// The entity.
        entity: &'static str,
    },
}
