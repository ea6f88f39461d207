//! Where a query's next page starts, as a value a web app can hand to its clients.
//!
//! Without a [`CursorKey`] a cursor is URL-safe base64 JSON: the index and the `LastEvaluatedKey`,
//! readable and editable by whoever holds it, and checked only against the index and partition
//! of the query it resumes. With a key set on the [`Db`](crate::Db), a cursor is sealed: its
//! contents are encrypted (ChaCha20), and authenticated with HMAC-SHA256 over the query's
//! fingerprint (table, index, key condition, filter, projection, direction, entities read) and
//! an optional expiry. The nonce is derived from the MAC (a synthetic IV), so no random source
//! is needed and a client sees only opaque bytes: not the keys of the last item evaluated,
//! which may be one the filter hid.

pub use crate::error::cursor::CursorError;
use crate::item::Item;
use crate::wire;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::ChaCha20;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

type HmacSha256 = Hmac<Sha256>;

/// The first byte of a sealed cursor, which no unsigned cursor (JSON, so `{`) starts with.
const SEALED_VERSION: u8 = 1;
/// Version, expiry (milliseconds since the epoch, 0 for none) and tag.
const HEADER: usize = 1 + 8 + 32;
/// The shortest secret accepted: 256 bits.
const MIN_SECRET: usize = 32;

/// The secret that seals a [`Db`](crate::Db)'s cursors (see [`Db::with_cursor_key`](crate::Db::with_cursor_key)).
///
/// Every process serving one application must use the same secret; changing it invalidates
/// every cursor handed out.
///
/// ```
/// use singletable_runtime::op::query::CursorKey;
/// use std::time::Duration;
///
/// let key = CursorKey::new(&[7u8; 32])?.expire_after(Duration::from_secs(15 * 60));
/// # Ok::<(), singletable_runtime::op::query::CursorError>(())
/// ```
#[derive(Clone)]
pub struct CursorKey {
    encryption: [u8; 32],
    authentication: [u8; 32],
    lifetime: Option<Duration>,
}

impl CursorKey {
    /// A key from a secret of at least 32 bytes (for example 32 random bytes kept in a secrets
    /// manager). The encryption and authentication keys are derived from it separately.
    pub fn new(secret: &[u8]) -> Result<CursorKey, CursorError> {
        if secret.len() < MIN_SECRET {
            return Err(CursorError::new(format!(
                "a cursor secret needs at least {MIN_SECRET} bytes, got {}",
                secret.len()
            )));
        }
        Ok(CursorKey {
            encryption: derive(secret, b"singletable cursor encryption"),
            authentication: derive(secret, b"singletable cursor authentication"),
            lifetime: None,
        })
    }

    /// Cursors sealed with this key are refused `lifetime` after they were made.
    pub fn expire_after(mut self, lifetime: Duration) -> CursorKey {
        self.lifetime = Some(lifetime);
        self
    }

    /// The tag over the query's fingerprint, the expiry and the plain contents.
    fn tag(&self, fingerprint: &Fingerprint, expires: u64, plain: &[u8]) -> HmacSha256 {
        let mut mac = hmac_with(&self.authentication);
        mac.update(&fingerprint.0);
        mac.update(&expires.to_be_bytes());
        mac.update(plain);
        mac
    }

    /// Encrypts or decrypts `bytes` in place under the nonce taken from `tag`.
    fn apply_keystream(&self, tag: &[u8], bytes: &mut [u8]) {
        let mut nonce = [0u8; 12];
        nonce.copy_from_slice(tag.get(..12).unwrap_or(&[0; 12]));
        ChaCha20::new(&self.encryption.into(), &nonce.into()).apply_keystream(bytes);
    }
}

impl fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CursorKey")
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

fn hmac_with(key: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length, so this never fails; the fallback keeps it panic-free.
    <HmacSha256 as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| <HmacSha256 as hmac::digest::KeyInit>::new(&Default::default()))
}

fn derive(secret: &[u8], label: &[u8]) -> [u8; 32] {
    let mut mac = hmac_with(secret);
    mac.update(label);
    mac.finalize().into_bytes().into()
}

/// A digest of everything that makes a query the query it is, apart from its page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of a request (its first page), with the entities it decodes.
    pub(crate) fn of(request: &wire::Request, entities: &[&str]) -> Fingerprint {
        let mut body = request.body.clone();
        if let Some(fields) = body.as_object_mut() {
            // A client may ask for another page size, and capacity reporting changes nothing.
            fields.remove("Limit");
            fields.remove("ReturnConsumedCapacity");
        }
        let mut digest = Sha256::new();
        digest.update(request.operation.as_bytes());
        digest.update([0]);
        digest.update(body.to_string().as_bytes());
        for entity in entities {
            digest.update([0]);
            digest.update(entity.as_bytes());
        }
        Fingerprint(digest.finalize().into())
    }
}

/// An opaque position in a query's results, for "next page" APIs: [`Cursor::encode`] gives a
/// URL-safe base64 string and [`Cursor::decode`] reads it back. A cursor is checked against
/// the query it resumes: one from another index, partition or table shape is an error, and with
/// a [`CursorKey`] on the `Db`, so is one from any other query, or one that was edited or has
/// expired.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor {
    state: State,
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// A position in this process: from a page, or decoded from an unsigned cursor.
    Open {
        position: Position,
        /// The key and query of the page it came from, when its `Db` seals cursors.
        seal: Option<Seal>,
    },
    /// Decoded from a sealed cursor; only the `Db` with the key can open it.
    Sealed {
        expires: u64,
        tag: [u8; 32],
        contents: Vec<u8>,
    },
}

/// The index and the `LastEvaluatedKey`, as a cursor holds them: `{"i": index or null, "k":
/// key in DynamoDB JSON}`. Clients keep cursors, so this shape stays readable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Position {
    #[serde(rename = "i")]
    pub(crate) index: Option<String>,
    #[serde(rename = "k", with = "wire::as_item")]
    pub(crate) key: Item,
}

impl Position {
    fn bytes(&self) -> Vec<u8> {
        // Cannot fail: text keys and JSON values only.
        serde_json::to_vec(self).unwrap_or_default()
    }

    fn read(bytes: &[u8]) -> Result<Position, CursorError> {
        serde_json::from_slice(bytes)
            .map_err(|error| CursorError::new(format!("not a cursor ({error})")))
    }
}

#[derive(Debug, Clone)]
struct Seal {
    key: Arc<CursorKey>,
    fingerprint: Fingerprint,
}

impl PartialEq for Seal {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.key, &other.key) && self.fingerprint == other.fingerprint
    }
}

impl Cursor {
    /// The cursor of a page, sealed with `key` when the page's `Db` has one.
    pub(crate) fn new(position: Position, seal: Option<(Arc<CursorKey>, Fingerprint)>) -> Cursor {
        Cursor {
            state: State::Open {
                position,
                seal: seal.map(|(key, fingerprint)| Seal { key, fingerprint }),
            },
        }
    }

    /// The cursor as an opaque string: sealed when it came from a page of a `Db` with a
    /// [`CursorKey`], otherwise unsigned base64 JSON.
    pub fn encode(&self) -> String {
        let bytes = match &self.state {
            State::Open {
                position,
                seal: None,
            } => position.bytes(),
            State::Open {
                position,
                seal: Some(seal),
            } => {
                let expires = seal
                    .key
                    .lifetime
                    .map_or(0, |lifetime| millis(SystemTime::now() + lifetime));
                let mut contents = position.bytes();
                let tag: [u8; 32] = seal
                    .key
                    .tag(&seal.fingerprint, expires, &contents)
                    .finalize()
                    .into_bytes()
                    .into();
                seal.key.apply_keystream(&tag, &mut contents);
                sealed_bytes(expires, &tag, &contents)
            }
            State::Sealed {
                expires,
                tag,
                contents,
            } => sealed_bytes(*expires, tag, contents),
        };
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Reads a string made by [`Cursor::encode`]. A sealed cursor is opened, and checked, by
    /// the query it resumes.
    pub fn decode(text: &str) -> Result<Cursor, CursorError> {
        // URL-safe, as `encode` writes; standard base64 too, as cursors were first written.
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .or_else(|_| STANDARD.decode(text))
            .map_err(|_| CursorError::new("not base64"))?;
        if bytes.first() != Some(&SEALED_VERSION) {
            return Ok(Cursor {
                state: State::Open {
                    position: Position::read(&bytes)?,
                    seal: None,
                },
            });
        }
        let (Some(expires), Some(tag), Some(contents)) = (
            bytes
                .get(1..9)
                .and_then(|bytes| <[u8; 8]>::try_from(bytes).ok()),
            bytes
                .get(9..HEADER)
                .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok()),
            bytes.get(HEADER..),
        ) else {
            return Err(CursorError::new("a sealed cursor cut short"));
        };
        Ok(Cursor {
            state: State::Sealed {
                expires: u64::from_be_bytes(expires),
                tag,
                contents: contents.to_vec(),
            },
        })
    }

    /// The position this cursor resumes from, if it may resume the query with `fingerprint`
    /// on a `Db` with `key`.
    pub(crate) fn open(
        &self,
        key: Option<(&Arc<CursorKey>, Fingerprint)>,
    ) -> Result<Position, CursorError> {
        let invalid = CursorError::new;
        match (&self.state, key) {
            (State::Open { position, .. }, None) => Ok(position.clone()),
            (State::Open { seal: None, .. }, Some(_)) => Err(invalid(
                "this Db seals its cursors, and an unsigned cursor could have been edited",
            )),
            (
                State::Open {
                    position,
                    seal: Some(seal),
                },
                Some((key, fingerprint)),
            ) => {
                if Arc::ptr_eq(&seal.key, key) && seal.fingerprint == fingerprint {
                    Ok(position.clone())
                } else {
                    Err(invalid("it belongs to another query"))
                }
            }
            (State::Sealed { .. }, None) => Err(invalid(
                "it is sealed, and this Db has no cursor key (`Db::with_cursor_key`)",
            )),
            (
                State::Sealed {
                    expires,
                    tag,
                    contents,
                },
                Some((key, fingerprint)),
            ) => {
                let mut plain = contents.clone();
                key.apply_keystream(tag, &mut plain);
                key.tag(&fingerprint, *expires, &plain)
                    .verify_slice(tag)
                    .map_err(|_| invalid("it was edited, or belongs to another query"))?;
                if *expires != 0 && millis(SystemTime::now()) > *expires {
                    return Err(invalid("it has expired"));
                }
                Position::read(&plain)
            }
        }
    }
}

fn sealed_bytes(expires: u64, tag: &[u8; 32], contents: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER + contents.len());
    bytes.push(SEALED_VERSION);
    bytes.extend_from_slice(&expires.to_be_bytes());
    bytes.extend_from_slice(tag);
    bytes.extend_from_slice(contents);
    bytes
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;

    /// Cursors as this library wrote them before `Position` was serde-derived, of
    /// [`position`]: clients hold such cursors, so they must keep decoding.
    const UNSEALED: &str = "eyJpIjoiR1NJMSIsImsiOnsiR1NJMVBLIjp7IlMiOiJDVVNUT01FUiNhbmEifSwiR1NJMVNLIjp7Ik4iOiI0MiJ9LCJQSyI6eyJTIjoiU0hPUCNub3J0aCJ9LCJTSyI6eyJTIjoiT1JERVIjMDAwMDA5In19fQ";
    /// Sealed with [`SECRET`] for the fingerprint `[7; 32]`, without expiry.
    const SEALED: &str = "AQAAAAAAAAAAuBoiTBOfugxRdpLiCNKWZkMafOlP_XQAIyY1tcDK3EBY73ngLQZ28U65PXx3hCYnHfAwvz55g29eX7ydioWs7f7hyjjWtoIBfWPJ8wVEG4t4kniulP_RAclR0Io9nHBpYOWY8txul5xVEB_e89q5b7indqSL9Sr3n6K7ENtsuIPCy461qWRONIT6gUgIR_kXWR8Wb74u";
    /// A position on the table itself (no index), `{"i": null, ..}`.
    const ON_THE_TABLE: &str = "eyJpIjpudWxsLCJrIjp7IlBLIjp7IlMiOiJBIn19fQ";
    const SECRET: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

    fn position() -> Position {
        Position {
            index: Some("GSI1".to_owned()),
            key: Item::from([
                ("PK".to_owned(), AttributeValue::S("SHOP#north".into())),
                ("SK".to_owned(), AttributeValue::S("ORDER#000009".into())),
                (
                    "GSI1PK".to_owned(),
                    AttributeValue::S("CUSTOMER#ana".into()),
                ),
                ("GSI1SK".to_owned(), AttributeValue::N("42".into())),
            ]),
        }
    }

    #[test]
    fn cursors_of_the_old_code_decode_to_the_same_position() -> Result<(), CursorError> {
        assert_eq!(Cursor::decode(UNSEALED)?.open(None)?, position());
        let key = Arc::new(CursorKey::new(SECRET)?);
        let sealed = Cursor::decode(SEALED)?.open(Some((&key, Fingerprint([7; 32]))))?;
        assert_eq!(sealed, position());
        let on_the_table = Cursor::decode(ON_THE_TABLE)?.open(None)?;
        assert_eq!(on_the_table.index, None);
        assert_eq!(
            on_the_table.key,
            Item::from([("PK".to_owned(), AttributeValue::S("A".into()))])
        );
        Ok(())
    }

    #[test]
    fn a_position_goes_round_a_cursor() -> Result<(), CursorError> {
        let cursor = Cursor::new(position(), None).encode();
        assert_eq!(Cursor::decode(&cursor)?.open(None)?, position());
        for bad in [
            r#"{"i": 3, "k": {}}"#,
            r#"{"i": null, "k": {"PK": 1}}"#,
            "[]",
        ] {
            let text = URL_SAFE_NO_PAD.encode(bad);
            assert!(
                Cursor::decode(&text).and_then(|c| c.open(None)).is_err(),
                "{bad}"
            );
        }
        Ok(())
    }
}
