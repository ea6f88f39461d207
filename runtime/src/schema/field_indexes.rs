//! Which indexes of an entity each field feeds, worked out at compile time, so that an update
//! tells which index keys it rewrites without reading templates.

use super::entity::{EntityIndex, EntitySchema};
use crate::const_text::{listed, str_eq};
use crate::key::KeyTemplate;

/// The bit of the index at `position` in a [`FieldIndexes`] mask (none past 64 indexes,
/// which [`FieldIndexes`] refuses to compile).
pub(crate) const fn index_bit(position: usize) -> u64 {
    match 1u64.checked_shl(position as u32) {
        Some(bit) => bit,
        None => 0,
    }
}

impl EntitySchema {
    /// Bit `i` is set when field number `field` is an input of `indexes[i]` (one of its key
    /// templates, or its rule). Only evaluated at compile time ([`FieldIndexes`]): an entity
    /// with more than 64 indexes (DynamoDB allows 25), or a field number past its fields,
    /// fails to compile rather than leave an index unmaintained.
    pub(crate) const fn index_mask(&self, field: usize) -> u64 {
        assert!(self.indexes.len() <= 64, "an entity has at most 64 indexes");
        assert!(field < self.fields.len(), "no such field");
        let name = self.fields[field].name;
        let mut mask = 0;
        let mut position = 0;
        while position < self.indexes.len() {
            if self.indexes[position].reads(name) {
                mask |= index_bit(position);
            }
            position += 1;
        }
        mask
    }
}

impl EntityIndex {
    /// Whether `field` is one of [`EntityIndex::inputs`], at compile time.
    const fn reads(&self, field: &str) -> bool {
        let rule_inputs: &[&str] = match &self.rule {
            Some(rule) => rule.inputs,
            None => &[],
        };
        template_reads(&self.partition_key, field)
            || template_reads(&self.sort_key, field)
            || listed(rule_inputs, field)
    }
}

/// Whether `template` has a field `field`, at compile time.
const fn template_reads(template: &Option<KeyTemplate>, field: &str) -> bool {
    let Some(template) = template else {
        return false;
    };
    let mut position = 0;
    while position < template.segments.len() {
        if let crate::key::Segment::Field { name, .. } | crate::key::Segment::Shard { name, .. } =
            template.segments[position]
        {
            if str_eq(name, field) {
                return true;
            }
        }
        position += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Segment;
    use crate::schema::field::{FieldSchema, ManagedFields};
    use crate::schema::{EntityIndex, IndexKind, IndexProjection, IndexRule, IndexSchema};

    const fn template(source: &'static str, segments: &'static [Segment]) -> KeyTemplate {
        KeyTemplate { source, segments }
    }

    const fn field(name: &'static str) -> FieldSchema {
        FieldSchema {
            name,
            attribute: name,
            key_part: None,
            from_key: None,
        }
    }

    const fn index(slot: &'static str) -> IndexSchema {
        IndexSchema {
            slot,
            name: slot,
            kind: IndexKind::Global,
            partition_key: slot,
            sort_key: None,
            partition_keys: &[],
            sort_keys: &[],
            projection: IndexProjection::All,
        }
    }

    static GSI1: IndexSchema = index("gsi1");
    static GSI2: IndexSchema = index("gsi2");

    /// Tickets: `id` and `team` feed GSI1 through its templates, `status` through its rule,
    /// `owner` feeds GSI2, `title` nothing.
    const TICKET: EntitySchema = EntitySchema {
        name: "Ticket",
        partition_key: template(
            "T#{id}",
            &[
                Segment::Literal("T#"),
                Segment::Field {
                    name: "id",
                    width: None,
                    number: 0,
                },
            ],
        ),
        sort_key: None,
        indexes: &[
            EntityIndex {
                index: &GSI1,
                partition_key: Some(template(
                    "TEAM#{team}",
                    &[
                        Segment::Literal("TEAM#"),
                        Segment::Field {
                            name: "team",
                            width: None,
                            number: 1,
                        },
                    ],
                )),
                sort_key: Some(template(
                    "{id}",
                    &[Segment::Field {
                        name: "id",
                        width: None,
                        number: 0,
                    }],
                )),
                partition_attributes: &[],
                sort_attributes: &[],
                rule: Some(IndexRule {
                    source: "is_open(status)",
                    inputs: &["status"],
                    evaluate: |_| Some(true),
                }),
            },
            EntityIndex {
                index: &GSI2,
                partition_key: Some(template(
                    "U#{owner}",
                    &[
                        Segment::Literal("U#"),
                        Segment::Field {
                            name: "owner",
                            width: None,
                            number: 3,
                        },
                    ],
                )),
                sort_key: None,
                partition_attributes: &[],
                sort_attributes: &[],
                rule: None,
            },
        ],
        fields: &[
            field("id"),
            field("team"),
            field("status"),
            field("owner"),
            field("title"),
        ],
        managed: ManagedFields {
            version: None,
            version_max: 0,
            created_at: None,
            updated_at: None,
            ttl: None,
        },
        unique: &[],
        schema_version: 1,
    };

    #[test]
    fn index_masks_name_the_indexes_a_field_feeds_at_compile_time() {
        const MASKS: [u64; 5] = [
            TICKET.index_mask(0),
            TICKET.index_mask(1),
            TICKET.index_mask(2),
            TICKET.index_mask(3),
            TICKET.index_mask(4),
        ];
        assert_eq!(MASKS, [0b01, 0b01, 0b01, 0b10, 0]);
        for (position, index) in TICKET.indexes.iter().enumerate() {
            for (number, field) in TICKET.fields.iter().enumerate() {
                let feeds = index.inputs().any(|input| input == field.name);
                assert_eq!(TICKET.index_mask(number) & index_bit(position) != 0, feeds);
            }
        }
    }
}
