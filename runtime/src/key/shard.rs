//! Write sharding: a partition key part that spreads one logical partition over `count`
//! physical ones (`"TEAM#{team_id}#{shard(id, 8)}"`), so that no one partition key takes
//! every write of a busy team. A point read knows its item's shard, which a field decides;
//! a query reads every shard and merges them.
//!
//! The shard of a value is stable across releases and languages: the first eight bytes of the
//! SHA-256 digest of the field's key text (as the field writes it in any other template),
//! read as a big-endian integer, modulo `count`; written in decimal, zero-padded to the digits
//! of `count - 1` (`0`..`7` for 8 shards, `00`..`15` for 16), so that every shard's key has
//! one length and the overlap check between templates stays exact.

use super::shape::PartShape;
use sha2::{Digest, Sha256};

/// The most shards a template may name: each query of a sharded partition sends one request
/// per shard.
pub const MAX_SHARDS: u16 = 1000;

/// The shard of the key text `text` among `count` shards.
pub(crate) fn shard_of(text: &str, count: u16) -> u16 {
    let digest = Sha256::digest(text.as_bytes());
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    let shard = u64::from_be_bytes(head) % u64::from(count.max(1));
    // Below `count`, which is a `u16`.
    u16::try_from(shard).unwrap_or_default()
}

/// The digits a shard number is written in: those of `count - 1`.
pub(crate) const fn digits(count: u16) -> u8 {
    let mut highest = count.saturating_sub(1);
    let mut digits = 1;
    while highest >= 10 {
        highest /= 10;
        digits += 1;
    }
    digits
}

/// Appends shard `shard` of `count`, zero-padded to [`digits`].
pub(crate) fn write(shard: u16, count: u16, out: &mut String) {
    let mut buffer = itoa::Buffer::new();
    let text = buffer.format(shard);
    for _ in text.len()..usize::from(digits(count)) {
        out.push('0');
    }
    out.push_str(text);
}

/// Reads a shard number written by [`write`]: `None` for text no shard of `count` writes.
pub(crate) fn read(text: &str, count: u16) -> Option<u16> {
    if text.len() != usize::from(digits(count)) || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u16>().ok().filter(|shard| *shard < count)
}

/// What a shard part writes, for the overlap check: its digits, always of one length.
pub(crate) const fn shape(count: u16) -> PartShape {
    PartShape::fixed(digits(count) as u16, "0123456789")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_the_digest_of_the_key_text_modulo_the_count() {
        // Stable: Python computes the same shards with
        // `int.from_bytes(hashlib.sha256(b"8842").digest()[:8], "big") % 8`.
        assert_eq!(shard_of("8842", 8), 3);
        assert_eq!(shard_of("0000000007", 16), 2);
        assert_eq!(shard_of("8842", 1), 0);
        let spread: std::collections::BTreeSet<u16> =
            (0..200).map(|id| shard_of(&id.to_string(), 8)).collect();
        assert_eq!(spread.len(), 8, "200 ids reach every one of 8 shards");
    }

    #[test]
    fn shards_are_written_in_the_digits_of_the_highest() {
        let written = |shard, count| {
            let mut out = String::new();
            write(shard, count, &mut out);
            out
        };
        assert_eq!(written(7, 8), "7");
        assert_eq!(written(3, 16), "03");
        assert_eq!(written(9, 10), "9");
        assert_eq!(written(10, 11), "10");
        assert_eq!(written(5, 1000), "005");
        assert_eq!(read("03", 16), Some(3));
        assert_eq!(read("3", 16), None);
        assert_eq!(read("16", 16), None);
        assert_eq!(read("x", 8), None);
    }
}
